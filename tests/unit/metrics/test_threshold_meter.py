"""``ThresholdMeter`` (Flink's): events of the last interval against a maximum, as the active ResourceManager counts
TaskManagers that end before registering."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from strom.runtime.metrics.threshold_meter import ThresholdMeter


def test_the_threshold_is_reached_at_the_maximum_within_the_interval_and_left_as_events_age() -> None:
    meter = ThresholdMeter(max_events_per_interval=3, interval_s=60.0)
    for t in (0.0, 10.0):
        meter.mark_event(t)
        assert not meter.exceeds_threshold(t)
    meter.mark_event(20.0)
    assert meter.exceeds_threshold(20.0)  # Flink's checkAgainstThreshold: count >= maximum
    assert meter.exceeds_threshold(60.0)  # the first event is exactly 60 s old: still inside
    assert not meter.exceeds_threshold(60.5)
    stats = meter.statistics(60.5)
    assert (stats.events_in_interval, stats.total_events) == (2, 3)
    meter.validate()


def test_a_fractional_maximum_counts_as_the_next_whole_event() -> None:
    meter = ThresholdMeter(max_events_per_interval=1.5)
    meter.mark_event(0.0)
    assert not meter.exceeds_threshold(0.0)
    meter.mark_event(0.0)
    assert meter.exceeds_threshold(0.0)


def test_nonsense_is_refused() -> None:
    with pytest.raises(ValueError, match="maximum number of events > 0"):
        ThresholdMeter(max_events_per_interval=0)
    with pytest.raises(ValueError, match="interval > 0"):
        ThresholdMeter(max_events_per_interval=1, interval_s=0)
    meter = ThresholdMeter(max_events_per_interval=1)
    meter.mark_event(5.0)
    with pytest.raises(ValueError, match="in order"):
        meter.mark_event(4.0)


@given(st.lists(st.floats(min_value=0, max_value=300, allow_nan=False), max_size=40), st.integers(1, 10))
def test_the_count_is_the_events_no_older_than_the_interval(times: list[float], maximum: int) -> None:
    times.sort()
    meter = ThresholdMeter(max_events_per_interval=maximum, interval_s=60.0)
    for i, t in enumerate(times):
        meter.mark_event(t)
        expected = sum(1 for u in times[: i + 1] if t - u <= 60.0)
        assert meter.events_in_interval(t) == expected
        assert meter.exceeds_threshold(t) == (expected >= maximum)
        meter.validate()
