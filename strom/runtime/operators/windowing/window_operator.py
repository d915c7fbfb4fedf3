"""``WindowOperator``: keyed windows with Flink's semantics (Flink's ``WindowOperator`` and
``EvictingWindowOperator`` in one class).

Per element: the assigner names its windows; a window whose cleanup time (``max_timestamp + allowed
lateness`` in event time) the watermark has passed is skipped; otherwise the element goes into the pane's
state (an accumulator for ``reduce``/``aggregate``, the element list for ``apply``/``process`` and for evicting
windows), the trigger sees it, and its result may fire (emit the pane through the window function) and/or
purge (clear it). A cleanup timer per window clears its state, trigger state and per-window function state when
it expires. An element all of whose windows were skipped is *late* if its timestamp plus the allowed lateness
is behind the watermark: it goes to the late-data side output, or is dropped and counted. Merging assigners
(sessions) track in-flight windows per key in a :class:`MergingWindowSet` kept in keyed state.

Everything — pane contents, trigger state, merging window sets and timers — lives in the keyed state backend,
so windows are checkpointed, restored and rescaled by key group. Emitted records carry the window's
``max_timestamp`` as their timestamp.

The common case (tumbling or sliding event-time windows, the default ``EventTimeTrigger``, no evictor) runs
through a fast path that does exactly what the general path does for that trigger, without a trigger context
per element: its panes are kept window by window (:class:`~strom.runtime.operators.windowing.window_panes.WindowPanes`:
window → key → pane, one firing and one cleanup entry per window instead of a timer per key and window), and
written into the keyed backend as the general path keeps them only while a snapshot is taken.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from strom.api._time import java_rem
from strom.api.eventtime import LONG_MAX, LONG_MIN
from strom.api.state import (
    AggregateFunction,
    AggregatingStateDescriptor,
    ListStateDescriptor,
    ReducingStateDescriptor,
    StateDescriptor,
)
from strom.api.windowing.assigners import (
    MergingWindowAssigner,
    SlidingEventTimeWindows,
    TumblingEventTimeWindows,
    WindowAssigner,
    WindowStagger,
)
from strom.api.windowing.evictors import Evictor
from strom.api.windowing.triggers import EventTimeTrigger, Trigger, TriggerResult
from strom.api.windowing.windows import TimestampedValue, TimeWindow, Window
from strom.exceptions import InvalidProgramError
from strom.runtime.operators.collector import TimestampedCollector
from strom.runtime.operators.keyed import _KeyedUdfOperator
from strom.runtime.operators.timer_service import InternalTimer, InternalTimerService
from strom.runtime.operators.windowing.internal_functions import InternalWindowFunction
from strom.runtime.operators.windowing.merging_window_set import MergingWindowSet
from strom.runtime.operators.windowing.window_contexts import WindowContext
from strom.runtime.operators.windowing.window_panes import FIRE, WindowPanes
from strom.runtime.streamrecord import TimestampedBatch

if TYPE_CHECKING:
    from strom.runtime.checkpoint.snapshot import OperatorSnapshot

__all__ = ["WindowOperator"]

_MISSING: Any = object()
CONTENTS = "window-contents"
_AGGREGATE, _REDUCE, _LIST = 0, 1, 2
_PANE_KINDS = {"aggregate": _AGGREGATE, "reduce": _REDUCE, "list": _LIST}
_WINDOW_CACHE_SIZE = 64
# a slide interval's windows: the open ones (window, its pane map, waits to fire for some keys only), those behind
# the watermark within the allowed lateness, and whether any window is not late
_SlidePlan = tuple[list[tuple[TimeWindow, dict[Any, Any], bool]], list[TimeWindow], bool]
MERGING_WINDOW_SET = "merging-window-set"


class WindowOperator(_KeyedUdfOperator):
    """``contents`` is ``"reduce"``, ``"aggregate"`` or ``"list"`` (evicting windows always keep lists)."""

    def __init__(
        self,
        *,
        key_selector: object,
        assigner: WindowAssigner[Any, Any],
        trigger: Trigger[Any, Any],
        evictor: Evictor[Any, Any] | None,
        window_function: InternalWindowFunction,
        contents: str,
        reduce_function: Callable[[Any, Any], Any] | None = None,
        aggregate_function: AggregateFunction[Any, Any, Any] | None = None,
        allowed_lateness: int = 0,
        late_data_tag: str | None = None,
    ) -> None:
        super().__init__(window_function.user_function, key_selector)
        if allowed_lateness < 0:
            raise InvalidProgramError(
                f"expected allowed_lateness >= 0; got {allowed_lateness} ms; hint: allowed_lateness(timedelta(0))"
            )
        if isinstance(assigner, MergingWindowAssigner) and not trigger.can_merge():
            raise InvalidProgramError(
                f"expected a trigger that can merge windows for the merging assigner {assigner!r}; got {trigger!r}; "
                "hint: session windows need a trigger whose can_merge() is True (EventTimeTrigger, "
                "ProcessingTimeTrigger, CountTrigger, ...)"
            )
        self.assigner = assigner
        self.trigger = trigger
        self.evictor = evictor
        self.window_function = window_function
        self.contents = "list" if evictor is not None else contents
        self.reduce_function = reduce_function
        self.aggregate_function = aggregate_function
        self.is_event_time = assigner.is_event_time()
        # Flink: allowed lateness only applies to event time
        self.allowed_lateness = allowed_lateness if self.is_event_time else 0
        self.late_data_tag = late_data_tag
        self.merging = isinstance(assigner, MergingWindowAssigner)
        self.num_late_records_dropped = 0
        self._collector: TimestampedCollector = TimestampedCollector()
        self._fast = False  # decided in open()
        self._store = WindowPanes(self.allowed_lateness)  # the fast path's panes
        # the tumbling fast path's windows by start: one object per window, so the pane maps of a window are found
        # by an identity check (not a comparison of large ints)
        self._windows: dict[int, TimeWindow] = {}

    # -- lifecycle -----------------------------------------------------------------------------------
    def _descriptor(self) -> StateDescriptor:
        if self.contents == "reduce":
            assert self.reduce_function is not None
            return ReducingStateDescriptor(CONTENTS, self.reduce_function)
        if self.contents == "aggregate":
            assert self.aggregate_function is not None
            return AggregatingStateDescriptor(CONTENTS, self.aggregate_function)
        return ListStateDescriptor(CONTENTS)

    def open(self) -> None:
        backend = self.keyed_backend
        assert backend is not None and self.runtime_context is not None
        self.window_state: Any = backend.get_state(self._descriptor())
        self._table: dict[Any, dict[Any, Any]] = backend.get_namespaced_table(CONTENTS)
        self._merging_sets: dict[Any, Any] = backend.get_table(MERGING_WINDOW_SET)
        self.timer_service: InternalTimerService = self.get_internal_timer_service("window-timers", self)
        self.ctx = WindowContext(self)
        # BATCH execution fires key by key (Flink's batch order) through the timer service, not window by window
        self._fast = self._fast_path_applies() and not self.runtime_context.info.batch_execution
        if self._fast:
            self._store.absorb(self._table, self.timer_service._event)  # what a restore brought
        try:
            self.window_function.open(self.runtime_context)
        except Exception as exc:
            raise self.user_error(exc, None) from exc

    def close(self) -> None:
        try:
            self.window_function.close()
        except Exception as exc:
            raise self.user_error(exc, None) from exc

    def _fast_path_applies(self) -> bool:
        a = self.assigner
        if self.evictor is not None or type(self.trigger) is not EventTimeTrigger:
            return False
        if type(a) is TumblingEventTimeWindows:
            return a.window_stagger is WindowStagger.ALIGNED
        return type(a) is SlidingEventTimeWindows

    # -- time ----------------------------------------------------------------------------------------
    def get_current_processing_time(self) -> int:
        """The :class:`WindowAssignerContext` of the assigner."""
        return self.timer_service.current_processing_time()

    def cleanup_time(self, window: Window) -> int:
        if self.is_event_time:
            t = window.max_timestamp() + self.allowed_lateness
            return t if t < LONG_MAX else LONG_MAX
        return window.max_timestamp()

    def is_window_late(self, window: Window) -> bool:
        return self.is_event_time and self.cleanup_time(window) <= self.current_watermark

    def _register_cleanup_timer(self, window: Window) -> None:
        t = self.cleanup_time(window)
        if t == LONG_MAX:
            return
        if self.is_event_time:
            self.timer_service.register_event_time_timer(window, t)
        else:
            self.timer_service.register_processing_time_timer(window, t)

    def _delete_cleanup_timer(self, window: Window) -> None:
        t = self.cleanup_time(window)
        if t == LONG_MAX:
            return
        if self.is_event_time:
            self.timer_service.delete_event_time_timer(window, t)
        else:
            self.timer_service.delete_processing_time_timer(window, t)

    # -- elements ------------------------------------------------------------------------------------
    def process_batch(self, batch: list[Any]) -> None:
        timestamps: Any = batch.timestamps if type(batch) is TimestampedBatch else None
        if self._fast and timestamps is not None:
            self._process_fast(batch, timestamps)
        else:
            self._process_general(batch, timestamps)
        self._records_in += len(batch)
        self._collector.flush(self.output)

    def _process_general(self, batch: list[Any], timestamps: list[int | None] | None) -> None:
        key_of = self._key
        backend = self.keyed_backend
        assert backend is not None
        v = None
        try:
            for i, v in enumerate(batch):
                t = timestamps[i] if timestamps is not None else None
                k = key_of(v)
                backend.current_key = k
                self._process_element(k, v, LONG_MIN if t is None else t, t)
        except Exception as exc:
            raise self.user_error(self._explain(exc, v), batch, v) from exc

    def _process_element(self, key: Any, value: Any, timestamp: int, record_ts: int | None) -> None:
        windows = self.assigner.assign_windows(value, timestamp, self)
        skipped = True
        ctx = self.ctx
        backend = self.keyed_backend
        assert backend is not None
        stored = value if self.evictor is None else (value, record_ts)
        if self.merging:
            merging = self._merging_set(key)
            for window in windows:
                actual = merging.add_window(window, self._merge_function(key))
                if self.is_window_late(actual):
                    merging.retire_window(actual)
                    continue
                skipped = False
                state_window = merging.get_state_window(actual)
                if state_window is None:
                    raise AssertionError(f"window {actual!r} has no state window in its merging window set")
                self._add(state_window, stored)
                ctx.set(key, actual)
                result = self.trigger.on_element(value, timestamp, actual, ctx)
                self._act(key, actual, state_window, result)
                self._register_cleanup_timer(actual)
            self._persist(key, merging)
        else:
            for window in windows:
                if self.is_window_late(window):
                    continue
                skipped = False
                self._add(window, stored)
                ctx.set(key, window)
                result = self.trigger.on_element(value, timestamp, window, ctx)
                self._act(key, window, window, result)
                self._register_cleanup_timer(window)
        if skipped and self.is_event_time and timestamp + self.allowed_lateness <= self.current_watermark:
            self._late(value, record_ts)

    def _add(self, state_window: Any, stored: Any) -> None:
        backend = self.keyed_backend
        assert backend is not None
        backend.current_namespace = state_window
        try:
            self.window_state.add(stored)
        finally:
            backend.current_namespace = None

    def _act(self, key: Any, window: Any, state_window: Any, result: TriggerResult) -> None:
        if result.is_fire():
            contents = self._contents(state_window)
            if contents is not None:
                self._emit(key, window, contents)
        if result.is_purge():
            self._clear_contents(state_window)

    def _late(self, value: Any, record_ts: int | None) -> None:
        if self.late_data_tag is not None:
            self._collector.add_side(self.late_data_tag, value, record_ts)
        else:
            self.num_late_records_dropped += 1

    # -- the fast path: tumbling/sliding event-time windows with the EventTimeTrigger -----------------
    # The panes live window by window in ``self._store`` (see window_panes.py); only snapshots see them in the
    # keyed backend.
    def _process_fast(self, batch: list[Any], timestamps: list[Any]) -> None:
        if type(self.assigner) is TumblingEventTimeWindows:
            self._process_tumbling(batch, timestamps)
        else:
            self._process_sliding(batch, timestamps)

    def _process_tumbling(self, batch: list[Any], timestamps: list[Any]) -> None:
        """One window per element. A run of elements in one window (event time mostly advances) shares the window,
        its pane map and whether the watermark passed its end; per element: the key and one pane update."""
        key_of = self._key
        store = self._store
        all_panes = store.panes
        pending = store.pending
        kind = _PANE_KINDS[self.contents]
        agg = self.aggregate_function
        create = agg.create_accumulator if agg is not None else None
        add = agg.add if agg is not None else None
        reduce = self.reduce_function
        size: int = self.assigner.size  # type: ignore[attr-defined]
        offset = java_rem(self.assigner.global_offset, size)  # type: ignore[attr-defined]
        wm = self.current_watermark
        windows = self._windows
        if len(windows) > _WINDOW_CACHE_SIZE:
            windows.clear()
        w: Any = None
        panes: Any = None
        waiting: set[Any] | None = None
        start, end = 1, 0  # the current window [start, end); none yet
        behind = False
        v = t = None
        try:
            for v, t in zip(batch, timestamps, strict=True):
                # timestamps are large ints: comparing them allocates nothing, arithmetic does
                if not start <= t < end:
                    start = t - (t - offset) % size
                    end = start + size
                    w = windows.get(start)
                    if w is None:
                        w = windows[start] = TimeWindow(start, end)
                    behind = end - 1 <= wm
                    if not behind:
                        panes = all_panes.get(w)
                        if panes is None:
                            panes = store.open_window(w, wm)
                        waiting = pending.get(w)
                if behind:  # the window's end is behind the watermark: late, or fires at once
                    self._add_behind(key_of(v), v, t, w)
                    continue
                k = key_of(v)
                if waiting is not None:  # the window waits to fire for some keys only (a restore): now for this one
                    store.await_firing(w, k)
                old = panes.get(k, _MISSING)
                if old is _MISSING:
                    panes[k] = add(v, create()) if kind == _AGGREGATE else v if kind == _REDUCE else [v]  # type: ignore[misc]
                elif kind == _AGGREGATE:
                    panes[k] = add(v, old)  # type: ignore[misc]
                elif kind == _REDUCE:
                    panes[k] = reduce(old, v)  # type: ignore[misc]
                else:
                    old.append(v)
        except Exception as exc:
            error = _no_timestamp(self.name, v) if t is None else self._explain(exc, v)
            raise self.user_error(error, batch, v) from error

    def _process_sliding(self, batch: list[Any], timestamps: list[Any]) -> None:
        """Several windows per element. When the size is a multiple of the slide, the elements of one slide interval
        share their windows, so the plan of each interval — which windows are open (with their pane maps), which
        are behind the watermark — is made once per batch; otherwise once per element."""
        key_of = self._key
        assigner = self.assigner
        lateness = self.allowed_lateness
        kind = _PANE_KINDS[self.contents]
        agg = self.aggregate_function
        create = agg.create_accumulator if agg is not None else None
        add = agg.add if agg is not None else None
        reduce = self.reduce_function
        slide = assigner.slide  # type: ignore[attr-defined]
        offset = assigner.offset  # type: ignore[attr-defined]
        cacheable = assigner.size % slide == 0  # type: ignore[attr-defined]
        plans: dict[int, _SlidePlan] = {}
        plan: _SlidePlan = ([], [], False)
        start, end = 1, 0  # the current slide interval [start, end); none yet
        wm = self.current_watermark
        v = None
        try:
            for v, t in zip(batch, timestamps, strict=True):
                if t is None:
                    raise _no_timestamp(self.name, v)
                if not cacheable:
                    plan = self._slide_plan(t)
                elif not start <= t < end:  # timestamps are large ints: comparing them allocates nothing
                    start = t - (t - offset) % slide
                    end = start + slide
                    cached = plans.get(start)
                    plan = plans[start] = self._slide_plan(t) if cached is None else cached
                open_windows, behind, live = plan
                k = key_of(v)
                for w, panes, waiting in open_windows:
                    if waiting:  # the window waits to fire for some keys only (a restore): now for this one
                        self._store.await_firing(w, k)
                    old = panes.get(k, _MISSING)
                    if old is _MISSING:
                        panes[k] = add(v, create()) if kind == _AGGREGATE else v if kind == _REDUCE else [v]  # type: ignore[misc]
                    elif kind == _AGGREGATE:
                        panes[k] = add(v, old)  # type: ignore[misc]
                    elif kind == _REDUCE:
                        panes[k] = reduce(old, v)  # type: ignore[misc]
                    else:
                        old.append(v)
                for w in behind:
                    self._add_and_fire(k, v, w)  # EventTimeTrigger: behind the watermark, it fires at once
                if not live and t + lateness <= wm:
                    self._late(v, t)
        except Exception as exc:
            raise self.user_error(self._explain(exc, v), batch, v) from exc

    def _slide_plan(self, timestamp: int) -> _SlidePlan:
        """The windows of ``timestamp`` that are open (each with its pane map and whether it waits to fire for some
        keys only), those behind the watermark but within the allowed lateness, and whether any is not late."""
        store = self._store
        wm = self.current_watermark
        open_windows: list[tuple[TimeWindow, dict[Any, Any], bool]] = []
        behind: list[TimeWindow] = []
        for w in self.assigner._windows_of(timestamp):  # type: ignore[attr-defined]
            max_ts = w[1] - 1
            if max_ts + self.allowed_lateness <= wm:
                continue  # the window is late: its state is gone
            if max_ts <= wm:
                behind.append(w)
                continue
            panes = store.panes.get(w)
            if panes is None:
                panes = store.open_window(w, wm)
            open_windows.append((w, panes, w in store.pending))
        return open_windows, behind, bool(open_windows or behind)

    def _add_behind(self, k: Any, v: Any, t: int, w: TimeWindow) -> None:
        """An element of a window whose end the watermark has passed: dropped as late once its cleanup time has
        passed too; otherwise (allowed lateness) added, and the window fires at once."""
        if w[1] - 1 + self.allowed_lateness <= self.current_watermark:
            self._late(v, t)  # the window's state is gone
        else:
            self._add_and_fire(k, v, w)

    def _add_and_fire(self, k: Any, v: Any, w: TimeWindow) -> None:
        """An element within the allowed lateness: into the pane, which the EventTimeTrigger fires at once."""
        store = self._store
        panes = store.panes.get(w)
        if panes is None:
            panes = store.open_window(w, self.current_watermark)
        old = panes.get(k, _MISSING)
        if self.contents == "aggregate":
            agg = self.aggregate_function
            assert agg is not None
            pane = panes[k] = agg.add(v, agg.create_accumulator() if old is _MISSING else old)
            contents = [agg.get_result(pane)]
        elif self.contents == "reduce":
            assert self.reduce_function is not None
            pane = panes[k] = v if old is _MISSING else self.reduce_function(old, v)
            contents = [pane]
        elif old is _MISSING:
            contents = panes[k] = [v]
        else:
            old.append(v)
            contents = old
        backend = self.keyed_backend
        assert backend is not None
        backend.current_key = k
        self._emit(k, w, contents)

    def _fire_due(self, watermark: int) -> None:
        """The fast path's windows whose end (fire) or cleanup time the watermark reached, in order of time."""
        store = self._store
        while (due := store.due(watermark)) is not None:
            for action, w in due[1]:
                if action == FIRE:
                    self._fire_window(w, cleanup=self.allowed_lateness == 0)
                else:
                    self._cleanup_window(w)

    def _fire_window(self, w: TimeWindow, *, cleanup: bool) -> None:
        """What the EventTimeTrigger's timers of ``w`` do at its end, for every key waiting: emit the pane through
        the window function (stamped with the window's max timestamp); ``cleanup``: clear the window's state."""
        store = self._store
        panes = store.panes.pop(w, None) if cleanup else store.panes.get(w)
        waiting = store.pending.pop(w, None)
        if not panes:
            return
        kind = _PANE_KINDS[self.contents]
        agg = self.aggregate_function
        get_result = agg.get_result if agg is not None else None
        wf = self.window_function
        process = wf.keyed_process  # a ProcessWindowFunction's ``process``, called without the adapter
        fn = wf.direct_call
        clear = wf._clear if cleanup else None
        out: list[Any] = []
        extend = out.extend
        ctx = self.ctx
        ctx._window = w
        backend = self.keyed_backend
        assert backend is not None
        key = None
        try:
            for key, stored in panes.items():
                backend.current_key = key
                ctx.key = key
                if waiting is None or key in waiting:
                    if kind == _AGGREGATE:
                        contents = [get_result(stored)]  # type: ignore[misc]
                    elif kind == _REDUCE:
                        contents = [stored]
                    else:
                        contents = stored
                    results = process(key, ctx, contents) if process is not None else fn(key, w, ctx, contents)
                    if results is not None:
                        extend(results)
                if clear is not None:
                    clear(ctx)
        except Exception as exc:
            role = f"the window function of operator '{self.name}' (key {key!r:.60})"
            raise self.user_error(exc, None, role=role) from exc
        if out:
            self._collector.add_all(out, w[1] - 1)

    def _cleanup_window(self, w: TimeWindow) -> None:
        """The cleanup time of ``w`` (with allowed lateness): its panes go, its per-window function state too."""
        store = self._store
        panes = store.panes.pop(w, None)
        store.pending.pop(w, None)
        clear = self.window_function._clear
        if not panes or clear is None:
            return
        ctx = self.ctx
        ctx._window = w
        backend = self.keyed_backend
        assert backend is not None
        key = None
        try:
            for key in panes:
                backend.current_key = key
                ctx.key = key
                clear(ctx)
        except Exception as exc:
            role = f"the window function of operator '{self.name}' (key {key!r:.60})"
            raise self.user_error(exc, None, role=role) from exc

    def snapshot_state(self, checkpoint_id: int, timestamp_ms: int) -> OperatorSnapshot | None:
        if not self._fast:
            return super().snapshot_state(checkpoint_id, timestamp_ms)
        # the backend holds the panes and timers only while the snapshot is taken, as the general path keeps them
        timers = self.timer_service._event
        self._store.materialize(self._table, timers)
        try:
            return super().snapshot_state(checkpoint_id, timestamp_ms)
        finally:
            self._store.dematerialize(self._table, timers)

    # -- contents ------------------------------------------------------------------------------------
    def _contents(self, state_window: Any) -> Any:
        """The pane as the window function takes it: a one-element list, or the elements; ``None``: empty."""
        backend = self.keyed_backend
        assert backend is not None
        backend.current_namespace = state_window
        try:
            if self.contents == "list":
                elements = self.window_state.get()
                return elements or None
            value = self.window_state.get()
            return None if value is None else [value]
        finally:
            backend.current_namespace = None

    def _clear_contents(self, state_window: Any) -> None:
        backend = self.keyed_backend
        assert backend is not None
        backend.current_namespace = state_window
        try:
            self.window_state.clear()
        finally:
            backend.current_namespace = None

    def _emit(self, key: Any, window: Any, contents: list[Any]) -> None:
        ctx = self.ctx
        ctx.set(key, window)
        timestamp = window.max_timestamp()
        if self.evictor is None:
            results = self.window_function(key, window, ctx, contents)
        else:
            results = self._emit_evicting(key, window, contents)
        if results is not None:
            self._collector.add_all(results, timestamp)

    def _emit_evicting(self, key: Any, window: Any, contents: list[Any]) -> Any:
        """Flink's ``EvictingWindowOperator.emitWindowContents``: evict before, apply, evict after, keep the rest."""
        evictor = self.evictor
        assert evictor is not None
        ctx = self.ctx
        records = [TimestampedValue(v, t) for v, t in contents]
        evictor.evict_before(records, len(records), window, ctx)
        results = self.window_function(key, window, ctx, [r.value for r in records])
        if results is not None:
            results = list(results)  # run the function before evicting after it
        evictor.evict_after(records, len(records), window, ctx)
        self._clear_contents(window if not self.merging else self._state_window_of(key, window))
        remaining = [(r.value, r.timestamp) for r in records]
        if remaining:
            backend = self.keyed_backend
            assert backend is not None
            backend.current_namespace = window if not self.merging else self._state_window_of(key, window)
            try:
                self.window_state.add_all(remaining)
            finally:
                backend.current_namespace = None
        return results

    def _state_window_of(self, key: Any, window: Any) -> Any:
        state_window = self._merging_set(key).get_state_window(window)
        return window if state_window is None else state_window

    # -- merging windows -----------------------------------------------------------------------------
    def _merging_set(self, key: Any) -> MergingWindowSet[Any]:
        return MergingWindowSet(self.assigner, self._merging_sets.get(key))  # type: ignore[arg-type]

    def _persist(self, key: Any, merging: MergingWindowSet[Any]) -> None:
        if merging.has_updates():
            mapping = merging.persist()
            if mapping:
                self._merging_sets[key] = mapping
            else:
                self._merging_sets.pop(key, None)

    def _merge_function(self, key: Any) -> Callable[[Any, Collection[Any], Any, Collection[Any]], None]:
        def merge(merge_result: Any, merged: Collection[Any], state_result: Any, merged_state: Collection[Any]) -> None:
            if self.is_event_time and self.cleanup_time(merge_result) <= self.current_watermark:
                raise InvalidProgramError(
                    f"expected merged windows to end after the current watermark {self.current_watermark}; got "
                    f"{merge_result!r} (operator '{self.name}'); hint: the end timestamp of an event-time window "
                    "cannot become earlier than the current watermark by merging — check the session gap extractor"
                )
            if not self.is_event_time and merge_result.max_timestamp() <= self.get_current_processing_time():
                raise InvalidProgramError(
                    f"expected merged windows to end after the current processing time; got {merge_result!r} "
                    f"(operator '{self.name}'); hint: the end of a processing-time window cannot become earlier "
                    "than the current processing time by merging"
                )
            ctx = self.ctx
            ctx.set(key, merge_result, merged_windows=merged)
            self.trigger.on_merge(merge_result, ctx)
            for m in merged:
                ctx.set(key, m)
                self.trigger.clear(m, ctx)
                self._delete_cleanup_timer(m)
            self.window_state.merge_namespaces(state_result, merged_state)

        return merge

    # -- timers --------------------------------------------------------------------------------------
    def process_watermark(self, timestamp: int) -> None:
        self.current_watermark = timestamp
        if self._fast:
            self._fire_due(timestamp)
        self.timer_service.advance_watermark(timestamp)
        self._collector.flush(self.output)  # fired windows precede the watermark that fired them
        self.output.emit_watermark(timestamp)

    def on_event_time(self, timer: InternalTimer) -> None:
        self._on_timer(timer, event_time=True)

    def on_processing_time(self, timer: InternalTimer) -> None:
        self._on_timer(timer, event_time=False)
        self._collector.flush(self.output)

    def _on_timer(self, timer: InternalTimer, *, event_time: bool) -> None:
        key, window, time = timer.key, timer.namespace, timer.timestamp
        merging: MergingWindowSet[Any] | None = None
        state_window = window
        if self.merging:
            merging = self._merging_set(key)
            state_window = merging.get_state_window(window)
            if state_window is None:
                return  # a timer of a window that was merged away and not cleaned up
        ctx = self.ctx
        ctx.set(key, window)
        try:
            if event_time:
                result = self.trigger.on_event_time(time, window, ctx)
            else:
                result = self.trigger.on_processing_time(time, window, ctx)
            self._act(key, window, state_window, result)
            if event_time == self.is_event_time and time == self.cleanup_time(window):
                self._clear_all_state(key, window, state_window, merging)
        except Exception as exc:
            raise self.user_error(exc, None, role=f"the window function or trigger of operator '{self.name}'") from exc
        if merging is not None:
            self._persist(key, merging)

    def _clear_all_state(self, key: Any, window: Any, state_window: Any, merging: MergingWindowSet[Any] | None) -> None:
        self._clear_contents(state_window)
        ctx = self.ctx
        ctx.set(key, window)
        self.trigger.clear(window, ctx)
        self.window_function.clear(ctx)
        if merging is not None:
            merging.retire_window(window)


def _no_timestamp(operator: str, value: Any) -> InvalidProgramError:
    return InvalidProgramError(
        f"expected records with event-time timestamps in the event-time window operator '{operator}'; got "
        f"{value!r:.80} without one; hint: call assign_timestamps_and_watermarks(...) before the window"
    )
