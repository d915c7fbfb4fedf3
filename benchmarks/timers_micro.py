"""In-process micro-benchmark of the keyed timer service (issue 28): heap timers against timers in RocksDB.

    python benchmarks/timers_micro.py [--timers 100000] [--keys 10000] [--rounds 5] [--variants heap,rocksdb]

Each round registers ``--timers`` event-time timers (``--keys`` keys, ten timers per timestamp, as window ends are
shared) and fires them all with watermarks that advance 100 timestamps at a time; the figure is timers/s for
registration plus firing. Variants, run alternately in every round (paired rounds):

* ``heap``: the heap keyed backend (its timers on the heap);
* ``rocksdb-heap``: the RocksDB backend with ``state.backend.rocksdb.timer-service.factory: HEAP``;
* ``rocksdb``: the RocksDB backend with ``ROCKSDB`` (timers in a column family, Flink's default).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from strom.runtime.operators.timer_service import InternalTimer, InternalTimerService
from strom.runtime.state.heap_keyed_state_backend import HeapKeyedStateBackend
from strom.runtime.tasks.processing_time_service import ProcessingTimeService


class _Count:
    def __init__(self) -> None:
        self.n = 0

    def on_event_time(self, timer: InternalTimer) -> None:
        self.n += 1

    def on_processing_time(self, timer: InternalTimer) -> None:
        self.n += 1


def _backend(variant: str) -> tuple[Any, Callable[[], None]]:
    if variant == "heap":
        return HeapKeyedStateBackend(max_parallelism=128), lambda: None
    from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend

    factory = "HEAP" if variant == "rocksdb-heap" else "ROCKSDB"
    path = tempfile.mkdtemp(prefix="strom-timers-bench-")
    try:
        backend: Any = RocksDBKeyedStateBackend(max_parallelism=128, path=path, timer_service_factory=factory)
    except TypeError:  # a strom without the ROCKSDB factory: HEAP only
        if factory != "HEAP":
            raise
        backend = RocksDBKeyedStateBackend(max_parallelism=128, path=path)
    return backend, backend.dispose


def run(variant: str, timers: int, keys: int) -> float:
    backend, dispose = _backend(variant)
    try:
        count = _Count()
        service = InternalTimerService("bench", backend, ProcessingTimeService(clock=lambda: 0), count)
        register = service.register_event_time_timer
        start = time.perf_counter()
        fired_up_to = -1
        for i in range(timers):
            backend.current_key = i % keys
            ts = i // 10
            register(None, ts)
            if ts - fired_up_to > 100:
                service.advance_watermark(ts - 50)
                fired_up_to = ts - 50
        service.advance_watermark(timers)
        elapsed = time.perf_counter() - start
        assert count.n == timers, f"expected {timers} timers to fire; got {count.n}"
        return timers / elapsed
    finally:
        dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timers", type=int, default=100_000)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--variants", default="heap,rocksdb-heap,rocksdb")
    args = parser.parse_args()
    variants = args.variants.split(",")
    results: dict[str, list[float]] = {v: [] for v in variants}
    for _ in range(args.rounds):
        for v in variants:
            results[v].append(run(v, args.timers, args.keys))
    for v in variants:
        rates = results[v]
        print(f"{v:14s} median {statistics.median(rates):>12,.0f} timers/s  rounds {[round(r) for r in rates]}")


if __name__ == "__main__":
    main()
