"""Window join and co-group on the MiniCluster, against the outputs Flink asserts: Flink's ``CoGroupJoinITCase``
(co-group, join, self-join), the tumbling, sliding and session window joins of Flink's "Joining" page (pairs and
their window-end timestamps), keys spread over two subtasks, and a failing join function."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

import pytest

from strom import (
    Configuration,
    DataStream,
    EventTimeSessionWindows,
    JobExecutionError,
    ProcessFunction,
    RuntimeContext,
    SlidingEventTimeWindows,
    StreamExecutionEnvironment,
    TumblingEventTimeWindows,
    Watermark,
    WatermarkGenerator,
    WatermarkStrategy,
)
from strom.api.functions import CoGroupFunction, FlatJoinFunction, JoinFunction


class PunctuatedWatermarks(WatermarkGenerator):
    """Flink's ``Tuple2TimestampExtractor``: after every element, a watermark one below its timestamp."""

    def on_event(self, event: Any, event_timestamp: int, output: Any) -> None:
        output.emit_watermark(Watermark(event_timestamp - 1))

    def on_periodic_emit(self, output: Any) -> None:
        """Punctuated only."""


def env_with(parallelism: int) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"taskmanager.numberOfTaskSlots": 1}))
    env.set_parallelism(parallelism)
    return env


def timestamped(env: StreamExecutionEnvironment, elements: list[Any], timestamp: Any) -> DataStream[Any]:
    strategy = WatermarkStrategy.for_generator(lambda ctx: PunctuatedWatermarks()).with_timestamp_assigner(
        lambda e, ts: timestamp(e)
    )
    return env.from_collection(elements).assign_timestamps_and_watermarks(strategy)


def flink_str(t: tuple[Any, ...]) -> str:
    """Java's ``Tuple.toString``: ``(a,0)``."""
    return "(" + ",".join(str(f) for f in t) + ")"


class CoGroupToString(CoGroupFunction[Any, Any, str]):
    def co_group(self, first: Iterable[Any], second: Iterable[Any]) -> Iterable[str]:
        yield "F:" + "".join(flink_str(t) for t in first) + " S:" + "".join(flink_str(t) for t in second)


class JoinToString(JoinFunction[Any, Any, str]):
    def join(self, first: Any, second: Any) -> str:
        return f"{flink_str(first)}:{flink_str(second)}"


class WithTimestamp(ProcessFunction[Any, Any]):
    def process_element(self, value: Any, ctx: ProcessFunction.Context) -> Iterable[Any]:
        yield value, ctx.timestamp()


def collect_tagged(*tagged: tuple[str, DataStream[Any]]) -> dict[str, list[Any]]:
    """Run one job for several results: each mapped to ``(tag, record)``, unioned, collected, split again."""
    streams = [stream.map(lambda r, tag=tag: (tag, r)) for tag, stream in tagged]
    out: dict[str, list[Any]] = {tag: [] for tag, _ in tagged}
    with streams[0].union(*streams[1:]).execute_and_collect() as results:
        for tag, record in results:
            out[tag].append(record)
    return out


# CoGroupJoinITCase's expected results, verbatim
FLINK_CO_GROUP = [
    "F:(a,0)(a,1)(a,2) S:(a,0)(a,1)",
    "F:(b,3)(b,4)(b,5) S:(b,3)",
    "F:(a,6)(a,7)(a,8) S:",
    "F: S:(c,6)(c,7)(c,8)",
]
FLINK_JOIN = [
    "(a,x,0):(a,u,0)", "(a,x,0):(a,w,1)", "(a,y,1):(a,u,0)", "(a,y,1):(a,w,1)", "(a,z,2):(a,u,0)", "(a,z,2):(a,w,1)",
    "(b,u,3):(b,i,3)", "(b,u,3):(b,k,5)", "(b,w,5):(b,i,3)", "(b,w,5):(b,k,5)",
    "(a,i,6):(a,x,6)", "(a,i,6):(a,z,8)", "(a,j,7):(a,x,6)", "(a,j,7):(a,z,8)", "(a,k,8):(a,x,6)", "(a,k,8):(a,z,8)",
]  # fmt: skip
FLINK_SELF_JOIN = [
    "(a,x,0):(a,x,0)", "(a,x,0):(a,y,1)", "(a,x,0):(a,z,2)", "(a,y,1):(a,x,0)", "(a,y,1):(a,y,1)", "(a,y,1):(a,z,2)",
    "(a,z,2):(a,x,0)", "(a,z,2):(a,y,1)", "(a,z,2):(a,z,2)", "(b,u,3):(b,u,3)", "(b,u,3):(b,w,5)", "(b,w,5):(b,u,3)",
    "(b,w,5):(b,w,5)", "(a,i,6):(a,i,6)", "(a,i,6):(a,j,7)", "(a,i,6):(a,k,8)", "(a,j,7):(a,i,6)", "(a,j,7):(a,j,7)",
    "(a,j,7):(a,k,8)", "(a,k,8):(a,i,6)", "(a,k,8):(a,j,7)", "(a,k,8):(a,k,8)",
]  # fmt: skip


@pytest.mark.timeout(120)
def test_flink_co_group_join_it_case_co_group_join_and_self_join() -> None:
    env = env_with(1)
    window = TumblingEventTimeWindows.of(timedelta(milliseconds=3))
    pairs1 = [("a", 0), ("a", 1), ("a", 2), ("b", 3), ("b", 4), ("b", 5), ("a", 6), ("a", 7), ("a", 8)]
    pairs2 = [("a", 0), ("a", 1), ("b", 3), ("c", 6), ("c", 7), ("c", 8)]
    source1 = timestamped(env, pairs1, lambda e: e[1])
    source2 = timestamped(env, pairs2, lambda e: e[1])
    triples1 = [("a", "x", 0), ("a", "y", 1), ("a", "z", 2), ("b", "u", 3), ("b", "w", 5)]
    triples1 += [("a", "i", 6), ("a", "j", 7), ("a", "k", 8)]
    triples2 = [("a", "u", 0), ("a", "w", 1), ("b", "i", 3), ("b", "k", 5), ("a", "x", 6), ("a", "z", 8)]
    source3 = timestamped(env, triples1, lambda e: e[2])
    source4 = timestamped(env, triples2, lambda e: e[2])

    def key(e: Any) -> Any:
        return e[0]

    results = collect_tagged(
        ("co_group", source1.co_group(source2).where(key).equal_to(key).window(window).apply(CoGroupToString())),
        ("join", source3.join(source4).where(key).equal_to(key).window(window).apply(JoinToString())),
        ("self_join", source3.join(source3).where(key).equal_to(key).window(window).apply(JoinToString())),
    )

    assert sorted(results["co_group"]) == sorted(FLINK_CO_GROUP)
    assert sorted(results["join"]) == sorted(FLINK_JOIN)
    assert sorted(results["self_join"]) == sorted(FLINK_SELF_JOIN)


@pytest.mark.timeout(120)
def test_the_tumbling_sliding_and_session_window_joins_of_flinks_joining_page() -> None:
    """The figures' streams (element = its timestamp, one key): orange joined with green, ``"{orange},{green}"``
    as the docs' JoinFunction, each pair stamped with its window's last millisecond."""
    env = env_with(1)

    def window_join(orange: list[int], green: list[int], assigner: Any) -> DataStream[Any]:
        joined = (
            timestamped(env, orange, lambda e: e)
            .join(timestamped(env, green, lambda e: e))
            .where(lambda e: "k")
            .equal_to(lambda e: "k")
            .window(assigner)
            .apply(lambda first, second: f"{first},{second}")
        )
        return joined.process(WithTimestamp())

    ms = timedelta(milliseconds=1)
    results = collect_tagged(
        ("tumbling", window_join(list(range(8)), [0, 1, 3, 4], TumblingEventTimeWindows.of(2 * ms))),
        ("sliding", window_join([0, 1, 2, 3, 4], [0, 3, 4], SlidingEventTimeWindows.of(2 * ms, ms))),
        ("session", window_join([1, 2, 5, 6, 8, 9], [0, 4, 5], EventTimeSessionWindows.with_gap(ms))),
    )

    # [0,2) [2,4) [4,6); nothing in [6,8): green has no element there
    tumbling = [("0,0", 1), ("0,1", 1), ("1,0", 1), ("1,1", 1), ("2,3", 3), ("3,3", 3), ("4,4", 5), ("5,4", 5)]
    assert Counter(results["tumbling"]) == Counter(tumbling)
    # [-1,1) [0,2) [1,3) (nothing: no green) [2,4) [3,5) [4,6)
    sliding = [("0,0", 0), ("0,0", 1), ("1,0", 1), ("2,3", 3), ("3,3", 3), ("3,3", 4), ("3,4", 4), ("4,3", 4)]
    assert Counter(results["sliding"]) == Counter([*sliding, ("4,4", 4), ("4,4", 5)])
    # sessions [0,3) [4,7) [8,10) (nothing: no green)
    session = [("1,0", 2), ("2,0", 2), ("5,4", 6), ("5,5", 6), ("6,4", 6), ("6,5", 6)]
    assert Counter(results["session"]) == Counter(session)


class SubtaskJoin(FlatJoinFunction[Any, Any, Any]):
    """A rich flat join: opened with its runtime context, it tags each pair with its subtask."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.subtask = runtime_context.get_index_of_this_subtask()

    def join(self, first: Any, second: Any) -> Iterable[Any]:
        if first[1] % 3 != 0:  # a flat join may drop a pair
            yield (first[0], first[1], second[1], self.subtask)


@pytest.mark.timeout(120)
def test_a_join_at_parallelism_2_spreads_keys_over_both_subtasks_and_equals_a_reference() -> None:
    env = env_with(2)
    keys = [f"k{i}" for i in range(12)]
    first = [(keys[i % 12], i) for i in range(120)]
    second = [(keys[i % 7], i) for i in range(0, 120, 2)]
    window = 10

    joined = (
        timestamped(env, first, lambda e: e[1])
        .join(timestamped(env, second, lambda e: e[1]).rebalance())
        .where(lambda e: e[0])
        .equal_to(lambda e: e[0])
        .window(TumblingEventTimeWindows.of(timedelta(milliseconds=window)))
        .apply(SubtaskJoin())
    )
    with joined.execute_and_collect() as results:
        rows = list(results)

    reference = Counter(
        (k1, t1, t2)
        for k1, t1 in first
        for k2, t2 in second
        if k1 == k2 and t1 // window == t2 // window and t1 % 3 != 0
    )
    assert reference and Counter((k, t1, t2) for k, t1, t2, _ in rows) == reference
    assert {subtask for *_, subtask in rows} == {0, 1}
    subtasks_of_key: dict[str, set[int]] = {}
    for k, _, _, subtask in rows:
        subtasks_of_key.setdefault(k, set()).add(subtask)
    assert all(len(s) == 1 for s in subtasks_of_key.values())  # a key lives on one subtask


@pytest.mark.timeout(120)
def test_a_failing_join_function_fails_the_job_naming_the_window_join_operator() -> None:
    env = env_with(1)

    def divide(first: Any, second: Any) -> Any:
        return first[1] / second[1]

    joined = (
        timestamped(env, [("a", 1), ("a", 2)], lambda e: e[1])
        .join(timestamped(env, [("a", 0)], lambda e: e[1]))
        .where(lambda e: e[0])
        .equal_to(lambda e: e[0])
        .window(TumblingEventTimeWindows.of(timedelta(milliseconds=5)))
        .apply(divide)
    )
    with (
        pytest.raises(JobExecutionError, match=r"(?s)division by zero.*operator 'Window\(Join\)'"),
        joined.execute_and_collect() as results,
    ):
        list(results)
