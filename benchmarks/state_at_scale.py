"""State at scale (issue 28, "Measure"): task pauses and checkpoint times of 1 GB of keyed state on both backends,
and a RocksDB job with more state than its TaskManagers' memory, with a TaskManager killed mid-run.

    python benchmarks/state_at_scale.py                      # everything (1 GB runs, 10 GB run), prints tables
    python benchmarks/state_at_scale.py --big-gb 2           # a smaller large-state run
    python benchmarks/state_at_scale.py --only pause         # only the 1 GB pause runs
    python benchmarks/state_at_scale.py --only snapshot      # one full snapshot per backend, in process
    python benchmarks/state_at_scale.py --variants incremental,local-recovery   # the big run again with those keys
    python benchmarks/state_at_scale.py --write-docs         # ... and put the section into docs/benchmarks.md
                                                             # (what `make bench-state` runs)

1. **Pauses** (``--only pause``): ``benchmarks/checkpoints.py``'s pause job (the same code, run here per backend):
   1 000 000 keys × 1 KiB at p=2, every key rewritten pass after pass while checkpoints run; the longest gap between
   two records of the keyed function is the longest task pause; the checkpoints holding the full state give the
   completion time (trigger → complete).
2. **Large state** (``--only big``): ``--big-gb`` × 1 000 000 keys × 1 KiB into RocksDB at p=2, one TaskManager per
   subtask with ``taskmanager.memory.process.size: 2g``; every TaskManager's RSS sampled every 0.5 s (psutil); once a
   checkpoint completed past half the input, one TaskManager gets SIGKILL. Every 1000th key is written to an
   exactly-once ``FileSink`` with the count its state held; the committed rows must be each of those keys exactly once
   with count 1. Restore time = the kill → the first record a restarted keyed subtask processed.
3. **One full snapshot** (``--only snapshot``): one subtask's share of the pause runs' state in a backend in this
   process; its synchronous part, the time until the checkpoint file is written, the CPU time of the thread writing
   it (steady on a shared machine) and the peak RSS growth meanwhile. RocksDB twice per round: a checkpoint's
   snapshot (RocksDB's own bytes) and a savepoint's (the canonical form), back to back.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil
from bench import DOCS, log, machine, md_table, splice_section, text_table
from checkpoints import MB, PauseRun, _completed, _first_line, _med_max, run_pause
from jobs import read_parts, write_part

from strom import (
    Configuration,
    DataGeneratorSource,
    KeyedProcessFunction,
    RuntimeContext,
    StreamExecutionEnvironment,
    ValueStateDescriptor,
)
from strom.connectors.file_system import FileSink, JsonLinesEncoder
from strom.exceptions import ConfigurationError

BEGIN = "<!-- state-benchmarks:begin -->"
END = "<!-- state-benchmarks:end -->"

TARGET_PAUSE_MS = 100.0  # issue 28: the longest task pause during a checkpoint of 1 GB
TARGET_CHECKPOINT_S = 5.0  # ... and the checkpoint completes within
VALUE_BYTES = 1024
SAMPLE = 1000  # every SAMPLE-th key goes to the exactly-once sink
BACKENDS = {"heap": "hashmap", "rocksdb": "rocksdb"}
VARIANTS = {
    "incremental": {"execution.checkpointing.incremental": True},
    "local-recovery": {"state.backend.local-recovery": True},
}
__all__ = ["main"]


# ---- 1. pauses and checkpoint times of 1 GB, both backends ---------------------------------------------------------
def measure_pauses(a: argparse.Namespace) -> list[tuple[str, PauseRun]]:
    out = []
    for backend in a.backends:
        log(f"== pause: {backend}, p={a.parallelism}, {a.keys:,} keys × {a.passes} passes")
        extra = {"state.backend.type": BACKENDS[backend]}
        r = run_pause(a.parallelism, a.keys, a.passes, True, a.interval, a.timeout, extra)
        done = f"longest pause {r.max_gap_s * 1000:.0f} ms; durations {r.duration_ms} ms; snapshot children's CPU"
        log(f"  {r.error or f'{done} {r.children_cpu_s:.2f} s'}")
        out.append((backend, r))
    return out


# ---- 2. large RocksDB state, RSS, a kill ----------------------------------------------------------------------------
def sampled(i: int) -> bool:
    return i % SAMPLE == 0


class CountBlob(KeyedProcessFunction[int, int, tuple[int, int]]):
    """A 1 KiB value and a count per key; every SAMPLE-th key emits (key, count). Stamps its first record."""

    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir

    def open(self, runtime_context: RuntimeContext) -> None:
        self.blob = runtime_context.get_state(ValueStateDescriptor("blob"))
        self.count = runtime_context.get_state(ValueStateDescriptor("count"))
        self.t_open = time.time()
        self.first = True
        self.subtask = runtime_context.get_index_of_this_subtask()

    def process_element(self, value: int, ctx: KeyedProcessFunction.Context) -> Any:
        if self.first:
            self.first = False
            write_part(self.out_dir, "first", {"subtask": self.subtask, "t_open": self.t_open, "t": time.time()})
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        self.blob.update(value.to_bytes(8, "little") * (VALUE_BYTES // 8))
        if value % SAMPLE == 0:
            yield (value, n)


def index(i: int) -> int:
    return i


@dataclass
class BigRun:
    variant: str
    gb: float
    keys: int
    process_memory: str
    peak_rss: dict[int, float] = field(default_factory=dict)  # TaskManager pid → bytes
    killed_at: float = 0.0
    restore_s: float | None = None
    restarts: int = 0
    checkpoints: int = 0
    largest: float = 0.0
    durations_s: list[float] = field(default_factory=list)
    exactly_once: str = ""
    job_s: float = 0.0
    disk_peak: float = 0.0
    error: str = ""


class _RssSampler(threading.Thread):
    """Every TaskManager's RSS (and the checkpoint directory's size) every 0.5 s."""

    def __init__(self, client: Any, ckpt_dir: str) -> None:
        super().__init__(daemon=True, name="rss-sampler")
        self.client, self.ckpt_dir = client, ckpt_dir
        self.peak: dict[int, float] = {}
        self.disk_peak = 0.0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.5):
            with contextlib.suppress(Exception):
                for pid in self.client.live_task_manager_pids():
                    with contextlib.suppress(psutil.Error):
                        self.peak[pid] = max(self.peak.get(pid, 0.0), float(psutil.Process(pid).memory_info().rss))
            with contextlib.suppress(OSError):
                usage = shutil.disk_usage(self.ckpt_dir)
                self.disk_peak = max(self.disk_peak, float(usage.used))


def variant_available(variant: str) -> bool:
    try:
        Configuration(VARIANTS.get(variant, {}))
    except (ConfigurationError, ValueError):
        return False
    return True


def _kill_when_ready(client: Any, r: BigRun, stop: threading.Event) -> None:
    """SIGKILL one TaskManager once a checkpoint holding at least half the final state completed."""
    half = r.keys * VALUE_BYTES / 2
    while not stop.wait(0.2):
        with contextlib.suppress(Exception):
            done = [c for c in client.get_checkpoint_statistics() if c.status == "COMPLETED"]
            if any((c.state_size or 0) >= half for c in done):
                victim = sorted(client.live_task_manager_pids())[0]
                r.killed_at = time.time()
                os.kill(victim, signal.SIGKILL)
                log(f"  killed TaskManager {victim} after checkpoint {max(c.checkpoint_id for c in done)}")
                return


def run_big(a: argparse.Namespace, variant: str) -> BigRun:
    keys = int(a.big_gb * 1_000_000)
    r = BigRun(variant, a.big_gb, keys, a.process_memory)
    work = tempfile.mkdtemp(prefix="strom-statebench-", dir=a.work_dir)
    out_dir, ckpt_dir, sink_dir = (os.path.join(work, d) for d in ("parts", "chk", "out"))
    os.makedirs(out_dir)
    config = {
        "taskmanager.numberOfTaskSlots": 1,
        "minicluster.number-of-taskmanagers": a.parallelism,
        "state.backend.type": "rocksdb",
        "state.backend.rocksdb.localdir": os.path.join(work, "rocksdb"),
        "taskmanager.memory.process.size": a.process_memory,
        "heartbeat.interval": "1 s",
        "heartbeat.timeout": "20 s",  # a loaded machine: a kill is seen at once anyway (the RPC connection closes)
        "restart-strategy.type": "fixed-delay",
        "restart-strategy.fixed-delay.attempts": 5,
        "restart-strategy.fixed-delay.delay": 200,
        "web.checkpoints.history": 100_000,
        **VARIANTS.get(variant, {}),
    }
    stop = threading.Event()
    sampler: _RssSampler | None = None
    try:
        env = StreamExecutionEnvironment.get_execution_environment(Configuration(config))
        env.set_parallelism(a.parallelism)
        env.enable_checkpointing(a.big_interval)
        env.get_checkpoint_config().set_checkpoint_storage(ckpt_dir)
        (
            env.from_source(DataGeneratorSource(index, keys), source_name="keys")
            .key_by(index)
            .process(CountBlob(out_dir))
            .sink_to(FileSink.for_row_format(sink_dir, JsonLinesEncoder()).build())
        )
        t0 = time.monotonic()
        client = env.execute_async(f"statebench big {a.big_gb} GB {variant}")
        sampler = _RssSampler(client, work)
        sampler.start()
        killer = threading.Thread(target=_kill_when_ready, args=(client, r, stop), daemon=True)
        killer.start()
        res = client.get_job_execution_result()
        r.job_s = time.monotonic() - t0
    except Exception as exc:
        r.error = _first_line(exc)
        return r
    finally:
        stop.set()
        if sampler is not None:
            sampler.stop.set()
            r.peak_rss, r.disk_peak = sampler.peak, sampler.disk_peak
    try:
        _big_results(r, res, out_dir, sink_dir)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return r


def _big_results(r: BigRun, res: Any, out_dir: str, sink_dir: str) -> None:
    r.restarts = res.num_restarts
    done = _completed(res)
    r.checkpoints = len(done)
    r.largest = max((float(c.state_size) for c in done), default=0.0)
    r.durations_s = [float(c.duration_ms or 0) / 1000 for c in done if c.state_size >= 0.5 * r.largest]
    firsts = [p["t"] for p in read_parts(out_dir, "first") if r.killed_at and p["t_open"] > r.killed_at]
    r.restore_s = min(firsts) - r.killed_at if firsts else None
    rows: list[tuple[int, int]] = []
    for f in sorted(Path(sink_dir).rglob("*")):
        if f.is_file() and not any(p.startswith(".") for p in f.relative_to(sink_dir).parts):
            rows.extend(tuple(json.loads(line)) for line in f.read_text().splitlines())  # type: ignore[misc]
    expected = Counter((k, 1) for k in range(0, r.keys, SAMPLE))
    got = Counter(rows)
    if got == expected:
        r.exactly_once = f"yes ({len(rows):,} rows, each once)"
    else:
        missing = sum((expected - got).values())
        extra = sum((got - expected).values())
        r.exactly_once = f"NO: {missing} missing, {extra} extra of {sum(expected.values())}"
    if not r.killed_at:
        r.exactly_once += "; no kill happened (the job ended first)"


def measure_big(a: argparse.Namespace) -> list[BigRun]:
    out = []
    for variant in ["full", *a.variants]:
        if variant != "full" and not variant_available(variant):
            log(f"== big: {variant}: not available (its configuration key is unknown to this strom)")
            out.append(BigRun(variant, a.big_gb, 0, a.process_memory, error="not available"))
            continue
        log(f"== big: {a.big_gb} GB on RocksDB, p={a.parallelism}, process memory {a.process_memory}, {variant}")
        r = run_big(a, variant)
        peaks = ", ".join(f"{v / MB:.0f} MB" for v in r.peak_rss.values())
        log(f"  {r.error or f'peak RSS {peaks}; restore {r.restore_s} s; exactly-once: {r.exactly_once}'}")
        out.append(r)
    return out


# ---- 3. one full snapshot in process: its synchronous part, its writing time, the memory it takes ------------------
@dataclass
class SnapshotRun:
    backend: str
    keys: int
    dirty: int  # RocksDB: write-cache entries written since the last flush, at the snapshot
    sync_ms: list[float] = field(default_factory=list)
    write_s: list[float] = field(default_factory=list)
    rss_growth: list[float] = field(default_factory=list)  # bytes above the RSS before, sampled every 20 ms
    kind: str = "checkpoint"  # RocksDB: a checkpoint's snapshot (its own bytes) or a savepoint's (canonical)
    cpu_s: list[float] = field(default_factory=list)  # CPU time of the thread that snapshots and writes


def measure_snapshots(a: argparse.Namespace) -> list[SnapshotRun]:
    """One subtask's share of the pause job's state (``--keys`` / ``--parallelism`` × 1 KiB) in a backend in this
    process; ``--rounds`` full snapshots (heap: forked) written into a checkpoint file as a checkpoint does."""
    from strom.runtime.checkpoint.snapshot import OperatorSnapshot
    from strom.runtime.checkpoint.storage import CheckpointStorageLocation
    from strom.runtime.state.state_backend import create_keyed_state_backend

    out: list[SnapshotRun] = []
    keys = a.keys // a.parallelism
    for backend in a.backends:
        log(f"== snapshot: {backend}, {keys:,} keys × 1 KiB in process, {a.rounds} rounds")
        work = tempfile.mkdtemp(prefix="strom-statebench-snapshot-", dir=a.work_dir)
        b = create_keyed_state_backend(BACKENDS[backend], max_parallelism=128)
        state = b.get_state(ValueStateDescriptor("blob"))
        for i in range(keys):
            b.current_key = i
            state.update(i.to_bytes(8, "little") * (VALUE_BYTES // 8))
        dirty = len(getattr(b, "write_cache", ()))
        kinds = ["checkpoint", "savepoint"] if backend == "rocksdb" else ["checkpoint"]
        runs = {kind: SnapshotRun(backend, keys, dirty, kind=kind) for kind in kinds}
        proc = psutil.Process()
        for n, kind in ((n, kind) for n in range(a.rounds) for kind in kinds):
            run = runs[kind]
            base = float(proc.memory_info().rss)
            peak = [base]
            stop = threading.Event()

            def sample(peak: list[float] = peak, stop: threading.Event = stop, proc: Any = proc) -> None:
                while not stop.wait(0.02):
                    peak[0] = max(peak[0], float(proc.memory_info().rss))

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            prepare = getattr(b, "prepare_full_snapshot", None)
            if prepare is not None:
                prepare(native=kind == "checkpoint")
            t0, cpu0 = time.perf_counter(), time.thread_time()
            snapshot = OperatorSnapshot(keyed_supplier=b.async_snapshot())
            run.sync_ms.append((time.perf_counter() - t0) * 1000)
            resolved = snapshot.resolve(streamed=True)
            parts = resolved.keyed_stream if resolved.keyed_stream is not None else resolved.keyed
            location = CheckpointStorageLocation(uri=os.path.join(work, f"chk-{n + 1}-{kind}"))
            location.write_state_slices("op-keyed-0", parts)
            run.write_s.append(time.perf_counter() - t0)
            run.cpu_s.append(time.thread_time() - cpu0)
            del snapshot, resolved, parts
            stop.set()
            sampler.join()
            run.rss_growth.append(peak[0] - base)
            location.dispose()
        dispose = getattr(b, "dispose", None)
        if dispose is not None:
            dispose()
        shutil.rmtree(work, ignore_errors=True)
        for run in runs.values():
            log(f"  {run.kind}: sync {run.sync_ms} ms; written in {run.write_s} s (CPU {run.cpu_s} s)")
            out.append(run)
    return out


SNAPSHOT_HEADER = [
    "backend",
    "keys × 1 KiB",
    "sync part",
    "sync → file written",
    "CPU (writing thread)",
    "peak RSS growth",
]


def snapshot_rows(runs: list[SnapshotRun]) -> list[list[str]]:
    return [
        [
            r.backend + (f" ({r.kind})" if r.backend == "rocksdb" else ""),
            f"{r.keys:,}" + (f" ({r.dirty:,} cached)" if r.dirty else ""),
            " / ".join(f"{ms:.0f}" for ms in r.sync_ms) + " ms",
            " / ".join(f"{s:.1f}" for s in r.write_s) + " s",
            " / ".join(f"{s:.2f}" for s in r.cpu_s) + " s",
            " / ".join(f"{g / MB:.0f}" for g in r.rss_growth) + " MB",
        ]
        for r in runs
    ]


# ---- the report ----------------------------------------------------------------------------------------------------
class _LoadSampler(threading.Thread):
    """The 1-minute load average (/proc/loadavg) every 5 s: how shared the machine was."""

    def __init__(self) -> None:
        super().__init__(daemon=True, name="load-sampler")
        self.samples: list[float] = [os.getloadavg()[0]]

    def run(self) -> None:
        while True:
            time.sleep(5)
            self.samples.append(os.getloadavg()[0])

    def describe(self) -> str:
        s = self.samples
        return f"load average (1 min) {min(s):.1f}–{max(s):.1f}, median {sorted(s)[len(s) // 2]:.1f}"


def _status(ok: bool) -> str:
    return "met" if ok else "**not met**"


def pause_rows(runs: list[tuple[str, PauseRun]]) -> list[list[str]]:
    rows = []
    for backend, r in runs:
        if r.error:
            rows.append([backend, "—", "—", "—", "—", "—", r.error])
            continue
        worst = max(r.duration_ms, default=0.0) / 1000
        rows.append(
            [
                backend,
                f"{r.max_gap_s * 1000:.0f} ms ({_status(r.max_gap_s * 1000 < TARGET_PAUSE_MS)})",
                f"{r.big} × {r.state_size / MB:.0f} MB",
                f"{r.sync_ms:.0f} ms / {r.async_ms / 1000:.2f} s",
                f"{_med_max([d / 1000 for d in r.duration_ms])} ({_status(worst < TARGET_CHECKPOINT_S)})",
                f"{r.peak_pss / MB:.0f} MB",
                f"{r.job_s:.1f} s",
            ]
        )
    return rows


PAUSE_HEADER = [
    "backend",
    "longest task pause (< 100 ms)",
    "checkpoints of the full state",
    "sync / async part (max)",
    "completion med / max (< 5 s)",
    "peak PSS (all TMs)",
    "execute()",
]
BIG_HEADER = [
    "variant",
    "state (largest checkpoint)",
    "peak RSS per TaskManager",
    "vs process memory",
    "checkpoints (≥ half) med / max",
    "restore (kill → first record)",
    "exactly-once output",
    "execute()",
]


def big_rows(runs: list[BigRun]) -> list[list[str]]:
    rows = []
    for r in runs:
        if r.error:
            rows.append([r.variant, "—", "—", "—", "—", "—", r.error, "—"])
            continue
        limit = _bytes(r.process_memory)
        peaks = sorted(r.peak_rss.values(), reverse=True)
        top = peaks[0] if peaks else 0.0
        rows.append(
            [
                r.variant,
                f"{r.largest / MB:,.0f} MB ({r.checkpoints} checkpoints)",
                ", ".join(f"{p / MB:,.0f} MB" for p in peaks) or "—",
                f"max {top / limit:.0%} of {r.process_memory} ({_status(top < limit)})",
                _med_max(r.durations_s),
                f"{'—' if r.restore_s is None else f'{r.restore_s:.1f} s'} ({r.restarts} restart(s))",
                r.exactly_once,
                f"{r.job_s:.0f} s",
            ]
        )
    return rows


def _bytes(size: str) -> float:
    units = {"k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
    s = size.strip().lower().rstrip("b").strip()
    return float(s[:-1]) * units[s[-1]] if s and s[-1] in units else float(s)


def render(
    a: argparse.Namespace, started: dt.datetime, load: str, pauses: Any, big: Any, notes: str, snapshots: Any = ()
) -> str:
    m = machine()
    lines = [
        BEGIN,
        "## State at scale (issue 28)",
        "",
        "<!-- Generated by `make bench-state` (benchmarks/state_at_scale.py --write-docs); `make bench` keeps it. -->",
        f"- **Date:** {started:%Y-%m-%d %H:%M} UTC; **command:** `{' '.join(['python', *sys.argv])}`;"
        f" {m.get('cpu', '?')}, {m.get('ram', '?')} RAM, {m.get('python', '?')}; {load}.",
        *[f"- Loaded from an earlier invocation (`--load`), {line}." for line in a.earlier],
    ]
    if pauses:
        lines += [
            "",
            f"### 1 GB of keyed state at p={a.parallelism}: task pauses and checkpoint completion",
            "",
            f"`benchmarks/checkpoints.py`'s pause job per backend: {a.keys:,} keys × 1 KiB, {a.passes} passes"
            f" rewriting every key, checkpoints every {a.interval} ms, one TaskManager (one slot) per subtask."
            " Longest task pause = the longest gap between two records of the keyed function; completion ="
            " trigger → complete of the checkpoints holding ≥ 90 % of the largest state. Goals: pause < 100 ms,"
            " completion < 5 s.",
            "",
            md_table(PAUSE_HEADER, pause_rows(pauses)),
        ]
    if big:
        lines += [
            "",
            f"### {a.big_gb:g} GB of keyed state on RocksDB at p={a.parallelism}, a TaskManager killed",
            "",
            f"{int(a.big_gb * 1_000_000):,} keys × 1 KiB (a value and a count per key), checkpoints every"
            f" {a.big_interval} ms, `taskmanager.memory.process.size: {a.process_memory}` per TaskManager (strom"
            " derives the managed memory, which bounds RocksDB, from it; it sets no limit). RSS sampled every"
            " 0.5 s. One TaskManager SIGKILLed once a checkpoint of ≥ half the state completed; every"
            f" {SAMPLE}th key is written with its count to an exactly-once `FileSink`, checked row by row.",
            "",
            md_table(BIG_HEADER, big_rows(big)),
        ]
    if snapshots:
        lines += [
            "",
            "### One full snapshot in process (one subtask's share)",
            "",
            "`--only snapshot`: one subtask's share of the state above in a backend in the benchmark's own process;"
            " each round takes a full snapshot (heap: forked) and writes it into a checkpoint file as a checkpoint"
            " does (streamed key group by key group). Peak RSS growth = the highest RSS sampled every 20 ms above"
            " the RSS before the snapshot (a forked child's memory is its own).",
            "",
            md_table(SNAPSHOT_HEADER, snapshot_rows(snapshots)),
        ]
    if notes:
        lines += ["", notes.strip()]
    lines.append(END)
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", default="pause,big", help="comma-separated subset of pause,big,snapshot")
    p.add_argument("--rounds", type=int, default=3, help="snapshots per backend of the snapshot runs")
    p.add_argument("--backends", default="heap,rocksdb", help="backends of the pause runs")
    p.add_argument("--parallelism", type=int, default=2)
    p.add_argument("--keys", type=int, default=1_000_000, help="keys of the pause runs (1 KiB each)")
    p.add_argument("--passes", type=int, default=3, help="records of the pause runs = passes × keys")
    p.add_argument("--interval", type=int, default=4000, help="checkpoint interval (ms) of the pause runs")
    p.add_argument("--big-gb", type=float, default=10.0, help="state of the large run in GB (1 000 000 keys per GB)")
    p.add_argument("--big-interval", type=int, default=30_000, help="checkpoint interval (ms) of the large run")
    p.add_argument("--process-memory", default="2g", help="taskmanager.memory.process.size of the large run")
    p.add_argument("--variants", default="", help="more large runs: incremental,local-recovery")
    p.add_argument("--work-dir", default=None, help="where the large run's checkpoints and RocksDB go")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds per pause run")
    p.add_argument("--save", default=None, help="write the results to this JSON file")
    p.add_argument("--load", default="", help="comma-separated JSON files of earlier runs to report with this one")
    p.add_argument("--notes", default="", help="a file whose text is appended to the section (observations)")
    p.add_argument("--write-docs", action="store_true", help="put the section into docs/benchmarks.md")
    a = p.parse_args(argv)
    a.only = {x.strip() for x in a.only.split(",") if x.strip()}
    a.backends = [x.strip() for x in a.backends.split(",") if x.strip()]
    a.variants = [x.strip() for x in a.variants.split(",") if x.strip()]
    a.earlier = []  # when and how loaded the runs of --load were
    bad = (a.only - {"pause", "big", "snapshot"}) or set(a.backends) - set(BACKENDS) or set(a.variants) - set(VARIANTS)
    if bad:
        expected = "pause/big/snapshot, heap/rocksdb and incremental/local-recovery"
        p.error(f"expected {expected}; got {', '.join(sorted(bad))}")
    return a


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    started = dt.datetime.now(dt.UTC)
    load = _LoadSampler()
    load.start()
    pauses = measure_pauses(a) if "pause" in a.only else []
    big = measure_big(a) if "big" in a.only else []
    snapshots = measure_snapshots(a) if "snapshot" in a.only else []
    if a.save:
        saved = {"pauses": [[b, asdict(r)] for b, r in pauses], "big": [asdict(r) for r in big]}
        saved["snapshots"] = [asdict(r) for r in snapshots]
        saved["args"] = {
            "big_gb": a.big_gb,
            "load": load.describe(),
            "started": f"{started:%Y-%m-%d %H:%M}",
            "command": " ".join(["python", *sys.argv]),
        }
        Path(a.save).write_text(json.dumps(saved))
    for path in filter(None, a.load.split(",")):
        earlier = json.loads(Path(path).read_text())
        pauses += [(b, PauseRun(**r)) for b, r in earlier["pauses"]]
        big += [BigRun(**{**r, "peak_rss": {int(k): v for k, v in r["peak_rss"].items()}}) for r in earlier["big"]]
        snapshots += [SnapshotRun(**r) for r in earlier.get("snapshots", [])]
        if earlier["big"]:
            a.big_gb = earlier["args"]["big_gb"]
        what = " and ".join(x for x in ("pause" * bool(earlier["pauses"]), "large-state" * bool(earlier["big"])) if x)
        args = earlier["args"]
        command = f"`{args['command']}`, " if "command" in args else ""
        a.earlier.append(f"the {what} runs: {command}{args['started']} UTC, {args['load']}")
    if pauses:
        print(text_table(PAUSE_HEADER, pause_rows(pauses)).replace("**", ""))
    if big:
        print(text_table(BIG_HEADER, big_rows(big)).replace("**", ""))
    if snapshots:
        print(text_table(SNAPSHOT_HEADER, snapshot_rows(snapshots)))
    print(load.describe())
    if a.write_docs:
        notes = Path(a.notes).read_text() if a.notes else ""
        section = render(a, started, load.describe(), pauses, big, notes, snapshots)
        DOCS.write_text(splice_section(DOCS.read_text() if DOCS.is_file() else "", section, BEGIN, END))
        log(f"wrote the state-at-scale section of {DOCS}")
    failed = any(r.error for _, r in pauses) or any(r.error and r.error != "not available" for r in big)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
