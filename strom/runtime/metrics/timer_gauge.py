"""``TimerGauge``: how long something has been going on (Flink's ``TimerGauge``), e.g. a writer blocked on
a full buffer pool or a task waiting for input.

The owning thread calls :meth:`mark_start` / :meth:`mark_end`; any thread may read :meth:`total_seconds`,
which includes an interval still in progress. Nobody takes a lock: the writer clears the start mark before
it adds the interval to the total and the reader reads the total before the mark, so a race can only
leave one interval out of one reading (it shows in the next), never count it twice.
"""

from __future__ import annotations

import time

__all__ = ["TimerGauge"]


class TimerGauge:
    __slots__ = ("_since", "_total")

    def __init__(self) -> None:
        self._total = 0.0
        self._since = 0.0  # monotonic start of the interval in progress; 0.0 = none

    def mark_start(self) -> None:
        if not self._since:
            self._since = time.monotonic()

    def mark_end(self) -> None:
        since = self._since
        if since:
            self._since = 0.0  # cleared before the total grows: a reader never counts the interval twice
            self._total += time.monotonic() - since

    def add(self, seconds: float) -> None:
        """Account an interval measured by the caller."""
        self._total += seconds

    @property
    def is_measuring(self) -> bool:
        return bool(self._since)

    def total_seconds(self, now: float | None = None) -> float:
        total = self._total
        since = self._since
        if since:
            total += max(0.0, (time.monotonic() if now is None else now) - since)
        return total
