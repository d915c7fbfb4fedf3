"""WatermarkStrategy: ports of Flink's WatermarkStrategyTest, immutability, shipping, and argument errors."""

from __future__ import annotations

import pickle
from datetime import timedelta
from typing import Any

import cloudpickle
import pytest

from strom.api.eventtime import (
    AscendingTimestampsWatermarks,
    BoundedOutOfOrdernessWatermarks,
    NoWatermarksGenerator,
    RecordTimestampAssigner,
    TimestampAssigner,
    Watermark,
    WatermarkGenerator,
    WatermarkGeneratorSupplierContext,
    WatermarkOutput,
    WatermarkStrategy,
    WatermarksWithIdleness,
)
from strom.exceptions import InvalidProgramError

pytestmark = pytest.mark.timeout(60)


class FortyTwoAssigner(TimestampAssigner[Any]):
    def extract_timestamp(self, element: Any, record_timestamp: int) -> int:
        return 42


class PunctuatedGenerator(WatermarkGenerator[int]):
    """A punctuated generator: every even event is a watermark."""

    def on_event(self, event: int, event_timestamp: int, output: WatermarkOutput) -> None:
        if event % 2 == 0:
            output.emit_watermark(Watermark(event_timestamp))

    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        pass


class RecordingOutput:
    def __init__(self) -> None:
        self.calls: list[object] = []

    def emit_watermark(self, watermark: Watermark) -> None:
        self.calls.append(watermark)

    def mark_idle(self) -> None:
        self.calls.append("idle")

    def mark_active(self) -> None:
        self.calls.append("active")


class FrozenClock:
    def __init__(self) -> None:
        self.now_ms = 5_000

    def relative_time_ms(self) -> int:
        return self.now_ms


def test_default_time_stamp_assigner() -> None:
    strategy = WatermarkStrategy.for_monotonous_timestamps()
    assert isinstance(strategy.create_timestamp_assigner(), RecordTimestampAssigner)
    assert strategy.create_timestamp_assigner().extract_timestamp("x", 13) == 13
    assert isinstance(strategy.create_watermark_generator(), AscendingTimestampsWatermarks)


def test_lambda_timestamp_assigner() -> None:
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda event, ts: 42)
    assert strategy.create_timestamp_assigner().extract_timestamp(None, 13) == 42


def test_class_timestamp_assigner() -> None:
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(FortyTwoAssigner())
    assert strategy.create_timestamp_assigner().extract_timestamp(None, 13) == 42


def test_with_idleness_helper() -> None:
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_idleness(timedelta(days=7))
    assert isinstance(strategy.create_timestamp_assigner(), RecordTimestampAssigner)
    assert isinstance(strategy.create_watermark_generator(), WatermarksWithIdleness)


def test_builders_keep_each_other_and_return_new_strategies() -> None:
    base = WatermarkStrategy.for_bounded_out_of_orderness(timedelta(seconds=5))
    with_assigner = base.with_timestamp_assigner(lambda event, ts: event["ts"])
    with_both = with_assigner.with_idleness(60_000)
    assert with_assigner is not base and with_both is not with_assigner
    # the base is unchanged
    assert isinstance(base.create_timestamp_assigner(), RecordTimestampAssigner)
    assert isinstance(base.create_watermark_generator(), BoundedOutOfOrdernessWatermarks)
    # the idleness wrapper keeps the assigner; the assigner wrapper keeps the generator
    assert with_both.create_timestamp_assigner().extract_timestamp({"ts": 7}, 0) == 7
    generator = with_both.create_watermark_generator()
    assert isinstance(generator, WatermarksWithIdleness)
    output = RecordingOutput()
    generator.on_event({"ts": 10_000}, 10_000, output)
    generator.on_periodic_emit(output)
    assert output.calls == [Watermark(4_999)]
    with pytest.raises(AttributeError):
        base.out_of_orderness_ms = 1  # type: ignore[attr-defined]


def test_each_subtask_gets_its_own_generator() -> None:
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(0)
    first, second = strategy.create_watermark_generator(), strategy.create_watermark_generator()
    assert first is not second
    output = RecordingOutput()
    first.on_event(None, 100, output)
    second.on_periodic_emit(output)
    assert output.calls == [Watermark(-(2**63))]


def test_bounded_out_of_orderness_accepts_int_and_timedelta() -> None:
    for duration in (1500, timedelta(seconds=1.5)):
        generator = WatermarkStrategy.for_bounded_out_of_orderness(duration).create_watermark_generator()
        assert isinstance(generator, BoundedOutOfOrdernessWatermarks)
        assert generator.out_of_orderness_ms == 1500


def test_no_watermarks() -> None:
    assert isinstance(WatermarkStrategy.no_watermarks().create_watermark_generator(), NoWatermarksGenerator)


def test_for_generator_punctuated_and_context() -> None:
    contexts: list[WatermarkGeneratorSupplierContext] = []

    def factory(context: WatermarkGeneratorSupplierContext) -> WatermarkGenerator[int]:
        contexts.append(context)
        return PunctuatedGenerator()

    strategy = WatermarkStrategy.for_generator(factory)
    context = WatermarkGeneratorSupplierContext(metric_group="group")
    generator = strategy.create_watermark_generator(context)
    output = RecordingOutput()
    for event in (1, 2, 3, 4):
        generator.on_event(event, event * 10, output)
    assert output.calls == [Watermark(20), Watermark(40)]
    assert contexts == [context]
    strategy.create_watermark_generator()  # a default context when none is given
    assert contexts[1].metric_group is None


def test_with_idleness_uses_the_input_activity_clock_of_the_context() -> None:
    clock = FrozenClock()
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_idleness(timedelta(milliseconds=10))
    generator = strategy.create_watermark_generator(WatermarkGeneratorSupplierContext(input_activity_clock=clock))
    output = RecordingOutput()
    generator.on_periodic_emit(output)  # first quiet probe: countdown starts at 5000
    clock.now_ms += 11
    generator.on_periodic_emit(output)
    assert output.calls == [Watermark(-(2**63)), "idle"]


def test_strategies_survive_shipping_to_a_task_manager() -> None:
    strategy = (
        WatermarkStrategy.for_bounded_out_of_orderness(timedelta(seconds=3))
        .with_timestamp_assigner(lambda event, ts: event * 2)
        .with_idleness(1000)
    )
    shipped = cloudpickle.loads(cloudpickle.dumps(strategy))
    assert shipped.create_timestamp_assigner().extract_timestamp(21, 0) == 42
    assert isinstance(shipped.create_watermark_generator(), WatermarksWithIdleness)
    # built-in strategies and module-level assigners need no cloudpickle
    plain = WatermarkStrategy.for_monotonous_timestamps().with_idleness(5)
    assert pickle.loads(pickle.dumps(plain)) == plain
    with_assigner = pickle.loads(pickle.dumps(plain.with_timestamp_assigner(FortyTwoAssigner())))
    assert with_assigner.create_timestamp_assigner().extract_timestamp(None, 0) == 42


def test_custom_strategy_subclass_gets_the_builders() -> None:
    class EveryEventStrategy(WatermarkStrategy[int]):
        def create_watermark_generator(
            self, context: WatermarkGeneratorSupplierContext | None = None
        ) -> WatermarkGenerator[int]:
            return PunctuatedGenerator()

    strategy = EveryEventStrategy().with_timestamp_assigner(lambda event, ts: event)
    assert isinstance(strategy.create_watermark_generator(), PunctuatedGenerator)
    assert strategy.create_timestamp_assigner().extract_timestamp(9, 0) == 9


Unchecked: Any = WatermarkStrategy  # the misuse below is what the type checker would catch


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Unchecked.for_bounded_out_of_orderness(-1), "max_out_of_orderness expected a duration"),
        (lambda: Unchecked.for_bounded_out_of_orderness("5s"), "max_out_of_orderness expected an int"),
        (lambda: Unchecked.for_monotonous_timestamps().with_idleness(0), "idle_timeout expected a duration"),
        (
            lambda: Unchecked.for_monotonous_timestamps().with_idleness(timedelta(seconds=-1)),
            "idle_timeout expected a duration of more than zero",
        ),
        (
            lambda: Unchecked.for_monotonous_timestamps().with_timestamp_assigner(42),
            "with_timestamp_assigner expected a TimestampAssigner or a function",
        ),
        (lambda: Unchecked.for_generator(PunctuatedGenerator()), "rather than a generator instance"),
        (lambda: Unchecked.for_generator(None), "for_generator expected a function"),
        (
            lambda: Unchecked.for_generator(lambda ctx: 42).create_watermark_generator(),
            "expected to return a WatermarkGenerator; got a 'int'",
        ),
    ],
)
def test_bad_arguments_raise_invalid_program_error(build: Any, message: str) -> None:
    with pytest.raises(InvalidProgramError, match=message) as caught:
        build()
    assert "; got " in str(caught.value) and "; hint: " in str(caught.value)
