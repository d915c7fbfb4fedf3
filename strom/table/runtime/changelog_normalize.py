"""Flink's ``ChangelogNormalize`` (``ProcTimeDeduplicateKeepLastRowFunction`` over a changelog): an upsert
changelog (``+I``/``+U`` upserts and ``-D`` deletes by key, as ``upsert-kafka`` reads them) made a full one.

Per key the last row lives in one ``ValueState``, and, as Flink's ``processLastRowOnChangelog``:

- an upsert of a key without state emits ``+I[row]``; of a key with state ``-U[previous]`` ``+U[row]`` — nothing
  when the row equals the previous one;
- a delete (or update-before) of a key with state emits ``-D[previous]`` (the full row: a tombstone carries only the
  key) and clears the state; of a key without state nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from strom.api.functions import KeyedProcessFunction, RuntimeContext
from strom.api.row import Row, RowKind
from strom.api.row import _owning_row as _row
from strom.api.state import ValueStateDescriptor
from strom.table.runtime.group_agg import KeyByIndices

if TYPE_CHECKING:
    from strom.api.datastream import DataStream

__all__ = ["ChangelogNormalizeFunction", "changelog_normalize"]

_INSERT, _UPDATE_BEFORE, _UPDATE_AFTER, _DELETE = (
    RowKind.INSERT,
    RowKind.UPDATE_BEFORE,
    RowKind.UPDATE_AFTER,
    RowKind.DELETE,
)


class ChangelogNormalizeFunction(KeyedProcessFunction[Any, Row, Row]):
    """Keeps the last row of each key; emits the full changelog (see the module)."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.last = runtime_context.get_state(ValueStateDescriptor("changelog-normalize-last-row"))

    def process_element(self, value: Row, ctx: KeyedProcessFunction.Context) -> tuple[Row, ...] | None:
        previous = self.last.value()
        kind = value._row_kind
        if kind is _DELETE or kind is _UPDATE_BEFORE:
            if previous is None:
                return None
            self.last.clear()
            return (_row(previous, _DELETE),)
        values = list(value._values)
        if previous is None:
            self.last.update(values)
            return (_row(values, _INSERT),)
        if previous == values:
            return None
        self.last.update(values)
        return (_row(previous, _UPDATE_BEFORE), _row(values, _UPDATE_AFTER))


def changelog_normalize(stream: DataStream[Any], key_indices: Sequence[int]) -> DataStream[Any]:
    """``stream`` (an upsert changelog) keyed by ``key_indices`` through :class:`ChangelogNormalizeFunction`."""
    keys = tuple(key_indices)
    keyed = stream.key_by(KeyByIndices(keys))
    return keyed.process(ChangelogNormalizeFunction()).name(f"ChangelogNormalize(key={list(keys)})")
