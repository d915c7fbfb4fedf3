"""Ports Flink's TumblingEventTimeWindowsTest, SlidingEventTimeWindowsTest, EventTimeSessionWindowsTest and
the processing-time / dynamic / global assigner tests."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from windowing_harness import NO_TIMESTAMP, FixedProcessingTime

from strom.api.windowing import (
    DynamicEventTimeSessionWindows,
    DynamicProcessingTimeSessionWindows,
    EventTimeSessionWindows,
    EventTimeTrigger,
    GlobalWindow,
    GlobalWindows,
    NeverTrigger,
    ProcessingTimeSessionWindows,
    ProcessingTimeTrigger,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TimeWindow,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WindowStagger,
)
from strom.api.windowing.triggers import EndOfStreamTrigger
from strom.exceptions import InvalidProgramError

pytestmark = pytest.mark.timeout(60)

CTX = FixedProcessingTime(0)
ms = timedelta(milliseconds=1)


def windows(*bounds: tuple[int, int]) -> set[TimeWindow]:
    return {TimeWindow(s, e) for s, e in bounds}


# --- TumblingEventTimeWindowsTest ------------------------------------------------------------------


def test_tumbling_window_assignment() -> None:
    assigner = TumblingEventTimeWindows.of(5000 * ms)
    assert assigner.assign_windows("String", 0, CTX) == [TimeWindow(0, 5000)]
    assert assigner.assign_windows("String", 4999, CTX) == [TimeWindow(0, 5000)]
    assert assigner.assign_windows("String", 5000, CTX) == [TimeWindow(5000, 10000)]


def test_tumbling_window_assignment_with_stagger() -> None:
    assigner = TumblingEventTimeWindows.of(5000, 0, WindowStagger.NATURAL)
    ctx = FixedProcessingTime(150)
    assert assigner.assign_windows("String", 150, ctx) == [TimeWindow(150, 5150)]
    assert assigner.assign_windows("String", 5099, ctx) == [TimeWindow(150, 5150)]
    assert assigner.assign_windows("String", 5300, ctx) == [TimeWindow(5150, 10150)]


def test_tumbling_window_assignment_with_global_offset() -> None:
    assigner = TumblingEventTimeWindows.of(5000 * ms, 100 * ms)
    assert assigner.assign_windows("String", 100, CTX) == [TimeWindow(100, 5100)]
    assert assigner.assign_windows("String", 5099, CTX) == [TimeWindow(100, 5100)]
    assert assigner.assign_windows("String", 5100, CTX) == [TimeWindow(5100, 10100)]


def test_tumbling_window_assignment_with_negative_global_offset() -> None:
    assigner = TumblingEventTimeWindows.of(5000, -100)
    assert assigner.assign_windows("String", 0, CTX) == [TimeWindow(-100, 4900)]
    assert assigner.assign_windows("String", 4899, CTX) == [TimeWindow(-100, 4900)]
    assert assigner.assign_windows("String", 4900, CTX) == [TimeWindow(4900, 9900)]


def test_tumbling_time_units() -> None:
    assigner = TumblingEventTimeWindows.of(timedelta(seconds=5), timedelta(seconds=1))
    assert assigner.assign_windows("String", 1000, CTX) == [TimeWindow(1000, 6000)]
    assert assigner.assign_windows("String", 5999, CTX) == [TimeWindow(1000, 6000)]
    assert assigner.assign_windows("String", 6000, CTX) == [TimeWindow(6000, 11000)]


@pytest.mark.parametrize(
    "args", [(timedelta(seconds=-1),), (timedelta(seconds=10), timedelta(seconds=20)), (10_000, -11_000)]
)
def test_tumbling_invalid_parameters(args: tuple[Any, ...]) -> None:
    with pytest.raises(InvalidProgramError, match=r"abs\(offset\) < size; got .*; hint: "):
        TumblingEventTimeWindows.of(*args)
    with pytest.raises(InvalidProgramError, match=r"abs\(offset\) < size"):
        TumblingProcessingTimeWindows.of(*args)


def test_tumbling_properties() -> None:
    assigner = TumblingEventTimeWindows.of(timedelta(seconds=5), 100)
    assert assigner.is_event_time()
    assert isinstance(assigner.get_default_trigger(), EventTimeTrigger)
    assert repr(assigner) == "TumblingEventTimeWindows(5000)" and assigner.get_size() == 5000


def test_tumbling_rejects_records_without_timestamp() -> None:
    for assigner in (TumblingEventTimeWindows.of(10), SlidingEventTimeWindows.of(10, 5)):
        with pytest.raises(InvalidProgramError, match="assign_timestamps_and_watermarks"):
            assigner.assign_windows("x", NO_TIMESTAMP, CTX)


# --- TumblingProcessingTimeWindowsTest --------------------------------------------------------------


def test_tumbling_processing_time_assignment() -> None:
    assigner = TumblingProcessingTimeWindows.of(5000, 100)
    ctx = FixedProcessingTime(100)
    assert assigner.assign_windows("String", NO_TIMESTAMP, ctx) == [TimeWindow(100, 5100)]
    ctx.now = 5100
    assert assigner.assign_windows("String", 0, ctx) == [TimeWindow(5100, 10100)]
    assert not assigner.is_event_time()
    assert isinstance(assigner.get_default_trigger(), ProcessingTimeTrigger)


# --- SlidingEventTimeWindowsTest -------------------------------------------------------------------


def test_sliding_window_assignment() -> None:
    assigner = SlidingEventTimeWindows.of(5000 * ms, 1000 * ms)
    assert set(assigner.assign_windows("String", 0, CTX)) == windows(
        (-4000, 1000), (-3000, 2000), (-2000, 3000), (-1000, 4000), (0, 5000)
    )
    assert set(assigner.assign_windows("String", 4999, CTX)) == windows(
        (0, 5000), (1000, 6000), (2000, 7000), (3000, 8000), (4000, 9000)
    )
    assert set(assigner.assign_windows("String", 5000, CTX)) == windows(
        (1000, 6000), (2000, 7000), (3000, 8000), (4000, 9000), (5000, 10000)
    )


def test_sliding_window_assignment_with_offset() -> None:
    assigner = SlidingEventTimeWindows.of(5000, 1000, 100)
    assert set(assigner.assign_windows("String", 100, CTX)) == windows(
        (-3900, 1100), (-2900, 2100), (-1900, 3100), (-900, 4100), (100, 5100)
    )
    assert set(assigner.assign_windows("String", 5099, CTX)) == windows(
        (100, 5100), (1100, 6100), (2100, 7100), (3100, 8100), (4100, 9100)
    )
    assert set(assigner.assign_windows("String", 5100, CTX)) == windows(
        (1100, 6100), (2100, 7100), (3100, 8100), (4100, 9100), (5100, 10100)
    )


def test_sliding_window_assignment_with_negative_offset() -> None:
    assigner = SlidingEventTimeWindows.of(5000, 1000, -100)
    assert set(assigner.assign_windows("String", 0, CTX)) == windows(
        (-4100, 900), (-3100, 1900), (-2100, 2900), (-1100, 3900), (-100, 4900)
    )
    assert set(assigner.assign_windows("String", 4899, CTX)) == windows(
        (-100, 4900), (900, 5900), (1900, 6900), (2900, 7900), (3900, 8900)
    )
    assert set(assigner.assign_windows("String", 4900, CTX)) == windows(
        (900, 5900), (1900, 6900), (2900, 7900), (3900, 8900), (4900, 9900)
    )


def test_sliding_time_units() -> None:
    assigner = SlidingEventTimeWindows.of(timedelta(seconds=5), timedelta(seconds=1), 500 * ms)
    assert set(assigner.assign_windows("String", 100, CTX)) == windows(
        (-4500, 500), (-3500, 1500), (-2500, 2500), (-1500, 3500), (-500, 4500)
    )
    expected = windows((500, 5500), (1500, 6500), (2500, 7500), (3500, 8500), (4500, 9500))
    assert set(assigner.assign_windows("String", 5499, CTX)) == expected
    assert set(assigner.assign_windows("String", 5100, CTX)) == expected


@pytest.mark.parametrize(
    "args",
    [(-2000, 1000), (2000, -1000), (-20_000, 10_000, -1000), (20_000, 10_000, -11_000), (20_000, 10_000, 11_000)],
)
def test_sliding_invalid_parameters(args: tuple[int, ...]) -> None:
    with pytest.raises(InvalidProgramError, match=r"abs\(offset\) < slide and size > 0"):
        SlidingEventTimeWindows.of(*args)
    with pytest.raises(InvalidProgramError, match=r"abs\(offset\) < slide and size > 0"):
        SlidingProcessingTimeWindows.of(*args)


def test_sliding_too_many_windows() -> None:
    with pytest.raises(InvalidProgramError, match=r"size / slide <= 10000000"):
        SlidingEventTimeWindows.of(10_000_001, 1)
    SlidingProcessingTimeWindows.of(10_000_001, 1)  # Flink checks the event-time variant only


def test_sliding_properties() -> None:
    assigner = SlidingEventTimeWindows.of(timedelta(seconds=5), 100)
    assert assigner.is_event_time() and isinstance(assigner.get_default_trigger(), EventTimeTrigger)
    assert (assigner.get_size(), assigner.get_slide()) == (5000, 100)
    processing = SlidingProcessingTimeWindows.of(5000, 1000)
    assert set(processing.assign_windows("x", NO_TIMESTAMP, FixedProcessingTime(0))) == windows(
        (-4000, 1000), (-3000, 2000), (-2000, 3000), (-1000, 4000), (0, 5000)
    )
    assert not processing.is_event_time() and isinstance(processing.get_default_trigger(), ProcessingTimeTrigger)


# --- EventTimeSessionWindowsTest -------------------------------------------------------------------


def test_session_window_assignment() -> None:
    assigner = EventTimeSessionWindows.with_gap(5000 * ms)
    for ts in (0, 4999, 5000):
        assert assigner.assign_windows("String", ts, CTX) == [TimeWindow(ts, ts + 5000)]


class RecordingCallback:
    def __init__(self) -> None:
        self.calls: list[tuple[set[TimeWindow], TimeWindow]] = []

    def __call__(self, to_be_merged: Any, merge_result: TimeWindow) -> None:
        self.calls.append((set(to_be_merged), merge_result))


def test_merge_single_point_window() -> None:
    callback = RecordingCallback()
    EventTimeSessionWindows.with_gap(5000).merge_windows([TimeWindow(0, 0)], callback)
    assert callback.calls == []


def test_merge_single_window() -> None:
    callback = RecordingCallback()
    EventTimeSessionWindows.with_gap(5000).merge_windows([TimeWindow(0, 1)], callback)
    assert callback.calls == []


def test_merge_consecutive_windows() -> None:
    callback = RecordingCallback()
    EventTimeSessionWindows.with_gap(5000).merge_windows(
        [TimeWindow(0, 1), TimeWindow(1, 2), TimeWindow(2, 3), TimeWindow(4, 5), TimeWindow(5, 6)], callback
    )
    assert callback.calls == [
        (windows((0, 1), (1, 2), (2, 3)), TimeWindow(0, 3)),
        (windows((4, 5), (5, 6)), TimeWindow(4, 6)),
    ]


def test_merge_covering_window() -> None:
    callback = RecordingCallback()
    EventTimeSessionWindows.with_gap(5000).merge_windows(
        [TimeWindow(1, 1), TimeWindow(0, 2), TimeWindow(4, 7), TimeWindow(5, 6)], callback
    )
    assert callback.calls == [
        (windows((1, 1), (0, 2)), TimeWindow(0, 2)),
        (windows((5, 6), (4, 7)), TimeWindow(4, 7)),
    ]


def test_session_time_units() -> None:
    assigner = EventTimeSessionWindows.with_gap(timedelta(seconds=5))
    assert assigner.assign_windows("String", 4999, CTX) == [TimeWindow(4999, 9999)]


@pytest.mark.parametrize("gap", [timedelta(seconds=-1), timedelta(seconds=0), 0])
def test_session_invalid_parameters(gap: Any) -> None:
    with pytest.raises(InvalidProgramError, match="0 < size"):
        EventTimeSessionWindows.with_gap(gap)
    with pytest.raises(InvalidProgramError, match="0 < size"):
        ProcessingTimeSessionWindows.with_gap(gap)


def test_session_properties() -> None:
    assigner = EventTimeSessionWindows.with_gap(timedelta(seconds=5))
    assert assigner.is_event_time() and isinstance(assigner.get_default_trigger(), EventTimeTrigger)
    processing = ProcessingTimeSessionWindows.with_gap(5000)
    assert processing.assign_windows("x", 0, FixedProcessingTime(42)) == [TimeWindow(42, 5042)]
    assert not processing.is_event_time() and isinstance(processing.get_default_trigger(), ProcessingTimeTrigger)


def test_dynamic_gap_properties() -> None:
    assigner = EventTimeSessionWindows.with_dynamic_gap(lambda element: element[1])
    assert isinstance(assigner, DynamicEventTimeSessionWindows) and assigner.is_event_time()
    assert assigner.assign_windows(("a", 7), 10, CTX) == [TimeWindow(10, 17)]
    assert isinstance(assigner.get_default_trigger(), EventTimeTrigger)
    processing = ProcessingTimeSessionWindows.with_dynamic_gap(lambda element: timedelta(milliseconds=element))
    assert isinstance(processing, DynamicProcessingTimeSessionWindows) and not processing.is_event_time()
    assert processing.assign_windows(3, 0, FixedProcessingTime(100)) == [TimeWindow(100, 103)]


def test_dynamic_gap_must_be_positive() -> None:
    assigner = DynamicEventTimeSessionWindows.with_dynamic_gap(lambda element: element)
    with pytest.raises(InvalidProgramError, match="Dynamic session time gap must satisfy 0 < gap"):
        assigner.assign_windows(0, 10, CTX)
    with pytest.raises(TypeError, match="SessionWindowTimeGapExtractor"):
        EventTimeSessionWindows.with_dynamic_gap(42)


# --- GlobalWindowsTest ------------------------------------------------------------------------------


def test_global_windows() -> None:
    assigner = GlobalWindows.create()
    assert assigner.assign_windows("String", 0, CTX) == [GlobalWindow.get()]
    assert not assigner.is_event_time()
    trigger = assigner.get_default_trigger()
    assert isinstance(trigger, NeverTrigger) and not trigger.can_merge()
    assert repr(assigner) == "GlobalWindows(trigger=NeverTrigger)"
    eos = GlobalWindows.create_with_end_of_stream_trigger().get_default_trigger()
    assert isinstance(eos, EndOfStreamTrigger)
