"""Flink's ``GroupAggFunction``: a non-windowed GROUP BY over keyed state, emitting Flink's exact changelog.

Per key the accumulators live in one ``ValueState``. An input row is accumulated (``+I``/``+U``) or retracted
(``-U``/``-D``); then, as Flink:

- the first row of a key emits ``+I[key, result]``;
- a later change emits ``-U[key, previous]`` and ``+U[key, result]`` — nothing when the result did not change;
- a retraction that empties the group (its record count reaches zero) emits ``-D[key, previous]`` and clears the
  state; a retraction arriving for a key without state is ignored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from strom.api.functions import KeyedProcessFunction, RuntimeContext
from strom.api.row import Row, RowKind
from strom.api.row import _owning_row as _row
from strom.api.state import ValueStateDescriptor
from strom.table.runtime.aggs_handle import AggsHandle

__all__ = ["GroupAggFunction", "KeyByIndices"]

_INSERT, _UPDATE_BEFORE, _UPDATE_AFTER, _DELETE = (
    RowKind.INSERT,
    RowKind.UPDATE_BEFORE,
    RowKind.UPDATE_AFTER,
    RowKind.DELETE,
)


class KeyByIndices:
    """The key of a row: the tuple of its values at ``indices`` (the GROUP BY / join / partition keys)."""

    def __init__(self, indices: tuple[int, ...]) -> None:
        self.indices = indices

    def __call__(self, row: Row) -> tuple[Any, ...]:
        values = row._values
        return tuple([values[i] for i in self.indices])


class GroupAggFunction(KeyedProcessFunction[Any, Row, Row]):
    """One GROUP BY: ``handle_factory()`` builds the :class:`AggsHandle` in each subtask."""

    def __init__(self, handle_factory: Callable[[], AggsHandle], *, generate_update_before: bool = True) -> None:
        self.handle_factory = handle_factory
        self.generate_update_before = generate_update_before

    def open(self, runtime_context: RuntimeContext) -> None:
        self.handle = self.handle_factory()
        self.acc_state = runtime_context.get_state(ValueStateDescriptor("accumulators"))

    def process_element(self, value: Row, ctx: KeyedProcessFunction.Context) -> tuple[Row, ...] | None:
        handle = self.handle
        accs = self.acc_state.value()
        kind = value._row_kind
        retract = kind is _UPDATE_BEFORE or kind is _DELETE
        if accs is None:
            if retract:
                return None
            first = True
            accs = handle.create_accumulators()
            previous: tuple[Any, ...] = ()
        else:
            first = False
            previous = handle.get_value(accs)
        if retract:
            handle.retract(accs, value)
        else:
            handle.accumulate(accs, value)
        key = ctx.get_current_key()
        if handle.record_count_is_zero(accs):
            self.acc_state.clear()
            if first:
                return None
            return (_row([*key, *previous], _DELETE),)
        self.acc_state.update(accs)
        result = handle.get_value(accs)
        if first:
            return (_row([*key, *result], _INSERT),)
        if result == previous:
            return None
        after = _row([*key, *result], _UPDATE_AFTER)
        if not self.generate_update_before:
            return (after,)
        return (_row([*key, *previous], _UPDATE_BEFORE), after)
