"""Sliding group-window aggregation of any size and slide (Flink's legacy ``AggregateWindowOperator`` with a
``SlidingWindowAssigner`` and its ``PanedWindowProcessFunction``, which run Table API ``Slide.over(size).every(slide)``
and SQL ``GROUP BY HOP(...)``).

    sums = sliding_window_aggregate(rows, key_indices=[0], aggs=handle, size=5_000, slide=2_000)

Flink's window TVF aggregation needs ``size`` to be a multiple of ``slide``
(:mod:`strom.table.runtime.window.window_aggregate`); its legacy group windows allow any size and slide. This
operator does what Flink's does:

* **Panes.** A row accumulates into its pane, the slice of ``gcd(size, slide)`` containing its rowtime (keyed,
  namespaced table ``group-window-panes``: key → pane end → accumulators), and registers the key's timer for each
  window ``[start, start + size)`` (``start`` a multiple of ``slide`` plus ``offset``) containing it whose end the
  watermark has not passed (service ``group-window-timers``, namespace the window end, at its last millisecond). A
  row whose pane's last window fired already is dropped (``numLateRecordsDropped``), as Flink's ``isPaneLate``.
* **Firing.** The timer merges the window's panes, oldest first, into fresh accumulators (Flink's
  ``prepareAggregateAccumulatorForEmit``: FLOAT sums round in that order), emits one insert-only row ``keys...,
  aggregate values..., window properties...`` unless the window is empty (``record_count_is_zero``), then clears the
  panes whose last window it is.

Output timestamp: ``window_time``; ``window_properties`` as for :func:`window_aggregate`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from strom.api.row import RowKind
from strom.exceptions import InvalidProgramError
from strom.runtime.operators.timer_service import InternalTimer, InternalTimerService
from strom.table.runtime.window.slice_assigners import HoppingSliceAssigner
from strom.table.runtime.window.table_stream_operator import (
    AggsHandleFunction,
    RowKeySelector,
    TableStreamOperator,
    WindowProperties,
    fast_key,
)
from strom.table.runtime.window.time_window_util import TimeShift, window_start_with_offset
from strom.table.runtime.window.window_aggregate import check_properties

if TYPE_CHECKING:
    from strom.api.datastream import DataStream

__all__ = ["AggregateWindowOperator", "sliding_window_aggregate"]

STATE_NAME = "group-window-panes"
TIMERS = "group-window-timers"
_INSERT, _UPDATE_AFTER = RowKind.INSERT, RowKind.UPDATE_AFTER


class AggregateWindowOperator(TableStreamOperator):
    """Group-by keys and a sliding window of any size and slide: one row per key and window at the window's end."""

    def __init__(
        self,
        key_selector: RowKeySelector,
        aggs: AggsHandleFunction,
        assigner: HoppingSliceAssigner,
        *,
        time_zone: str | None = None,
        window_properties: Sequence[str] = ("window_start", "window_end"),
        rowtime_index: int = -1,
        field_names: Sequence[str] | None = None,
    ) -> None:
        super().__init__(rowtime_index=rowtime_index, field_names=field_names)
        self.name = "GroupWindowAggregate"
        self.key_selector = key_selector
        self.aggs = aggs
        self.assigner = assigner
        self.shift = TimeShift(time_zone)
        self._props = check_properties(window_properties)
        self._properties = WindowProperties(self.shift)
        self._table: Any = {}
        self._timers: InternalTimerService | None = None

    def open(self) -> None:
        assert self.keyed_backend is not None
        self._table = self.keyed_backend.get_namespaced_table(STATE_NAME)
        self._timers = self.get_internal_timer_service(TIMERS, self)
        super().open()

    def _last_window_end(self, pane_end: int) -> int:
        """The end of the last window containing the pane ending at ``pane_end`` (Flink's ``getLastWindow``)."""
        a = self.assigner
        return window_start_with_offset(pane_end - a.slice_size, a.offset, a.slide) + a.size

    def _panes(self, batch: list[Any]) -> list[tuple[int, list[int]] | None]:
        """Each row's ``(pane end, ends of its windows not fired yet)`` in local ms; ``None``: late, dropped.
        Computed once per run of equal rowtimes."""
        assigner, shift, wm = self.assigner, self.shift, self.current_watermark
        to_local, utc, fired = shift.to_local, shift.utc, shift.is_window_fired
        out: list[tuple[int, list[int]] | None] = []
        last_t: Any = None
        current: tuple[int, list[int]] | None = None
        for row, t in zip(batch, self.rowtimes(batch), strict=True):
            if t is None:
                raise InvalidProgramError(
                    f"expected a non-NULL rowtime in '{self.name}'; got NULL in {row!r:.80}; hint: RowTime field "
                    "should not be null, please convert it to a non-null long value (Flink's message)"
                )
            if t != last_t:
                last_t = t
                local = t if utc else to_local(t)
                pane = assigner.assign_slice_end(local)
                if fired(self._last_window_end(pane), wm):
                    current = None
                else:
                    current = (pane, [e for _, e in assigner.assign_windows(local) if not fired(e, wm)])
            out.append(current)
        return out

    def process_batch(self, batch: list[Any]) -> None:
        key_of = fast_key(self.key_selector)
        by_key: dict[Any, list[tuple[Any, tuple[int, list[int]]]]] = {}
        late = 0
        for row, pane in zip(batch, self._panes(batch), strict=True):
            if pane is None:
                late += 1
                continue
            rows = by_key.get(k := key_of(row))
            if rows is None:
                by_key[k] = [(row, pane)]
            else:
                rows.append((row, pane))
        self.num_late_records_dropped += late
        for key, rows in by_key.items():
            self._accumulate(key, rows)
        self._records_in += len(batch)

    def _accumulate(self, key: Any, rows: list[tuple[Any, tuple[int, list[int]]]]) -> None:
        """The key's rows into their panes' accumulators (in arrival order); the key's timers for their windows."""
        backend, timers, aggs, table = self.keyed_backend, self._timers, self.aggs, self._table
        assert backend is not None and timers is not None
        backend.current_key = key
        accumulate, retract, create = aggs.accumulate, aggs.retract, aggs.create_accumulators
        register, to_epoch = timers.register_event_time_timer, self.shift.to_epoch
        stored = table.get(key)  # on RocksDB a write-through mapping handing out copies: changed panes are stored
        touched: dict[int, list[Any]] = {}
        last: Any = None
        for row, (pane, ends) in rows:
            accs = touched.get(pane)
            if accs is None:
                accs = None if stored is None else stored.get(pane)
                touched[pane] = accs = create() if accs is None else accs
            kind = row._row_kind
            if kind is _INSERT or kind is _UPDATE_AFTER:
                accumulate(accs, row)
            else:
                retract(accs, row)
            if ends is not last:  # one registration per run of rows with the same windows
                last = ends
                for end in ends:
                    register(end, to_epoch(end - 1))
        if stored is None:
            table[key] = touched
        else:
            for pane, accs in touched.items():
                stored[pane] = accs

    def on_event_time(self, timer: InternalTimer) -> None:
        """Merge the window's panes (oldest first), emit unless empty, clear the panes it was the last window of."""
        key, window_end = timer.key, timer.namespace
        table, aggs, assigner = self._table, self.aggs, self.assigner
        panes = table.get(key)
        if panes is None:
            return
        accs = aggs.create_accumulators()
        start, step = window_end - assigner.size, assigner.slice_size
        ends = range(start + step, window_end + 1, step)
        for pane in ends:
            other = panes.get(pane)
            if other is not None:
                aggs.merge(accs, other)
        if not aggs.record_count_is_zero(accs):
            props = self._properties.of(start, window_end)
            values = [*key, *aggs.get_value(accs)]
            for i in self._props:
                values.append(props[i])
            self.emit(values, props[3])
        last_window_end = self._last_window_end
        for pane in ends:
            if last_window_end(pane) == window_end:
                panes.pop(pane, None)
        if not panes:
            table.pop(key, None)


def sliding_window_aggregate(
    stream: DataStream[Any],
    *,
    key_indices: Sequence[int],
    aggs: AggsHandleFunction,
    size: int,
    slide: int,
    offset: int = 0,
    time_zone: str | None = None,
    window_properties: Sequence[str] = ("window_start", "window_end"),
    rowtime_index: int = -1,
    field_names: Sequence[str] | None = None,
) -> DataStream[Any]:
    """``GROUP BY HOP(ts, slide, size), keys`` / ``Slide.over(size).every(slide)`` of any size and slide: keyed by
    ``key_indices``, one insert-only row per key and window at the window's end (times in milliseconds)."""
    selector = RowKeySelector(key_indices)
    operator = AggregateWindowOperator(
        selector,
        aggs,
        HoppingSliceAssigner(size, slide, offset),
        time_zone=time_zone,
        window_properties=window_properties,
        rowtime_index=rowtime_index,
        field_names=field_names,
    )
    return stream.key_by(selector)._one_input("GroupWindowAggregate", operator)
