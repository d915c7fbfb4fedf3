"""Triggers: when a window pane is evaluated or purged (Flink's ``streaming.api.windowing.triggers``).

A trigger keeps no state on itself: it is shared by every key and window of an operator. What it must
remember (a count, the next firing time) lives in partitioned state obtained from the
:class:`TriggerContext`, scoped to the current key and window, and its timers are registered there::

    class EveryTen(Trigger):
        def on_element(self, element, timestamp, window, ctx):
            count = ctx.get_partitioned_state(ReducingStateDescriptor("n", operator.add))
            count.add(1)
            return TriggerResult.FIRE if count.get() % 10 == 0 else TriggerResult.CONTINUE
        ...
"""

from __future__ import annotations

import enum
import operator
from abc import ABC, abstractmethod
from typing import Any, Generic, Protocol, TypeVar

from strom.api._time import java_rem, to_millis
from strom.api.state import ReducingStateDescriptor, StateDescriptor
from strom.api.windowing.windows import GlobalWindow, TimeWindow, Window
from strom.exceptions import InvalidProgramError

__all__ = [
    "ContinuousEventTimeTrigger",
    "ContinuousProcessingTimeTrigger",
    "CountTrigger",
    "EndOfStreamTrigger",
    "EventTimeTrigger",
    "NeverTrigger",
    "OnMergeContext",
    "ProcessingTimeTrigger",
    "PurgingTrigger",
    "Trigger",
    "TriggerContext",
    "TriggerResult",
]

T_contra = TypeVar("T_contra", contravariant=True)
W = TypeVar("W", bound=Window)


class TriggerResult(enum.Enum):
    """What happens to a pane (Flink's ``TriggerResult``): evaluate it (fire), drop its contents (purge), both.

    A fire on an empty pane calls no window function.
    """

    CONTINUE = (False, False)
    FIRE_AND_PURGE = (True, True)
    FIRE = (True, False)
    PURGE = (False, True)

    def is_fire(self) -> bool:
        return bool(self.value[0])

    def is_purge(self) -> bool:
        return bool(self.value[1])


class TriggerContext(Protocol):
    """What a trigger may use (Flink's ``Trigger.TriggerContext``); timers and state are scoped to the
    current key and window. (Flink's ``getMetricGroup`` is not offered yet.)"""

    def get_current_processing_time(self) -> int: ...

    def get_current_watermark(self) -> int: ...

    def register_processing_time_timer(self, time: int) -> None: ...

    def register_event_time_timer(self, time: int) -> None: ...

    def delete_processing_time_timer(self, time: int) -> None: ...

    def delete_event_time_timer(self, time: int) -> None: ...

    def get_partitioned_state(self, state_descriptor: StateDescriptor) -> Any:
        """The state named by ``state_descriptor`` for the current key and window."""
        ...


class OnMergeContext(TriggerContext, Protocol):
    """The context of :meth:`Trigger.on_merge` (Flink's ``Trigger.OnMergeContext``)."""

    def merge_partitioned_state(self, state_descriptor: StateDescriptor) -> None:
        """Merge the state of the merged windows into the state of the merge result (merging states only)."""
        ...


class Trigger(ABC, Generic[T_contra, W]):
    """Decides when a pane is evaluated (Flink's ``Trigger``). Keep no per-window data on ``self``."""

    @abstractmethod
    def on_element(self, element: T_contra, timestamp: int, window: W, ctx: TriggerContext) -> TriggerResult:
        """Called for every element added to a pane."""

    @abstractmethod
    def on_processing_time(self, time: int, window: W, ctx: TriggerContext) -> TriggerResult:
        """Called when a processing-time timer registered through ``ctx`` fires."""

    @abstractmethod
    def on_event_time(self, time: int, window: W, ctx: TriggerContext) -> TriggerResult:
        """Called when an event-time timer registered through ``ctx`` fires."""

    def can_merge(self) -> bool:
        """True if :meth:`on_merge` is implemented, so the trigger may serve a merging window assigner."""
        return False

    def on_merge(self, window: W, ctx: OnMergeContext) -> None:
        """Called when windows were merged into ``window``; re-register timers and merge state here."""
        raise InvalidProgramError(
            f"expected a trigger that can merge windows; got {type(self).__name__}, whose can_merge() is False; "
            "hint: merging assigners (session windows) need a trigger implementing can_merge() and on_merge()"
        )

    @abstractmethod
    def clear(self, window: W, ctx: TriggerContext) -> None:
        """Delete the timers and state this trigger holds for ``window`` (the window is purged or expired)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _positive_interval(interval: object, what: str) -> int:
    millis = to_millis(interval, f"{what} interval")
    if millis <= 0:
        raise InvalidProgramError(
            f"{what} expected an interval > 0; got {millis} ms; "
            f"hint: {what}.of(timedelta(seconds=10)) fires every ten seconds"
        )
    return millis


class EventTimeTrigger(Trigger[object, TimeWindow]):
    """Fires once the watermark passes the end of the window (Flink's ``EventTimeTrigger``); the default of
    event-time assigners. An element whose window is already behind the watermark fires at once."""

    @staticmethod
    def create() -> EventTimeTrigger:
        return EventTimeTrigger()

    def on_element(self, element: object, timestamp: int, window: TimeWindow, ctx: TriggerContext) -> TriggerResult:
        if window.max_timestamp() <= ctx.get_current_watermark():
            return TriggerResult.FIRE
        ctx.register_event_time_timer(window.max_timestamp())
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: TimeWindow, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.FIRE if time == window.max_timestamp() else TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: TimeWindow, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def clear(self, window: TimeWindow, ctx: TriggerContext) -> None:
        ctx.delete_event_time_timer(window.max_timestamp())

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: TimeWindow, ctx: OnMergeContext) -> None:
        # Only while the watermark has not passed the merged window: otherwise on_element fires it, and a
        # timer would fire it a second time.
        if window.max_timestamp() > ctx.get_current_watermark():
            ctx.register_event_time_timer(window.max_timestamp())


class ProcessingTimeTrigger(Trigger[object, TimeWindow]):
    """Fires once processing time passes the end of the window (Flink's ``ProcessingTimeTrigger``); the
    default of processing-time assigners."""

    @staticmethod
    def create() -> ProcessingTimeTrigger:
        return ProcessingTimeTrigger()

    def on_element(self, element: object, timestamp: int, window: TimeWindow, ctx: TriggerContext) -> TriggerResult:
        ctx.register_processing_time_timer(window.max_timestamp())
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: TimeWindow, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: TimeWindow, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.FIRE

    def clear(self, window: TimeWindow, ctx: TriggerContext) -> None:
        ctx.delete_processing_time_timer(window.max_timestamp())

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: TimeWindow, ctx: OnMergeContext) -> None:
        if window.max_timestamp() > ctx.get_current_processing_time():
            ctx.register_processing_time_timer(window.max_timestamp())


class CountTrigger(Trigger[object, W]):
    """Fires when a pane has received ``max_count`` elements, then starts counting again (Flink's
    ``CountTrigger``). The count is a ``ReducingState`` named ``"count"`` (summed on merge)."""

    def __init__(self, max_count: int) -> None:
        if isinstance(max_count, bool) or not isinstance(max_count, int):
            raise InvalidProgramError(
                f"CountTrigger expected an int count; got a {type(max_count).__name__!r}; hint: CountTrigger.of(100)"
            )
        self.max_count = max_count
        self.state_desc = ReducingStateDescriptor("count", operator.add)

    @staticmethod
    def of(max_count: int) -> CountTrigger[Any]:
        return CountTrigger(max_count)

    def get_max_count(self) -> int:
        return self.max_count

    def on_element(self, element: object, timestamp: int, window: W, ctx: TriggerContext) -> TriggerResult:
        count = ctx.get_partitioned_state(self.state_desc)
        count.add(1)
        if count.get() >= self.max_count:
            count.clear()
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: W, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: W, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def clear(self, window: W, ctx: TriggerContext) -> None:
        ctx.get_partitioned_state(self.state_desc).clear()

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: W, ctx: OnMergeContext) -> None:
        ctx.merge_partitioned_state(self.state_desc)

    def __repr__(self) -> str:
        return f"CountTrigger({self.max_count})"


class PurgingTrigger(Trigger[T_contra, W]):
    """Turns any trigger into a purging one: a FIRE of the nested trigger becomes FIRE_AND_PURGE
    (Flink's ``PurgingTrigger``); everything else is forwarded as is."""

    def __init__(self, nested_trigger: Trigger[T_contra, W]) -> None:
        if not isinstance(nested_trigger, Trigger):
            raise InvalidProgramError(
                f"PurgingTrigger expected a Trigger to wrap; got a {type(nested_trigger).__name__!r}; "
                "hint: PurgingTrigger.of(CountTrigger.of(100))"
            )
        self.nested_trigger = nested_trigger

    @staticmethod
    def of(nested_trigger: Trigger[T_contra, W]) -> PurgingTrigger[T_contra, W]:
        return PurgingTrigger(nested_trigger)

    def get_nested_trigger(self) -> Trigger[T_contra, W]:
        return self.nested_trigger

    @staticmethod
    def _purging(result: TriggerResult) -> TriggerResult:
        return TriggerResult.FIRE_AND_PURGE if result.is_fire() else result

    def on_element(self, element: T_contra, timestamp: int, window: W, ctx: TriggerContext) -> TriggerResult:
        return self._purging(self.nested_trigger.on_element(element, timestamp, window, ctx))

    def on_event_time(self, time: int, window: W, ctx: TriggerContext) -> TriggerResult:
        return self._purging(self.nested_trigger.on_event_time(time, window, ctx))

    def on_processing_time(self, time: int, window: W, ctx: TriggerContext) -> TriggerResult:
        return self._purging(self.nested_trigger.on_processing_time(time, window, ctx))

    def clear(self, window: W, ctx: TriggerContext) -> None:
        self.nested_trigger.clear(window, ctx)

    def can_merge(self) -> bool:
        return self.nested_trigger.can_merge()

    def on_merge(self, window: W, ctx: OnMergeContext) -> None:
        self.nested_trigger.on_merge(window, ctx)

    def __repr__(self) -> str:
        return f"PurgingTrigger({self.nested_trigger!r})"


class ContinuousEventTimeTrigger(Trigger[object, W]):
    """Fires every ``interval`` of event time, and at the end of the window (Flink's
    ``ContinuousEventTimeTrigger``, with FLINK-20443: a firing never lies past ``window.max_timestamp()``).

    The next firing time is a ``ReducingState`` named ``"fire-time"``, the minimum on merge. The first
    firing is aligned to the interval: ``ts - ts % interval + interval`` (Java remainder).
    """

    def __init__(self, interval: Any) -> None:
        self.interval = _positive_interval(interval, "ContinuousEventTimeTrigger")
        self.state_desc = ReducingStateDescriptor("fire-time", min)

    @staticmethod
    def of(interval: Any) -> ContinuousEventTimeTrigger[Any]:
        """``interval``: an int of milliseconds or a ``timedelta``."""
        return ContinuousEventTimeTrigger(interval)

    def get_interval(self) -> int:
        return self.interval

    def on_element(self, element: object, timestamp: int, window: W, ctx: TriggerContext) -> TriggerResult:
        if window.max_timestamp() <= ctx.get_current_watermark():
            return TriggerResult.FIRE  # the watermark is past the window already
        ctx.register_event_time_timer(window.max_timestamp())
        fire_timestamp = ctx.get_partitioned_state(self.state_desc)
        if fire_timestamp.get() is None:
            self._register_next_fire_timestamp(timestamp - java_rem(timestamp, self.interval), window, ctx)
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: W, ctx: TriggerContext) -> TriggerResult:
        if time == window.max_timestamp():
            return TriggerResult.FIRE
        fire_timestamp_state = ctx.get_partitioned_state(self.state_desc)
        fire_timestamp = fire_timestamp_state.get()
        if fire_timestamp is not None and fire_timestamp == time:
            fire_timestamp_state.clear()
            self._register_next_fire_timestamp(time, window, ctx)
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: W, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def clear(self, window: W, ctx: TriggerContext) -> None:
        fire_timestamp = ctx.get_partitioned_state(self.state_desc)
        timestamp = fire_timestamp.get()
        if timestamp is not None:
            ctx.delete_event_time_timer(timestamp)
            fire_timestamp.clear()

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: W, ctx: OnMergeContext) -> None:
        ctx.merge_partitioned_state(self.state_desc)
        next_fire_timestamp = ctx.get_partitioned_state(self.state_desc).get()
        if next_fire_timestamp is not None:
            ctx.register_event_time_timer(next_fire_timestamp)

    def _register_next_fire_timestamp(self, time: int, window: W, ctx: TriggerContext) -> None:
        next_fire_timestamp = min(time + self.interval, window.max_timestamp())
        ctx.get_partitioned_state(self.state_desc).add(next_fire_timestamp)
        ctx.register_event_time_timer(next_fire_timestamp)

    def __repr__(self) -> str:
        return f"ContinuousEventTimeTrigger({self.interval})"


class ContinuousProcessingTimeTrigger(Trigger[object, W]):
    """Fires every ``interval`` of processing time (Flink's ``ContinuousProcessingTimeTrigger``, with
    FLINK-20443: a firing never lies past ``window.max_timestamp()``). State as in
    :class:`ContinuousEventTimeTrigger`; the first firing is aligned to the interval from the current
    processing time. It does not fire at the end of the window by itself."""

    def __init__(self, interval: Any) -> None:
        self.interval = _positive_interval(interval, "ContinuousProcessingTimeTrigger")
        self.state_desc = ReducingStateDescriptor("fire-time", min)

    @staticmethod
    def of(interval: Any) -> ContinuousProcessingTimeTrigger[Any]:
        """``interval``: an int of milliseconds or a ``timedelta``."""
        return ContinuousProcessingTimeTrigger(interval)

    def get_interval(self) -> int:
        return self.interval

    def on_element(self, element: object, timestamp: int, window: W, ctx: TriggerContext) -> TriggerResult:
        fire_timestamp = ctx.get_partitioned_state(self.state_desc)
        now = ctx.get_current_processing_time()
        if fire_timestamp.get() is None:
            self._register_next_fire_timestamp(now - java_rem(now, self.interval), window, ctx)
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: W, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: W, ctx: TriggerContext) -> TriggerResult:
        fire_timestamp_state = ctx.get_partitioned_state(self.state_desc)
        # Flink calls .equals on the state's value and would fail on a timer without state; this does not.
        if fire_timestamp_state.get() == time:
            fire_timestamp_state.clear()
            self._register_next_fire_timestamp(time, window, ctx)
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE

    def clear(self, window: W, ctx: TriggerContext) -> None:
        fire_timestamp = ctx.get_partitioned_state(self.state_desc)
        timestamp = fire_timestamp.get()
        if timestamp is not None:
            ctx.delete_processing_time_timer(timestamp)
            fire_timestamp.clear()

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: W, ctx: OnMergeContext) -> None:
        ctx.merge_partitioned_state(self.state_desc)
        next_fire_timestamp = ctx.get_partitioned_state(self.state_desc).get()
        if next_fire_timestamp is not None:
            ctx.register_processing_time_timer(next_fire_timestamp)

    def _register_next_fire_timestamp(self, time: int, window: W, ctx: TriggerContext) -> None:
        next_fire_timestamp = min(time + self.interval, window.max_timestamp())
        ctx.get_partitioned_state(self.state_desc).add(next_fire_timestamp)
        ctx.register_processing_time_timer(next_fire_timestamp)

    def __repr__(self) -> str:
        return f"ContinuousProcessingTimeTrigger({self.interval})"


class NeverTrigger(Trigger[object, GlobalWindow]):
    """Never fires: the default trigger of :class:`GlobalWindows` (Flink's ``GlobalWindows.NeverTrigger``).

    Like Flink's, ``on_merge`` is a no-op while ``can_merge()`` stays False."""

    def on_element(self, element: object, timestamp: int, window: GlobalWindow, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: GlobalWindow, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: GlobalWindow, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def clear(self, window: GlobalWindow, ctx: TriggerContext) -> None:
        """Keeps no state and no timer of its own: nothing to clear."""

    def on_merge(self, window: GlobalWindow, ctx: OnMergeContext) -> None:
        """Global windows never merge: nothing to do."""


class EndOfStreamTrigger(Trigger[object, GlobalWindow]):
    """Fires once, when the input ends (the final watermark reaches ``Long.MAX_VALUE``) — Flink's
    ``GlobalWindows.EndOfStreamTrigger``, used by ``GlobalWindows.create_with_end_of_stream_trigger()``."""

    def on_element(self, element: object, timestamp: int, window: GlobalWindow, ctx: TriggerContext) -> TriggerResult:
        ctx.register_event_time_timer(window.max_timestamp())
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: GlobalWindow, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.FIRE if time == window.max_timestamp() else TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: GlobalWindow, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def clear(self, window: GlobalWindow, ctx: TriggerContext) -> None:
        """Keeps no state and no timer of its own: nothing to clear."""

    def on_merge(self, window: GlobalWindow, ctx: OnMergeContext) -> None:
        """Global windows never merge: nothing to do."""
