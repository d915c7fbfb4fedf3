"""Interval joins on the MiniCluster: the example of Flink's "Joining" page, and a keyed join at parallelism 2
checked against a brute-force reference."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from strom import (
    Configuration,
    OutputTag,
    StreamExecutionEnvironment,
    Watermark,
    WatermarkGenerator,
    WatermarkStrategy,
)
from strom.api.co_functions import ProcessJoinFunction


def env_with(parallelism: int) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"taskmanager.numberOfTaskSlots": 1}))
    env.set_parallelism(parallelism)
    return env


class AfterEachEvent(WatermarkGenerator[Any]):
    """Punctuated monotonous watermarks, ``max_timestamp - 1`` after every event: event time advances while the
    job runs, so the cleanup timers fire mid-stream and not only at the end of input."""

    def __init__(self) -> None:
        self.max_ts = -(1 << 62)

    def on_event(self, event: Any, event_timestamp: int, output: Any) -> None:
        self.max_ts = max(self.max_ts, event_timestamp)
        output.emit_watermark(Watermark(self.max_ts - 1))

    def on_periodic_emit(self, output: Any) -> None:
        """Punctuated only."""


def by_timestamp() -> WatermarkStrategy[Any]:
    """Events ``(key, timestamp, ...)`` in ascending time per stream: none is ever late, and no pair is lost to
    a cleanup (a buffered element leaves when the watermark passes its last partner's possible timestamp)."""
    return WatermarkStrategy.for_generator(lambda ctx: AfterEachEvent()).with_timestamp_assigner(lambda e, ts: e[1])


class DocsExample(ProcessJoinFunction[Any, Any, Any]):
    """The docs' function: ``first + "," + second``; here with the pair's timestamp."""

    def process_element(self, left: Any, right: Any, ctx: ProcessJoinFunction.Context) -> Iterator[Any]:
        yield (f"{left[1]},{right[1]}", ctx.get_timestamp())


@pytest.mark.timeout(120)
def test_the_orange_and_green_example_of_flinks_joining_page() -> None:
    """Flink docs, "Joining" → "Interval Join": lower bound -2 ms, upper bound +1 ms, the pairs of its figure."""
    env = env_with(1)
    orange = env.from_collection([("k", ts) for ts in (0, 2, 3, 4, 5, 7)]).assign_timestamps_and_watermarks(
        by_timestamp()
    )
    green = env.from_collection([("k", ts) for ts in (0, 1, 6, 7)]).assign_timestamps_and_watermarks(by_timestamp())
    joined = (
        orange.key_by(lambda e: e[0]).interval_join(green.key_by(lambda e: e[0])).between(-2, 1).process(DocsExample())
    )
    with joined.execute_and_collect() as results:
        rows = list(results)
    pairs = ["0,0", "0,1", "2,0", "2,1", "3,1", "5,6", "7,6", "7,7"]
    assert sorted(rows) == sorted((p, max(map(int, p.split(",")))) for p in pairs)


class Pairs(ProcessJoinFunction[Any, Any, Any]):
    def process_element(self, left: Any, right: Any, ctx: ProcessJoinFunction.Context) -> Iterator[Any]:
        assert (ctx.get_left_timestamp(), ctx.get_right_timestamp()) == (left[1], right[1])
        yield (left[2], right[2], ctx.get_timestamp())


def events(rng: random.Random, n: int, keys: int) -> list[tuple[str, int, int]]:
    out, ts = [], 0
    for i in range(n):
        ts += rng.randrange(8)  # ascending, with equal timestamps now and then
        out.append((f"k{rng.randrange(keys)}", ts, i))
    return out


@pytest.mark.timeout(120)
def test_keyed_join_at_parallelism_2_equals_a_brute_force_reference() -> None:
    rng = random.Random(7)
    left, right = events(rng, 400, 5), events(rng, 300, 5)
    lower, upper = -15, 10  # upper exclusive below: right.ts < left.ts + 10
    env = env_with(2)
    left_late, right_late = OutputTag("left-late"), OutputTag("right-late")
    joined = (
        env.from_collection(left)
        .assign_timestamps_and_watermarks(by_timestamp())
        .key_by(lambda e: e[0])
        .interval_join(
            env.from_collection(right).assign_timestamps_and_watermarks(by_timestamp()).key_by(lambda e: e[0])
        )
        .between(lower, upper)
        .upper_bound_exclusive()
        .side_output_left_late_data(left_late)
        .side_output_right_late_data(right_late)
        .process(Pairs())
    )
    late = joined.get_side_output(left_late).union(joined.get_side_output(right_late)).map(lambda e: ("late", e))
    with joined.map(lambda p: ("pair", p)).union(late).execute_and_collect() as results:
        rows = list(results)
    reference = sorted(
        (a[2], b[2], max(a[1], b[1]))
        for a in left
        for b in right
        if a[0] == b[0] and a[1] + lower <= b[1] < a[1] + upper
    )
    assert len(reference) > 300
    assert sorted(p for tag, p in rows if tag == "pair") == reference
    assert [e for tag, e in rows if tag == "late"] == []
