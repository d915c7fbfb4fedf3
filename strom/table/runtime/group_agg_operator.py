"""Flink's ``KeyedProcessOperator`` running a ``GroupAggFunction``, as one loop over a batch of rows.

:class:`~strom.table.runtime.group_agg.GroupAggFunction` is the per-record form (a ``KeyedProcessFunction``: per
row the key set on the backend, a ``ValueState`` read and write through the state object, the key fetched back
from the context). :class:`GroupAggOperator` runs the same function body over a whole batch against the state's
table — ``key → accumulators``, the very table of the function's ``ValueState("accumulators")`` (so a checkpoint of
either restores into the other) — as strom's running ``reduce`` does: per row one table read, the generated
``accumulate``, one write. The changelog is the function's exactly (Flink's ``GroupAggFunction``): ``+I`` first,
``-U``/``+U`` on a change, nothing when the result did not change, ``-D`` when a retraction empties the group; an
output row carries its input row's timestamp.

In BATCH mode a GROUP BY without keys gives one row even over no input rows (``COUNT(*)`` 0, the other aggregates
NULL), as Flink's batch ``HashAggregate`` without grouping does: ``emit_on_empty_input`` emits that row at the end
of input when the group holds nothing (the planner runs such an aggregate at parallelism 1).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import repeat
from typing import Any

from strom.api.row import Row, RowKind
from strom.api.row import _owning_row as _row
from strom.runtime.streamrecord import timestamps_of, with_timestamps
from strom.table.runtime.aggs_handle import AggsHandle
from strom.table.runtime.window.table_stream_operator import RowKeySelector, TableStreamOperator, keys_of

__all__ = ["GroupAggOperator"]

_INSERT, _UPDATE_BEFORE, _UPDATE_AFTER, _DELETE = (
    RowKind.INSERT,
    RowKind.UPDATE_BEFORE,
    RowKind.UPDATE_AFTER,
    RowKind.DELETE,
)
_new = object.__new__
STATE_NAME = "accumulators"  # GroupAggFunction's ValueState


class GroupAggOperator(TableStreamOperator):
    """One GROUP BY over the rows of a stream keyed by ``key_selector``; ``handle_factory()`` builds the
    :class:`AggsHandle` in each subtask."""

    def __init__(
        self,
        key_selector: RowKeySelector,
        handle_factory: Callable[[], AggsHandle],
        *,
        generate_update_before: bool = True,
        emit_on_empty_input: bool = False,
    ) -> None:
        super().__init__()
        self.name = "GroupAggregate"
        self.key_selector = key_selector
        self._key = key_selector
        self.handle_factory = handle_factory
        self.generate_update_before = generate_update_before
        self.emit_on_empty_input = emit_on_empty_input
        self._table: Any = {}

    def open(self) -> None:
        assert self.keyed_backend is not None
        self.handle = self.handle_factory()
        self._table = self.keyed_backend.get_table(STATE_NAME)
        super().open()

    def process_batch(self, batch: list[Any]) -> None:
        timestamps = timestamps_of(batch)
        out: list[Row] = []
        out_ts: list[Any] = []
        self._rows(batch, out, timestamps, out_ts)
        self._records_in += len(batch)
        if out:
            self.output.emit(out if timestamps is None else with_timestamps(out, out_ts))

    def finish(self) -> None:
        """BATCH: a global aggregate's row over no input (the aggregates of an empty accumulator)."""
        if self.emit_on_empty_input and not self._table:
            self.output.emit([_row(list(self.handle.get_value(self.handle.create_accumulators())), _INSERT)])
        super().finish()

    def _rows(self, batch: list[Row], out: list[Row], timestamps: list[Any] | None, out_ts: list[Any]) -> None:
        """GroupAggFunction.process_element for each row, the output rows appended to ``out`` and their input
        row's timestamp to ``out_ts`` (``None`` each without ``timestamps``)."""
        handle, table, key_of, update_before = self.handle, self._table, self._key, self.generate_update_before
        get, create, get_value = table.get, handle.create_accumulators, handle.get_value
        accumulate, retract, is_empty = handle.accumulate, handle.retract, handle.record_count_is_zero
        append, stamp, new = out.append, out_ts.append, _new
        value = None
        try:
            keys = keys_of(key_of, batch)
            for value, key, t in zip(batch, keys, repeat(None) if timestamps is None else timestamps, strict=False):
                accs = get(key)
                kind = value._row_kind
                if kind is _UPDATE_BEFORE or kind is _DELETE:
                    if accs is None:
                        continue
                    previous = get_value(accs)
                    retract(accs, value)
                    if is_empty(accs):
                        table.pop(key, None)
                        append(_row([*key, *previous], _DELETE))
                        stamp(t)
                    else:
                        table[key] = accs  # written back: a RocksDB table hands out copies
                        result = get_value(accs)
                        if result != previous:
                            if update_before:
                                append(_row([*key, *previous], _UPDATE_BEFORE))
                                stamp(t)
                            append(_row([*key, *result], _UPDATE_AFTER))
                            stamp(t)
                elif accs is None:
                    accs = create()
                    accumulate(accs, value)
                    table[key] = accs
                    append(_row([*key, *get_value(accs)], _INSERT))
                    stamp(t)
                else:  # the hot path: rows built inline (no call per emitted row)
                    previous = get_value(accs)
                    accumulate(accs, value)
                    table[key] = accs
                    result = get_value(accs)
                    if result != previous:
                        if update_before:
                            before = new(Row)
                            before._values = [*key, *previous]
                            before._row_kind = _UPDATE_BEFORE
                            append(before)
                            stamp(t)
                        after = new(Row)
                        after._values = [*key, *result]
                        after._row_kind = _UPDATE_AFTER
                        append(after)
                        stamp(t)
        except Exception as exc:
            raise self.user_error(exc, batch, value) from exc
