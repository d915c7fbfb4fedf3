"""Keyed operators fed sorted input in BATCH execution (``execution.sorted-inputs.enabled``), on TaskManager
processes: a keyed reduce, a keyed process function with state and event-time timers, and an event-time window
give the same results as the same job in STREAMING, with sorted inputs on and off; a sorted input that must spill
(a few KiB of memory) gives them too."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from strom import Configuration, KeyedProcessFunction, StreamExecutionEnvironment
from strom.api.execution_mode import RuntimeExecutionMode
from strom.common import Time, WatermarkStrategy
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
