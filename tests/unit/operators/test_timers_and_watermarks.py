"""Timers of KeyedProcessFunction (Flink's KeyedProcessOperatorTest cases) and the TimestampsAndWatermarksOperator
(Flink's TimestampsAndWatermarksOperatorTest cases), driven through the operator harness."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import Any

import pytest
from operator_harness import OperatorHarness, Record, WatermarkOut

from strom import (
    InvalidProgramError,
    KeyedProcessFunction,
    OutputTag,
    TimeDomain,
    ValueStateDescriptor,
    Watermark,
    WatermarkGenerator,
    WatermarkStrategy,
)
from strom.runtime.operators.keyed import KeyedProcessOperator
from strom.runtime.operators.timestamps_and_watermarks import TimestampsAndWatermarksOperator


def key0(t: tuple[Any, ...]) -> Any:
    return t[0]


class TimerAtPlus5(KeyedProcessFunction):
    """Per element an event-time timer 5 ms later; on_timer emits (key, time, domain, count of elements)."""

    def __init__(self, domain: TimeDomain = TimeDomain.EVENT_TIME) -> None:
        self.domain = domain

    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count"))

    def process_element(self, value: Any, ctx: Any) -> Iterable[Any]:
        self.count.update((self.count.value() or 0) + 1)
        ts = ctx.timer_service()
        if self.domain is TimeDomain.EVENT_TIME:
            ts.register_event_time_timer(ctx.timestamp() + 5)
        else:
            ts.register_processing_time_timer(ts.current_processing_time() + 5)
        yield ("in", value[1], ctx.timestamp())

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any]:
        yield (ctx.get_current_key(), timestamp, ctx.time_domain(), self.count.value(), ctx.timestamp())


def harness(fn: Any, processing_time: int = 0) -> OperatorHarness:
    return OperatorHarness(KeyedProcessOperator(fn, key0), processing_time=processing_time).open()


def test_event_time_timers_fire_in_order_once_per_key_and_time_with_the_key_set() -> None:
    h = harness(TimerAtPlus5())
    h.process_elements([(("a", 1), 10), (("b", 2), 12), (("a", 3), 10)])  # a registers 15 twice: one timer
    assert h.extract_output() == [
        Record(("in", 1, 10), 10),
        Record(("in", 2, 12), 12),
        Record(("in", 3, 10), 10),
    ]
    h.process_watermark(14)
    assert h.extract_output() == [WatermarkOut(14)]
    h.process_watermark(20)
    assert h.extract_output() == [
        Record(("a", 15, TimeDomain.EVENT_TIME, 2, 15), 15),
        Record(("b", 17, TimeDomain.EVENT_TIME, 1, 17), 17),
        WatermarkOut(20),
    ]


def test_processing_time_timers_fire_on_the_clock_without_a_timestamp() -> None:
    h = harness(TimerAtPlus5(TimeDomain.PROCESSING_TIME), processing_time=100)
    h.process_element(("a", 1), 1)
    h.extract_output()
    h.set_processing_time(104)
    assert h.extract_output() == []
    h.set_processing_time(105)
    assert h.extract_output() == [Record(("a", 105, TimeDomain.PROCESSING_TIME, 1, None), None)]


def test_deleted_timers_do_not_fire_and_current_watermark_is_visible() -> None:
    class SetAndDelete(KeyedProcessFunction):
        def process_element(self, value: Any, ctx: Any) -> None:
            ts = ctx.timer_service()
            ts.register_event_time_timer(100)
            ts.register_event_time_timer(200)
            ts.delete_event_time_timer(100)
            ctx.output(OutputTag("wm"), ts.current_watermark())

        def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any]:
            yield timestamp

    h = harness(SetAndDelete())
    h.process_watermark(50)
    h.process_element(("a", 0), 60)
    h.process_watermark(300)
    assert h.records() == [200]
    assert h.side_output("wm") == [Record(50, 60)]


def test_timers_and_state_survive_a_snapshot_and_restore() -> None:
    h = harness(TimerAtPlus5())
    h.process_elements([(("a", 1), 10), (("b", 2), 30)])
    h.process_watermark(16)
    h.extract_output()
    snap = h.snapshot()
    restored = OperatorHarness(KeyedProcessOperator(TimerAtPlus5(), key0)).open(restore=snap)
    restored.process_watermark(40)
    assert restored.extract_output() == [Record(("b", 35, TimeDomain.EVENT_TIME, 1, 35), 35), WatermarkOut(40)]
    # a timer registered after the restore still de-duplicates against restored ones
    restored.process_element(("b", 9), 30)
    restored.process_watermark(50)
    assert restored.records()[-1] == ("b", 35, TimeDomain.EVENT_TIME, 2, 35)


def test_timer_time_must_be_an_int() -> None:
    class Bad(KeyedProcessFunction):
        def process_element(self, value: Any, ctx: Any) -> None:
            ctx.timer_service().register_event_time_timer(1.5)

    h = harness(Bad())
    with pytest.raises(Exception, match="expected a timer time as an int"):
        h.process_element(("a", 1), 1)


# --- TimestampsAndWatermarksOperator ---------------------------------------------------------------------------


def test_periodic_watermarks_are_emitted_on_the_interval_and_only_when_rising() -> None:
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(timedelta(milliseconds=10)).with_timestamp_assigner(
        lambda e, ts: e
    )
    h = _with_interval(TimestampsAndWatermarksOperator(strategy), 50)
    h.operator.process_batch([100, 120, 110])
    assert h.extract_output() == [Record(100, 100), Record(120, 120), Record(110, 110)]
    h.set_processing_time(49)
    assert h.extract_output() == []
    h.set_processing_time(50)
    assert h.extract_output() == [WatermarkOut(109)]
    h.set_processing_time(100)
    assert h.extract_output() == []  # no new maximum: no watermark
    h.operator.process_batch([200])
    h.set_processing_time(150)
    assert h.extract_output() == [Record(200, 200), WatermarkOut(189)]


def test_upstream_watermarks_are_swallowed_except_the_end_of_input() -> None:
    h = _with_interval(
        TimestampsAndWatermarksOperator(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, t: e)
        ),
        0,
    )
    h.process_watermark(5)
    assert h.extract_output() == []
    h.process_watermark(Watermark.MAX_WATERMARK.timestamp)
    assert h.extract_output() == [WatermarkOut(Watermark.MAX_WATERMARK.timestamp)]


def test_punctuated_generator_and_idleness_statuses() -> None:
    class EveryTen(WatermarkGenerator):
        def on_event(self, event: Any, event_timestamp: int, output: Any) -> None:
            if event % 10 == 0:
                output.emit_watermark(Watermark(event_timestamp))

        def on_periodic_emit(self, output: Any) -> None:
            output.mark_idle()

    strategy = WatermarkStrategy.for_generator(lambda ctx: EveryTen()).with_timestamp_assigner(lambda e, t: e)
    h = _with_interval(TimestampsAndWatermarksOperator(strategy), 10)
    h.operator.process_batch([5, 10, 15])
    # a punctuated watermark leaves right after the record that caused it, as in Flink
    assert h.extract_output() == [Record(5, 5), Record(10, 10), WatermarkOut(10), Record(15, 15)]
    h.set_processing_time(10)
    assert h.extract_output() == ["idle"]
    h.operator.process_batch([20])
    assert h.extract_output() == [Record(20, 20), "active", WatermarkOut(20)]


def test_a_timestamp_assigner_returning_a_float_is_a_clear_error() -> None:
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, t: e / 2)
    h = _with_interval(TimestampsAndWatermarksOperator(strategy), 0)
    with pytest.raises(
        InvalidProgramError, match=r"return an int of milliseconds; got 0\.5 \(float\) for input record #0"
    ):
        h.operator.process_batch([1])


def _with_interval(op: TimestampsAndWatermarksOperator, interval: int) -> OperatorHarness:
    h = OperatorHarness(op, processing_time=0)
    ctx = op.runtime_context
    assert ctx is not None
    from dataclasses import replace

    ctx.info = replace(ctx.info, auto_watermark_interval_ms=interval)
    return h.open()
