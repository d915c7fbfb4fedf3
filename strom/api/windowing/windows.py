"""Windows: the namespaces that group elements (Flink's ``streaming.api.windowing.windows``).

A :class:`TimeWindow` is the half-open interval ``[start, end)`` in milliseconds; the
:class:`GlobalWindow` is the one window that holds everything. :class:`TimestampedValue` is the
record an :class:`~strom.api.windowing.evictors.Evictor` sees (Flink's runtime ``TimestampedValue``).

    >>> w = TimeWindow(0, 5000)
    >>> w.max_timestamp(), w.intersects(TimeWindow(5000, 6000)), w.cover(TimeWindow(7000, 8000))
    (4999, True, TimeWindow(start=0, end=8000))
    >>> TimeWindow.get_window_start_with_offset(-1, 0, 7)
    -7
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from operator import itemgetter
from typing import ClassVar, Generic, TypeVar

from strom.api._time import LONG_MAX, java_rem

__all__ = ["CountWindow", "GlobalWindow", "MergeCallback", "TimeWindow", "TimestampedValue", "Window"]

T = TypeVar("T")
W = TypeVar("W", bound="Window")

MergeCallback = Callable[[Collection[W], W], None]
"""Flink's ``MergingWindowAssigner.MergeCallback``: called as ``callback(to_be_merged, merge_result)``."""


class Window(ABC):
    """A grouping of elements into finite buckets (Flink's ``Window``).

    Windows are immutable and hashable: they are the namespace of window state and timers."""

    __slots__ = ()

    @abstractmethod
    def max_timestamp(self) -> int:
        """The largest timestamp that still belongs to this window."""


class TimeWindow(tuple, Window):  # type: ignore[type-arg]
    """The time interval ``[start, end)`` in milliseconds (Flink's ``TimeWindow``); ordered by ``(start, end)``.

    A tuple underneath, so hashing and equality — done for every record that updates window state — run in C.
    """

    __slots__ = ()

    def __new__(cls, start: int, end: int) -> TimeWindow:
        return tuple.__new__(cls, (start, end))

    start: int = property(itemgetter(0), doc="Start of the window (inclusive).")  # type: ignore[assignment]
    end: int = property(itemgetter(1), doc="End of the window (exclusive).")  # type: ignore[assignment]

    def __getnewargs__(self) -> tuple[int, int]:
        return (self[0], self[1])

    def __repr__(self) -> str:
        return f"TimeWindow(start={self[0]}, end={self[1]})"

    def max_timestamp(self) -> int:
        """``end - 1``: the last millisecond inside the window."""
        return self.end - 1

    def intersects(self, other: TimeWindow) -> bool:
        """True if the windows overlap *or are adjacent* (``[0, 5)`` and ``[5, 9)`` intersect), as in Flink."""
        return self.start <= other.end and self.end >= other.start

    def cover(self, other: TimeWindow) -> TimeWindow:
        """The smallest window that covers both windows."""
        return TimeWindow(min(self.start, other.start), max(self.end, other.end))

    @staticmethod
    def get_window_start_with_offset(timestamp: int, offset: int, window_size: int) -> int:
        """Start of the window of ``window_size`` that holds ``timestamp`` when windows start at ``offset``
        modulo ``window_size`` (Flink's ``getWindowStartWithOffset``, Java remainder included).

        Works for negative timestamps: the result is always ``<= timestamp``.

            >>> TimeWindow.get_window_start_with_offset(-3, 3, 7), TimeWindow.get_window_start_with_offset(9, 3, 7)
            (-4, 3)
        """
        remainder = java_rem(timestamp - offset, window_size)
        if remainder < 0:
            return timestamp - (remainder + window_size)
        return timestamp - remainder

    @staticmethod
    def merge_windows(windows: Iterable[TimeWindow], callback: MergeCallback[TimeWindow]) -> None:
        """Merge intersecting windows (Flink's ``TimeWindow.mergeWindows``), for merging assigners.

        Windows are sorted by start and swept once; each run of (transitively) intersecting windows with
        more than one distinct member is reported as ``callback(members, cover)``. Members are the
        distinct windows of the run in order of start (Flink passes a ``HashSet``).
        """
        runs: list[tuple[TimeWindow, dict[TimeWindow, None]]] = []
        current: tuple[TimeWindow, dict[TimeWindow, None]] | None = None
        for candidate in sorted(windows, key=_start_of):
            if current is None:
                current = (candidate, {candidate: None})
            elif current[0].intersects(candidate):
                current[1][candidate] = None
                current = (current[0].cover(candidate), current[1])
            else:
                runs.append(current)
                current = (candidate, {candidate: None})
        if current is not None:
            runs.append(current)
        for cover, members in runs:
            if len(members) > 1:
                callback(list(members), cover)


def _start_of(window: TimeWindow) -> int:
    return window.start


class GlobalWindow(Window):
    """The single window that holds every element (Flink's ``GlobalWindow``); a singleton, also after pickling.

    >>> GlobalWindow.get() is GlobalWindow(), GlobalWindow.get().max_timestamp() == 2**63 - 1
    (True, True)
    """

    __slots__ = ()
    _instance: ClassVar[GlobalWindow | None] = None

    def __new__(cls) -> GlobalWindow:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    @classmethod
    def get(cls) -> GlobalWindow:
        return cls()

    def max_timestamp(self) -> int:
        """Java's ``Long.MAX_VALUE``."""
        return LONG_MAX

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GlobalWindow)

    def __hash__(self) -> int:
        return 0

    def __reduce__(self) -> tuple[Callable[[], GlobalWindow], tuple[()]]:
        return (GlobalWindow.get, ())

    def __repr__(self) -> str:
        return "GlobalWindow"


CountWindow = GlobalWindow
"""The window of ``count_window``: strom builds count windows as Java Flink does (global windows with a count
trigger), so their window is the :class:`GlobalWindow`; PyFlink's name for it, for annotations such as
``WindowFunction[tuple, tuple, str, CountWindow]``."""


@dataclass(frozen=True, slots=True)
class TimestampedValue(Generic[T]):
    """A window element with its optional timestamp (Flink's ``TimestampedValue``), as evictors see it.

    ``timestamp`` is ``None`` when the record carries none (event time not set up).
    """

    value: T
    timestamp: int | None = None

    def get_value(self) -> T:
        return self.value

    def has_timestamp(self) -> bool:
        return self.timestamp is not None

    def get_timestamp(self) -> int:
        if self.timestamp is None:
            raise ValueError(
                f"expected a record with a timestamp; got {self.value!r:.60} without one; "
                "hint: assign timestamps with a WatermarkStrategy, or do not use a time-based evictor"
            )
        return self.timestamp
