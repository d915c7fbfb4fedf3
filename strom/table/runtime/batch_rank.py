"""Flink's batch ``RankOperator`` for ``RANK()`` and ``DENSE_RANK()`` Top-N (BATCH only: Flink 2.3 refuses both on
streaming tables).

Per partition key the rows are kept in keyed state (a retraction of an updating input removes its row) and, at the
end of input (the final watermark fires the timer), sorted and numbered: ``RANK`` gives equal sort keys the same
number and skips after ties (1, 1, 3), ``DENSE_RANK`` does not skip (1, 1, 2). Rows whose number is within
``offset + 1 .. limit`` are emitted once, as inserts, with the number when the query reads it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from strom.api.eventtime import LONG_MAX
from strom.api.functions import KeyedProcessFunction, RuntimeContext
from strom.api.row import Row, _create_row
from strom.api.state import MapStateDescriptor
from strom.table.runtime.sort import count_row, counted_rows, sorted_rows

__all__ = ["BatchRankFunction"]


class BatchRankFunction(KeyedProcessFunction[Any, Row, Row]):
    def __init__(
        self, rank_type: str, order: tuple[tuple[int, bool], ...], limit: int, output_rank: bool, offset: int = 0
    ) -> None:
        self.dense = rank_type == "DENSE_RANK"
        self.order = order
        self.limit = limit
        self.output_rank = output_rank
        self.offset = offset

    def open(self, runtime_context: RuntimeContext) -> None:
        self.counts = runtime_context.get_map_state(MapStateDescriptor("rank-row-counts"))

    def process_element(self, value: Row, ctx: KeyedProcessFunction.Context) -> None:
        count_row(self.counts, value)
        ctx.timer_service().register_event_time_timer(LONG_MAX)

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Iterator[Row]:
        rows = sorted_rows(counted_rows(self.counts), self.order)
        self.counts.clear()
        columns = tuple(c for c, _ in self.order)
        rank, previous = 0, None
        for position, record in enumerate(rows, start=1):
            key = tuple(record[c] for c in columns)
            if key != previous:
                rank = rank + 1 if self.dense else position
                previous = key
            if rank > self.limit:
                return
            if rank > self.offset:
                yield _create_row(None, [*record, rank if self.output_rank else None])
