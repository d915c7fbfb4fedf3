"""strom's event-time window benchmarks: W2 (1 s tumbling windows per key, sum and count) and W3 (10 s / 2 s sliding
windows, count per key, then the maximum per window), with the peers' generator, checksums and plain-loop reference.

    python benchmarks/windows.py                 # full run (N = 1M, 5 rounds), prints the tables
    python benchmarks/windows.py --quick         # smoke run
    python benchmarks/windows.py --write-docs    # ... and into docs/benchmarks.md (`make bench-windows`)

The jobs are the peers' (``../shared/bench/peers/pf_w2.py`` / ``pf_w3.py``): ``from_sequence(0, N-1)`` with the
peers' ``interleave`` (parallel sources advance event time together) → ``map(event)`` →
``assign_timestamps_and_watermarks`` (bounded out-of-orderness 200 ms, the event's time) → ``key_by(key)`` → the
windows → a sink folding the peers' checksum. Job time is measured inside the job (first source subtask open →
last sink close, CLOCK_MONOTONIC); events/s = N / job time. The reference is ``ref.py``'s loop run in this process
in the same run; checksums must equal the reference's.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from bench import DOCS, log, machine, md_table, splice_section, text_table
from jobs import JobRun, TimedMap, _execute, write_part
from workloads import W2Checksum, event

from strom import (
    AggregateFunction,
    Configuration,
    ProcessWindowFunction,
    Sink,
    SinkWriter,
    SinkWriterContext,
    SlidingEventTimeWindows,
    StreamExecutionEnvironment,
    TumblingEventTimeWindows,
    WatermarkStrategy,
)

SECTION_BEGIN = "<!-- window-benchmarks:begin -->"
SECTION_END = "<!-- window-benchmarks:end -->"
TARGET_RATIO = 0.5  # W2 p=1 ≥ 50 % of the plain-loop reference
TARGET_SCALING = 1.6  # W2 p=2 ≥ 1.6 × p=1
PEERS_W2 = [
    ("plain Python loop (ref.py)", "1 process", "185 753"),
    ("Bytewax 0.21.1", "1 worker / 2 processes", "22 379 / 40 118"),
    ("PyFlink 2.3.0", "thread mode, p=1", "7 871"),
    ("PySpark 4.3.0", "Structured Streaming, local[1]", "35 362"),
]


# ---- the reference (the peers' ref.py, verbatim in substance) ---------------------------------------------------
def ref_w2(n: int) -> dict[str, int]:
    acc: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])
    for i in range(n):
        _, k, v, ts = event(i)
        a = acc[(k, ts - ts % 1000)]
        a[0] += v
        a[1] += 1
    ck = W2Checksum()
    for (k, ws), (s, c) in acc.items():
        ck.add(k, ws, s, c)
    return ck.as_dict()


def ref_w3(n: int) -> dict[str, int]:
    cnt: dict[tuple[str, int], int] = defaultdict(int)
    for i in range(n):
        _, k, _, ts = event(i)
        last = ts - ts % 2000
        for j in range(5):
            cnt[(k, last - j * 2000)] += 1
    return w3_checksum(cnt)


def w3_checksum(cnt: dict[tuple[str, int], int]) -> dict[str, int]:
    import zlib

    mx: dict[int, int] = defaultdict(int)
    for (_, ws), c in cnt.items():
        if c > mx[ws]:
            mx[ws] = c
    h = 0
    for ws, m in mx.items():
        h = (h + zlib.crc32(("%d|%d" % (ws, m)).encode())) & ((1 << 64) - 1)  # noqa: UP031 (the peers' format)
    return {"windows": len(mx), "sum_max": sum(mx.values()), "hash": h}


# ---- the jobs ---------------------------------------------------------------------------------------------------
class SumCount(AggregateFunction):
    def create_accumulator(self) -> tuple[int, int]:
        return (0, 0)

    def add(self, e: Any, acc: tuple[int, int]) -> tuple[int, int]:
        return (acc[0] + e[2], acc[1] + 1)

    def get_result(self, acc: tuple[int, int]) -> tuple[int, int]:
        return acc

    def merge(self, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
        return (a[0] + b[0], a[1] + b[1])


class Count(AggregateFunction):
    def create_accumulator(self) -> int:
        return 0

    def add(self, e: Any, acc: int) -> int:
        return acc + 1

    def get_result(self, acc: int) -> int:
        return acc

    def merge(self, a: int, b: int) -> int:
        return a + b


class WithStart(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
        start = context.window().start
        for r in elements:
            yield (key, start, r)


class _FoldWriter(SinkWriter[Any]):
    def __init__(self, out_dir: str, subtask: int, workload: str) -> None:
        self.out_dir, self.subtask, self.workload = out_dir, subtask, workload
        self.cpu_open = time.process_time_ns()  # the whole TaskManager process: see JobRun.cpu_s
        self.w2 = W2Checksum()
        self.w3: dict[int, int] = {}  # window start -> the largest per-key count seen (the peers' fold)

    def write(self, element: Any) -> None:
        self.write_batch([element])

    def write_batch(self, elements: list[Any]) -> None:
        if self.workload == "w2":
            add = self.w2.add
            for k, ws, (s, c) in elements:
                add(k, ws, s, c)
        else:
            mx = self.w3
            for _, ws, c in elements:
                if c > mx.get(ws, 0):
                    mx[ws] = c

    def close(self) -> None:
        t, cpu = time.monotonic_ns(), time.process_time_ns()
        part: dict[str, Any] = (
            self.w2.as_dict() if self.workload == "w2" else {"w3": [[ws, m] for ws, m in self.w3.items()]}
        )
        stamps = {"t_close": t, "cpu_open": self.cpu_open, "cpu_close": cpu}
        write_part(self.out_dir, "sink", {**stamps, "subtask": self.subtask, **part})


class FoldSink(Sink[Any]):
    """Folds the window results into the peers' checksum (W2) or keeps the per-key counts for the max (W3)."""

    def __init__(self, out_dir: str, workload: str) -> None:
        self.out_dir, self.workload = out_dir, workload

    def create_writer(self, context: SinkWriterContext) -> SinkWriter[Any]:
        return _FoldWriter(self.out_dir, context.subtask_index, self.workload)


class Interleaved:
    """The peers' ``interleave``: value ``s`` of range split ``j`` becomes index ``l * p + j``, then ``event``."""

    def __init__(self, n: int, p: int) -> None:
        self.n, self.p, self.per = n, p, n // p

    def __call__(self, s: int) -> Any:
        p, per = self.p, self.per
        if p > 1 and s < per * p:
            s = (s % per) * p + s // per
        return event(s)


def run(workload: str, n: int, p: int, out_dir: str, timeout_s: float, *, split: bool = False) -> JobRun:
    """One job; ``split`` puts the windows (and the sink chained to them) in a slot sharing group of their own, so
    they run in another TaskManager process than the source: pipeline parallelism across two cores at p=1."""
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"taskmanager.numberOfTaskSlots": 1}))
    env.set_parallelism(p)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(timedelta(milliseconds=200)).with_timestamp_assigner(
        lambda e, ts: e[3]
    )
    keyed = (
        env.from_sequence(0, n - 1)
        .map(TimedMap(Interleaved(n, p), out_dir))
        .assign_timestamps_and_watermarks(strategy)
        .key_by(lambda e: e[1])
    )
    if workload == "w2":
        windows = keyed.window(TumblingEventTimeWindows.of(timedelta(seconds=1))).aggregate(SumCount(), WithStart())
    else:
        windows = keyed.window(SlidingEventTimeWindows.of(timedelta(seconds=10), timedelta(seconds=2))).aggregate(
            Count(), WithStart()
        )
    if split:
        windows.slot_sharing_group("windows")
    windows.sink_to(FoldSink(out_dir, workload))
    return _execute(env, f"bench {workload.upper()} p={p}{' split' if split else ''}", out_dir, timeout_s)


def job_checksum(workload: str, r: JobRun) -> dict[str, int]:
    if workload == "w2":
        return {k: v for k, v in r.result.items() if k in ("windows", "count", "sum", "hash")}
    maxima: dict[tuple[str, int], int] = {}
    for part in r.sinks:  # each subtask's maximum per window; the window's maximum is the largest of them
        for ws, m in part["w3"]:
            maxima[("", ws)] = max(maxima.get(("", ws), 0), m)
    return w3_checksum(maxima)


# ---- main -------------------------------------------------------------------------------------------------------
#: per workload, the (parallelism, windows in a slot of their own) configurations measured
VARIANTS: dict[str, list[tuple[int, bool]]] = {
    "w2": [(1, False), (2, False), (1, True)],
    "w3": [(1, False), (2, False)],
}


def label(p: int, split: bool) -> str:
    return f"strom p={p}" + (", windows in their own slot (2 processes)" if split else "")


def measure(workload: str, n: int, repeat: int, timeout_s: float) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """``repeat`` rounds, each running the plain loop and every variant once, in turn: this machine's speed
    drifts by tens of per cent within minutes, so ratios are taken within a round (paired), where the runs
    being compared saw the same machine, and the median of the rounds is reported."""
    rates: dict[str, list[float]] = defaultdict(list)
    info: dict[str, Any] = {"walls": defaultdict(list), "cpu": defaultdict(list), "ok": defaultdict(lambda: True)}
    for i in range(repeat):
        t = time.perf_counter()
        expected = ref_w2(n) if workload == "w2" else ref_w3(n)
        rates["loop"].append(n / (time.perf_counter() - t))
        log(f"{workload} round {i + 1}/{repeat}: plain loop {rates['loop'][-1]:,.0f} ev/s")
        for p, split in VARIANTS[workload]:
            name = label(p, split)
            with tempfile.TemporaryDirectory(prefix="strom-bench-") as out:
                r = run(workload, n, p, out, timeout_s, split=split)
                ok = job_checksum(workload, r) == expected
            info["ok"][name] = info["ok"][name] and ok
            rates[name].append(n / r.job_s)
            info["walls"][name].append(r.wall_s)
            cpu = r.cpu_s
            assert cpu is not None, "the window jobs' parts carry CPU stamps"
            info["cpu"][name].append((cpu / n * 1e6, cpu / r.job_s))  # µs per event, cores busy
            verdict = "ok" if ok else "DIFFERS"
            log(f"{workload} {name}: {n / r.job_s:,.0f} ev/s (wall {r.wall_s:.1f} s) checksum {verdict}")
    return rates, info


def paired(num: list[float], den: list[float]) -> tuple[float, float, float]:
    """The median (min, max) over rounds of ``num / den``."""
    ratios = [a / b for a, b in zip(num, den, strict=True)]
    return statistics.median(ratios), min(ratios), max(ratios)


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):,.0f} ({min(values):,.0f}–{max(values):,.0f})"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--n", type=int)
    ap.add_argument("--repeat", type=int)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--write-docs", action="store_true")
    a = ap.parse_args(argv)
    n = a.n or (100_000 if a.quick else 1_000_000)
    repeat = a.repeat or (1 if a.quick else 5)
    rows: list[list[str]] = []
    w2: dict[str, list[float]] = {}
    w2_cpu: dict[str, list[float]] = {}
    for workload in ("w2", "w3"):
        rates, info = measure(workload, n, repeat, a.timeout)
        if workload == "w2":
            w2 = rates
            w2_cpu = {name: [c for c, _ in v] for name, v in info["cpu"].items()}
        loop = rates["loop"]
        rows.append([workload.upper(), "plain loop (ref.py)", spread(loop), "1.00", "—", "—", "—", "reference"])
        for p, split in VARIANTS[workload]:
            name = label(p, split)
            med, lo, hi = paired(rates[name], loop)
            ok = info["ok"][name]
            rows.append(
                [
                    workload.upper(),
                    name,
                    spread(rates[name]),
                    f"{med:.2f} ({lo:.2f}–{hi:.2f})",
                    f"{statistics.median(c for c, _ in info['cpu'][name]):.2f} µs",
                    f"{statistics.median(b for _, b in info['cpu'][name]):.2f}",
                    f"{statistics.median(info['walls'][name]):.1f} s",
                    "equal" if ok else "DIFFERENT",
                ]
            )
    header = [
        "workload",
        "run",
        "events/s median (min–max)",
        "× plain loop, paired",
        "TaskManager CPU / event",
        "cores busy",
        "wall",
        "checksum vs ref",
    ]
    print(text_table(header, rows))
    ratio, ratio_lo, ratio_hi = paired(w2[label(1, False)], w2["loop"])
    scaling, scaling_lo, scaling_hi = paired(w2[label(2, False)], w2[label(1, False)])
    targets = [
        [
            "W2 p=1 ≥ 50 % of the plain loop",
            f"{ratio:.0%} ({ratio_lo:.0%}–{ratio_hi:.0%})",
            "met" if ratio >= TARGET_RATIO else "not met",
        ],
        [
            "W2 p=2 ≥ 1.6 × p=1",
            f"{scaling:.2f} × ({scaling_lo:.2f}–{scaling_hi:.2f})",
            "met" if scaling >= TARGET_SCALING else "not met",
        ],
    ]
    print(text_table(["target", "measured", "status"], targets))
    ceiling, ceiling_lo, ceiling_hi = paired([2 * c for c in w2_cpu[label(1, False)]], w2_cpu[label(2, False)])
    cpu1, cpu2 = statistics.median(w2_cpu[label(1, False)]), statistics.median(w2_cpu[label(2, False)])
    cpu_note = (
        f"W2 p=2 takes {cpu2:.2f} µs of TaskManager CPU per event against {cpu1:.2f} µs at p=1: with both cores"
        f" busy all the time, p=2 would reach 2 × p=1's CPU per event / p=2's = {ceiling:.2f} × p=1 (paired"
        f" median; {ceiling_lo:.2f}–{ceiling_hi:.2f})."
    )
    print(cpu_note)
    if a.write_docs:
        m = machine()
        section = "\n".join(
            [
                SECTION_BEGIN,
                "## Event-time windows (W2, W3)",
                "",
                f"Run: {dt.date.today().isoformat()} · `python benchmarks/windows.py --write-docs`"
                f" (`make bench-windows`) · N = {n:,} events · {repeat} rounds · machine: {m.get('cpu', '?')},"
                f" Python {sys.version.split()[0]}",
                "",
                "W2 = 1 s tumbling event-time windows per key, bounded out-of-orderness 200 ms, sum and count (an"
                " AggregateFunction with a ProcessWindowFunction adding the window start); W3 = 10 s / 2 s sliding"
                " windows, count per key, the maximum per window folded in the sink. The generator, the job shape and"
                " the checksums are the peers' (`../shared/bench/peers/`); the plain loop is `ref.py`'s, run in this"
                " process in the same run. Events/s = N / in-job time (first source open → last sink close)."
                " Each round runs the plain loop and every strom configuration once, in turn; ratios (× plain loop,"
                " p=2 / p=1) are taken within a round and the median (min–max) over the rounds is given, because"
                " this VM's speed drifts by tens of per cent within minutes and a ratio of medians taken minutes"
                " apart would measure the drift. TaskManager CPU / event is the CPU time of the TaskManager"
                " processes (all their threads) from their first task's open to their last task's close, per"
                " event; cores busy is that CPU time over the job time."
                " At p=1 every task shares one slot, so one TaskManager process (one GIL) runs source, windows and"
                " sink; the split row puts the windows in a slot sharing group of their own"
                ' (`.slot_sharing_group("windows")`), which runs them in a second process.',
                "",
                md_table(header, rows),
                "",
                "Peers on this machine (their RESULTS.md, W2): "
                + "; ".join(f"{s} ({c}) {r}" for s, c, r in PEERS_W2)
                + ".",
                "",
                md_table(["target (issue 5)", "measured", "status"], targets),
                "",
                cpu_note,
                SECTION_END,
            ]
        )
        DOCS.write_text(splice_section(DOCS.read_text(), section, SECTION_BEGIN, SECTION_END))
        log(f"wrote {DOCS}")


if __name__ == "__main__":
    main()
