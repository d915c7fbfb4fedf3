"""Window assigners: which windows an element belongs to (Flink's ``streaming.api.windowing.assigners``).

Sizes, slides, offsets and gaps are ints of milliseconds or ``datetime.timedelta``::

    TumblingEventTimeWindows.of(timedelta(minutes=1))
    SlidingEventTimeWindows.of(timedelta(minutes=1), timedelta(seconds=10))
    TumblingEventTimeWindows.of(timedelta(days=1), timedelta(hours=-8))   # days starting at 00:00 UTC+8
    EventTimeSessionWindows.with_gap(timedelta(minutes=5))
    EventTimeSessionWindows.with_dynamic_gap(lambda element: element.gap_ms)
    GlobalWindows.create()                                                 # needs a custom trigger

    >>> class Now:
    ...     def get_current_processing_time(self): return 0
    >>> SlidingEventTimeWindows.of(10, 5).assign_windows("x", 12, Now())
    [TimeWindow(start=10, end=20), TimeWindow(start=5, end=15)]
"""

from __future__ import annotations

import enum
import inspect
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection
from typing import Any, Generic, Protocol, TypeVar

from strom.api._time import LONG_MIN, java_rem, to_millis
from strom.api.functions import Function, as_callable
from strom.api.type_serializer import TypeSerializer
from strom.api.windowing.serializers import GlobalWindowSerializer, TimeWindowSerializer
from strom.api.windowing.triggers import (
    EndOfStreamTrigger,
    EventTimeTrigger,
    NeverTrigger,
    ProcessingTimeTrigger,
    Trigger,
)
from strom.api.windowing.windows import GlobalWindow, MergeCallback, TimeWindow, Window
from strom.exceptions import InvalidProgramError

__all__ = [
    "DynamicEventTimeSessionWindows",
    "DynamicProcessingTimeSessionWindows",
    "EventTimeSessionWindows",
    "GlobalWindows",
    "MergeCallback",
    "MergingWindowAssigner",
    "ProcessingTimeSessionWindows",
    "SessionWindowTimeGapExtractor",
    "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows",
    "TumblingEventTimeWindows",
    "TumblingProcessingTimeWindows",
    "WindowAssigner",
    "WindowAssignerContext",
    "WindowStagger",
    "default_trigger",
]

T = TypeVar("T")
W = TypeVar("W", bound=Window)

MAX_WINDOW_NUM = 10_000_000
"""At most this many sliding windows per element (Flink's ``SlidingEventTimeWindows.MAX_WINDOW_NUM``)."""


class WindowAssignerContext(Protocol):
    """What an assigner may ask the operator (Flink's ``WindowAssigner.WindowAssignerContext``)."""

    def get_current_processing_time(self) -> int: ...


_Context = WindowAssignerContext


class WindowAssigner(ABC, Generic[T, W]):
    """Assigns each element to zero or more windows (Flink's ``WindowAssigner``)."""

    WindowAssignerContext = WindowAssignerContext  # PyFlink's annotations name it WindowAssigner.WindowAssignerContext

    @abstractmethod
    def assign_windows(self, element: T, timestamp: int, context: _Context) -> Collection[W]:
        """The windows of ``element``; ``timestamp`` is its event time (``Long.MIN_VALUE`` if it has none)."""

    @abstractmethod
    def get_default_trigger(self, env: Any = None) -> Trigger[T, W]:
        """The trigger used unless the program sets one; ``env`` is the job's environment (PyFlink's signature;
        an assigner may also define ``get_default_trigger(self)``)."""

    def get_window_serializer(self) -> TypeSerializer[W]:
        """PyFlink's serializer of this assigner's windows (strom keeps windows as Python objects and asks for it
        only to answer this call): a :class:`TimeWindowSerializer` unless overridden."""
        return TimeWindowSerializer()  # type: ignore[return-value]

    @abstractmethod
    def is_event_time(self) -> bool:
        """True if elements are assigned by event time, not processing time."""


class MergingWindowAssigner(WindowAssigner[T, W]):
    """A window assigner whose windows can merge (Flink's ``MergingWindowAssigner``), e.g. sessions."""

    @abstractmethod
    def merge_windows(self, windows: Collection[W], callback: MergeCallback[W]) -> None:
        """Report each group of ``windows`` that merges as ``callback(to_be_merged, merge_result)``."""


class WindowStagger(enum.Enum):
    """Staggers the start of tumbling windows per operator instance (Flink's ``WindowStagger``).

    ``ALIGNED``: no stagger. ``RANDOM``: uniform in ``[0, size)``. ``NATURAL``: how far processing time was
    into its window when the first element arrived. The offset is drawn once per assigner instance.
    """

    ALIGNED = "ALIGNED"
    RANDOM = "RANDOM"
    NATURAL = "NATURAL"

    def get_stagger_offset(self, current_processing_time: int, size: int) -> int:
        if self is WindowStagger.RANDOM:
            return int(random.random() * size)
        if self is WindowStagger.NATURAL:
            window_start = TimeWindow.get_window_start_with_offset(current_processing_time, 0, size)
            return max(0, current_processing_time - window_start)
        return 0


def _no_timestamp_error(assigner: str) -> InvalidProgramError:
    return InvalidProgramError(
        f"{assigner} expected a record with an event-time timestamp; got a record without one "
        "(Long.MIN_VALUE, the no-timestamp marker); hint: did you forget to call "
        "'assign_timestamps_and_watermarks(...)' before the window?"
    )


def _has_timestamp(timestamp: int | None) -> bool:
    return timestamp is not None and timestamp > LONG_MIN


# --- tumbling -------------------------------------------------------------------------------------


class _TumblingWindows(WindowAssigner[object, TimeWindow]):
    _EVENT_TIME = True

    def __init__(self, size: Any, offset: Any = 0, window_stagger: WindowStagger = WindowStagger.ALIGNED) -> None:
        name = type(self).__name__
        size_ms, offset_ms = to_millis(size, f"{name} size"), to_millis(offset, f"{name} offset")
        if abs(offset_ms) >= size_ms:
            raise InvalidProgramError(
                f"{name} parameters must satisfy abs(offset) < size; got size={size_ms} ms, offset={offset_ms} ms; "
                f"hint: the size must be positive and the offset shifts window starts by less than one size, "
                f"e.g. {name}.of(timedelta(hours=1), timedelta(minutes=15))"
            )
        if not isinstance(window_stagger, WindowStagger):
            raise InvalidProgramError(
                f"{name} expected a WindowStagger; got a {type(window_stagger).__name__!r}; hint: WindowStagger.ALIGNED"
            )
        self.size = size_ms
        self.global_offset = offset_ms
        self.window_stagger = window_stagger
        self.stagger_offset: int | None = None  # drawn once per instance, at the first element

    def get_size(self) -> int:
        return self.size

    def _window_of(self, timestamp: int, context: WindowAssignerContext) -> list[TimeWindow]:
        if self.stagger_offset is None:
            self.stagger_offset = self.window_stagger.get_stagger_offset(
                context.get_current_processing_time(), self.size
            )
        offset = java_rem(self.global_offset + self.stagger_offset, self.size)
        start = TimeWindow.get_window_start_with_offset(timestamp, offset, self.size)
        return [TimeWindow(start, start + self.size)]

    def is_event_time(self) -> bool:
        return self._EVENT_TIME

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.size})"


class TumblingEventTimeWindows(_TumblingWindows):
    """Fixed-size, non-overlapping windows by event time (Flink's ``TumblingEventTimeWindows``)."""

    @classmethod
    def of(
        cls, size: Any, offset: Any = 0, window_stagger: WindowStagger = WindowStagger.ALIGNED
    ) -> TumblingEventTimeWindows:
        return cls(size, offset, window_stagger)

    def assign_windows(self, element: object, timestamp: int, context: WindowAssignerContext) -> list[TimeWindow]:
        if not _has_timestamp(timestamp):
            raise _no_timestamp_error("TumblingEventTimeWindows")
        return self._window_of(timestamp, context)

    def get_default_trigger(self, env: Any = None) -> Trigger[object, TimeWindow]:
        return EventTimeTrigger.create()


class TumblingProcessingTimeWindows(_TumblingWindows):
    """Fixed-size, non-overlapping windows by the operator's processing time (Flink's
    ``TumblingProcessingTimeWindows``); the element's timestamp is ignored."""

    _EVENT_TIME = False

    @classmethod
    def of(
        cls, size: Any, offset: Any = 0, window_stagger: WindowStagger = WindowStagger.ALIGNED
    ) -> TumblingProcessingTimeWindows:
        return cls(size, offset, window_stagger)

    def assign_windows(self, element: object, timestamp: int, context: WindowAssignerContext) -> list[TimeWindow]:
        return self._window_of(context.get_current_processing_time(), context)

    def get_default_trigger(self, env: Any = None) -> Trigger[object, TimeWindow]:
        return ProcessingTimeTrigger.create()


# --- sliding --------------------------------------------------------------------------------------


class _SlidingWindows(WindowAssigner[object, TimeWindow]):
    _EVENT_TIME = True

    def __init__(self, size: Any, slide: Any, offset: Any = 0) -> None:
        name = type(self).__name__
        size_ms, slide_ms = to_millis(size, f"{name} size"), to_millis(slide, f"{name} slide")
        offset_ms = to_millis(offset, f"{name} offset")
        if abs(offset_ms) >= slide_ms or size_ms <= 0:
            raise InvalidProgramError(
                f"{name} parameters must satisfy abs(offset) < slide and size > 0; got size={size_ms} ms, "
                f"slide={slide_ms} ms, offset={offset_ms} ms; hint: {name}.of(timedelta(minutes=1), "
                "timedelta(seconds=10)) is one-minute windows every ten seconds"
            )
        if self._EVENT_TIME and size_ms // slide_ms > MAX_WINDOW_NUM:
            raise InvalidProgramError(
                f"{name} parameters must satisfy size / slide <= {MAX_WINDOW_NUM}; got size={size_ms} ms, "
                f"slide={slide_ms} ms; hint: every element would be copied into size / slide windows"
            )
        self.size = size_ms
        self.slide = slide_ms
        self.offset = offset_ms

    def get_size(self) -> int:
        return self.size

    def get_slide(self) -> int:
        return self.slide

    def _windows_of(self, timestamp: int) -> list[TimeWindow]:
        windows: list[TimeWindow] = []
        start = TimeWindow.get_window_start_with_offset(timestamp, self.offset, self.slide)
        lower = timestamp - self.size
        while start > lower:
            windows.append(TimeWindow(start, start + self.size))
            start -= self.slide
        return windows

    def is_event_time(self) -> bool:
        return self._EVENT_TIME

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.size}, {self.slide})"


class SlidingEventTimeWindows(_SlidingWindows):
    """Windows of ``size`` starting every ``slide`` by event time (Flink's ``SlidingEventTimeWindows``);
    an element belongs to about ``size / slide`` windows, latest start first."""

    @classmethod
    def of(cls, size: Any, slide: Any, offset: Any = 0) -> SlidingEventTimeWindows:
        return cls(size, slide, offset)

    def assign_windows(self, element: object, timestamp: int, context: WindowAssignerContext) -> list[TimeWindow]:
        if not _has_timestamp(timestamp):
            raise _no_timestamp_error("SlidingEventTimeWindows")
        return self._windows_of(timestamp)

    def get_default_trigger(self, env: Any = None) -> Trigger[object, TimeWindow]:
        return EventTimeTrigger.create()


class SlidingProcessingTimeWindows(_SlidingWindows):
    """Sliding windows by the operator's processing time (Flink's ``SlidingProcessingTimeWindows``; like
    Flink, without the ``size / slide`` limit of the event-time variant)."""

    _EVENT_TIME = False

    @classmethod
    def of(cls, size: Any, slide: Any, offset: Any = 0) -> SlidingProcessingTimeWindows:
        return cls(size, slide, offset)

    def assign_windows(self, element: object, timestamp: int, context: WindowAssignerContext) -> list[TimeWindow]:
        return self._windows_of(context.get_current_processing_time())

    def get_default_trigger(self, env: Any = None) -> Trigger[object, TimeWindow]:
        return ProcessingTimeTrigger.create()


# --- sessions -------------------------------------------------------------------------------------


class SessionWindowTimeGapExtractor(Function, Generic[T]):
    """Extracts the session gap (milliseconds) from an element (Flink's ``SessionWindowTimeGapExtractor``);
    a plain callable ``element -> int`` works too."""

    @abstractmethod
    def extract(self, element: T) -> int: ...


def _session_gap(gap: Any, name: str) -> int:
    gap_ms = to_millis(gap, f"{name} gap")
    if gap_ms <= 0:
        raise InvalidProgramError(
            f"{name} parameters must satisfy 0 < size; got a session gap of {gap_ms} ms; "
            f"hint: {name}.with_gap(timedelta(minutes=5))"
        )
    return gap_ms


def _dynamic_gap(extract: Callable[[Any], Any], element: object, name: str) -> int:
    gap_ms = to_millis(extract(element), f"{name} extracted gap")
    if gap_ms <= 0:
        raise InvalidProgramError(
            f"Dynamic session time gap must satisfy 0 < gap; got {gap_ms} ms for {element!r:.60}; "
            f"hint: the gap extractor of {name} must return a positive number of milliseconds"
        )
    return gap_ms


class _SessionWindows(MergingWindowAssigner[T, TimeWindow]):
    def merge_windows(self, windows: Collection[TimeWindow], callback: MergeCallback[TimeWindow]) -> None:
        """Merge intersecting (or adjacent) windows: :meth:`TimeWindow.merge_windows`."""
        TimeWindow.merge_windows(windows, callback)


class EventTimeSessionWindows(_SessionWindows[object]):
    """Sessions by event time: each element opens ``[ts, ts + gap)`` and overlapping sessions merge
    (Flink's ``EventTimeSessionWindows``)."""

    def __init__(self, session_timeout: Any) -> None:
        self.session_timeout = _session_gap(session_timeout, type(self).__name__)

    @staticmethod
    def with_gap(size: Any) -> EventTimeSessionWindows:
        return EventTimeSessionWindows(size)

    @staticmethod
    def with_dynamic_gap(extractor: Any) -> DynamicEventTimeSessionWindows[Any]:
        return DynamicEventTimeSessionWindows(extractor)

    def assign_windows(self, element: object, timestamp: int, context: WindowAssignerContext) -> list[TimeWindow]:
        return [TimeWindow(timestamp, timestamp + self.session_timeout)]

    def get_default_trigger(self, env: Any = None) -> Trigger[object, TimeWindow]:
        return EventTimeTrigger.create()

    def is_event_time(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"EventTimeSessionWindows({self.session_timeout})"


class ProcessingTimeSessionWindows(_SessionWindows[object]):
    """Sessions by processing time: ``[now, now + gap)`` per element (Flink's ``ProcessingTimeSessionWindows``)."""

    def __init__(self, session_timeout: Any) -> None:
        self.session_timeout = _session_gap(session_timeout, type(self).__name__)

    @staticmethod
    def with_gap(size: Any) -> ProcessingTimeSessionWindows:
        return ProcessingTimeSessionWindows(size)

    @staticmethod
    def with_dynamic_gap(extractor: Any) -> DynamicProcessingTimeSessionWindows[Any]:
        return DynamicProcessingTimeSessionWindows(extractor)

    def assign_windows(self, element: object, timestamp: int, context: WindowAssignerContext) -> list[TimeWindow]:
        now = context.get_current_processing_time()
        return [TimeWindow(now, now + self.session_timeout)]

    def get_default_trigger(self, env: Any = None) -> Trigger[object, TimeWindow]:
        return ProcessingTimeTrigger.create()

    def is_event_time(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"ProcessingTimeSessionWindows({self.session_timeout})"


class _DynamicSessionWindows(_SessionWindows[T]):
    def __init__(self, session_window_time_gap_extractor: Any) -> None:
        self.session_window_time_gap_extractor = session_window_time_gap_extractor
        self._extract = as_callable(
            session_window_time_gap_extractor, SessionWindowTimeGapExtractor, "extract", type(self).__name__
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class DynamicEventTimeSessionWindows(_DynamicSessionWindows[T]):
    """Event-time sessions whose gap comes from each element (Flink's ``DynamicEventTimeSessionWindows``)."""

    @staticmethod
    def with_dynamic_gap(extractor: Any) -> DynamicEventTimeSessionWindows[Any]:
        return DynamicEventTimeSessionWindows(extractor)

    def assign_windows(self, element: T, timestamp: int, context: WindowAssignerContext) -> list[TimeWindow]:
        gap = _dynamic_gap(self._extract, element, "DynamicEventTimeSessionWindows")
        return [TimeWindow(timestamp, timestamp + gap)]

    def get_default_trigger(self, env: Any = None) -> Trigger[T, TimeWindow]:
        return EventTimeTrigger.create()

    def is_event_time(self) -> bool:
        return True


class DynamicProcessingTimeSessionWindows(_DynamicSessionWindows[T]):
    """Processing-time sessions whose gap comes from each element (Flink's
    ``DynamicProcessingTimeSessionWindows``)."""

    @staticmethod
    def with_dynamic_gap(extractor: Any) -> DynamicProcessingTimeSessionWindows[Any]:
        return DynamicProcessingTimeSessionWindows(extractor)

    def assign_windows(self, element: T, timestamp: int, context: WindowAssignerContext) -> list[TimeWindow]:
        now = context.get_current_processing_time()
        gap = _dynamic_gap(self._extract, element, "DynamicProcessingTimeSessionWindows")
        return [TimeWindow(now, now + gap)]

    def get_default_trigger(self, env: Any = None) -> Trigger[T, TimeWindow]:
        return ProcessingTimeTrigger.create()

    def is_event_time(self) -> bool:
        return False


# --- global ---------------------------------------------------------------------------------------


class GlobalWindows(WindowAssigner[object, GlobalWindow]):
    """Puts every element into the one :class:`GlobalWindow` (Flink's ``GlobalWindows``). Its default
    trigger never fires: give it a trigger (and maybe an evictor), or use
    :meth:`create_with_end_of_stream_trigger` to fire once at the end of a bounded input."""

    NeverTrigger = NeverTrigger
    EndOfStreamTrigger = EndOfStreamTrigger

    def __init__(self, default_trigger: Trigger[object, GlobalWindow] | None = None) -> None:
        self._default_trigger = default_trigger

    @staticmethod
    def create() -> GlobalWindows:
        return GlobalWindows(NeverTrigger())

    @staticmethod
    def create_with_end_of_stream_trigger() -> GlobalWindows:
        return GlobalWindows(EndOfStreamTrigger())

    def assign_windows(self, element: object, timestamp: int, context: WindowAssignerContext) -> list[GlobalWindow]:
        return [GlobalWindow.get()]

    def get_window_serializer(self) -> TypeSerializer[GlobalWindow]:
        return GlobalWindowSerializer()

    def get_default_trigger(self, env: Any = None) -> Trigger[object, GlobalWindow]:
        return NeverTrigger() if self._default_trigger is None else self._default_trigger

    def is_event_time(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"GlobalWindows(trigger={type(self.get_default_trigger(None)).__name__})"


def default_trigger(assigner: WindowAssigner[Any, Any], env: Any) -> Trigger[Any, Any]:
    """``assigner``'s default trigger, whether it declares ``get_default_trigger(self, env)`` (PyFlink's
    signature) or ``get_default_trigger(self)``."""
    method = assigner.get_default_trigger
    try:
        inspect.signature(method).bind(env)
    except TypeError:
        return method()
    except ValueError:  # no signature to inspect (a builtin): PyFlink's form
        pass
    return method(env)
