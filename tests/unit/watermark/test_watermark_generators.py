"""The built-in watermark generators and the idleness timer: ports of Flink's eventtime tests, exact numbers."""

from __future__ import annotations

from datetime import timedelta

import pytest

from strom.api.eventtime import (
    LONG_MAX,
    LONG_MIN,
    AscendingTimestampsWatermarks,
    BoundedOutOfOrdernessWatermarks,
    IdlenessTimer,
    MonotonicClock,
    NoWatermarksGenerator,
    Watermark,
    WatermarksWithIdleness,
)
from strom.exceptions import InvalidProgramError

pytestmark = pytest.mark.timeout(60)


class RecordingWatermarkOutput:
    """Flink's ``TestingWatermarkOutput``: records what a generator emitted."""

    def __init__(self) -> None:
        self.watermarks: list[Watermark] = []
        self.idle = False
        self.calls: list[str] = []

    def emit_watermark(self, watermark: Watermark) -> None:
        self.watermarks.append(watermark)
        self.idle = False
        self.calls.append(f"wm {watermark.timestamp}")

    def mark_idle(self) -> None:
        self.idle = True
        self.calls.append("idle")

    def mark_active(self) -> None:
        self.idle = False
        self.calls.append("active")

    def last_watermark(self) -> int | None:
        return self.watermarks[-1].timestamp if self.watermarks else None


class ManualClock:
    """Flink's ``ManualClock`` in milliseconds."""

    def __init__(self, now_ms: int = 1_000_000) -> None:
        self.now_ms = now_ms

    def relative_time_ms(self) -> int:
        return self.now_ms

    def advance_time(self, ms: int) -> None:
        self.now_ms += ms


def test_watermark_constants() -> None:
    assert Watermark.MAX_WATERMARK == Watermark(2**63 - 1) == Watermark(LONG_MAX)
    assert Watermark.UNINITIALIZED.timestamp == LONG_MIN == -(2**63)
    with pytest.raises(AttributeError):
        Watermark(1).timestamp = 2  # type: ignore[misc]


# ---------------------------------------------------------------------------------------------------------------
#  BoundedOutOfOrdernessWatermarksTest
# ---------------------------------------------------------------------------------------------------------------


def test_bounded_watermark_before_records() -> None:
    output = RecordingWatermarkOutput()
    BoundedOutOfOrdernessWatermarks(10).on_periodic_emit(output)
    assert output.last_watermark() == LONG_MIN


def test_bounded_watermark_after_event() -> None:
    output = RecordingWatermarkOutput()
    watermarks = BoundedOutOfOrdernessWatermarks(timedelta(milliseconds=10))
    watermarks.on_event(object(), 1337, output)
    assert output.watermarks == []  # periodic: nothing emitted per event
    watermarks.on_periodic_emit(output)
    assert output.last_watermark() == 1326


def test_bounded_watermark_after_non_monotonous_events() -> None:
    output = RecordingWatermarkOutput()
    watermarks = BoundedOutOfOrdernessWatermarks(10)
    for timestamp in (12345, 12300, 12340, 12280):
        watermarks.on_event(object(), timestamp, output)
    watermarks.on_periodic_emit(output)
    assert output.last_watermark() == 12334


def test_bounded_repeated_probe() -> None:
    output = RecordingWatermarkOutput()
    watermarks = BoundedOutOfOrdernessWatermarks(10)
    watermarks.on_event(object(), 723456, RecordingWatermarkOutput())
    watermarks.on_periodic_emit(RecordingWatermarkOutput())
    watermarks.on_periodic_emit(output)
    assert output.last_watermark() == 723445


def test_bounded_huge_out_of_orderness_starts_at_long_min() -> None:
    output = RecordingWatermarkOutput()
    watermarks = BoundedOutOfOrdernessWatermarks(timedelta(days=365 * 1000))
    watermarks.on_periodic_emit(output)
    watermarks.on_event(None, LONG_MIN + 5, output)  # below the start value: ignored, as in Flink's Math.max
    watermarks.on_periodic_emit(output)
    watermarks.on_event(None, -5, output)
    watermarks.on_periodic_emit(output)
    assert [w.timestamp for w in output.watermarks] == [LONG_MIN, LONG_MIN, -5 - 365 * 1000 * 86_400_000 - 1]


@pytest.mark.parametrize("bad", [-1, timedelta(milliseconds=-1), 1.5, "10", None, True])
def test_bounded_rejects_bad_out_of_orderness(bad: object) -> None:
    with pytest.raises(InvalidProgramError, match=r"max_out_of_orderness expected .*; got .*; hint: "):
        BoundedOutOfOrdernessWatermarks(bad)  # type: ignore[arg-type]


def test_timedelta_truncated_to_whole_milliseconds() -> None:
    assert BoundedOutOfOrdernessWatermarks(timedelta(seconds=2, microseconds=1999)).out_of_orderness_ms == 2001
    assert BoundedOutOfOrdernessWatermarks(timedelta(microseconds=999)).out_of_orderness_ms == 0


# ---------------------------------------------------------------------------------------------------------------
#  AscendingTimestampsWatermarksTest, NoWatermarksGenerator
# ---------------------------------------------------------------------------------------------------------------


def test_ascending_watermark_before_records() -> None:
    output = RecordingWatermarkOutput()
    AscendingTimestampsWatermarks().on_periodic_emit(output)
    assert output.last_watermark() == LONG_MIN


def test_ascending_watermark_after_event() -> None:
    output = RecordingWatermarkOutput()
    watermarks = AscendingTimestampsWatermarks()
    watermarks.on_event(object(), 1337, output)
    watermarks.on_periodic_emit(output)
    assert output.last_watermark() == 1336


def test_ascending_watermark_after_event_with_lower_timestamp() -> None:
    output = RecordingWatermarkOutput()
    watermarks = AscendingTimestampsWatermarks()
    watermarks.on_event(object(), 12345, output)
    watermarks.on_event(object(), 12340, output)
    watermarks.on_periodic_emit(output)
    assert output.last_watermark() == 12344


def test_no_watermarks_generator_emits_nothing() -> None:
    output = RecordingWatermarkOutput()
    generator = NoWatermarksGenerator()
    generator.on_event(object(), 5, output)
    generator.on_periodic_emit(output)
    assert output.calls == []


# ---------------------------------------------------------------------------------------------------------------
#  WatermarksWithIdlenessTest (IdlenessTimer) and WatermarksWithIdlenessTimeoutTest
# ---------------------------------------------------------------------------------------------------------------


def test_zero_timeout() -> None:
    with pytest.raises(
        InvalidProgramError,
        match=r"idle_timeout expected a duration of more than zero; got datetime.timedelta\(0\); hint: ",
    ):
        WatermarksWithIdleness(AscendingTimestampsWatermarks(), timedelta(0))


def test_negative_timeout() -> None:
    with pytest.raises(InvalidProgramError, match="idle_timeout expected"):
        WatermarksWithIdleness(AscendingTimestampsWatermarks(), -1)


def test_idleness_wraps_only_a_generator() -> None:
    with pytest.raises(InvalidProgramError, match="expected a WatermarkGenerator to wrap"):
        WatermarksWithIdleness(object(), 10)  # type: ignore[arg-type]


def test_initially_active() -> None:
    timer = IdlenessTimer(ManualClock(), 10)
    assert not timer.check_if_idle()


def test_idle_without_events() -> None:
    clock = ManualClock()
    timer = IdlenessTimer(clock, 10)
    timer.check_if_idle()  # start timer
    clock.advance_time(11)
    assert timer.check_if_idle()


def _create_timer_and_make_idle(clock: ManualClock, idle_timeout_ms: int) -> IdlenessTimer:
    timer = IdlenessTimer(clock, idle_timeout_ms)
    timer.check_if_idle()  # start timer
    clock.advance_time(idle_timeout_ms + 1)
    assert timer.check_if_idle()  # trigger timer
    return timer


def test_repeated_idle_checks() -> None:
    clock = ManualClock()
    timer = _create_timer_and_make_idle(clock, 122)
    assert timer.check_if_idle()
    clock.advance_time(100)
    assert timer.check_if_idle()


def test_active_after_idleness() -> None:
    clock = ManualClock()
    timer = _create_timer_and_make_idle(clock, 10)
    timer.activity()
    assert not timer.check_if_idle()


def test_idle_active_idle() -> None:
    clock = ManualClock()
    timer = _create_timer_and_make_idle(clock, 122)
    timer.activity()  # active again
    assert not timer.check_if_idle()
    timer.check_if_idle()  # idle again: start timer
    clock.advance_time(123)
    assert timer.check_if_idle()


def test_clock_reading_zero_means_no_countdown_as_in_flink() -> None:
    clock = ManualClock(0)
    timer = IdlenessTimer(clock, 10)
    assert not timer.check_if_idle()  # starts the countdown at 0, which reads as "no countdown"
    clock.advance_time(50)
    assert not timer.check_if_idle()  # so this check starts it (again), at 50
    clock.advance_time(11)
    assert timer.check_if_idle()


def test_idle_fires_at_first_probe_strictly_exceeding_timeout_after_first_quiet_probe() -> None:
    clock = ManualClock(1_000_000)  # non-zero start: 0 reads as "no countdown"
    generator = WatermarksWithIdleness(NoWatermarksGenerator(), timedelta(milliseconds=10), clock)
    output = RecordingWatermarkOutput()
    clock.advance_time(4)
    generator.on_event(object(), 1, output)  # event at t=4ms
    for step in (1, 5, 5, 5):  # probes at 5 (activity), 10 (countdown starts), 15 (5ms), 20 (exactly 10ms: not > 10)
        clock.advance_time(step)
        generator.on_periodic_emit(output)
        assert not output.idle
    clock.advance_time(5)
    generator.on_periodic_emit(output)  # t=25ms: 15ms > 10ms, 21ms after the last event
    assert output.idle


def test_idleness_marks_idle_once_skips_periodic_emits_and_resumes_on_event() -> None:
    clock = ManualClock()
    generator = WatermarksWithIdleness(BoundedOutOfOrdernessWatermarks(0), 100, clock)
    output = RecordingWatermarkOutput()
    generator.on_event(None, 1000, output)
    generator.on_periodic_emit(output)  # activity seen: wrapped generator emits
    generator.on_periodic_emit(output)  # quiet: countdown starts, wrapped generator still emits
    clock.advance_time(101)
    generator.on_periodic_emit(output)  # idle: mark_idle, no watermark
    clock.advance_time(50)
    generator.on_periodic_emit(output)  # still idle: nothing at all
    generator.on_event(None, 2000, output)
    generator.on_periodic_emit(output)  # activity: the wrapped generator's watermark ends the idleness
    assert output.calls == ["wm 999", "wm 999", "idle", "wm 1999"]
    assert not output.idle
    clock.advance_time(1000)
    generator.on_periodic_emit(output)  # quiet again: countdown restarts rather than idle at once
    assert output.calls[-1] == "wm 1999"


def test_monotonic_clock_and_reprs() -> None:
    clock = MonotonicClock()
    first = clock.relative_time_ms()
    assert isinstance(first, int) and clock.relative_time_ms() >= first
    generator = WatermarksWithIdleness(AscendingTimestampsWatermarks(), timedelta(seconds=1))
    assert repr(generator) == "WatermarksWithIdleness(AscendingTimestampsWatermarks(), idle_timeout=1000ms)"
    assert repr(BoundedOutOfOrdernessWatermarks(5)) == "BoundedOutOfOrdernessWatermarks(max_out_of_orderness=5ms)"
