"""``ThresholdMeter``: how many events fell within the last interval, and whether that reaches a threshold.

Flink's ``org.apache.flink.runtime.metrics.ThresholdMeter``, which its ``ActiveResourceManager`` uses to count
TaskManagers that failed to start (``resourcemanager.start-worker.max-failure-rate`` per minute). A pure core:
the caller passes the time of every event and question, in seconds of a monotonic clock.

    >>> meter = ThresholdMeter(max_events_per_interval=2, interval_s=60.0)
    >>> meter.mark_event(0.0); meter.exceeds_threshold(1.0)
    False
    >>> meter.mark_event(1.0); meter.exceeds_threshold(1.0)
    True
    >>> meter.exceeds_threshold(60.5)  # the first event left the interval
    False
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

__all__ = ["ThresholdMeter", "ThresholdMeterStatistics"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ThresholdMeterStatistics:
    events_in_interval: int
    total_events: int
    max_events_per_interval: float
    interval_s: float


class ThresholdMeter:
    """Events within the last ``interval_s`` reaching ``max_events_per_interval`` exceed the threshold (as Flink's
    ``checkAgainstThreshold``: a count ``>=`` the maximum)."""

    def __init__(self, *, max_events_per_interval: float, interval_s: float = 60.0) -> None:
        if not interval_s > 0:
            raise ValueError(f"expected an interval > 0 s; got {interval_s}")
        if not max_events_per_interval > 0:
            raise ValueError(f"expected a maximum number of events > 0; got {max_events_per_interval}")
        self.max_events_per_interval = max_events_per_interval
        self.interval_s = interval_s
        self._events: deque[float] = deque()
        self._total = 0

    def mark_event(self, now: float) -> None:
        if self._events and now < self._events[-1]:
            raise ValueError(f"expected event times in order; got {now} after {self._events[-1]}")
        self._events.append(now)
        self._total += 1

    def events_in_interval(self, now: float) -> int:
        """Events no older than ``interval_s`` at ``now`` (older ones are dropped)."""
        while self._events and now - self._events[0] > self.interval_s:
            self._events.popleft()
        return len(self._events)

    def exceeds_threshold(self, now: float) -> bool:
        return self.events_in_interval(now) >= self.max_events_per_interval

    def statistics(self, now: float) -> ThresholdMeterStatistics:
        return ThresholdMeterStatistics(
            events_in_interval=self.events_in_interval(now),
            total_events=self._total,
            max_events_per_interval=self.max_events_per_interval,
            interval_s=self.interval_s,
        )

    def validate(self) -> None:
        assert list(self._events) == sorted(self._events)
        assert len(self._events) <= self._total
