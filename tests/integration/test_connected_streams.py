"""Two-input jobs on the MiniCluster: connected streams with keyed state and timers driven by the combined
watermark of both inputs, the broadcast state pattern of Flink's documentation, and a two-input job killed
mid-stream that recovers (barriers aligned over both inputs) to exactly the output of an uninterrupted run."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from failover import committed_rows, completed_checkpoints, kill_a_task_manager

from strom import (
    CoFlatMapFunction,
    CoMapFunction,
    Configuration,
    DataGeneratorSource,
    FileSink,
    JsonLinesEncoder,
    KeyedBroadcastProcessFunction,
    KeyedCoProcessFunction,
    MapStateDescriptor,
    StreamExecutionEnvironment,
    ValueStateDescriptor,
    WatermarkStrategy,
)


def env_with(parallelism: int, **config: Any) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration({"taskmanager.numberOfTaskSlots": 2, "pipeline.auto-watermark-interval": 20, **config})
    )
    env.set_parallelism(parallelism)
    return env


def by_timestamp(position: int) -> WatermarkStrategy[Any]:
    return WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[position])


class Tag(CoMapFunction):
    def map1(self, value: int) -> tuple[str, int]:
        return ("number", value)

    def map2(self, value: str) -> tuple[str, str]:
        return ("word", value)


class Words(CoFlatMapFunction):
    def flat_map1(self, value: int) -> Iterable[int]:
        return [value] * (value % 3)

    def flat_map2(self, value: str) -> Iterable[str]:
        return value.split()


@pytest.mark.timeout(90)
def test_co_map_and_co_flat_map_see_each_input_once_across_task_managers() -> None:
    env = env_with(2, **{"minicluster.number-of-taskmanagers": 2, "taskmanager.numberOfTaskSlots": 1})
    numbers = env.from_sequence(0, 299)
    words = env.from_collection(["to be or", "not to be"] * 50)
    mapped = numbers.connect(words).map(Tag())
    flat = numbers.connect(words.rebalance()).flat_map(Words())
    both = mapped.map(lambda r: ("map", r)).union(flat.map(lambda r: ("flat", r)))
    with both.execute_and_collect() as results:
        rows = Counter(results)
    expected = Counter(("map", ("number", n)) for n in range(300))
    expected.update(("map", ("word", w)) for w in ["to be or", "not to be"] * 50)
    expected.update(("flat", n) for n in range(300) for _ in range(n % 3))
    expected.update(("flat", w) for line in ["to be or", "not to be"] * 50 for w in line.split())
    assert rows == expected


# --- keyed co-process: orders and payments -----------------------------------------------------------------------

GRACE = 100


class PaymentCheck(KeyedCoProcessFunction):
    """An order is paid when a payment for it is at most ``GRACE`` ms of event time after it; decided when the
    watermark of *both* streams passes that point, so the outcome depends on timestamps alone."""

    def open(self, ctx: Any) -> None:
        self.ordered = ctx.get_state(ValueStateDescriptor("ordered"))
        self.paid_at = ctx.get_state(ValueStateDescriptor("paid_at"))

    def process_element1(self, order: tuple[str, int], ctx: Any) -> None:
        self.ordered.update(ctx.timestamp())
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + GRACE)

    def process_element2(self, payment: tuple[str, int], ctx: Any) -> None:
        first = self.paid_at.value()
        self.paid_at.update(ctx.timestamp() if first is None else min(first, ctx.timestamp()))

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any]:
        paid_at = self.paid_at.value()
        yield (ctx.get_current_key(), "paid" if paid_at is not None and paid_at <= timestamp else "unpaid")


def order(i: int) -> tuple[str, int]:
    return (f"o{i}", 10 * i)


def payment(i: int) -> tuple[str, int]:
    # most orders are paid within the grace period, every 7th late, every 11th never
    j = i // 2
    delay = 250 if j % 7 == 0 else (i * 37) % (GRACE + 1)
    return (f"o{j}" if j % 11 else f"never{j}", 10 * j + delay if i % 2 == 0 else 10 * j + 400)


def payment_reference(orders: int, payments: int) -> list[tuple[str, str]]:
    first: dict[str, int] = {}
    for i in range(payments):
        key, ts = payment(i)
        first[key] = min(first.get(key, ts), ts)
    out = []
    for i in range(orders):
        key, ts = order(i)
        out.append((key, "paid" if key in first and first[key] <= ts + GRACE else "unpaid"))
    return sorted(out)


def sorted_payments(count: int) -> list[tuple[str, int]]:
    return sorted((payment(i) for i in range(count)), key=lambda p: p[1])


@pytest.mark.timeout(90)
def test_keyed_co_process_state_and_timers_follow_the_watermark_of_both_inputs() -> None:
    env = env_with(2, **{"minicluster.number-of-taskmanagers": 2, "taskmanager.numberOfTaskSlots": 2})
    orders = env.from_collection([order(i) for i in range(400)]).assign_timestamps_and_watermarks(by_timestamp(1))
    payments = env.from_collection(sorted_payments(800)).assign_timestamps_and_watermarks(by_timestamp(1))
    checked = orders.set_parallelism(1).connect(payments.set_parallelism(1)).key_by(lambda o: o[0], lambda p: p[0])
    with checked.process(PaymentCheck()).execute_and_collect() as results:
        rows = sorted(results)
    assert rows == payment_reference(400, 800)
    assert Counter(status for _, status in rows)["unpaid"] > 20  # the data exercises both outcomes


# --- the broadcast state pattern (Flink's documentation) -----------------------------------------------------------

RULES = MapStateDescriptor("RulesBroadcastState")


class MatchShapes(KeyedBroadcastProcessFunction):
    """The docs' ``KeyedBroadcastProcessFunction``: items keyed by color; a rule (name, first, second) matches
    an item of shape ``second`` after earlier items of shape ``first`` of the same color. Items are evaluated in
    event time — when the watermark of both inputs passes them — so every rule broadcast before is known."""

    def open(self, ctx: Any) -> None:
        self.pending = ctx.get_state(MapStateDescriptor("items"))  # timestamp -> shapes
        self.stored = ctx.get_state(MapStateDescriptor("stored"))  # rule name -> earlier items

    def process_element(self, item: tuple[str, str, int], ctx: Any) -> None:
        shapes = self.pending.get(ctx.timestamp()) or []
        self.pending.put(ctx.timestamp(), [*shapes, item[1]])
        ctx.timer_service().register_event_time_timer(ctx.timestamp())

    def process_broadcast_element(self, rule: tuple[str, str, str, int], ctx: Any) -> None:
        ctx.get_broadcast_state(RULES).put(rule[0], rule)

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[str]:
        color = ctx.get_current_key()
        for shape in self.pending.get(timestamp):
            for name, rule in sorted(ctx.get_broadcast_state(RULES).items()):
                stored = self.stored.get(name) or []
                if shape == rule[2] and stored:
                    for earlier in stored:
                        yield f"MATCH: {name} {color} {earlier} - {shape}@{timestamp}"
                    stored = []
                if shape == rule[1]:
                    stored = [*stored, f"{shape}@{timestamp}"]
                if stored:
                    self.stored.put(name, stored)
                else:
                    self.stored.remove(name)
        self.pending.remove(timestamp)


ITEMS = [
    ("red", "square", 1),
    ("blue", "square", 2),
    ("red", "circle", 3),
    ("red", "triangle", 4),
    ("blue", "triangle", 5),
    ("red", "square", 6),
    ("red", "square", 7),
    ("red", "triangle", 8),
    ("green", "triangle", 9),
]
SHAPE_RULES = [("square-triangle", "square", "triangle", 0), ("circle-square", "circle", "square", 0)]


@pytest.mark.timeout(90)
def test_the_broadcast_state_pattern_of_flinks_documentation_matches_shape_pairs_per_color() -> None:
    env = env_with(2)
    items = env.from_collection(ITEMS).assign_timestamps_and_watermarks(by_timestamp(2)).set_parallelism(1)
    rules = env.from_collection(SHAPE_RULES).assign_timestamps_and_watermarks(by_timestamp(3)).set_parallelism(1)
    matches = items.key_by(lambda i: i[0]).connect(rules.broadcast(RULES)).process(MatchShapes())
    with matches.execute_and_collect() as results:
        rows = sorted(results)
    assert rows == [
        "MATCH: circle-square red circle@3 - square@6",
        "MATCH: square-triangle blue square@2 - triangle@5",
        "MATCH: square-triangle red square@1 - triangle@4",
        "MATCH: square-triangle red square@6 - triangle@8",
        "MATCH: square-triangle red square@7 - triangle@8",
    ]


# --- failure and restore of a two-input job ----------------------------------------------------------------------


@pytest.mark.processes  # kills TaskManagers
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_two_input_job_killed_mid_stream_commits_exactly_the_uninterrupted_output(tmp_path: Path) -> None:
    orders_count, payments_count = 30_000, 60_000
    out = tmp_path / "out"
    env = env_with(
        2,
        **{
            "minicluster.number-of-taskmanagers": 2,
            "taskmanager.numberOfTaskSlots": 2,
            "heartbeat.interval": "250 ms",
            "heartbeat.timeout": "1 s",
            "restart-strategy.type": "fixed-delay",
            "restart-strategy.fixed-delay.attempts": 5,
            "restart-strategy.fixed-delay.delay": 200,
        },
    )
    env.enable_checkpointing(200)
    payments_sorted = sorted_payments(payments_count)
    orders = env.from_source(DataGeneratorSource(order, orders_count, 6_000), by_timestamp(1), "orders").uid("o")
    payments = env.from_source(
        DataGeneratorSource(payments_sorted.__getitem__, payments_count, 12_000), by_timestamp(1), "payments"
    ).uid("p")
    (
        orders.connect(payments)
        .key_by(lambda o: o[0], lambda p: p[0])
        .process(PaymentCheck())
        .uid("check")
        .sink_to(FileSink.for_row_format(str(out), JsonLinesEncoder()).build())
        .uid("files")
    )
    client = env.execute_async("payments with a failure")
    completed_checkpoints(client, 3)
    kill_a_task_manager(client, seed=7)
    result = client.get_job_execution_result()
    assert result.num_restarts >= 1
    assert sorted(committed_rows(out)) == payment_reference(orders_count, payments_count)
