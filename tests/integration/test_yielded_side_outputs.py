"""PyFlink's form of side outputs: a process function yields ``(output_tag, value)`` and the value reaches
``get_side_output(tag)`` — from process, keyed process (elements and timers), process window and co-process
functions, mixed with ``ctx.output`` — while a main-output tuple that merely looks like ``(str, value)`` stays on
the main output."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

import pytest

from strom import (
    Configuration,
    CoProcessFunction,
    KeyedProcessFunction,
    OutputTag,
    ProcessFunction,
    ProcessWindowFunction,
    StreamExecutionEnvironment,
    TumblingEventTimeWindows,
    WatermarkStrategy,
)

ODD = OutputTag("odd")
BIG = OutputTag("big")
FIRED = OutputTag("fired")


def env_with(parallelism: int) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration({"taskmanager.numberOfTaskSlots": 1, "minicluster.number-of-taskmanagers": 2})
    )
    env.set_parallelism(parallelism)
    return env


class Split(ProcessFunction):
    def process_element(self, value: int, ctx: ProcessFunction.Context) -> Iterable[Any]:
        if value % 2:
            yield ODD, value * 10
        else:
            yield "even", value  # a (str, int) tuple: main output
        if value >= 90:
            ctx.output(BIG, value)


class CountAndFire(KeyedProcessFunction):
    def process_element(self, value: tuple[str, int], ctx: KeyedProcessFunction.Context) -> Iterable[Any]:
        ctx.timer_service().register_event_time_timer(value[1] + 1)
        yield value

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Iterable[Any]:
        yield FIRED, (ctx.get_current_key(), timestamp)


class Sizes(ProcessWindowFunction):
    def process(self, key: str, context: ProcessWindowFunction.Context, elements: Iterable[Any]) -> Iterable[Any]:
        n = len(list(elements))
        yield (BIG, (key, context.window().start, n)) if n > 3 else (key, context.window().start, n)


class Either(CoProcessFunction):
    def process_element1(self, value: int, ctx: CoProcessFunction.Context) -> Iterable[Any]:
        yield ODD, value

    def process_element2(self, value: int, ctx: CoProcessFunction.Context) -> Iterable[Any]:
        yield value


@pytest.mark.timeout(120)
def test_yielded_tags_reach_their_side_outputs_and_look_alike_tuples_stay_on_the_main_output() -> None:
    env = env_with(2)
    split = env.from_sequence(0, 99).process(Split())
    main = split.map(lambda t: ("main", t))
    odd = split.get_side_output(ODD).map(lambda v: ("odd", v))
    big = split.get_side_output(BIG).map(lambda v: ("big", v))
    with main.union(odd, big).execute_and_collect() as results:
        rows = Counter(results)
    expected = (
        [("main", ("even", v)) for v in range(0, 100, 2)]
        + [("odd", v * 10) for v in range(1, 100, 2)]
        + [("big", v) for v in range(90, 100)]
    )
    assert rows == Counter(expected)


@pytest.mark.timeout(120)
def test_keyed_timers_window_functions_and_co_process_functions_yield_to_side_outputs() -> None:
    env = env_with(2)
    events = [(f"k{i % 3}", i) for i in range(30)]
    timed = env.from_collection(events).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, _: e[1])
    )
    keyed = timed.key_by(lambda e: e[0]).process(CountAndFire())
    fired = keyed.get_side_output(FIRED).map(lambda v: ("fired", v))
    windows = timed.key_by(lambda e: e[0]).window(TumblingEventTimeWindows.of(10)).process(Sizes())
    big_windows = windows.get_side_output(BIG).map(lambda v: ("big", v))
    co = env.from_sequence(1, 5).connect(env.from_sequence(100, 102)).process(Either())
    co_odd = co.get_side_output(ODD).map(lambda v: ("co-side", v))
    out = keyed.map(lambda v: ("main", v)).union(
        fired, windows.map(lambda v: ("small", v)), big_windows, co.map(lambda v: ("co-main", v)), co_odd
    )
    with out.execute_and_collect() as results:
        rows = Counter(results)
    per_window = Counter((k, i // 10 * 10) for k, i in events)
    expected = (
        [("main", e) for e in events]
        + [("fired", (k, i + 1)) for k, i in events]
        + [("big" if n > 3 else "small", (k, start, n)) for (k, start), n in per_window.items()]
        + [("co-main", v) for v in range(100, 103)]
        + [("co-side", v) for v in range(1, 6)]
    )
    assert rows == Counter(expected)
