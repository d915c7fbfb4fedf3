"""Keyed operators fed sorted input in BATCH execution (``execution.sorted-inputs.enabled``), on TaskManager
processes: a keyed reduce, a keyed process function with state and event-time timers, and an event-time window
give the same results as the same job in STREAMING, with sorted inputs on and off; a sorted input that must spill
(a few KiB of memory) gives them too; a failing task with sorted input re-runs alone and the output is exact."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from failover import committed_rows

from strom import Configuration, DataGeneratorSource, KeyedProcessFunction, StreamExecutionEnvironment
from strom.api.execution_mode import RuntimeExecutionMode
from strom.common import Time, WatermarkStrategy
from strom.connectors.file_system import FileSink, JsonLinesEncoder
from strom.datastream.state import ValueStateDescriptor
from strom.datastream.window import TumblingEventTimeWindows

pytestmark = pytest.mark.processes

KEYS = 23
RECORDS = 3_000


class CountUntilTimer(KeyedProcessFunction):
    """Counts a key's records and sums their values; a timer at the end of time emits both, one at the key's
    first timestamp + 1 s emits what was counted by then in STREAMING — so the test's records come in time order
    per key and all before that, in both modes."""

    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count"))
        self.total = runtime_context.get_state(ValueStateDescriptor("total"))

    def process_element(self, value: tuple[str, int], ctx: Any) -> None:
        self.count.update((self.count.value() or 0) + 1)
        self.total.update((self.total.value() or 0) + value[1])
        ctx.timer_service().register_event_time_timer(10_000_000)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield ("timer", ctx.get_current_key(), self.count.value(), self.total.value(), timestamp)


def _event(i: int) -> tuple[str, int]:
    return (f"k{(i * 7) % KEYS}", i)


def _results(mode: RuntimeExecutionMode, extra: dict[str, Any]) -> Counter[Any]:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration({"taskmanager.numberOfTaskSlots": 1, "minicluster.number-of-taskmanagers": 2, **extra})
    )
    env.set_parallelism(2)
    env.set_runtime_mode(mode)
    events = env.from_collection([_event(i) for i in range(RECORDS)]).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, _: e[1])
    )
    keyed = events.key_by(lambda e: e[0])
    counts = keyed.map(lambda e: (e[0], 1)).key_by(lambda e: e[0]).reduce(lambda a, b: (a[0], a[1] + b[1]))
    timers = keyed.process(CountUntilTimer())
    windows = (
        keyed.window(TumblingEventTimeWindows.of(Time.milliseconds(500)))
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .map(lambda e: ("window", e[0], e[1]))
    )
    final: dict[str, int] = {}
    rows: Counter[Any] = Counter()
    with counts.map(lambda c: ("count", c[0], c[1])).union(timers, windows).execute_and_collect() as results:
        for row in results:
            if row[0] == "count":  # STREAMING emits every running count: the last is the largest
                final[row[1]] = max(final.get(row[1], 0), row[2])
            else:
                rows[row] += 1
    rows.update(("count", k, n) for k, n in final.items())
    return rows


@pytest.mark.timeout(240)
def test_keyed_reduce_process_with_timers_and_windows_give_streamings_results_sorted_or_not() -> None:
    streaming = _results(RuntimeExecutionMode.STREAMING, {})
    assert sum(n for (kind, *_), n in streaming.items() if kind == "timer") == KEYS
    assert streaming[("count", "k0", RECORDS // KEYS + (1 if RECORDS % KEYS else 0))] == 1
    assert _results(RuntimeExecutionMode.BATCH, {}) == streaming
    sorted_inputs = {"execution.sorted-inputs.enabled": True}
    assert _results(RuntimeExecutionMode.BATCH, sorted_inputs) == streaming
    assert (
        _results(RuntimeExecutionMode.BATCH, {**sorted_inputs, "execution.sorted-inputs.memory": "4 kb"}) == streaming
    )


class SumFailingOnce(KeyedProcessFunction):
    """A key's count and sum, emitted by a timer at the end of time; subtask ``failing`` raises on its first record,
    once (a marker file keeps its next attempt from failing)."""

    def __init__(self, marker: Path, failing: int) -> None:
        self.marker, self.failing = marker, failing

    def open(self, runtime_context: Any) -> None:
        self.index = runtime_context.get_index_of_this_subtask()
        self.count = runtime_context.get_state(ValueStateDescriptor("count"))
        self.total = runtime_context.get_state(ValueStateDescriptor("total"))

    def process_element(self, value: tuple[str, int], ctx: Any) -> None:
        if self.index == self.failing and not self.marker.exists():
            self.marker.write_text("failed once")
            raise RuntimeError(f"failing on purpose, once, in subtask {self.index}")
        self.count.update((self.count.value() or 0) + 1)
        self.total.update((self.total.value() or 0) + value[1])
        ctx.timer_service().register_event_time_timer(10_000_000)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield (ctx.get_current_key(), self.count.value(), self.total.value())


@pytest.mark.timeout(180)
def test_a_failing_sorted_input_task_re_runs_alone_with_exact_output(tmp_path: Path) -> None:
    failing, parallelism = 1, 4
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration(
            {
                "taskmanager.numberOfTaskSlots": 1,
                "minicluster.number-of-taskmanagers": 2,
                "restart-strategy.type": "fixed-delay",
                "restart-strategy.fixed-delay.attempts": 3,
                "restart-strategy.fixed-delay.delay": 100,
                "execution.sorted-inputs.enabled": True,
                "execution.sorted-inputs.memory": "4 kb",  # spills too
            }
        )
    )
    env.set_parallelism(parallelism)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    (
        env.from_source(DataGeneratorSource(_event, RECORDS), source_name="events")
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, _: e[1])
        )
        .key_by(lambda e: e[0])
        .process(SumFailingOnce(tmp_path / "failed", failing))
        .sink_to(FileSink.for_row_format(str(tmp_path / "out"), JsonLinesEncoder()).build())
    )
    client = env.execute_async("sorted input re-run")
    result = client.get_job_execution_result()
    assert (tmp_path / "failed").exists(), "the task never failed"
    jm = client._cluster.dispatcher.job_masters[client.get_job_id()]  # type: ignore[attr-defined]
    attempts = {(r["job_vertex_id"], r["subtask_index"]): r["attempt_number"] for r in jm.execution_snapshot()}
    assert sorted(attempts.values()) == [0] * (2 * parallelism - 1) + [1], attempts  # the failed task alone re-ran
    assert [i for (_, i), a in attempts.items() if a == 1] == [failing]
    assert result.num_restarts == 1
    expected: dict[str, list[int]] = {}
    for i in range(RECORDS):
        key, value = _event(i)
        count, total = expected.get(key, [0, 0])
        expected[key] = [count + 1, total + value]
    assert Counter(tuple(r) for r in committed_rows(tmp_path / "out")) == Counter(
        (k, c, t) for k, (c, t) in expected.items()
    )
