"""What a checkpoint every second costs W2 (issue 33): TaskManager CPU up to the last result, with and without
checkpoints, paired rounds.

    python benchmarks/checkpoint_cost.py                       # p=1 and p=2, 4 rounds, 1 000 000 events
    python benchmarks/checkpoint_cost.py --parallelism 1 --rounds 6 --n 2000000

W2 as in ``benchmarks/windows.py`` (1 s tumbling event-time windows per key, sum and count; the heap backend).
Each round runs the job once with aligned checkpoints every ``--interval`` ms and once without, the order alternating
between rounds. Measured per run, in every TaskManager process: its CPU (all its threads, and its reaped children:
the heap backend's forked snapshots) from the first map's ``open()`` to the sink's last result — not to the job's
end, which with checkpoints waits for the final checkpoint after the input (FLIP-147). **CPU per checkpoint** = (CPU
with − CPU without) / the checkpoints triggered before the last result, per round; **throughput ratio** = CPU
without / CPU with (what the same cores deliver; wall clocks on a shared machine say nothing). Medians over the
rounds. The windows' results are checked against the plain loop's.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from bench import log
from jobs import TimedMap, read_parts, write_part
from windows import Interleaved, SumCount, WithStart, ref_w2
from workloads import W2Checksum, merge_parts

from strom import (
    Configuration,
    Sink,
    SinkWriter,
    SinkWriterContext,
    StreamExecutionEnvironment,
    TumblingEventTimeWindows,
    WatermarkStrategy,
)

__all__ = ["main"]


def tm_cpu_ns() -> int:
    """This process's CPU and its reaped children's (a forked snapshot is the TaskManager's work too)."""
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time_ns() + int((c.ru_utime + c.ru_stime) * 1e9)


class _LastResultWriter(SinkWriter[Any]):
    """W2's checksum sink stamping the TaskManager's CPU and the wall clock at its last result."""

    def __init__(self, out_dir: str, subtask: int) -> None:
        self.out_dir, self.subtask = out_dir, subtask
        self.w2 = W2Checksum()
        self.cpu_last = 0
        self.t_last = 0.0

    def write(self, element: Any) -> None:
        self.write_batch([element])

    def write_batch(self, elements: list[Any]) -> None:
        add = self.w2.add
        for k, ws, (s, c) in elements:
            add(k, ws, s, c)
        self.cpu_last = tm_cpu_ns()
        self.t_last = time.time()

    def close(self) -> None:
        part = {"cpu_last": self.cpu_last, "t_last": self.t_last, "subtask": self.subtask, **self.w2.as_dict()}
        write_part(self.out_dir, "sink", part)


class LastResultSink(Sink[Any]):
    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir

    def create_writer(self, context: SinkWriterContext) -> SinkWriter[Any]:
        return _LastResultWriter(self.out_dir, context.subtask_index)


class CpuTimedMap(TimedMap):
    """The first map, stamping the TaskManager's CPU with its reaped children at ``open()``."""

    def open(self, runtime_context: Any) -> None:
        super().open(runtime_context)
        self.cpu_open = tm_cpu_ns()


@dataclass
class Run:
    cpu_s: float
    checkpoints: int  # triggered before the last result
    ok: bool


def run_w2(n: int, p: int, interval_ms: int | None, timeout_s: float) -> Run:
    out_dir = tempfile.mkdtemp(prefix="strom-ckcost-")
    ckpt_dir = tempfile.mkdtemp(prefix="strom-ckcost-chk-")
    try:
        env = StreamExecutionEnvironment.get_execution_environment(
            Configuration({"taskmanager.numberOfTaskSlots": 1, "web.checkpoints.history": 10_000})
        )
        env.set_parallelism(p)
        if interval_ms:
            env.enable_checkpointing(interval_ms)
            env.get_checkpoint_config().set_checkpoint_storage(ckpt_dir)
        strategy = WatermarkStrategy.for_bounded_out_of_orderness(timedelta(milliseconds=200)).with_timestamp_assigner(
            lambda e, ts: e[3]
        )
        (
            env.from_sequence(0, n - 1)
            .map(CpuTimedMap(Interleaved(n, p), out_dir))
            .assign_timestamps_and_watermarks(strategy)
            .key_by(lambda e: e[1])
            .window(TumblingEventTimeWindows.of(timedelta(seconds=1)))
            .aggregate(SumCount(), WithStart())
            .sink_to(LastResultSink(out_dir))
        )
        client = env.execute_async(f"ckcost W2 p={p} {interval_ms or 'no'} ms")
        timer = threading.Timer(timeout_s, client.cancel)
        timer.daemon = True
        timer.start()
        try:
            res = client.get_job_execution_result()
        finally:
            timer.cancel()
        sources, sinks = read_parts(out_dir, "source"), read_parts(out_dir, "sink")
        spans: dict[int, tuple[int, int]] = {}
        for part in sources:
            spans[part["pid"]] = (part["cpu_open"], 0)
        for part in sinks:
            lo, hi = spans.get(part["pid"], (0, 0))
            spans[part["pid"]] = (lo, max(hi, part["cpu_last"]))
        cpu = sum(hi - lo for lo, hi in spans.values()) / 1e9
        t_last = max(part["t_last"] for part in sinks)
        triggered = [c for c in res.checkpoints if c.trigger_timestamp_ms / 1000 < t_last]
        result = merge_parts(
            [{k: v for k, v in part.items() if k in ("windows", "count", "sum", "hash")} for part in sinks]
        )
        return Run(cpu, len(triggered), _checked(result, n))
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
        shutil.rmtree(ckpt_dir, ignore_errors=True)


_EXPECTED: dict[int, dict[str, int]] = {}


def _checked(got: dict[str, int], n: int) -> bool:
    if n not in _EXPECTED:
        _EXPECTED[n] = ref_w2(n)
    expected = _EXPECTED[n]
    return {k: got.get(k) for k in expected} == expected


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--parallelism", default="1,2")
    p.add_argument("--interval", type=int, default=1000)
    p.add_argument("--timeout", type=float, default=600)
    a = p.parse_args(argv)
    ok = True
    for par in [int(x) for x in a.parallelism.split(",")]:
        per_ck: list[float] = []
        ratio: list[float] = []
        for rnd in range(a.rounds):
            order = [None, a.interval] if rnd % 2 == 0 else [a.interval, None]
            runs: dict[int | None, Run] = {}
            for iv in order:
                runs[iv] = run_w2(a.n, par, iv, a.timeout)
                ok = ok and runs[iv].ok
            with_, without = runs[a.interval], runs[None]
            extra = with_.cpu_s - without.cpu_s
            if with_.checkpoints:
                per_ck.append(extra / with_.checkpoints * 1000)
            ratio.append(without.cpu_s / with_.cpu_s)
            log(
                f"p={par} round {rnd + 1}: CPU {without.cpu_s:.2f} s without, {with_.cpu_s:.2f} s with "
                f"{with_.checkpoints} checkpoints: {per_ck[-1] if per_ck else float('nan'):+.1f} ms each, "
                f"ratio {ratio[-1]:.3f}; load {os.getloadavg()[0]:.1f}; results "
                f"{'ok' if with_.ok and without.ok else 'DIFFER'}"
            )
        print(
            f"p={par}: CPU per checkpoint median {statistics.median(per_ck):+.1f} ms "
            f"({', '.join(f'{x:+.1f}' for x in per_ck)}); throughput ratio (CPU without / with) median "
            f"{statistics.median(ratio):.3f} ({', '.join(f'{x:.3f}' for x in ratio)})"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
