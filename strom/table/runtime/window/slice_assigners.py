"""Window and slice assignment of the aligned window TVFs (Flink's ``SliceAssigners`` and the window assigners of
``WindowTableFunctionOperator``): TUMBLE, HOP and CUMULATE, all in local milliseconds (see
:mod:`~strom.table.runtime.window.time_window_util`).

A window TVF gives each row every window containing it (:meth:`SliceAssigner.assign_windows`). A window aggregate
does not keep windows: it keeps **slices** — the finest non-overlapping pieces windows are made of — and each row
accumulates into exactly one slice (:meth:`SliceAssigner.assign_slice_end`); a window's result merges its slices
(Flink's slicing, "Window TVF aggregation"). A tumbling window is one slice (unshared); a hopping window of size
``n * slide`` is ``n`` slices of ``slide`` shared with its neighbours; the cumulative windows of one ``max_size``
period share their first slice, into which each next step's slice is merged. Slices are named by their end.

    >>> hop = HoppingSliceAssigner(size=10_000, slide=5_000)
    >>> hop.assign_windows(7_000), hop.assign_slice_end(7_000), hop.slices_of_window(15_000)
    ([(5000, 15000), (0, 10000)], 10000, [15000, 10000])
    >>> cumulate = CumulativeSliceAssigner(max_size=15_000, step=5_000)
    >>> cumulate.assign_windows(7_000), cumulate.merge_slices(10_000)
    ([(0, 10000), (0, 15000)], (5000, [10000]))
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from math import gcd

from strom.table.runtime.window.time_window_util import window_start_with_offset

__all__ = [
    "CumulativeSliceAssigner",
    "HoppingSliceAssigner",
    "SliceAssigner",
    "TumblingSliceAssigner",
]


def _positive(what: str, **values: int) -> None:
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(
                f"expected {what} {name} as a positive int of milliseconds; got {value!r}; "
                f"hint: INTERVAL '10' SECOND is 10000"
            )


class SliceAssigner(ABC):
    """Where a row's windows and slice are; ``offset`` shifts the windows' alignment (Flink's window offset)."""

    offset: int

    @abstractmethod
    def assign_windows(self, timestamp: int) -> list[tuple[int, int]]:
        """Every window ``(start, end)`` containing ``timestamp``, in the order of Flink's TVF rows (HOP: latest
        start first; CUMULATE: smallest end first)."""

    @abstractmethod
    def assign_slice_end(self, timestamp: int) -> int:
        """The end of the slice ``timestamp`` accumulates into."""

    @property
    @abstractmethod
    def slice_interval(self) -> int:
        """The distance between two slice ends (Flink's ``getSliceEndInterval``)."""

    @abstractmethod
    def last_window_end(self, slice_end: int) -> int:
        """The end of the last window the slice is part of."""

    @abstractmethod
    def window_start(self, window_end: int) -> int:
        """The start of the window ending at ``window_end``."""

    @abstractmethod
    def expired_slices(self, window_end: int) -> list[int]:
        """The slices no later window needs once the window ending at ``window_end`` fired."""

    def merge_slices(self, window_end: int) -> tuple[int | None, list[int]]:
        """How the window ending at ``window_end`` is computed: ``(target, slices)`` — merge ``slices`` into the
        accumulators kept in slice ``target`` (``None``: into fresh ones, not kept)."""
        return None, [window_end]

    def merge_target(self, slice_end: int) -> int:
        """The slice a late row of slice ``slice_end`` accumulates into (the shared one, if any)."""
        target = self.merge_slices(slice_end)[0]
        return slice_end if target is None else target

    def next_trigger_window(self, window_end: int, is_empty: bool) -> int | None:
        """The next window end to fire for a key after ``window_end`` fired (``None``: none needed)."""
        return None

    @property
    def shared(self) -> bool:
        """Whether windows share slices (HOP, CUMULATE)."""
        return False


@dataclass(frozen=True, slots=True)
class TumblingSliceAssigner(SliceAssigner):
    """``TUMBLE(size[, offset])``: one slice per window."""

    size: int
    offset: int = 0

    def __post_init__(self) -> None:
        _positive("TUMBLE", size=self.size)
        if abs(self.offset) >= self.size:
            raise ValueError(
                f"expected TUMBLE's offset to satisfy abs(offset) < size; got size {self.size} ms and offset "
                f"{self.offset} ms; hint: an offset is a shift within one window"
            )

    def assign_windows(self, timestamp: int) -> list[tuple[int, int]]:
        start = window_start_with_offset(timestamp, self.offset, self.size)
        return [(start, start + self.size)]

    def assign_slice_end(self, timestamp: int) -> int:
        return window_start_with_offset(timestamp, self.offset, self.size) + self.size

    @property
    def slice_interval(self) -> int:
        return self.size

    def last_window_end(self, slice_end: int) -> int:
        return slice_end

    def window_start(self, window_end: int) -> int:
        return window_end - self.size

    def expired_slices(self, window_end: int) -> list[int]:
        return [window_end]


@dataclass(frozen=True, slots=True)
class HoppingSliceAssigner(SliceAssigner):
    """``HOP(slide, size[, offset])``: windows of ``size`` every ``slide``; slices of ``gcd(size, slide)``."""

    size: int
    slide: int
    offset: int = 0

    def __post_init__(self) -> None:
        _positive("HOP", size=self.size, slide=self.slide)

    def check_sliceable(self) -> None:
        """Window aggregation merges slices only when the size is a multiple of the slide (Flink's rule)."""
        if self.size % self.slide:
            raise ValueError(
                f"expected HOP's size to be an integral multiple of its slide (Flink's slicing windows); got size "
                f"{self.size} ms and slide {self.slide} ms; hint: e.g. HOP(..., INTERVAL '5' SECOND, "
                "INTERVAL '10' SECOND)"
            )

    @property
    def slice_size(self) -> int:
        return gcd(self.size, self.slide)

    def assign_windows(self, timestamp: int) -> list[tuple[int, int]]:
        last_start = window_start_with_offset(timestamp, self.offset, self.slide)
        windows = []
        start = last_start
        while start > timestamp - self.size:
            windows.append((start, start + self.size))
            start -= self.slide
        return windows

    def assign_slice_end(self, timestamp: int) -> int:
        size = self.slice_size
        return window_start_with_offset(timestamp, self.offset, size) + size

    @property
    def slice_interval(self) -> int:
        return self.slice_size

    def last_window_end(self, slice_end: int) -> int:
        return slice_end - self.slice_size + self.size

    def window_start(self, window_end: int) -> int:
        return window_end - self.size

    def expired_slices(self, window_end: int) -> list[int]:
        return [window_end - self.size + self.slice_size]

    def slices_of_window(self, window_end: int) -> list[int]:
        """The slices of the window ending at ``window_end``, newest first."""
        size = self.slice_size
        return [window_end - i * size for i in range(self.size // size)]

    def merge_slices(self, window_end: int) -> tuple[int | None, list[int]]:
        return None, self.slices_of_window(window_end)

    def next_trigger_window(self, window_end: int, is_empty: bool) -> int | None:
        return None if is_empty else window_end + self.slice_size

    @property
    def shared(self) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class CumulativeSliceAssigner(SliceAssigner):
    """``CUMULATE(step, max_size[, offset])``: windows from each ``max_size`` period's start growing by ``step``."""

    max_size: int
    step: int
    offset: int = 0

    def __post_init__(self) -> None:
        _positive("CUMULATE", max_size=self.max_size, step=self.step)
        if self.max_size % self.step:
            raise ValueError(
                f"expected CUMULATE's max size to be an integral multiple of its step; got max size {self.max_size} "
                f"ms and step {self.step} ms; hint: e.g. CUMULATE(..., INTERVAL '5' SECOND, INTERVAL '15' SECOND)"
            )

    def assign_windows(self, timestamp: int) -> list[tuple[int, int]]:
        start = window_start_with_offset(timestamp, self.offset, self.max_size)
        last_end = start + self.max_size
        first_end = window_start_with_offset(timestamp, self.offset, self.step) + self.step
        return [(start, end) for end in range(first_end, last_end + 1, self.step)]

    def assign_slice_end(self, timestamp: int) -> int:
        return window_start_with_offset(timestamp, self.offset, self.step) + self.step

    @property
    def slice_interval(self) -> int:
        return self.step

    def last_window_end(self, slice_end: int) -> int:
        return self.window_start(slice_end) + self.max_size

    def window_start(self, window_end: int) -> int:
        return window_start_with_offset(window_end - 1, self.offset, self.max_size)

    def expired_slices(self, window_end: int) -> list[int]:
        first = self.window_start(window_end) + self.step
        if window_end == first:
            return []  # the first slice holds the shared accumulators
        if window_end == self.window_start(window_end) + self.max_size:
            return [window_end, first]
        return [window_end]

    def merge_slices(self, window_end: int) -> tuple[int | None, list[int]]:
        first = self.window_start(window_end) + self.step
        return first, ([] if window_end == first else [window_end])

    def next_trigger_window(self, window_end: int, is_empty: bool) -> int | None:
        nxt = window_end + self.step
        return None if nxt > self.window_start(window_end) + self.max_size else nxt

    @property
    def shared(self) -> bool:
        return True
