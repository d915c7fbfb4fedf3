"""Cost of a user counter on the record path: W1's map (``w1_map``) as a ``MapFunction`` run by strom's own
``StreamMap`` operator on 1024-record batches, with ``counter.inc()`` per record against without (and against
the floor, an ``int`` attribute bumped by hand), in paired
rounds (both variants in every round, alternating which goes first), one process, no cluster — what the task
thread does per record, without the network's noise. Prints the median ns per record of each and of the
difference; ``tests/integration/test_metrics.py``'s docstring quotes a run.

    .venv/bin/python benchmarks/user_metrics.py [rounds] [records]
"""

from __future__ import annotations

import statistics
import sys
import time
from typing import Any

from workloads import event, w1_map

from strom import MapFunction, RuntimeContext
from strom.metrics import Counter
from strom.runtime.metrics.metric_group import GenericMetricGroup, MetricRegistry
from strom.runtime.operators.base import StreamingRuntimeContext, TaskInfo
from strom.runtime.operators.simple import StreamMap


class Plain(MapFunction):
    def map(self, value: Any) -> Any:
        return w1_map(value)


class Counted(MapFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.counter: Counter = runtime_context.get_metrics_group().counter("records")

    def map(self, value: Any) -> Any:
        self.counter.inc()
        return w1_map(value)


class Bare(MapFunction):
    """The floor: an int attribute bumped by hand (what any counter API costs at least)."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.n = 0

    def map(self, value: Any) -> Any:
        self.n += 1
        return w1_map(value)


class _Discard:
    def emit(self, batch: list[Any]) -> None:
        pass

    def emit_side(self, tag_id: str, batch: list[Any]) -> None:
        pass

    def emit_watermark(self, timestamp: int) -> None:
        pass

    def emit_watermark_status(self, idle: bool) -> None:
        pass


def operator(fn: MapFunction) -> StreamMap:
    info = TaskInfo(
        job_id="j",
        job_name="bench",
        task_name="map",
        subtask_index=0,
        parallelism=1,
        max_parallelism=128,
        attempt_number=0,
    )
    ctx = StreamingRuntimeContext(info, operator_name="map")
    ctx.metric_group = GenericMetricGroup(MetricRegistry(), scope=("map",), logical_scope=("operator",), variables={})
    op = StreamMap(fn)
    op.setup(ctx, _Discard())
    op.open()
    return op


def run(op: StreamMap, batches: list[list[Any]]) -> float:
    start = time.perf_counter_ns()
    for b in batches:
        op.process_batch(b)
    return time.perf_counter_ns() - start


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 500_000
    events = [event(i) for i in range(n)]
    batches = [events[i : i + 1024] for i in range(0, n, 1024)]
    plain, counted, bare = operator(Plain()), operator(Counted()), operator(Bare())
    run(plain, batches), run(counted, batches), run(bare, batches)  # warm-up
    p_ns: list[float] = []
    c_ns: list[float] = []
    b_ns: list[float] = []
    for r in range(rounds):
        order = [(plain, p_ns), (counted, c_ns), (bare, b_ns)]
        for op, out in order if r % 2 == 0 else reversed(order):
            out.append(run(op, batches) / n)
    diffs = [c - p for c, p in zip(c_ns, p_ns, strict=True)]
    bare_diffs = [b - p for b, p in zip(b_ns, p_ns, strict=True)]
    print(f"records per round: {n}, rounds: {rounds}")
    print(f"map without counter: median {statistics.median(p_ns):.1f} ns/record")
    print(f"map with counter.inc(): median {statistics.median(c_ns):.1f} ns/record")
    print(
        f"difference (paired): median {statistics.median(diffs):.1f} ns/record "
        f"({statistics.median(diffs) / statistics.median(p_ns):.1%})"
    )
    print(f"the floor, self.n += 1 by hand (paired): median {statistics.median(bare_diffs):.1f} ns/record")


if __name__ == "__main__":
    main()
