"""Row-count group windows (Flink's ``CountTumblingWindowAssigner`` / ``CountSlidingWindowAssigner`` with the count
trigger of the legacy ``WindowOperator``), on a keyed stream in processing time.

Per key the rows are numbered 0, 1, 2, …; window ``i`` holds rows ``i * slide … i * slide + size - 1`` and fires
(its aggregates, once, insert-only) when its last row arrives; windows never filled never fire, as Flink's. The
key's row count and its last ``size`` rows live in keyed state, so the windows checkpoint and rescale.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from strom.api.functions import KeyedProcessFunction, RuntimeContext
from strom.api.row import Row, RowKind
from strom.api.row import _owning_row as _row
from strom.api.state import ValueStateDescriptor
from strom.table.runtime.group_agg import KeyByIndices

if TYPE_CHECKING:
    from strom.api.datastream import DataStream
    from strom.table.planner.row_count_window_logical import RowCountWindowAggregate

__all__ = ["RowCountWindowFunction", "row_count_window_aggregate"]


class RowCountWindowFunction(KeyedProcessFunction[Any, Row, Row]):
    """The windows of one key: ``handle_factory()`` builds the aggregates' handle in each subtask."""

    def __init__(self, handle_factory: Any, key_indices: tuple[int, ...], size: int, slide: int) -> None:
        self.handle_factory = handle_factory
        self.key_indices = key_indices
        self.size = size
        self.slide = slide

    def open(self, runtime_context: RuntimeContext) -> None:
        self.handle = self.handle_factory()
        self.count = runtime_context.get_state(ValueStateDescriptor("row-count-window-count"))
        self.rows = runtime_context.get_state(ValueStateDescriptor("row-count-window-rows"))

    def process_element(self, value: Row, ctx: KeyedProcessFunction.Context) -> tuple[Row, ...] | None:
        number = self.count.value() or 0
        self.count.update(number + 1)
        rows: list[Row] = self.rows.value() or []
        rows.append(value)
        if len(rows) > self.size:
            del rows[: len(rows) - self.size]
        self.rows.update(rows)
        last = number - (self.size - 1)  # this row ends window last / slide when that is a whole number ≥ 0
        if last < 0 or last % self.slide:
            return None
        handle = self.handle
        accs = handle.create_accumulators()
        for row in rows:
            handle.accumulate(accs, row)
        values = value._values
        keys = [values[i] for i in self.key_indices]
        return (_row([*keys, *handle.get_value(accs)], RowKind.INSERT),)


def row_count_window_aggregate(
    stream: DataStream[Any], rel: RowCountWindowAggregate, handle_factory: Any
) -> DataStream[Any]:
    """``stream`` keyed by the group keys through :class:`RowCountWindowFunction` (no keys: one subtask)."""
    keys = rel.group_keys
    function = RowCountWindowFunction(handle_factory, keys, rel.size, rel.slide)
    names = ", ".join(rel.input.row_type.names[k] for k in keys)
    window = (
        f"TumblingGroupWindow(rows={rel.size})"
        if rel.size == rel.slide
        else (f"SlidingGroupWindow(rows={rel.size}, slide={rel.slide})")
    )
    out: DataStream[Any] = (
        stream.key_by(KeyByIndices(keys))
        .process(function)
        .name(f"GroupWindowAggregate(groupBy=[{names}], window=[{window}])")
    )
    return out.set_parallelism(1) if not keys else out
