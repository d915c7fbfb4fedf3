"""Flink's ``TemporalRowTimeJoinOperator``: an event-time temporal join ``FOR SYSTEM_TIME AS OF left.rowtime``.

Per join key, both sides wait in keyed state: the left (probe) rows in a ``MapState`` by arrival sequence, the
right (versioned) rows in a ``MapState`` by their rowtime — a later version with the same rowtime replaces the
earlier one, and a retraction (``-U``/``-D``) is a version too (it ends the previous one). An event-time timer at
the smallest pending time fires once the watermark (the smaller of both inputs') reaches it: every buffered left
row at or before the watermark joins, in arrival order, the latest right version at or before its own rowtime — if
that version is an accumulating row and the residual condition holds; a LEFT join pads the others with NULLs. Then
the versions older than the newest one at or before the watermark are removed (no future left row can need them),
and the timer moves to the smallest left rowtime still pending. Output rows take the left row's kind and its
rowtime as their timestamp (run it in :class:`~strom.table.runtime.rowtime_timers.RowtimeKeyedCoProcessOperator`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator
from typing import Any

from strom.api.co_functions import KeyedCoProcessFunction
from strom.api.functions import KeyedProcessFunction, RuntimeContext
from strom.api.row import Row, RowKind, _create_row
from strom.api.state import MapStateDescriptor, ValueStateDescriptor
from strom.table.runtime.watermark_assigner import to_epoch_millis

__all__ = ["TemporalRowTimeJoinFunction"]

_ACCUMULATE = (RowKind.INSERT, RowKind.UPDATE_AFTER)
_NO_TIMER = 2**63 - 1


class TemporalRowTimeJoinFunction(KeyedCoProcessFunction[Any, Row, Row, tuple[Row, int]]):
    """``left_rowtime``/``right_rowtime``: the rowtime columns' indices; ``condition(joined_row)`` the residual
    predicate over ``left ++ right`` (or None); ``left_outer``: a LEFT join."""

    def __init__(
        self,
        left_rowtime: int,
        right_rowtime: int,
        right_width: int,
        left_outer: bool,
        condition: Callable[[Row], bool] | None,
    ) -> None:
        self.left_rowtime = left_rowtime
        self.right_rowtime = right_rowtime
        self.right_nulls = (None,) * right_width
        self.left_outer = left_outer
        self.condition = condition

    def open(self, runtime_context: RuntimeContext) -> None:
        self.left_state = runtime_context.get_map_state(MapStateDescriptor("left"))
        self.right_state = runtime_context.get_map_state(MapStateDescriptor("right"))
        self.next_left_index = runtime_context.get_state(ValueStateDescriptor("next-index"))
        self.registered_timer = runtime_context.get_state(ValueStateDescriptor("timer"))

    def process_element1(self, value: Row, ctx: KeyedProcessFunction.Context) -> Iterator[tuple[Row, int]] | None:
        index = self.next_left_index.value() or 0
        self.next_left_index.update(index + 1)
        self.left_state.put(index, value)
        self._register_smallest_timer(self._time(value, self.left_rowtime), ctx)
        return None

    def process_element2(self, value: Row, ctx: KeyedProcessFunction.Context) -> Iterator[tuple[Row, int]] | None:
        if value._row_kind is RowKind.UPDATE_BEFORE:  # the versioned side is an upsert changelog in Flink's plan
            return None
        row_time = self._time(value, self.right_rowtime)
        self.right_state.put(row_time, value)
        self._register_smallest_timer(row_time, ctx)
        return None

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Iterator[tuple[Row, int]] | None:
        """The joined rows, each with its left row's rowtime (for :mod:`strom.table.runtime.rowtime_timers`)."""
        self.registered_timer.clear()
        out: list[tuple[Row, int]] = []
        last_unprocessed = self._emit_and_clean_up(ctx.timer_service().current_watermark(), out)
        if last_unprocessed < _NO_TIMER:
            self._register_smallest_timer(last_unprocessed, ctx)
        return iter(out)

    @staticmethod
    def _time(row: Row, index: int) -> int:
        value = row._values[index]
        return -(2**63) if value is None else to_epoch_millis(value)

    def _register_smallest_timer(self, timestamp: int, ctx: KeyedProcessFunction.Context) -> None:
        current = self.registered_timer.value()
        if current is not None and current <= timestamp:
            return
        timers = ctx.timer_service()
        if current is not None:
            timers.delete_event_time_timer(current)
        self.registered_timer.update(timestamp)
        timers.register_event_time_timer(timestamp)

    def _emit_and_clean_up(self, watermark: int, out: list[tuple[Row, int]]) -> int:
        """Joins the left rows at or before ``watermark`` (arrival order); returns the smallest pending left time."""
        versions = sorted(self.right_state.items())
        times = [t for t, _ in versions]
        ready: list[tuple[int, Row]] = []
        last_unprocessed = _NO_TIMER
        for index, left in list(self.left_state.items()):
            left_time = self._time(left, self.left_rowtime)
            if left_time <= watermark:
                ready.append((index, left))
                self.left_state.remove(index)
            else:
                last_unprocessed = min(last_unprocessed, left_time)
        ready.sort(key=lambda item: item[0])
        for _, left in ready:
            left_time = self._time(left, self.left_rowtime)
            position = bisect_right(times, left_time) - 1
            right = versions[position][1] if position >= 0 else None
            if right is not None and right._row_kind in _ACCUMULATE:
                joined = _create_row(None, [*left._values, *right._values], left._row_kind)
                if self.condition is None or self.condition(joined):
                    out.append((joined, left_time))
                    continue
            if self.left_outer:
                out.append((_create_row(None, [*left._values, *self.right_nulls], left._row_kind), left_time))
        self._clean_up_expired_versions(watermark, times)
        return last_unprocessed

    def _clean_up_expired_versions(self, watermark: int, times: list[int]) -> None:
        """Removes every version before the newest one at or before ``watermark`` (Flink's ``firstIndexToKeep``)."""
        keep_from = bisect_right(times, watermark) - 1
        for time in times[: max(keep_from, 0)]:
            self.right_state.remove(time)
