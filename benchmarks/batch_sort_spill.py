"""Peak memory of a BATCH job whose sorted input must spill (issue 29, "Measure"): the input of each keyed subtask is
``--factor`` × ``execution.sorted-inputs.memory``, against the same job with a sort memory that holds it all, in
paired rounds (the order alternates).

The job: a bounded generator of ``--megabytes`` of records (key, value, a distinct 64-character payload; the size
counted as the sorter counts it, pickled) → key_by → a ``KeyedProcessFunction`` that counts and sums each key's
records (ValueStates, a timer at the end of the key) → collected, checked exactly against the plain loop's counts.
BATCH, sorted inputs on, parallelism 2 on two one-slot TaskManagers. Reported per setting: the TaskManagers' peak
RSS (``VmHWM`` of ``/proc/<pid>/status``, polled every 0.1 s until they exit; the larger of the two), the bytes
spilled (the sorters' ``sorted input spilled`` log lines, ``logging.level: INFO``), job time and the TaskManagers'
CPU time.

    python benchmarks/batch_sort_spill.py --megabytes 200 --factor 4 --rounds 2
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import resource
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import cloudpickle
import psutil

from strom import Configuration, DataGeneratorSource, KeyedProcessFunction, StreamExecutionEnvironment
from strom.api.execution_mode import RuntimeExecutionMode
from strom.datastream.state import ValueStateDescriptor

SPILLED = re.compile(r"sorted input spilled (\d+) runs, (\d+) bytes, of (\d+) records")
PARALLELISM = 2


class CountAndSum(KeyedProcessFunction):
    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count"))
        self.total = runtime_context.get_state(ValueStateDescriptor("total"))

    def process_element(self, value: tuple[int, int, str], ctx: Any) -> None:
        self.count.update((self.count.value() or 0) + 1)
        self.total.update((self.total.value() or 0) + value[1])
        ctx.timer_service().register_event_time_timer(0)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield (ctx.get_current_key(), self.count.value(), self.total.value())


def _event_of(keys: int) -> Any:
    def event(i: int) -> tuple[int, int, str]:
        return ((i * 7919) % keys, i, f"{i:064d}")

    return event


class PeakRss:
    """Polls the VmHWM (peak resident set) of this process's TaskManager children until stopped."""

    def __init__(self) -> None:
        self.peaks: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            for p in psutil.Process().children(recursive=True):
                try:
                    if "strom.runtime.taskexecutor" not in " ".join(p.cmdline()):
                        continue
                    with open(f"/proc/{p.pid}/status") as f:
                        hwm = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
                    self.peaks[p.pid] = max(self.peaks.get(p.pid, 0), hwm * 1024)
                except (psutil.Error, OSError, StopIteration):
                    continue


def run(records: int, keys: int, memory: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="batch-spill-") as logs:
        env = StreamExecutionEnvironment.get_execution_environment(
            Configuration(
                {
                    "taskmanager.numberOfTaskSlots": 1,
                    "minicluster.number-of-taskmanagers": PARALLELISM,
                    "execution.sorted-inputs.enabled": True,
                    "execution.sorted-inputs.memory": memory,
                    "logging.level": "INFO",
                    "env.log.dir": logs,
                }
            )
        )
        env.set_parallelism(PARALLELISM)
        env.set_runtime_mode(RuntimeExecutionMode.BATCH)
        stream = env.from_source(DataGeneratorSource(_event_of(keys), records), source_name="events")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        with PeakRss() as rss, stream.key_by(lambda e: e[0]).process(CountAndSum()).execute_and_collect() as out:
            rows = list(out)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        spills = [
            tuple(map(int, m.groups()))
            for f in Path(logs).rglob("taskmanager-*.log")
            for m in SPILLED.finditer(f.read_text())
        ]
    return {
        "wall": wall,
        "cpu": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
        "peak_rss": max(rss.peaks.values(), default=0),
        "runs": sum(s[0] for s in spills),
        "spilled": sum(s[1] for s in spills),
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megabytes", type=int, default=200, help="input size, pickled, over both subtasks")
    parser.add_argument("--factor", type=int, default=4, help="input per subtask / sort memory")
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    cloudpickle.register_pickle_by_value(__import__(__name__))  # the TaskManagers cannot import this script
    event = _event_of(args.keys)
    per_record = len(pickle.dumps([event(i) for i in range(1000)], protocol=5)) / 1000
    records = int((args.megabytes << 20) / per_record)
    per_subtask = (args.megabytes << 20) // PARALLELISM
    expected: dict[int, list[int]] = {}
    for i in range(records):
        c = expected.setdefault((i * 7919) % args.keys, [0, 0])
        c[0] += 1
        c[1] += i
    want = sorted((k, c, t) for k, (c, t) in expected.items())
    settings = {"spilling": per_subtask // args.factor, "in memory": 4 * per_subtask}
    print(f"{records:,} records, {per_record:.0f} B pickled each, {per_subtask >> 20} MB per subtask", flush=True)
    results: dict[str, list[dict[str, Any]]] = {}
    for r in range(args.rounds):
        for name, memory in list(settings.items())[:: 1 if r % 2 == 0 else -1]:
            res = run(records, args.keys, memory)
            if sorted(tuple(x) for x in res.pop("rows")) != want:
                raise SystemExit(f"{name}: the counts differ from the plain loop's")
            results.setdefault(name, []).append(res)
            print(
                f"round {r + 1}: {name} (sort memory {memory >> 20} MB): peak RSS {res['peak_rss'] >> 20} MB, "
                f"{res['runs']} runs, {res['spilled'] >> 20} MB spilled, {res['wall']:.1f} s, {res['cpu']:.1f} s CPU, "
                f"load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    for name, rows in results.items():
        med = {k: statistics.median(x[k] for x in rows) for k in ("peak_rss", "spilled", "wall", "cpu")}
        print(
            f"{name}: median peak RSS {med['peak_rss'] / 2**20:.0f} MB, spilled {med['spilled'] / 2**20:.0f} MB, "
            f"{med['wall']:.1f} s, {med['cpu']:.1f} s CPU"
        )


if __name__ == "__main__":
    main()
