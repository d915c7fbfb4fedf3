"""In-process micro-benchmark of the keyed state backends (issue 28): RocksDB against the heap, paired rounds.

    python benchmarks/state_backend_micro.py [--records 200000] [--rounds 3]

* ``counter``: a keyed ``ValueState`` counter (``value()`` then ``update()`` per record, 10 000 keys);
* ``W2``: the W2 workload's event stream (1 s tumbling event-time windows, sum and count per key, watermarks
  200 ms behind) through the window operator the graph builder picks (``aligned``: panes on the heap; with RocksDB
  they are written into it only around a snapshot) and through the general ``WindowOperator`` (window contents
  in the backend), each on both backends.

No TaskManager, network or sink: the figure is the operator's own cost per record (records/s).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from workloads import event

from strom import AggregateFunction, ProcessWindowFunction, TumblingEventTimeWindows, ValueStateDescriptor
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


def w2(backend: str, operator: str, records: int, localdir: str) -> float:
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
    op.process_watermark(1 << 62)
    elapsed = time.perf_counter() - start
    op.close()
    return records / elapsed


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
    args = parser.parse_args()
    n = args.records
    with tempfile.TemporaryDirectory() as localdir:
        results = paired(
            args.rounds,
            {
                "counter heap": lambda: counter("hashmap", n, localdir),
                "counter rocksdb": lambda: counter("rocksdb", n, localdir),
                "W2 aligned heap": lambda: w2("hashmap", "aligned", n, localdir),
                "W2 aligned rocksdb": lambda: w2("rocksdb", "aligned", n, localdir),
                "W2 general heap": lambda: w2("hashmap", "general", n, localdir),
                "W2 general rocksdb": lambda: w2("rocksdb", "general", n, localdir),
            },
        )
    for name, rate in results.items():
        print(f"{name:22s} {rate:12,.0f} records/s")
    print(f"counter rocksdb/heap: {results['counter rocksdb'] / results['counter heap']:.2f}")
    print(f"W2 aligned rocksdb/heap: {results['W2 aligned rocksdb'] / results['W2 aligned heap']:.2f}")
    print(f"W2 general rocksdb / aligned heap: {results['W2 general rocksdb'] / results['W2 aligned heap']:.2f}")


if __name__ == "__main__":
    main()
