"""Window aggregation over TUMBLE, HOP and CUMULATE (Flink's ``SlicingWindowOperator`` / ``WindowAggOperator`` with
the ``SliceSharedWindowAggProcessor`` and ``SliceUnsharedWindowAggProcessor``).

    counts = window_aggregate(rows, key_indices=[0], aggs=handle, assigner=HoppingSliceAssigner(10_000, 5_000))

emits, for every key and window, one insert-only row ``group keys..., aggregate values..., window properties...``
when the watermark passes the window's end, as Flink does:

* **Slices.** A row accumulates into exactly one slice (``assigner.assign_slice_end``); the rows of a batch are
  first grouped by key and slice (Flink's ``RecordsWindowBuffer``), then each group accumulates into its slice's
  accumulators in keyed state (namespaced table ``window-aggs``: key → slice end → accumulators) and registers the
  key's timer at the slice's window end. A window's result merges its slices: HOP the slices of the window (fresh
  accumulators), CUMULATE the step's slice into the first slice of its period, which keeps the running
  accumulators; TUMBLE reads its one slice.
* **Firing.** The timer of window end ``e`` (service ``window-timers``, namespace ``e``, at the instant of ``e - 1``)
  emits unless the window is empty (``record_count_is_zero``), registers the key's next window (HOP: while windows
  are not empty; CUMULATE: up to the period's end) and clears the slices no later window needs.
* **Late rows.** A row whose slice's window fired already goes into the merge target of its slice when a later
  window still contains it (and the first unfired window gets a timer); otherwise it is dropped and counted in
  ``numLateRecordsDropped``.
* **Windowed input** (``window_end_index >= 0``: the rows carry ``window_end`` already, Flink's
  ``WindowedSliceAssigner``): each row's window is that column; the assigner gives the windows' starts.

Output timestamp: ``window_time`` (the window's last millisecond, an instant). Output layout: the key columns, the
aggregate values, then ``window_properties`` — any of ``"window_start"``, ``"window_end"``, ``"window_time"`` in the
order given (Flink's named window properties).

Factory (what the planner calls)::

    window_aggregate(stream, *, key_indices, aggs, assigner, time_zone=None,
                     window_properties=("window_start", "window_end"), window_end_index=-1, rowtime_index=-1,
                     field_names=None, name="WindowAggregate") -> DataStream[Row]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from strom.api.row import RowKind
from strom.exceptions import InvalidProgramError
from strom.runtime.operators.timer_service import InternalTimer, InternalTimerService
from strom.table.runtime.window.slice_assigners import HoppingSliceAssigner, SliceAssigner
from strom.table.runtime.window.table_stream_operator import (
    AggsHandleFunction,
    RowKeySelector,
    TableStreamOperator,
    WindowProperties,
    fast_key,
    keys_of,
    ns_get,
    ns_pop,
    ns_put,
)
from strom.table.runtime.window.time_window_util import TimeShift, datetime_to_millis

if TYPE_CHECKING:
    from strom.api.datastream import DataStream

__all__ = ["WINDOW_PROPERTIES", "SlicingWindowAggOperator", "window_aggregate"]

WINDOW_PROPERTIES = ("window_start", "window_end", "window_time")
STATE_NAME = "window-aggs"
_INSERT, _UPDATE_AFTER = RowKind.INSERT, RowKind.UPDATE_AFTER
_NONE = object()
TIMERS = "window-timers"


def check_properties(properties: Sequence[str]) -> tuple[int, ...]:
    """The positions in ``(start, end, time)`` of the named window properties, in order."""
    out = []
    for p in properties:
        if p not in WINDOW_PROPERTIES:
            raise InvalidProgramError(
                f"expected window properties among {', '.join(WINDOW_PROPERTIES)}; got {p!r}; "
                "hint: window_properties=('window_start', 'window_end')"
            )
        out.append(WINDOW_PROPERTIES.index(p))
    return tuple(out)


class SlicingWindowAggOperator(TableStreamOperator):
    """Group-by keys and a TUMBLE/HOP/CUMULATE window: one row per key and window at the window's end."""

    def __init__(
        self,
        key_selector: RowKeySelector,
        aggs: AggsHandleFunction,
        assigner: SliceAssigner,
        *,
        time_zone: str | None = None,
        window_properties: Sequence[str] = ("window_start", "window_end"),
        window_end_index: int = -1,
        rowtime_index: int = -1,
        field_names: Sequence[str] | None = None,
    ) -> None:
        super().__init__(rowtime_index=rowtime_index, field_names=field_names)
        self.name = "WindowAggregate"
        if isinstance(assigner, HoppingSliceAssigner):
            assigner.check_sliceable()
        self.key_selector = key_selector
        self.aggs = aggs
        self.assigner = assigner
        self.shift = TimeShift(time_zone)
        self.window_end_index = window_end_index
        self._props = check_properties(window_properties)
        self._properties = WindowProperties(self.shift)
        self._shared = assigner.shared and window_end_index < 0
        self._table: Any = {}
        self._timers: InternalTimerService | None = None

    def open(self) -> None:
        assert self.keyed_backend is not None
        self._table = self.keyed_backend.get_namespaced_table(STATE_NAME)
        self._timers = self.get_internal_timer_service(TIMERS, self)
        super().open()

    # -- rows --------------------------------------------------------------------------------------------------
    def _slice_ends(self, batch: list[Any]) -> list[tuple[int, bool] | None]:
        """Each row's ``(slice end in local ms, whether that slice fired already)``; ``None``: late, dropped."""
        index = self.window_end_index
        if index >= 0:
            return [self._late_or(datetime_to_millis(r[index]), True) for r in batch]
        assigner, to_local, utc = self.assigner, self.shift.to_local, self.shift.utc
        interval = assigner.slice_interval
        out: list[tuple[int, bool] | None] = []
        lo, hi, slice_end = 1, 0, None  # the current slice [lo, hi) in local ms
        for row, t in zip(batch, self.rowtimes(batch), strict=True):
            if t is None:
                raise InvalidProgramError(
                    f"expected a non-NULL rowtime in '{self.name}'; got NULL in {row!r:.80}; hint: RowTime field "
                    "should not be null, please convert it to a non-null long value (Flink's message)"
                )
            local = t if utc else to_local(t)
            if not lo <= local < hi:
                hi = assigner.assign_slice_end(local)
                lo = hi - interval
                slice_end = self._late_or(hi, False)
            out.append(slice_end)
        return out

    def _late_or(self, slice_end: int, attached: bool) -> tuple[int, bool] | None:
        """The slice a row of slice ``slice_end`` goes into now: itself, the merge target of a fired slice some
        window still needs (with a timer for the first unfired window), or ``None``: late, dropped."""
        fired = self.shift.is_window_fired
        wm = self.current_watermark
        if not fired(slice_end, wm):
            return slice_end, False
        if attached or fired(self.assigner.last_window_end(slice_end), wm):
            return None
        return slice_end, True  # a fired slice a later window still needs

    def process_batch(self, batch: list[Any]) -> None:
        keys, slices = keys_of(fast_key(self.key_selector), batch), self._slice_ends(batch)
        distinct = set(slices)  # a few run-shared tuples: hashed in C
        if type(self._table) is dict and not any(s is None or s[1] for s in distinct):
            self._accumulate_rows(batch, keys, slices)  # heap state, no late rows, no fired slices: one pass
            self._records_in += len(batch)
            return
        groups: dict[tuple[int, bool], dict[Any, list[Any]]] = {}  # slice -> key -> rows (Flink's window buffer)
        per_key: dict[Any, list[Any]] = {}
        current: object = _NONE
        late = 0
        for row, k, slice_of in zip(batch, keys, slices, strict=True):
            if slice_of is not current:  # rows of one slice come in runs: one lookup per run
                if slice_of is None:
                    late += 1
                    continue
                current = slice_of
                per_key = groups.setdefault(slice_of, {})
            rows = per_key.get(k)
            if rows is None:
                per_key[k] = [row]
            else:
                rows.append(row)
        self.num_late_records_dropped += late
        for slice_of, by_key in groups.items():
            self._accumulate(slice_of, by_key)
        self._records_in += len(batch)

    def _accumulate_rows(self, batch: list[Any], keys: list[Any], slices: list[Any]) -> None:
        """:meth:`_accumulate` of a batch whose rows all go into unfired slices, on heap state, row by row in one
        pass (no buffer of rows per slice and key): the same accumulators, and each key's timer registered at its
        first row in the slice, in the order the buffer would register them."""
        backend, timers, aggs, table = self.keyed_backend, self._timers, self.aggs, self._table
        assert backend is not None and timers is not None
        register, to_epoch = timers.register_event_time_timer, self.shift.to_epoch
        accumulate, retract, create = aggs.accumulate, aggs.retract, aggs.create_accumulators
        current: object = _NONE
        slice_end = timer_time = 0
        for row, key, slice_of in zip(batch, keys, slices, strict=True):
            if slice_of is not current:
                current = slice_of
                slice_end = slice_of[0]
                timer_time = to_epoch(slice_end - 1)
            backend.current_key = key
            per_key = table.get(key)
            accs = None if per_key is None else per_key.get(slice_end)
            if accs is None:
                accs = create()
                if per_key is None:
                    table[key] = {slice_end: accs}
                else:
                    per_key[slice_end] = accs
                register(slice_end, timer_time)
            kind = row._row_kind
            if kind is _INSERT or kind is _UPDATE_AFTER:
                accumulate(accs, row)
            else:
                retract(accs, row)

    def _accumulate(self, slice_of: tuple[int, bool], by_key: dict[Any, list[Any]]) -> None:
        """Flink's ``AggCombiner.combine`` for each key: the rows into the slice's accumulators (or, for a fired
        slice, its merge target's), and the key's timer for the slice's (or first unfired) window."""
        backend, timers, aggs, table = self.keyed_backend, self._timers, self.aggs, self._table
        assert backend is not None and timers is not None
        slice_end, fired = slice_of
        timer_window: int | None = slice_end
        if fired:  # into its merge target; a timer for the first unfired window
            unfired = slice_end
            while self.shift.is_window_fired(unfired, self.current_watermark):
                unfired += self.assigner.slice_interval
            slice_end, timer_window = self.assigner.merge_target(slice_end), unfired
        elif self.shift.is_window_fired(slice_end, self.current_watermark):
            timer_window = None
        timer_time = 0 if timer_window is None else self.shift.to_epoch(timer_window - 1)
        register = timers.register_event_time_timer
        accumulate, retract, create = aggs.accumulate, aggs.retract, aggs.create_accumulators
        for key, rows in by_key.items():
            backend.current_key = key
            per_key = table.get(key)
            stored = None if per_key is None else per_key.get(slice_end)
            new = stored is None  # a slice seen before has its key's timer already (restored with it)
            accs: list[Any] = create() if stored is None else stored
            for row in rows:
                kind = row._row_kind
                if kind is _INSERT or kind is _UPDATE_AFTER:
                    accumulate(accs, row)
                else:
                    retract(accs, row)
            if per_key is None:
                table[key] = {slice_end: accs}
            else:
                per_key[slice_end] = accs
            if timer_window is not None and (new or fired):
                register(timer_window, timer_time)

    # -- windows -----------------------------------------------------------------------------------------------
    def on_event_time(self, timer: InternalTimer) -> None:
        """Fire the window ending at the timer's namespace for the timer's key, then clear what it no longer needs
        (Flink's ``fireWindow`` then ``clearWindow``)."""
        key, window_end = timer.key, timer.namespace
        table, aggs, assigner = self._table, self.aggs, self.assigner
        if self._shared:
            target, slices = assigner.merge_slices(window_end)
            accs = None if target is None else ns_get(table, key, target)
            if accs is None:
                accs = aggs.create_accumulators()
            for s in slices:
                other = ns_get(table, key, s)
                if other is not None:
                    aggs.merge(accs, other)
            if target is not None:
                ns_put(table, key, target, accs)
        else:
            accs = ns_get(table, key, window_end)
        empty = accs is None or aggs.record_count_is_zero(accs)
        if not empty:
            assert accs is not None
            self._emit(key, accs, window_end)
        if self._shared:
            nxt = assigner.next_trigger_window(window_end, empty)
            if nxt is not None and self._timers is not None:
                self._timers.register_event_time_timer(nxt, self.shift.to_epoch(nxt - 1))
            expired = assigner.expired_slices(window_end)
        else:
            expired = [window_end]
        for s in expired:
            ns_pop(table, key, s)

    def _emit(self, key: tuple[Any, ...], accs: list[Any], window_end: int) -> None:
        start_ms = self.assigner.window_start(window_end)
        props = self._properties.of(start_ms, window_end)
        values = [*key, *self.aggs.get_value(accs)]
        for i in self._props:
            values.append(props[i])
        self.emit(values, props[3])


def window_aggregate(
    stream: DataStream[Any],
    *,
    key_indices: Sequence[int],
    aggs: AggsHandleFunction,
    assigner: SliceAssigner,
    time_zone: str | None = None,
    window_properties: Sequence[str] = ("window_start", "window_end"),
    window_end_index: int = -1,
    rowtime_index: int = -1,
    field_names: Sequence[str] | None = None,
    name: str = "WindowAggregate",
) -> DataStream[Any]:
    """``SELECT keys, aggs, window_start, window_end FROM TABLE(TUMBLE|HOP|CUMULATE(...)) GROUP BY window_start,
    window_end, keys``: keyed by ``key_indices``, one insert-only row per key and window at the window's end."""
    selector = RowKeySelector(key_indices)
    operator = SlicingWindowAggOperator(
        selector,
        aggs,
        assigner,
        time_zone=time_zone,
        window_properties=window_properties,
        window_end_index=window_end_index,
        rowtime_index=rowtime_index,
        field_names=field_names,
    )
    return stream.key_by(selector)._one_input(name, operator)
