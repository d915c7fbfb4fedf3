"""SESSION windows: the session window TVF and session window aggregation (Flink's
``UnalignedWindowTableFunctionOperator`` and ``UnslicingWindowOperator`` with the ``UnsliceWindowAggProcessor``).

A row of rowtime ``t`` opens the session ``[t, t + gap)`` of its key (the ``PARTITION BY`` columns of the TVF, the
group keys of the aggregate); sessions that intersect — touching included, as Flink's ``TimeWindow.intersects`` —
merge into one covering both (:func:`merge_sessions`). A session is kept in keyed state (namespaced table
``session-windows``: key → ``(start, end)`` → contents) with a timer at the instant of its last millisecond; when the
watermark reaches it the session fires and its state goes. A row whose (merged) session has fired already is late:
dropped and counted (``numLateRecordsDropped``).

* The **TVF** keeps the session's rows with their arrival number (per key, ``session-window-counter``) and emits them
  in arrival order with ``window_start, window_end, window_time`` appended, stamped ``window_time``.
* The **aggregate** keeps accumulators and emits ``keys..., aggregates..., window properties...`` unless the session
  is empty, as the slicing aggregate does.

Factories (what the planner calls)::

    session_window_tvf(stream, *, gap, partition_indices=(), time_zone=None, rowtime_index=-1,
                       field_names=None) -> DataStream[Row]
    session_window_aggregate(stream, *, key_indices, aggs, gap, time_zone=None,
                             window_properties=("window_start", "window_end"), rowtime_index=-1,
                             field_names=None) -> DataStream[Row]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from strom.exceptions import InvalidProgramError
from strom.runtime.operators.timer_service import InternalTimer, InternalTimerService
from strom.table.runtime.window.table_stream_operator import (
    ACCUMULATE_KINDS,
    AggsHandleFunction,
    RowKeySelector,
    TableStreamOperator,
    WindowProperties,
    ns_pop,
    ns_put,
)
from strom.table.runtime.window.time_window_util import TimeShift
from strom.table.runtime.window.window_aggregate import check_properties

if TYPE_CHECKING:
    from strom.api.datastream import DataStream

__all__ = ["SessionWindowOperator", "merge_sessions", "session_window_aggregate", "session_window_tvf"]

STATE_NAME = "session-windows"
COUNTER = "session-window-counter"
TIMERS = "session-window-timers"

Session = tuple[int, int]


def merge_sessions(existing: Iterable[Session], start: int, end: int) -> tuple[Session, list[Session]]:
    """The session ``[start, end)`` merged with every existing one it intersects (``a.start <= b.end`` and
    ``a.end >= b.start``): the covering session and the existing sessions it absorbs.

    >>> merge_sessions([(0, 5), (7, 12), (20, 25)], 4, 9)
    ((0, 12), [(0, 5), (7, 12)])
    >>> merge_sessions([(0, 5)], 5, 10)
    ((0, 10), [(0, 5)])
    """
    absorbed = [(s, e) for s, e in existing if s <= end and e >= start]
    if absorbed:
        start = min(start, *(s for s, _ in absorbed))
        end = max(end, *(e for _, e in absorbed))
    return (start, end), absorbed


class SessionWindowOperator(TableStreamOperator):
    """Sessions per key; with ``aggs`` the session aggregate, without the session TVF."""

    def __init__(
        self,
        key_selector: RowKeySelector,
        gap: int,
        *,
        aggs: AggsHandleFunction | None = None,
        time_zone: str | None = None,
        window_properties: Sequence[str] = ("window_start", "window_end"),
        rowtime_index: int = -1,
        field_names: Sequence[str] | None = None,
    ) -> None:
        super().__init__(rowtime_index=rowtime_index, field_names=field_names)
        if isinstance(gap, bool) or not isinstance(gap, int) or gap <= 0:
            raise InvalidProgramError(
                f"expected SESSION's gap as a positive int of milliseconds; got {gap!r}; hint: INTERVAL '5' SECOND "
                "is 5000"
            )
        self.name = "SessionWindowAggregate" if aggs is not None else "SessionWindowTableFunction"
        self.key_selector = key_selector
        self.gap = gap
        self.aggs = aggs
        self.shift = TimeShift(time_zone)
        self._props = check_properties(window_properties)
        self._properties = WindowProperties(self.shift)
        self._table: Any = {}
        self._counter: Any = {}
        self._timers: InternalTimerService | None = None

    def open(self) -> None:
        assert self.keyed_backend is not None
        self._table = self.keyed_backend.get_namespaced_table(STATE_NAME)
        self._counter = self.keyed_backend.get_table(COUNTER)
        self._timers = self.get_internal_timer_service(TIMERS, self)
        super().open()

    def process_batch(self, batch: list[Any]) -> None:
        key_of = self.key_selector
        backend, timers = self.keyed_backend, self._timers
        assert key_of is not None and backend is not None and timers is not None
        to_local, to_epoch, fired = self.shift.to_local, self.shift.to_epoch, self.shift.is_window_fired
        table, wm = self._table, self.current_watermark
        for row, t in zip(batch, self.rowtimes(batch), strict=True):
            if t is None:
                if self.aggs is not None:
                    raise InvalidProgramError(f"expected a non-NULL rowtime in '{self.name}'; got NULL in {row!r:.80}")
                continue  # the TVF drops rows without a rowtime (Flink's numNullRowTimeRecordsDropped)
            key = key_of(row)
            backend.current_key = key
            local = to_local(t)
            per_key = table.get(key)
            merged, absorbed = merge_sessions(list(per_key) if per_key else (), local, local + self.gap)
            if fired(merged[1], wm):
                self.num_late_records_dropped += 1
                continue
            contents = self._contents(key, row, [ns_pop(table, key, s) for s in absorbed])
            for s in absorbed:
                timers.delete_event_time_timer(s, to_epoch(s[1] - 1))
            ns_put(table, key, merged, contents)
            timers.register_event_time_timer(merged, to_epoch(merged[1] - 1))
        self._records_in += len(batch)

    def _contents(self, key: Any, row: Any, absorbed: list[Any]) -> Any:
        """The merged session's contents with ``row`` added: accumulators, or numbered rows."""
        aggs = self.aggs
        if aggs is not None:
            accs = absorbed[0] if absorbed else aggs.create_accumulators()
            for other in absorbed[1:]:
                aggs.merge(accs, other)
            if row._row_kind in ACCUMULATE_KINDS:
                aggs.accumulate(accs, row)
            else:
                aggs.retract(accs, row)
            return accs
        order = self._counter.get(key, 0)
        self._counter[key] = order + 1
        rows = [entry for contents in absorbed for entry in contents]
        rows.append((order, row))
        return rows

    def on_event_time(self, timer: InternalTimer) -> None:
        key, session = timer.key, timer.namespace
        contents = ns_pop(self._table, key, session)
        if contents is None:
            return
        ws, we, wt, wt_ms = self._properties.of(*session)
        aggs = self.aggs
        if aggs is not None:
            if aggs.record_count_is_zero(contents):
                return
            values = [*key, *aggs.get_value(contents)]
            props = (ws, we, wt)
            values.extend(props[i] for i in self._props)
            self.emit(values, wt_ms)
            return
        for _, row in sorted(contents, key=_first):
            self.emit([*row._values, ws, we, wt], wt_ms, row._row_kind)
        if self._table.get(key) is None:
            self._counter.pop(key, None)


def _first(entry: tuple[int, Any]) -> int:
    return entry[0]


def session_window_tvf(
    stream: DataStream[Any],
    *,
    gap: int,
    partition_indices: Sequence[int] = (),
    time_zone: str | None = None,
    rowtime_index: int = -1,
    field_names: Sequence[str] | None = None,
) -> DataStream[Any]:
    """``TABLE(SESSION(TABLE t PARTITION BY keys, DESCRIPTOR(rowtime), gap))``: rows with their sessions, emitted
    when the session ends."""
    selector = RowKeySelector(partition_indices)
    operator = SessionWindowOperator(
        selector, gap, time_zone=time_zone, rowtime_index=rowtime_index, field_names=field_names
    )
    return stream.key_by(selector)._one_input("SessionWindowTableFunction", operator)


def session_window_aggregate(
    stream: DataStream[Any],
    *,
    key_indices: Sequence[int],
    aggs: AggsHandleFunction,
    gap: int,
    time_zone: str | None = None,
    window_properties: Sequence[str] = ("window_start", "window_end"),
    rowtime_index: int = -1,
    field_names: Sequence[str] | None = None,
) -> DataStream[Any]:
    """``... FROM TABLE(SESSION(...)) GROUP BY window_start, window_end, keys``: one row per key and session."""
    selector = RowKeySelector(key_indices)
    operator = SessionWindowOperator(
        selector,
        gap,
        aggs=aggs,
        time_zone=time_zone,
        window_properties=window_properties,
        rowtime_index=rowtime_index,
        field_names=field_names,
    )
    return stream.key_by(selector)._one_input("SessionWindowAggregate", operator)
