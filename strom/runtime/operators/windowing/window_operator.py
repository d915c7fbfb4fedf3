"""``WindowOperator``: keyed windows with Flink's semantics (Flink's ``WindowOperator`` and
``EvictingWindowOperator`` in one class): merging windows, evictors, custom triggers, processing time.

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

The common case (tumbling or sliding event-time windows, the default ``EventTimeTrigger``, no evictor) runs in
its subclass :class:`~strom.runtime.operators.windowing.aligned_window_operator.AlignedWindowOperator`, which does
what this operator does for that trigger with panes kept window by window; ``strom.api.windowed_stream`` picks one
of the two when the graph is built. Both keep the same state under the same names (``window-contents``,
``merging-window-set``, the timer service ``window-timers``), so a snapshot of one restores into the other.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, MutableMapping
from typing import Any

from strom.api.eventtime import LONG_MAX, LONG_MIN
from strom.api.state import (
    AggregateFunction,
    AggregatingStateDescriptor,
    ListStateDescriptor,
    ReducingStateDescriptor,
    StateDescriptor,
)
from strom.api.windowing.assigners import MergingWindowAssigner, WindowAssigner
from strom.api.windowing.evictors import Evictor
from strom.api.windowing.triggers import Trigger, TriggerResult
from strom.api.windowing.windows import TimestampedValue, Window
from strom.exceptions import InvalidProgramError
from strom.runtime.operators.collector import TimestampedCollector
from strom.runtime.operators.keyed import _KeyedUdfOperator
from strom.runtime.operators.timer_service import InternalTimer, InternalTimerService
from strom.runtime.operators.windowing.internal_functions import InternalWindowFunction
from strom.runtime.operators.windowing.merging_window_set import MergingWindowSet
from strom.runtime.operators.windowing.window_contexts import WindowContext
from strom.runtime.streamrecord import timestamps_of

__all__ = ["WindowOperator"]

CONTENTS = "window-contents"
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
        self.merging_assigner = assigner if isinstance(assigner, MergingWindowAssigner) else None
        self.merging = self.merging_assigner is not None
        self.num_late_records_dropped = 0
        self._collector: TimestampedCollector = TimestampedCollector()

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
        self._table: MutableMapping[Any, MutableMapping[Any, Any]] = backend.get_namespaced_table(CONTENTS)
        self._merging_sets: MutableMapping[Any, Any] = backend.get_table(MERGING_WINDOW_SET)
        self.timer_service: InternalTimerService = self.get_internal_timer_service("window-timers", self)
        self.ctx = WindowContext(self)
        try:
            self.window_function.open(self.runtime_context)
        except Exception as exc:
            raise self.user_error(exc, None) from exc

    def close(self) -> None:
        try:
            self.window_function.close()
        except Exception as exc:
            raise self.user_error(exc, None) from exc

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
        timestamps: Any = timestamps_of(batch)
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
            raise self.keyed_user_error(exc, batch, v, self._key) from exc

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
        assigner = self.merging_assigner
        assert assigner is not None
        return MergingWindowSet(assigner, self._merging_sets.get(key))

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
