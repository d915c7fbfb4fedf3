"""``ProcessingTimeService``: processing-time callbacks of one task, run on the task thread.

Flink's ``ProcessingTimeService`` schedules callbacks on a timer thread that hands them to the task's mailbox;
here the mailbox loop itself asks :meth:`ProcessingTimeService.fire_due` between two units of input, and bounds
its idle wait by :meth:`next_deadline`. Callbacks therefore run on the task thread, never concurrently with
records, checkpoints or each other — the guarantee Flink's mailbox gives. Processing time is the wall clock
in milliseconds since the epoch (``System.currentTimeMillis()``); a test may pass another clock.

    >>> now = [100]
    >>> pts = ProcessingTimeService(clock=lambda: now[0])
    >>> fired = []
    >>> pts.register_timer(150, fired.append)
    >>> pts.fire_due(); now[0] = 150; pts.fire_due(); fired
    [150]
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable

__all__ = ["ProcessingTimeCallback", "ProcessingTimeService", "wall_clock_ms"]

ProcessingTimeCallback = Callable[[int], None]
"""Called with the time it was registered for."""


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class ProcessingTimeService:
    __slots__ = ("_clock", "_heap", "_seq", "quiesced")

    def __init__(self, clock: Callable[[], int] = wall_clock_ms) -> None:
        self._clock = clock
        self._heap: list[tuple[int, int, ProcessingTimeCallback]] = []
        self._seq = itertools.count()
        #: after the end of input no processing-time callback runs any more (Flink quiesces the service)
        self.quiesced = False

    def get_current_processing_time(self) -> int:
        return self._clock()

    def register_timer(self, time_ms: int, callback: ProcessingTimeCallback) -> None:
        """Run ``callback(time_ms)`` on the task thread once processing time reaches ``time_ms``."""
        if not self.quiesced:
            heapq.heappush(self._heap, (time_ms, next(self._seq), callback))

    @property
    def queue(self) -> list[tuple[int, int, ProcessingTimeCallback]]:
        """The live heap of pending callbacks, the same list for the service's life: the mailbox loop tests it
        for emptiness between two units of input and calls :meth:`fire_due` only when it holds any. Read only."""
        return self._heap

    def next_deadline(self) -> int | None:
        """The time of the earliest callback, ``None`` without any."""
        return self._heap[0][0] if self._heap else None

    def seconds_until_next(self, default: float) -> float:
        """How long the task may wait for input before a callback is due (at most ``default``)."""
        if not self._heap:
            return default
        return max(0.0, min(default, (self._heap[0][0] - self._clock()) / 1000.0))

    def fire_due(self) -> None:
        """Run every callback whose time has come, in order of time (then of registration)."""
        heap = self._heap
        if not heap:
            return
        now = self._clock()
        while heap and heap[0][0] <= now and not self.quiesced:
            t, _, callback = heapq.heappop(heap)
            callback(t)

    def quiesce(self) -> None:
        """Drop every pending callback and accept no new ones (the end of input)."""
        self.quiesced = True
        self._heap.clear()
