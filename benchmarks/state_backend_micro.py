"""Benchmarks of the keyed state backends (issue 28): RocksDB against the heap, paired rounds.

    python benchmarks/state_backend_micro.py [--records 200000] [--rounds 3]          # in process
    python benchmarks/state_backend_micro.py --jobs [--records 1000000] [--rounds 3]  # whole jobs, p=1

In process:

* ``counter``: a keyed ``ValueState`` counter (``value()`` then ``update()`` per record, 10 000 keys);
* ``W2``: the W2 workload's event stream (1 s tumbling event-time windows, sum and count per key, watermarks
  200 ms behind) through the window operator the graph builder picks (``aligned``: panes on the heap; with RocksDB
  they are written into it only around a snapshot) and through the general ``WindowOperator`` (window contents
  in the backend), each on both backends; a snapshot (synchronous and asynchronous part) every
  ``--snapshot-every`` records, as a checkpoint interval would take one.

No TaskManager, network or sink: the figure is the operator's own cost per record (records/s).

``--jobs`` runs the same two workloads as whole jobs on a MiniCluster at p=1 (one TaskManager process, one slot,
a checkpoint every ``--checkpoint-ms``): ``counter`` is ``from_sequence → map(event) → key_by(key) → map`` with
a ``ValueState`` counter (emitting ``(key, count)``) → a counting sink; ``W2`` is ``benchmarks/windows.py``'s job
(1 s tumbling event-time windows, sum and count per key, its checksum checked). Job time is taken inside the job
(first source subtask open → last sink close); records/s = N / job time.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from jobs import CountingSink, TimedMap, _execute
from windows import FoldSink, Interleaved, WithStart, job_checksum, ref_w2
from windows import SumCount as W2SumCount
from workloads import event

from strom import (
    AggregateFunction,
    Configuration,
    MapFunction,
    ProcessWindowFunction,
    StreamExecutionEnvironment,
    TumblingEventTimeWindows,
    ValueStateDescriptor,
    WatermarkStrategy,
)
from strom.api.windowing.triggers import EventTimeTrigger
from strom.runtime.operators.base import StreamingRuntimeContext, TaskInfo
from strom.runtime.operators.windowing.aligned_window_operator import AlignedWindowOperator
from strom.runtime.operators.windowing.internal_functions import internal_window_function
from strom.runtime.operators.windowing.window_operator import WindowOperator
from strom.runtime.state.state_backend import KeyedStateBackendParameters, create_keyed_state_backend
from strom.runtime.streamrecord import with_timestamps


class SumCount(AggregateFunction):
    def create_accumulator(self) -> tuple[int, int]:
        return (0, 0)

    def add(self, value: Any, acc: tuple[int, int]) -> tuple[int, int]:
        return (acc[0] + value[2], acc[1] + 1)

    def get_result(self, acc: tuple[int, int]) -> tuple[int, int]:
        return acc

    def merge(self, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
        return (a[0] + b[0], a[1] + b[1])


class Emit(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        for s, c in elements:
            yield (key, context.window().start, s, c)


class _Count:
    def __init__(self) -> None:
        self.n = 0

    def emit(self, batch: list[Any]) -> None:
        self.n += len(batch)

    def emit_side(self, tag_id: str, batch: list[Any]) -> None:
        self.n += len(batch)

    def emit_watermark(self, timestamp: int) -> None:
        pass

    def emit_watermark_status(self, idle: bool) -> None:
        pass


def _info(backend: str, localdir: str) -> TaskInfo:
    return TaskInfo(
        job_id="bench",
        job_name="bench",
        task_name="bench",
        subtask_index=0,
        parallelism=1,
        max_parallelism=128,
        attempt_number=0,
        state_backend=backend,
        state_backend_options=(("state.backend.rocksdb.localdir", localdir),),
    )


def counter(backend: str, records: int, localdir: str) -> float:
    params = KeyedStateBackendParameters(
        max_parallelism=128, job_id="bench", options={"state.backend.rocksdb.localdir": localdir}
    )
    b: Any = create_keyed_state_backend(backend, max_parallelism=128, parameters=params)
    state = b.get_state(ValueStateDescriptor("count"))
    keys = [event(i)[1] for i in range(records)]
    start = time.perf_counter()
    for k in keys:
        b.current_key = k
        state.update((state.value() or 0) + 1)
    elapsed = time.perf_counter() - start
    if hasattr(b, "dispose"):
        b.dispose()
    return records / elapsed


def w2(backend: str, operator: str, records: int, localdir: str, snapshot_every: int = 0) -> float:
    """W2's records/s through ``operator``; with ``snapshot_every``, a snapshot (both parts) every that many."""
    cls = AlignedWindowOperator if operator == "aligned" else WindowOperator
    op = cls(
        key_selector=lambda e: e[1],
        assigner=TumblingEventTimeWindows.of(1000),
        trigger=EventTimeTrigger(),
        evictor=None,
        window_function=internal_window_function(Emit(), keyed=True, aggregate=SumCount()),
        contents="aggregate",
        aggregate_function=SumCount(),
    )
    out = _Count()
    op.setup(StreamingRuntimeContext(_info(backend, localdir), operator_name="w2"), out)
    op.initialize_state(None)
    op.open()
    events = [event(i) for i in range(records)]
    start = time.perf_counter()
    for lo in range(0, records, 1000):
        batch = events[lo : lo + 1000]
        op.process_batch(with_timestamps(batch, [e[3] for e in batch]))
        op.process_watermark(batch[-1][3] - 200)
        if snapshot_every and (lo + 1000) % snapshot_every == 0:
            snapshot = op.snapshot_state(lo, 0)
            if snapshot is not None:
                snapshot.resolve()
    op.process_watermark(1 << 62)
    elapsed = time.perf_counter() - start
    op.close()
    return records / elapsed


class CountPerKey(MapFunction[Any, Any]):
    """The counter job's keyed map: a ``ValueState`` read and written per record."""

    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count"))

    def map(self, e: Any) -> Any:
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        return (e[1], n)


def _job_env(backend: str, checkpoint_ms: int, checkpoints: str) -> StreamExecutionEnvironment:
    options: dict[str, Any] = {"taskmanager.numberOfTaskSlots": 1, "state.backend.type": backend}
    if checkpoint_ms:
        options |= {"execution.checkpointing.interval": checkpoint_ms, "execution.checkpointing.dir": checkpoints}
    env = StreamExecutionEnvironment.get_execution_environment(Configuration(options))
    env.set_parallelism(1)
    return env


def counter_job(backend: str, n: int, checkpoint_ms: int) -> float:
    with tempfile.TemporaryDirectory() as out, tempfile.TemporaryDirectory() as checkpoints:
        env = _job_env(backend, checkpoint_ms, "file://" + checkpoints)
        (
            env.from_sequence(0, n - 1)
            .map(TimedMap(event, out))
            .key_by(lambda e: e[1])
            .map(CountPerKey())
            .sink_to(CountingSink(out))
        )
        run = _execute(env, f"counter {backend}", out, 600)
        assert run.result["records"] == n, run.result
        return n / run.job_s


def w2_job(backend: str, n: int, checkpoint_ms: int, expected: dict[str, int]) -> float:
    """``benchmarks/windows.py``'s W2 job at p=1 on ``backend``."""
    with tempfile.TemporaryDirectory() as out, tempfile.TemporaryDirectory() as checkpoints:
        env = _job_env(backend, checkpoint_ms, "file://" + checkpoints)
        strategy = WatermarkStrategy.for_bounded_out_of_orderness(timedelta(milliseconds=200))
        (
            env.from_sequence(0, n - 1)
            .map(TimedMap(Interleaved(n, 1), out))
            .assign_timestamps_and_watermarks(strategy.with_timestamp_assigner(lambda e, ts: e[3]))
            .key_by(lambda e: e[1])
            .window(TumblingEventTimeWindows.of(timedelta(seconds=1)))
            .aggregate(W2SumCount(), WithStart())
            .sink_to(FoldSink(out, "w2"))
        )
        run = _execute(env, f"W2 {backend}", out, 600)
        got = job_checksum("w2", run)
        assert got == expected, f"W2 on {backend}: checksum {got} != reference {expected}"
        return n / run.job_s


def paired(rounds: int, runs: dict[str, Callable[[], float]]) -> dict[str, float]:
    got: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            got[name].append(run())
    return {name: statistics.median(values) for name, values in got.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--snapshot-every", type=int, default=100_000, help="in process: W2 snapshots (0: none)")
    parser.add_argument("--jobs", action="store_true", help="whole jobs on a MiniCluster instead of in process")
    parser.add_argument("--checkpoint-ms", type=int, default=1000, help="--jobs: checkpoint interval (0: none)")
    args = parser.parse_args()
    n = args.records
    every = args.snapshot_every
    if args.jobs:
        jobs(n, args.rounds, args.checkpoint_ms)
        return
    with tempfile.TemporaryDirectory() as localdir:
        results = paired(
            args.rounds,
            {
                "counter heap": lambda: counter("hashmap", n, localdir),
                "counter rocksdb": lambda: counter("rocksdb", n, localdir),
                "W2 aligned heap": lambda: w2("hashmap", "aligned", n, localdir, every),
                "W2 aligned rocksdb": lambda: w2("rocksdb", "aligned", n, localdir, every),
                "W2 general heap": lambda: w2("hashmap", "general", n, localdir, every),
                "W2 general rocksdb": lambda: w2("rocksdb", "general", n, localdir, every),
            },
        )
    for name, rate in results.items():
        print(f"{name:22s} {rate:12,.0f} records/s")
    print(f"counter rocksdb/heap: {results['counter rocksdb'] / results['counter heap']:.2f}")
    print(f"W2 aligned rocksdb/heap: {results['W2 aligned rocksdb'] / results['W2 aligned heap']:.2f}")
    print(f"W2 general rocksdb/heap: {results['W2 general rocksdb'] / results['W2 general heap']:.2f}")
    print(f"W2 general rocksdb / aligned heap: {results['W2 general rocksdb'] / results['W2 aligned heap']:.2f}")


def jobs(n: int, rounds: int, checkpoint_ms: int) -> None:
    expected = ref_w2(n)
    results = paired(
        rounds,
        {
            "counter job heap": lambda: counter_job("hashmap", n, checkpoint_ms),
            "counter job rocksdb": lambda: counter_job("rocksdb", n, checkpoint_ms),
            "W2 job heap": lambda: w2_job("hashmap", n, checkpoint_ms, expected),
            "W2 job rocksdb": lambda: w2_job("rocksdb", n, checkpoint_ms, expected),
        },
    )
    for name, rate in results.items():
        print(f"{name:22s} {rate:12,.0f} records/s")
    print(f"counter job rocksdb/heap: {results['counter job rocksdb'] / results['counter job heap']:.2f}")
    print(f"W2 job rocksdb/heap: {results['W2 job rocksdb'] / results['W2 job heap']:.2f}")


if __name__ == "__main__":
    main()
