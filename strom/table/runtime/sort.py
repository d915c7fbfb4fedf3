"""Flink's sort operators: ``SortOperator`` / ``SortLimitOperator`` (BATCH ``ORDER BY [LIMIT]``) and
``RowTimeSortOperator`` (STREAMING ``ORDER BY rowtime [, …]``, the temporal sort).

Both run on one key (the whole input in one subtask, as Flink's global sort at parallelism 1) and keep their rows
in keyed state. The BATCH sort emits its sorted rows at the end of input (the final watermark fires its timer);
a retraction of an updating input removes its row first, so the result is the final table sorted. The temporal
sort buffers rows per record timestamp and emits each timestamp's rows, sorted by the remaining keys, when the
watermark passes it; a row at or behind the watermark is late and dropped (as Flink's).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from strom.api.eventtime import LONG_MAX
from strom.api.functions import KeyedProcessFunction, RuntimeContext
from strom.api.row import Row, RowKind, _create_row
from strom.api.state import MapState, MapStateDescriptor

__all__ = ["RowTimeSortFunction", "SortFunction", "SortKey", "count_row", "counted_rows", "sorted_rows"]

_RETRACT = (RowKind.UPDATE_BEFORE, RowKind.DELETE)


class SortKey:
    """A row's sort key: ASC/DESC per column and where NULLs go (``nulls_first``; by default first for ASC and last
    for DESC, Flink's default)."""

    __slots__ = ("ascending", "nulls_first", "values")

    def __init__(
        self, values: tuple[Any, ...], ascending: tuple[bool, ...], nulls_first: tuple[bool, ...] = ()
    ) -> None:
        self.values = values
        self.ascending = ascending
        self.nulls_first = nulls_first or ascending

    def __lt__(self, other: SortKey) -> bool:
        for a, b, asc, first in zip(self.values, other.values, self.ascending, self.nulls_first, strict=True):
            if a == b:
                continue
            if a is None:
                return first
            if b is None:
                return not first
            return bool(a < b) if asc else bool(a > b)
        return False


def sorted_rows(
    rows: list[tuple[Any, ...]], order: tuple[tuple[int, bool], ...], nulls_first: tuple[bool, ...] = ()
) -> list[tuple[Any, ...]]:
    """``rows`` sorted stably by ``order`` ((column, ascending) pairs) with NULLs where ``nulls_first`` says."""
    columns = tuple(c for c, _ in order)
    ascending = tuple(a for _, a in order)
    return sorted(rows, key=lambda r: SortKey(tuple(r[c] for c in columns), ascending, nulls_first))


def count_row(counts: MapState[Any, Any], value: Row) -> None:
    """A changelog row into a multiset of rows (row → count): an insert adds one, a retraction removes one. One state
    entry per distinct row, so a row costs one read and one write whatever the input's size."""
    record = tuple(value._values)
    count = (counts.get(record) or 0) + (-1 if value._row_kind in _RETRACT else 1)
    if count > 0:
        counts.put(record, count)
    else:
        counts.remove(record)


def counted_rows(counts: MapState[Any, Any]) -> list[tuple[Any, ...]]:
    """The multiset's rows, each as often as it counts (in the state's iteration order; the sort orders them)."""
    return [record for record, count in counts.items() for _ in range(count)]


class SortFunction(KeyedProcessFunction[Any, Row, Row]):
    """BATCH ``ORDER BY … [LIMIT n] [OFFSET m]``: the final rows sorted, rows ``m + 1 .. m + n`` emitted at the end."""

    def __init__(
        self,
        order: tuple[tuple[int, bool], ...],
        offset: int = 0,
        fetch: int | None = None,
        nulls_first: tuple[bool, ...] = (),
    ) -> None:
        self.order = order
        self.offset = offset
        self.fetch = fetch
        self.nulls_first = nulls_first

    def open(self, runtime_context: RuntimeContext) -> None:
        self.counts = runtime_context.get_map_state(MapStateDescriptor("sort-row-counts"))

    def process_element(self, value: Row, ctx: KeyedProcessFunction.Context) -> None:
        count_row(self.counts, value)
        ctx.timer_service().register_event_time_timer(LONG_MAX)

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Iterator[Row]:
        rows = sorted_rows(counted_rows(self.counts), self.order, self.nulls_first)
        self.counts.clear()
        end = None if self.fetch is None else self.offset + self.fetch
        for record in rows[self.offset : end]:
            yield _create_row(None, list(record))


class RowTimeSortFunction(KeyedProcessFunction[Any, Row, Row]):
    """STREAMING ``ORDER BY rowtime [, more]``: each record timestamp's rows, sorted by ``order``, on the watermark."""

    def __init__(self, order: tuple[tuple[int, bool], ...], nulls_first: tuple[bool, ...] = ()) -> None:
        self.order = order
        self.nulls_first = nulls_first

    def open(self, runtime_context: RuntimeContext) -> None:
        self.buffer = runtime_context.get_map_state(MapStateDescriptor("rowtime-sort-rows"))

    def process_element(self, value: Row, ctx: KeyedProcessFunction.Context) -> None:
        timestamp = ctx.timestamp()
        if timestamp is None or timestamp <= ctx.timer_service().current_watermark():
            return  # late (or without a time attribute's timestamp): Flink's RowTimeSortOperator drops it
        rows = self.buffer.get(timestamp) or []
        rows.append(tuple(value._values))
        self.buffer.put(timestamp, rows)
        ctx.timer_service().register_event_time_timer(timestamp)

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Iterator[Row]:
        rows = self.buffer.get(timestamp) or []
        self.buffer.remove(timestamp)
        for record in sorted_rows(rows, self.order, self.nulls_first) if self.order else rows:
            yield _create_row(None, list(record))
