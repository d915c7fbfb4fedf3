"""OVER aggregation in event time (Flink's ``RowTimeRowsBoundedPrecedingFunction``,
``RowTimeRangeBoundedPrecedingFunction``, ``RowTimeRowsUnboundedPrecedingFunction`` and
``RowTimeRangeUnboundedPrecedingFunction``).

    SELECT user, amount, SUM(amount) OVER (PARTITION BY user ORDER BY ts
                                           ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM bids

Rows wait per key in keyed state (``over-input``: key → ``{rowtime: [rows in arrival order]}``) for the watermark
to pass their rowtime (one event-time timer per key and rowtime), so they are aggregated in rowtime order; each goes
out with the aggregate values appended, stamped with its rowtime:

* ``ROWS BETWEEN n PRECEDING``: each row, in order, retracts the oldest row once ``n`` rows are accumulated
  (``over-counter``), accumulates itself and goes out with the values of its own frame.
* ``RANGE BETWEEN interval PRECEDING``: at rowtime ``t`` the rows older than ``t - interval`` are retracted and leave
  the state, the rows at ``t`` accumulate, and all of them go out with the same values (peers share a frame).
* ``UNBOUNDED PRECEDING``: ROWS accumulates and emits row by row, RANGE all rows of a rowtime, then emits them.

The accumulators stay in ``over-accs`` between firings. A row is late — dropped and counted
(``numLateRecordsDropped``) — when its rowtime is not after the last rowtime fired for its key (bounded frames) or not
after the watermark (unbounded frames), as in Flink.

Factory (what the planner calls)::

    over_aggregate(stream, *, key_indices, aggs, rows=True, preceding=None, rowtime_index=-1,
                   field_names=None) -> DataStream[Row]

``rows`` picks ROWS (``True``) or RANGE (``False``) frames; ``preceding`` is the number of preceding rows (ROWS) or
the interval in milliseconds (RANGE), ``None`` for UNBOUNDED PRECEDING; the frame always ends at CURRENT ROW.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from strom.exceptions import InvalidProgramError
from strom.runtime.operators.timer_service import InternalTimer, InternalTimerService
from strom.table.runtime.window.table_stream_operator import (
    ACCUMULATE_KINDS,
    AggsHandleFunction,
    RowKeySelector,
    TableStreamOperator,
)

if TYPE_CHECKING:
    from strom.api.datastream import DataStream

__all__ = ["RowTimeOverAggregate", "over_aggregate"]


class RowTimeOverAggregate(TableStreamOperator):
    """An event-time OVER window ending at CURRENT ROW: ROWS or RANGE, bounded (``preceding``) or unbounded."""

    def __init__(
        self,
        key_selector: RowKeySelector,
        aggs: AggsHandleFunction,
        *,
        rows: bool = True,
        preceding: int | None = None,
        rowtime_index: int = -1,
        field_names: Sequence[str] | None = None,
    ) -> None:
        super().__init__(rowtime_index=rowtime_index, field_names=field_names)
        if preceding is not None and (isinstance(preceding, bool) or not isinstance(preceding, int) or preceding < 0):
            raise InvalidProgramError(
                f"expected the preceding bound of an OVER window as a non-negative int or None; got {preceding!r}; "
                "hint: ROWS BETWEEN 2 PRECEDING is preceding=2, RANGE BETWEEN INTERVAL '5' SECOND PRECEDING is 5000"
            )
        self.name = "OverAggregate"
        self.key_selector = key_selector
        self.aggs = aggs
        self.rows = rows
        self.preceding = preceding
        self._input: Any = {}
        self._accs: Any = {}
        self._counter: Any = {}
        self._last: Any = {}
        self._timers: InternalTimerService | None = None

    def open(self) -> None:
        backend = self.keyed_backend
        assert backend is not None
        self._input = backend.get_table("over-input")
        self._accs = backend.get_table("over-accs")
        self._counter = backend.get_table("over-counter")
        self._last = backend.get_table("over-last-triggering")
        self._timers = self.get_internal_timer_service("over-timers", self)
        super().open()

    def process_batch(self, batch: list[Any]) -> None:
        key_of, backend, timers = self.key_selector, self.keyed_backend, self._timers
        assert key_of is not None and backend is not None and timers is not None
        groups: dict[Any, list[tuple[int, Any]]] = {}
        for row, t in zip(batch, self.rowtimes(batch), strict=True):
            if t is None:
                raise InvalidProgramError(f"expected a non-NULL rowtime in '{self.name}'; got NULL in {row!r:.80}")
            groups.setdefault(key_of(row), []).append((t, row))
        bounded = self.preceding is not None
        for key, timed in groups.items():
            backend.current_key = key
            floor = self._last.get(key, 0) if bounded else self.current_watermark
            pending: dict[int, list[Any]] = self._input.get(key) or {}
            for t, row in timed:
                if t <= floor:
                    self.num_late_records_dropped += 1
                    continue
                pending.setdefault(t, []).append(row)
                timers.register_event_time_timer(None, t)
            if pending:
                self._input[key] = pending
        self._records_in += len(batch)

    def on_event_time(self, timer: InternalTimer) -> None:
        key, t = timer.key, timer.timestamp
        pending: dict[int, list[Any]] | None = self._input.get(key)
        inputs = pending.get(t) if pending else None
        if pending and inputs:
            accs = self._accs.get(key) or self.aggs.create_accumulators()
            if self.preceding is None:
                self._unbounded(accs, t, inputs)
                del pending[t]
            elif self.rows:
                self._rows_bounded(key, accs, pending, t, inputs)
            else:
                self._range_bounded(accs, pending, t, inputs)
            self._accs[key] = accs
            if pending:
                self._input[key] = pending
            else:
                del self._input[key]
        if self.preceding is not None:
            self._last[key] = t

    def _apply(self, accs: list[Any], row: Any, retract: bool = False) -> None:
        if (row._row_kind in ACCUMULATE_KINDS) != retract:
            self.aggs.accumulate(accs, row)
        else:
            self.aggs.retract(accs, row)

    def _out(self, row: Any, values: tuple[Any, ...], t: int) -> None:
        self.emit([*row._values, *values], t, row._row_kind)

    def _unbounded(self, accs: list[Any], t: int, inputs: list[Any]) -> None:
        get_value = self.aggs.get_value
        if self.rows:
            for row in inputs:
                self._apply(accs, row)
                self._out(row, get_value(accs), t)
            return
        for row in inputs:
            self._apply(accs, row)
        values = get_value(accs)
        for row in inputs:
            self._out(row, values, t)

    def _rows_bounded(
        self, key: Any, accs: list[Any], pending: dict[int, list[Any]], t: int, inputs: list[Any]
    ) -> None:
        """Flink's ``RowTimeRowsBoundedPrecedingFunction.onTimer``: once the frame is full (``preceding`` rows and the
        current one), the oldest kept row leaves as each row comes."""
        count = self._counter.get(key, 0)
        assert self.preceding is not None
        frame = self.preceding + 1
        for row in list(inputs):
            if count >= frame:
                oldest = min(pending)
                old_rows = pending[oldest]
                old = old_rows.pop(0)
                if not old_rows:
                    del pending[oldest]
                self._apply(accs, old, retract=True)
            else:
                count += 1
            self._apply(accs, row)
            self._out(row, self.aggs.get_value(accs), t)
        self._counter[key] = count

    def _range_bounded(self, accs: list[Any], pending: dict[int, list[Any]], t: int, inputs: list[Any]) -> None:
        """Flink's ``RowTimeRangeBoundedPrecedingFunction.onTimer``: rows older than the frame leave first."""
        preceding = self.preceding
        assert preceding is not None
        for old_t in [ts for ts in pending if t - ts > preceding]:
            for old in pending.pop(old_t):
                self._apply(accs, old, retract=True)
        for row in inputs:
            self._apply(accs, row)
        values = self.aggs.get_value(accs)
        for row in inputs:
            self._out(row, values, t)


def over_aggregate(
    stream: DataStream[Any],
    *,
    key_indices: Sequence[int],
    aggs: AggsHandleFunction,
    rows: bool = True,
    preceding: int | None = None,
    rowtime_index: int = -1,
    field_names: Sequence[str] | None = None,
) -> DataStream[Any]:
    """``agg(...) OVER (PARTITION BY keys ORDER BY rowtime ROWS|RANGE BETWEEN ... PRECEDING AND CURRENT ROW)``."""
    selector = RowKeySelector(key_indices)
    operator = RowTimeOverAggregate(
        selector, aggs, rows=rows, preceding=preceding, rowtime_index=rowtime_index, field_names=field_names
    )
    return stream.key_by(selector)._one_input("OverAggregate", operator)
