"""strom's checkpoint benchmarks (issue 4): overhead on W2, duration and size of large keyed state, recovery time.

    python benchmarks/checkpoints.py                # full run (a few minutes), prints the tables
    python benchmarks/checkpoints.py --quick        # smoke run: small N and state, 1 repeat / trial
    python benchmarks/checkpoints.py --write-docs   # ... and put the section into docs/benchmarks.md
                                                    # (what `make bench-checkpoints` runs)

1. **Overhead**: W2 (``benchmarks/jobs.py``: keyed running reduce of (sum, count) into a counting sink) with
   aligned exactly-once checkpoints every second against the same job without checkpoints, at parallelism 1
   and 2, runs alternating. Job time = last record into the sink − first map's ``open()`` (CLOCK_MONOTONIC
   stamps of the subtasks), so the wait for the final checkpoint after the end of data (FLIP-147) is left out.
2. **Large state**: a KeyedProcessFunction keeps a distinct 1 KiB ``bytes`` value in a ValueState per key
   (100 000 keys ≈ 100 MB, 1 000 000 keys ≈ 1 GB) at parallelism 2 (two TaskManager processes); the
   checkpoint with the largest state (the final one, taken after the end of data) is reported.
3. **Task pauses with large state** (issue 28 §3, ``--only pause``): 1 000 000 keys × 1 KiB, then every key
   updated again and again while checkpoints run, at parallelism 1 and 2; the keyed function measures the longest
   gap between two of its records (the task's longest pause) and the checkpoints' sync / async parts and durations
   are read from the result. Each run goes once with the heap backend's forked asynchronous snapshots and once
   with its synchronous fallback (the behaviour before), back to back, so the two are paired.
4. **Recovery**: a rate-limited job (20 000 records/s) checkpointing every 500 ms; one TaskManager gets SIGKILL
   (a crash: its connections close) or SIGSTOP (a hang: only the heartbeat timeout notices). A map after the
   keyed reduce stamps the first record each restarted subtask processes; kill → failover detected (the
   JobMaster's "fails over" log record, in this process) and kill → first record after the restore are
   reported.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import logging
import os
import resource
import shutil
import signal
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import bench
import psutil
from bench import CHECKPOINTS_BEGIN as SECTION_BEGIN
from bench import CHECKPOINTS_END as SECTION_END
from bench import DOCS, log, machine, md_table, splice_section, text_table
from jobs import TimedMap, read_parts, write_part
from workloads import W2Value, ceiling_w2, event, merge_parts, w2_key, w2_reduce, w2_to_value

from strom import (
    Configuration,
    DataGeneratorSource,
    JobClient,
    JobExecutionResult,
    KeyedProcessFunction,
    MapFunction,
    RuntimeContext,
    Sink,
    SinkWriter,
    SinkWriterContext,
    StreamExecutionEnvironment,
    ValueStateDescriptor,
)
from strom.runtime.state.heap_snapshot_strategy import HeapSnapshotStrategy

# Targets of issue 4.
TARGET_OVERHEAD = 0.90  # W2 with checkpoints every 1 s ≥ 90 % of its throughput without
TARGET_RECOVERY_S = 5.0  # TaskManager lost → first record processed after the restore

VALUE_BYTES = 1024  # per key in the large-state job
MB = 1e6


# ---- shared job parts (shipped to the TaskManagers by reference: this directory is on their PYTHONPATH) -------
_running_count = itemgetter(2)


class _StampedRunningCountWriter(SinkWriter[W2Value]):
    """W2's counting sink that also stamps its last batch (the job's end, before any final-checkpoint wait)."""

    def __init__(self, out_dir: str, subtask: int) -> None:
        self.out_dir = out_dir
        self.subtask = subtask
        self.records = 0
        self.sum_running_counts = 0
        self.t_last = 0

    def write(self, element: W2Value) -> None:
        self.records += 1
        self.sum_running_counts += element[2]
        self.t_last = time.monotonic_ns()

    def write_batch(self, elements: list[W2Value]) -> None:
        self.records += len(elements)
        self.sum_running_counts += sum(map(_running_count, elements))
        self.t_last = time.monotonic_ns()

    def close(self) -> None:
        part = {"records": self.records, "sum_running_counts": self.sum_running_counts}
        write_part(self.out_dir, "sink", {"t_last": self.t_last, "t_close": time.monotonic_ns(), **part})


class StampedRunningCountSink(Sink[W2Value]):
    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir

    def create_writer(self, context: SinkWriterContext) -> SinkWriter[W2Value]:
        return _StampedRunningCountWriter(self.out_dir, context.subtask_index)


class _DiscardingWriter(SinkWriter[Any]):
    def write(self, element: Any) -> None:
        pass

    def write_batch(self, elements: list[Any]) -> None:
        pass


class DiscardingSink(Sink[Any]):
    def create_writer(self, context: SinkWriterContext) -> SinkWriter[Any]:
        return _DiscardingWriter()


def index(i: int) -> int:
    return i


def blob_of(i: int) -> bytes:
    """A distinct 1 KiB value per key."""
    return i.to_bytes(8, "little") * (VALUE_BYTES // 8)


class StoreBlob(KeyedProcessFunction[int, int, None]):
    """Keeps a 1 KiB ValueState per key (the key is the record); emits nothing."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.blob = runtime_context.get_state(ValueStateDescriptor("blob"))

    def process_element(self, value: int, ctx: KeyedProcessFunction.Context) -> None:
        self.blob.update(blob_of(value))


def recovery_key(i: int) -> int:
    return i % 128


def recovery_sum(a: int, b: int) -> int:
    return a + b


class FirstRecordStamp(MapFunction[int, int]):
    """Writes ``first-s<subtask>-a<attempt>`` with the CLOCK_MONOTONIC time of the attempt's first record."""

    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir
        self.pending = True
        self.name = ""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.pending = True
        self.name = f"first-s{runtime_context.get_index_of_this_subtask()}-a{runtime_context.get_attempt_number()}"

    def map(self, value: int) -> int:
        if self.pending:
            self.pending = False
            t = time.monotonic_ns()
            tmp = os.path.join(self.out_dir, "." + self.name)
            with open(tmp, "w") as f:
                f.write(str(t))
            os.replace(tmp, os.path.join(self.out_dir, self.name))
        return value


# ---- running a job ----------------------------------------------------------------------------------------------
class JobTimeout(Exception):
    pass


@contextlib.contextmanager
def _deadline(client: JobClient, name: str, timeout_s: float) -> Iterator[threading.Event]:
    """Cancel the job if it has not ended after ``timeout_s``."""
    timed_out = threading.Event()

    def _cancel() -> None:
        timed_out.set()
        client.cancel()

    timer = threading.Timer(timeout_s, _cancel)
    timer.daemon = True
    timer.start()
    try:
        yield timed_out
    except Exception:
        if timed_out.is_set():
            raise JobTimeout(f"{name}: no result after {timeout_s:.0f} s; cancelled") from None
        raise
    finally:
        timer.cancel()


def _result(client: JobClient, name: str, timeout_s: float) -> JobExecutionResult:
    with _deadline(client, name, timeout_s):
        return client.get_job_execution_result()


def _env(
    config: dict[str, Any], parallelism: int, interval_ms: int | None, ckpt_dir: str
) -> StreamExecutionEnvironment:
    # every checkpoint's statistics: the figures below are taken over all of them, not the last 10
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration({"web.checkpoints.history": 100_000, **config})
    )
    env.set_parallelism(parallelism)
    if interval_ms:
        env.enable_checkpointing(interval_ms)  # EXACTLY_ONCE, aligned
        env.get_checkpoint_config().set_checkpoint_storage(ckpt_dir)
    return env


def _completed(res: JobExecutionResult) -> list[Any]:
    return [c for c in res.checkpoints if c.status == "COMPLETED"]


def _first_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


# ---- 1. overhead on W2 ------------------------------------------------------------------------------------------
@dataclass
class OverheadSeries:
    parallelism: int
    interval_ms: int | None
    n: int
    job_s: list[float] = field(default_factory=list)
    wall_s: list[float] = field(default_factory=list)
    completed: list[int] = field(default_factory=list)
    ck_duration_ms: list[float] = field(default_factory=list)  # every completed checkpoint of every run
    ck_size: list[float] = field(default_factory=list)
    ck_alignment_ms: list[float] = field(default_factory=list)  # max over subtasks, per checkpoint
    errors: list[str] = field(default_factory=list)

    def rate(self) -> float | None:
        return self.n / statistics.median(self.job_s) if self.job_s else None


def run_w2(
    n: int, parallelism: int, interval_ms: int | None, timeout_s: float
) -> tuple[float, float, dict[str, Any], JobExecutionResult]:
    """W2 of jobs.py, optionally checkpointing; returns (job s, execute() s, merged sink parts, the result)."""
    out_dir = tempfile.mkdtemp(prefix="strom-ckbench-w2-")
    ckpt_dir = tempfile.mkdtemp(prefix="strom-ckbench-w2-chk-")
    try:
        env = _env({}, parallelism, interval_ms, ckpt_dir)
        (
            env.from_sequence(0, n - 1)
            .map(TimedMap(event, out_dir))
            .map(w2_to_value)
            .key_by(w2_key)
            .reduce(w2_reduce)
            .sink_to(StampedRunningCountSink(out_dir))
        )
        name = f"ckbench W2 p={parallelism} {'ckpt ' + str(interval_ms) if interval_ms else 'no ckpt'}"
        t0 = time.monotonic()
        res = _result(env.execute_async(name), name, timeout_s)
        wall = time.monotonic() - t0
        sources, sinks = read_parts(out_dir, "source"), read_parts(out_dir, "sink")
        if not sources or not sinks:
            raise RuntimeError(f"{name}: missing part files (sources {len(sources)}, sinks {len(sinks)})")
        job_ns = max(p["t_last"] for p in sinks) - min(p["t_open"] for p in sources)
        result = merge_parts([{k: v for k, v in p.items() if k not in ("pid", "subtask")} for p in sinks])
        return job_ns / 1e9, wall, result, res
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
        shutil.rmtree(ckpt_dir, ignore_errors=True)


def measure_overhead(a: argparse.Namespace) -> list[OverheadSeries]:
    log(f"== overhead: W2, N = {a.n:,}, computing the expected result in a plain loop")
    expected = ceiling_w2(a.n)
    series = {(p, iv): OverheadSeries(p, iv, a.n) for p in a.parallelism for iv in (None, a.interval)}
    for rep in range(a.repeat):
        for p in a.parallelism:
            order: list[int | None] = [None, a.interval] if rep % 2 == 0 else [a.interval, None]
            for iv in order:
                s = series[(p, iv)]
                label = f"W2 p={p} {'checkpoints ' + str(iv) + ' ms' if iv else 'no checkpoints'}"
                try:
                    job_s, wall, result, res = run_w2(a.n, p, iv, a.timeout)
                except Exception as exc:  # a broken engine is a finding, not a crash of the benchmark
                    s.errors.append(_first_line(exc))
                    log(f"  {label}: FAILED {s.errors[-1]}")
                    continue
                got = {k: result.get(k) for k in expected}
                if got != expected:
                    s.errors.append(f"WRONG: expected {expected}, got {got}")
                done = _completed(res)
                s.job_s.append(job_s)
                s.wall_s.append(wall)
                s.completed.append(len(done))
                s.ck_duration_ms += [float(c.duration_ms or 0) for c in done]
                s.ck_size += [float(c.state_size) for c in done]
                s.ck_alignment_ms += [
                    max((st.get("alignment_duration_ms", 0.0) for st in c.subtasks.values()), default=0.0) for c in done
                ]
                failed = sum(1 for c in res.checkpoints if c.status == "FAILED")
                log(
                    f"  {label}: {job_s:6.2f} s  {a.n / job_s:>10,.0f} rec/s  (execute() {wall:.2f} s)"
                    f"  {len(done)} checkpoints completed, {failed} failed"
                    + (f", median {statistics.median(c.duration_ms or 0 for c in done):.0f} ms" if done else "")
                    + ("" if got == expected else f"  WRONG RESULT {got}")
                )
    return list(series.values())


# ---- 2. large keyed state ---------------------------------------------------------------------------------------
@dataclass
class StateRun:
    keys: int
    checkpoint_id: int = 0
    duration_ms: float = 0.0
    state_size: float = 0.0
    sync_ms: float = 0.0  # max over subtasks
    async_ms: float = 0.0  # max over subtasks
    completed: int = 0
    wall_s: float = 0.0
    error: str = ""

    def write_mb_s(self) -> float | None:
        return self.state_size / MB / (self.async_ms / 1000) if self.async_ms > 0 else None


def run_state(keys: int, interval_ms: int, timeout_s: float) -> StateRun:
    r = StateRun(keys)
    ckpt_dir = tempfile.mkdtemp(prefix="strom-ckbench-state-")
    config = {"taskmanager.numberOfTaskSlots": 1, "minicluster.number-of-taskmanagers": 2}
    try:
        env = _env(config, 2, interval_ms, ckpt_dir)
        (
            env.from_source(DataGeneratorSource(index, keys), source_name="keys")
            .key_by(index)
            .process(StoreBlob())
            .sink_to(DiscardingSink())
        )
        name = f"ckbench state {keys} keys"
        t0 = time.monotonic()
        res = _result(env.execute_async(name), name, timeout_s)
        r.wall_s = time.monotonic() - t0
    except Exception as exc:
        r.error = _first_line(exc)
        return r
    finally:
        shutil.rmtree(ckpt_dir, ignore_errors=True)
    done = _completed(res)
    r.completed = len(done)
    if not done:
        r.error = "no completed checkpoint"
        return r
    big = max(done, key=lambda c: c.state_size)
    r.checkpoint_id, r.duration_ms, r.state_size = big.checkpoint_id, float(big.duration_ms or 0), float(big.state_size)
    r.sync_ms = max(s.get("sync_duration_ms", 0.0) for s in big.subtasks.values())
    r.async_ms = max(s.get("async_duration_ms", 0.0) for s in big.subtasks.values())
    return r


def measure_state(a: argparse.Namespace) -> list[StateRun]:
    out = []
    for keys in a.state_keys:
        log(f"== large state: {keys:,} keys × {VALUE_BYTES} B, p=2, checkpoints every {a.state_interval} ms")
        r = run_state(keys, a.state_interval, a.timeout)
        if r.error:
            log(f"  FAILED: {r.error}")
        else:
            log(
                f"  checkpoint {r.checkpoint_id} of {r.completed}: {r.state_size / MB:.0f} MB in {r.duration_ms:.0f} ms"
                f" (sync ≤ {r.sync_ms:.0f} ms, async ≤ {r.async_ms:.0f} ms); execute() {r.wall_s:.1f} s"
            )
        out.append(r)
    return out


# ---- 3. task pauses with large state (issue 28 §3) ---------------------------------------------------------------
class CycleKeys:
    """Record ``i`` → key ``i mod keys``: the first pass fills the state, later passes update every key."""

    def __init__(self, keys: int) -> None:
        self.keys = keys

    def __call__(self, i: int) -> int:
        return i % self.keys


class StoreBlobTimed(KeyedProcessFunction[int, int, None]):
    """Keeps a fresh 1 KiB ValueState per key and measures the longest gap between two of its records; ``fork``
    picks the heap backend's snapshot strategy (forked asynchronous, or the synchronous fallback)."""

    def __init__(self, out_dir: str, fork: bool) -> None:
        self.out_dir = out_dir
        self.fork = fork

    def open(self, runtime_context: RuntimeContext) -> None:
        self.blob = runtime_context.get_state(ValueStateDescriptor("blob"))
        backend = getattr(runtime_context, "keyed_backend", None)
        if backend is not None and hasattr(backend, "snapshot_strategy"):
            backend.snapshot_strategy = HeapSnapshotStrategy(use_fork=self.fork)
        self.subtask = runtime_context.get_index_of_this_subtask()
        self.seen = 0
        self.last = 0.0
        self.max_gap = 0.0
        self.gaps: list[tuple[float, float]] = []  # (gap s, when: CLOCK_MONOTONIC s) of gaps > 50 ms

    def process_element(self, value: int, ctx: KeyedProcessFunction.Context) -> None:
        now = time.monotonic()
        gap = now - self.last
        if gap > 0.05 and self.seen:
            self.gaps.append((gap, now))
        if gap > self.max_gap and self.seen:
            self.max_gap = gap
        self.last = now
        self.seen += 1
        self.blob.update((value + self.seen).to_bytes(8, "little") * (VALUE_BYTES // 8))

    def close(self) -> None:
        children = resource.getrusage(resource.RUSAGE_CHILDREN)  # the forked snapshots this TaskManager reaped
        part = {"subtask": self.subtask, "records": self.seen, "max_gap": self.max_gap, "gaps": self.gaps}
        part["children_cpu_s"] = children.ru_utime + children.ru_stime
        write_part(self.out_dir, "pause", part)


@dataclass
class PauseRun:
    parallelism: int
    keys: int
    fork: bool
    records: int = 0
    max_gap_s: float = 0.0
    gaps_over_100ms: int = 0
    big: int = 0  # completed checkpoints holding ≥ 90 % of the largest state
    sync_ms: float = 0.0  # max over those checkpoints and subtasks
    async_ms: float = 0.0
    duration_ms: list[float] = field(default_factory=list)  # of those checkpoints
    state_size: float = 0.0
    peak_pss: float = 0.0  # bytes, sum over the TaskManager processes and their children, sampled every 0.5 s
    children_cpu_s: float = 0.0  # CPU of the TaskManagers' reaped children (the forked snapshots), all of the run
    job_s: float = 0.0
    error: str = ""


class _PssSampler(threading.Thread):
    """The peak of the summed proportional set size of this process's descendants (TaskManagers, snapshot
    children)."""

    def __init__(self) -> None:
        super().__init__(daemon=True, name="pss-sampler")
        self.peak = 0.0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.5):
            total = 0.0
            for p in psutil.Process().children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    total += p.memory_full_info().pss
            self.peak = max(self.peak, total)


def run_pause(
    p: int, keys: int, passes: int, fork: bool, interval_ms: int, timeout_s: float, extra: dict[str, Any] | None = None
) -> PauseRun:
    """``extra``: more configuration (``benchmarks/state_at_scale.py`` picks the state backend with it)."""
    r = PauseRun(p, keys, fork)
    out_dir = tempfile.mkdtemp(prefix="strom-ckbench-pause-")
    ckpt_dir = tempfile.mkdtemp(prefix="strom-ckbench-pause-chk-")
    config = {"taskmanager.numberOfTaskSlots": 1, "minicluster.number-of-taskmanagers": p, **(extra or {})}
    sampler = _PssSampler()
    try:
        env = _env(config, p, interval_ms, ckpt_dir)
        (
            env.from_source(DataGeneratorSource(CycleKeys(keys), keys * passes), source_name="keys")
            .key_by(index)
            .process(StoreBlobTimed(out_dir, fork))
            .sink_to(DiscardingSink())
        )
        name = f"ckbench pause p={p} {keys} keys {'fork' if fork else 'sync'}"
        sampler.start()
        t0 = time.monotonic()
        res = _result(env.execute_async(name), name, timeout_s)
        r.job_s = time.monotonic() - t0
        parts = read_parts(out_dir, "pause")
    except Exception as exc:
        r.error = _first_line(exc)
        return r
    finally:
        sampler.stop.set()
        shutil.rmtree(out_dir, ignore_errors=True)
        shutil.rmtree(ckpt_dir, ignore_errors=True)
    r.peak_pss = sampler.peak
    gaps = [g for part in parts for g, _ in part["gaps"]]
    r.records = sum(part["records"] for part in parts)
    r.max_gap_s = max((part["max_gap"] for part in parts), default=0.0)
    r.children_cpu_s = sum(part.get("children_cpu_s", 0.0) for part in parts)
    r.gaps_over_100ms = sum(1 for g in gaps if g > 0.1)
    done = _completed(res)
    if not done:
        r.error = "no completed checkpoint"
        return r
    largest = max(c.state_size for c in done)
    big = [c for c in done if c.state_size >= 0.9 * largest]
    r.big, r.state_size = len(big), float(largest)
    r.sync_ms = max(s.get("sync_duration_ms", 0.0) for c in big for s in c.subtasks.values())
    r.async_ms = max(s.get("async_duration_ms", 0.0) for c in big for s in c.subtasks.values())
    r.duration_ms = [float(c.duration_ms or 0) for c in big]
    return r


def measure_pause(a: argparse.Namespace) -> list[PauseRun]:
    out = []
    for p in a.pause_parallelism:
        for rep in range(a.pause_repeat):
            for fork in (True, False) if rep % 2 == 0 else (False, True):
                label = f"p={p} {a.pause_keys:,} keys × {a.pause_passes} passes, {'forked' if fork else 'synchronous'}"
                log(f"== pause: {label}, checkpoints every {a.pause_interval} ms")
                r = run_pause(p, a.pause_keys, a.pause_passes, fork, a.pause_interval, a.timeout)
                if r.error:
                    log(f"  FAILED: {r.error}")
                else:
                    log(
                        f"  longest pause {r.max_gap_s * 1000:.0f} ms ({r.gaps_over_100ms} > 100 ms);"
                        f" {r.big} checkpoints of ~{r.state_size / MB:.0f} MB: sync ≤ {r.sync_ms:.0f} ms,"
                        f" async ≤ {r.async_ms:.0f} ms,"
                        f" duration {_med_max([d / 1000 for d in r.duration_ms])}; peak PSS"
                        f" {r.peak_pss / MB:.0f} MB; job {r.job_s:.1f} s"
                    )
                out.append(r)
    return out


def _fmt_s(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f} s"


# ---- 4. recovery ------------------------------------------------------------------------------------------------
class _Stamps(logging.Handler):
    """Notes when this process's JobMaster logs a failover and a restart (CLOCK_MONOTONIC, ns)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.events: list[tuple[int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.events.append((time.monotonic_ns(), record.getMessage()))

    def first_after(self, t: int, needle: str) -> int | None:
        return next((ts for ts, msg in self.events if ts >= t and needle in msg), None)


@dataclass
class RecoveryTrial:
    detected_s: float | None = None  # kill → the JobMaster logs "fails over"
    restart_s: float | None = None  # kill → the restart deploys the tasks again
    first_s: float | None = None  # kill → first record processed by a restarted subtask
    all_s: float | None = None  # kill → every restarted subtask processed a record
    restarts: int = 0
    error: str = ""


@dataclass
class RecoverySeries:
    case: str
    sig: signal.Signals
    trials: list[RecoveryTrial] = field(default_factory=list)

    def values(self, attr: str) -> list[float]:
        return [v for t in self.trials if not t.error and (v := getattr(t, attr)) is not None]


def _wait(pred: Callable[[], bool], timeout_s: float, step: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return pred()


def _restarted_stamps(out_dir: str) -> list[int]:
    stamps = []
    for name in os.listdir(out_dir):
        if name.startswith("first-") and not name.endswith("-a0"):
            with open(os.path.join(out_dir, name)) as f:
                stamps.append(int(f.read()))
    return stamps


def run_recovery(sig: signal.Signals, a: argparse.Namespace, trial: int, stamps: _Stamps) -> RecoveryTrial:
    t = RecoveryTrial()
    out_dir = tempfile.mkdtemp(prefix="strom-ckbench-recovery-")
    ckpt_dir = tempfile.mkdtemp(prefix="strom-ckbench-recovery-chk-")
    config = {
        "taskmanager.numberOfTaskSlots": 1,
        "minicluster.number-of-taskmanagers": 2,
        "heartbeat.interval": f"{round(a.heartbeat_interval * 1000)} ms",
        "heartbeat.timeout": f"{round(a.heartbeat_timeout * 1000)} ms",
        "restart-strategy.type": "fixed-delay",
        "restart-strategy.fixed-delay.attempts": 3,
        "restart-strategy.fixed-delay.delay": a.restart_delay,
    }
    victim = 0
    client: JobClient | None = None
    try:
        env = _env(config, 2, a.recovery_interval, ckpt_dir)
        count = int(a.recovery_rate * a.recovery_seconds)
        (
            env.from_source(DataGeneratorSource(index, count, records_per_second=a.recovery_rate), source_name="paced")
            .key_by(recovery_key)
            .reduce(recovery_sum)
            .map(FirstRecordStamp(out_dir))
            .sink_to(DiscardingSink())
        )
        name = f"ckbench recovery {sig.name} #{trial}"
        client = env.execute_async(name)
        with _deadline(client, name, a.timeout):
            assert client is not None
            c = client
            if not _wait(lambda: any(x.status == "COMPLETED" for x in c.get_checkpoint_statistics()), 60, 0.05):
                raise RuntimeError("no checkpoint completed within 60 s")
            time.sleep(0.3)
            pids = c.live_task_manager_pids()
            victim = pids[trial % len(pids)]
            t_kill = time.monotonic_ns()
            os.kill(victim, sig)
            if not _wait(lambda: len(_restarted_stamps(out_dir)) >= 2, 30):
                raise RuntimeError("the restarted subtasks processed no record within 30 s")
            if sig is not signal.SIGKILL:
                os.kill(victim, signal.SIGKILL)  # the hung process: clean up once the job recovered
            victim = 0
            res = c.get_job_execution_result()
        first = sorted(_restarted_stamps(out_dir))
        t.first_s, t.all_s = (first[0] - t_kill) / 1e9, (first[-1] - t_kill) / 1e9
        detected = stamps.first_after(t_kill, "fails over")
        restart = stamps.first_after(t_kill, ": restart #")
        t.detected_s = None if detected is None else (detected - t_kill) / 1e9
        t.restart_s = None if restart is None else (restart - t_kill) / 1e9
        t.restarts = res.num_restarts
        if res.num_restarts != 1:
            t.error = f"expected 1 restart, got {res.num_restarts}"
    except Exception as exc:
        t.error = _first_line(exc)
    finally:
        if victim:
            with contextlib.suppress(OSError):
                os.kill(victim, signal.SIGKILL)
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()
        shutil.rmtree(out_dir, ignore_errors=True)
        shutil.rmtree(ckpt_dir, ignore_errors=True)
    return t


def measure_recovery(a: argparse.Namespace) -> list[RecoverySeries]:
    stamps = _Stamps()
    jm_log = logging.getLogger("strom.runtime.jobmaster.jobmaster")
    jm_log.addHandler(stamps)
    old_level = jm_log.level
    jm_log.setLevel(logging.INFO)
    jm_log.propagate = False  # our own lines say it; keeps the "fails over" warnings off stderr
    out = [
        RecoverySeries("TaskManager crashed (SIGKILL)", signal.SIGKILL),
        RecoverySeries("TaskManager hung (SIGSTOP)", signal.SIGSTOP),
    ]
    try:
        for trial in range(a.trials):
            for rs in out:
                log(f"== recovery: {rs.sig.name}, trial {trial + 1} of {a.trials}")
                t = run_recovery(rs.sig, a, trial, stamps)
                rs.trials.append(t)
                log(
                    f"  detected {_fmt_s(t.detected_s)}, restart {_fmt_s(t.restart_s)},"
                    f" first record {_fmt_s(t.first_s)}, all subtasks {_fmt_s(t.all_s)}; restarts {t.restarts}"
                    + (f"  FAILED: {t.error}" if t.error else "")
                )
    finally:
        jm_log.removeHandler(stamps)
        jm_log.setLevel(old_level)
        jm_log.propagate = True
    return out


# ---- report -----------------------------------------------------------------------------------------------------
def command_line() -> str:
    return " ".join(["python benchmarks/checkpoints.py", *sys.argv[1:]])


def _num(x: float) -> str:
    return bench._num(x)


def _med_max(xs: list[float], unit: str = " s") -> str:
    return "—" if not xs else f"{statistics.median(xs):.2f} / {max(xs):.2f}{unit}"


OVERHEAD_HEADER = [
    "p",
    "checkpoints",
    "N",
    "job s (min / med)",
    "rec/s (med)",
    "with / without (median of pairs, range)",
    "completed per run",
    "duration ms (med / max)",
    "alignment ms (med)",
    "state size (med)",
    "result",
]
STATE_HEADER = [
    "keys × 1 KiB",
    "checkpoint",
    "state size",
    "duration",
    "sync part (max subtask)",
    "async part (max subtask)",
    "write MB/s",
    "execute()",
    "result",
]
PAUSE_HEADER = [
    "p",
    "heap snapshots",
    "longest task pause",
    "pauses > 100 ms",
    "checkpoints of the full state",
    "sync part (max)",
    "async part (max)",
    "checkpoint duration (med / max)",
    "peak PSS of the TaskManagers",
    "execute()",
    "result",
]
RECOVERY_HEADER = [
    "case",
    "trials",
    "kill → failover detected (med / max)",
    "kill → restart (med / max)",
    "kill → first record after restore (med / max)",
    "kill → all subtasks back (med / max)",
    "result",
]


def paired_ratios(series: list[OverheadSeries], s: OverheadSeries) -> list[float]:
    """Throughput with / without checkpoints for each repetition: the two runs of a pair ran back to back, so
    their ratio is meaningful even when the machine's speed drifts between repetitions (it does, by ±30 %)."""
    base = next((b for b in series if b.parallelism == s.parallelism and b.interval_ms is None), None)
    if base is None or not s.interval_ms or base.errors or s.errors:
        return []
    return [off / on for off, on in zip(base.job_s, s.job_s, strict=False)]


def overhead_rows(series: list[OverheadSeries]) -> list[list[str]]:
    rows = []
    for s in series:
        r = s.rate()
        pairs = paired_ratios(series, s)
        ratio = f"{statistics.median(pairs):.0%} ({min(pairs):.0%}–{max(pairs):.0%})" if pairs else None
        rows.append(
            [
                str(s.parallelism),
                f"every {s.interval_ms} ms" if s.interval_ms else "off",
                _num(s.n),
                "—" if not s.job_s else f"{min(s.job_s):.2f} / {statistics.median(s.job_s):.2f}",
                "—" if r is None else _num(r),
                "—" if ratio is None else ratio,
                "—" if not s.interval_ms or not s.completed else " / ".join(str(c) for c in s.completed),
                "—"
                if not s.ck_duration_ms
                else f"{statistics.median(s.ck_duration_ms):.0f} / {max(s.ck_duration_ms):.0f}",
                "—" if not s.ck_alignment_ms else f"{statistics.median(s.ck_alignment_ms):.1f}",
                "—" if not s.ck_size else f"{statistics.median(s.ck_size) / 1e3:.0f} kB",
                ("FAILED: " + s.errors[0]) if s.errors else ("ok" if s.job_s else "not run"),
            ]
        )
    return rows


def state_rows(runs: list[StateRun]) -> list[list[str]]:
    rows = []
    for r in runs:
        if r.error:
            rows.append([_num(r.keys), *(["—"] * 7), "FAILED: " + r.error])
            continue
        mbs = r.write_mb_s()
        rows.append(
            [
                _num(r.keys),
                f"#{r.checkpoint_id} (of {r.completed})",
                f"{r.state_size / MB:.0f} MB",
                f"{r.duration_ms / 1000:.2f} s",
                f"{r.sync_ms / 1000:.2f} s",
                f"{r.async_ms / 1000:.2f} s",
                "—" if mbs is None else f"{mbs:.0f}",
                f"{r.wall_s:.1f} s",
                "ok",
            ]
        )
    return rows


def pause_rows(runs: list[PauseRun]) -> list[list[str]]:
    rows = []
    for r in runs:
        mode = "forked (async)" if r.fork else "synchronous"
        if r.error:
            rows.append([str(r.parallelism), mode, *(["—"] * 8), "FAILED: " + r.error])
            continue
        rows.append(
            [
                str(r.parallelism),
                mode,
                f"{r.max_gap_s * 1000:.0f} ms",
                str(r.gaps_over_100ms),
                f"{r.big} × {r.state_size / MB:.0f} MB",
                f"{r.sync_ms:.0f} ms",
                f"{r.async_ms / 1000:.2f} s",
                _med_max([d / 1000 for d in r.duration_ms]),
                f"{r.peak_pss / MB:.0f} MB",
                f"{r.job_s:.1f} s",
                "ok",
            ]
        )
    return rows


def pause_ratios(runs: list[PauseRun]) -> list[str]:
    """Per parallelism: synchronous / forked longest pause and job time, over the pairs run back to back."""
    out = []
    for p in sorted({r.parallelism for r in runs}):
        ok = [r for r in runs if r.parallelism == p and not r.error]
        forked, sync = [r for r in ok if r.fork], [r for r in ok if not r.fork]
        pairs = list(zip(forked, sync, strict=False))
        if not pairs:
            continue
        pause = [s.max_gap_s / f.max_gap_s for f, s in pairs if f.max_gap_s > 0]
        job = [s.job_s / f.job_s for f, s in pairs if f.job_s > 0]
        out.append(
            f"p={p}: longest pause synchronous / forked = {', '.join(f'{x:.0f}×' for x in pause)};"
            f" job time synchronous / forked = {', '.join(f'{x:.2f}' for x in job)} ({len(pairs)} pair(s))"
        )
    return out


def recovery_rows(series: list[RecoverySeries]) -> list[list[str]]:
    rows = []
    for rs in series:
        errors = [t.error for t in rs.trials if t.error]
        ok = len(rs.trials) - len(errors)
        rows.append(
            [
                rs.case,
                f"{ok} of {len(rs.trials)}",
                _med_max(rs.values("detected_s")),
                _med_max(rs.values("restart_s")),
                _med_max(rs.values("first_s")),
                _med_max(rs.values("all_s")),
                ("FAILED: " + errors[0]) if errors else "ok",
            ]
        )
    return rows


def targets(overhead: list[OverheadSeries], recovery: list[RecoverySeries]) -> list[list[str]]:
    out = []
    for s in overhead:
        if not s.interval_ms:
            continue
        pairs = paired_ratios(overhead, s)
        ratio = statistics.median(pairs) if pairs else None
        out.append(
            [
                f"W2 p={s.parallelism} with checkpoints every {s.interval_ms} ms ≥ {TARGET_OVERHEAD:.0%} of without",
                "—" if ratio is None else f"{ratio:.0%}",
                "not measured" if ratio is None else ("**met**" if ratio >= TARGET_OVERHEAD else "**missed**"),
            ]
        )
    for rs in recovery:
        xs = rs.values("first_s")
        worst = max(xs) if xs and len(xs) == len(rs.trials) else None
        out.append(
            [
                f"{rs.case}: first record after restore < {TARGET_RECOVERY_S:g} s (every trial)",
                "—" if worst is None else f"max {worst:.2f} s",
                "not measured" if worst is None else ("**met**" if worst < TARGET_RECOVERY_S else "**missed**"),
            ]
        )
    return out


@dataclass
class Report:
    args: argparse.Namespace
    started: dt.datetime
    load: tuple[float, float, float]
    overhead: list[OverheadSeries]
    state: list[StateRun]
    recovery: list[RecoverySeries]
    pause: list[PauseRun] = field(default_factory=list)


def render_section(rep: Report) -> str:
    a = rep.args
    m = machine()
    load = rep.load
    ran = {"overhead": rep.overhead, "state": rep.state, "recovery": rep.recovery}
    lines = [
        SECTION_BEGIN,
        "## Checkpoints",
        "",
        "<!-- Generated by `make bench-checkpoints` (benchmarks/checkpoints.py --write-docs);"
        " `make bench` keeps this section. -->",
        "",
        f"- **Date:** {rep.started:%Y-%m-%d %H:%M} UTC"
        + (" — **quick smoke run, not a measurement**" if a.quick else ""),
        f"- **Command:** `{command_line()}`" + (" (`make bench-checkpoints`)" if a.write_docs and not a.quick else ""),
        f"- **Machine:** {m['cpu']}, {m['ram']} RAM; {m['os']}; {m['python']}; load average at start"
        f" {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}",
        f"- **strom:** commit {m['commit']}",
        "- Checkpoints are aligned, exactly-once, written by the TaskManagers into a temporary local directory"
        " (`set_checkpoint_storage`); the figures come from `JobExecutionResult.checkpoints`.",
        "",
        "### Overhead on W2",
        "",
        f"W2 as above (`from_sequence → map(event) → map → key_by → reduce → counting sink`), N = {_num(a.n)},"
        f" with checkpoints every {a.interval} ms and without, {a.repeat} run(s) each, with and without"
        " alternating. **Job time** = last batch into the sink − first map's `open()`: the wait for the final"
        " checkpoint after the end of data is not counted. **With / without** = the median over the"
        " repetitions of (job time without) / (job time with) of the two runs of a repetition, which ran back to"
        " back; the range shows how noisy the machine was. Every run's output is checked as in the W2"
        " benchmark. Duration, alignment (max over the subtasks of a checkpoint) and size are over all"
        " completed checkpoints of all runs.",
        "",
        md_table(OVERHEAD_HEADER, overhead_rows(rep.overhead)) if ran["overhead"] else "_Not run (`--only`)._",
        "",
        "### Large keyed state",
        "",
        f"`from_source(DataGeneratorSource(i → i, keys)).key_by(i).process(...)`: per key one ValueState holding a"
        f" distinct {VALUE_BYTES}-byte `bytes` value; parallelism 2 on two TaskManager processes; checkpoints every"
        f" {a.state_interval} ms. Reported: the completed checkpoint with the largest state (the final one, taken"
        " after the end of data, FLIP-147). **Sync part** = the snapshot on the task thread (state pickled per"
        " key group), **async part** = writing the files; the maxima over the subtasks. **Write MB/s** = state"
        " size / the longest async part (both subtasks write at once).",
        "",
        md_table(STATE_HEADER, state_rows(rep.state)) if ran["state"] else "_Not run (`--only`)._",
        "",
        *pause_section(rep),
        "### Recovery",
        "",
        f"`DataGeneratorSource(i → i, records_per_second={_num(a.recovery_rate)}) → key_by(i % 128) → reduce(+) →"
        f" map(stamp) → discarding sink`, parallelism 2 on two TaskManager processes (one slot each), checkpoints"
        f" every {a.recovery_interval} ms, `heartbeat.interval` {a.heartbeat_interval:g} s, `heartbeat.timeout`"
        f" {a.heartbeat_timeout:g} s, fixed-delay restart strategy with delay {a.restart_delay} ms. Once a"
        " checkpoint has completed (+ 0.3 s), one TaskManager process gets the signal; the JobMaster restarts the"
        " whole job from the latest checkpoint on the surviving TaskManager and a replacement process the"
        " MiniCluster starts. **Failover detected** = the JobMaster's `fails over` log record; **restart** = its"
        " `restart #1` record (the restart begins: slots are requested, then the tasks deployed); **first record**"
        " = the earliest CLOCK_MONOTONIC stamp"
        " the map writes on the first record of a restarted attempt (`get_attempt_number() > 0`); **all"
        " subtasks back** = the latest such stamp. The SIGSTOPped process is SIGKILLed once the job has"
        f" recovered. {a.trials} trial(s) per case: median / max.",
        "",
        md_table(RECOVERY_HEADER, recovery_rows(rep.recovery)) if ran["recovery"] else "_Not run (`--only`)._",
        "",
        "### Targets (issue 4)",
        "",
        md_table(["target", "measured", "status"], targets(rep.overhead, rep.recovery)),
        SECTION_END,
    ]
    return "\n".join(lines)


def pause_section(rep: Report) -> list[str]:
    a = rep.args
    if not rep.pause:
        return []
    return [
        "### Task pauses with large keyed state (asynchronous heap snapshots)",
        "",
        f"`DataGeneratorSource(i → i mod {_num(a.pause_keys)}, {a.pause_passes} × {_num(a.pause_keys)})"
        ".key_by(k).process(...)`: the first pass puts a 1 KiB `bytes` value per key into a ValueState, the"
        " later passes replace every value while checkpoints run every"
        f" {a.pause_interval} ms; one TaskManager process (one slot) per subtask. **Longest task pause** = the"
        " longest gap between two records of the keyed function (CLOCK_MONOTONIC), over the whole run and"
        " every subtask. **Checkpoints of the full state** = those holding ≥ 90 % of the largest state; their"
        " sync part (on the task thread), async part (off it: the forked child's serialization and the"
        " writing) and duration (trigger → complete). Each configuration runs once with forked snapshots and"
        " once with the synchronous fallback, back to back (the order alternates between repetitions).",
        "",
        md_table(PAUSE_HEADER, pause_rows(rep.pause)),
        "",
        *[f"- {line}" for line in pause_ratios(rep.pause)],
        "",
    ]


# ---- main -------------------------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--only",
        default="overhead,state,pause,recovery",
        help="comma-separated subset of overhead,state,pause,recovery",
    )
    p.add_argument("--quick", action="store_true", help="smoke run: small N and state, 1 run / trial each")
    p.add_argument("--n", type=int, help="W2 events of the overhead runs (default 3 000 000)")
    p.add_argument("--repeat", type=int, help="overhead runs per configuration (default 5)")
    p.add_argument("--parallelism", default="1,2", help="parallelisms of the overhead runs (default 1,2)")
    p.add_argument("--interval", type=int, default=1000, help="checkpoint interval (ms) of the overhead runs")
    p.add_argument("--state-keys", help="keys of the large-state runs (default 100000,1000000 ≈ 100 MB, 1 GB)")
    p.add_argument("--state-interval", type=int, default=5000, help="checkpoint interval (ms) of the state runs")
    p.add_argument("--pause-keys", type=int, help="keys of the pause runs (default 1 000 000 ≈ 1 GB)")
    p.add_argument("--pause-passes", type=int, default=4, help="records of the pause runs = passes × keys")
    p.add_argument("--pause-parallelism", default="1,2", help="parallelisms of the pause runs (default 1,2)")
    p.add_argument("--pause-repeat", type=int, default=1, help="forked/synchronous pairs per parallelism")
    p.add_argument("--pause-interval", type=int, default=4000, help="checkpoint interval (ms) of the pause runs")
    p.add_argument("--trials", type=int, help="recovery trials per case (default 3)")
    p.add_argument("--recovery-rate", type=float, default=20_000, help="records/s of the recovery job")
    p.add_argument("--recovery-seconds", type=float, help="length of the recovery job's input at that rate")
    p.add_argument("--recovery-interval", type=int, default=500, help="checkpoint interval (ms) of the recovery job")
    p.add_argument("--heartbeat-interval", type=float, default=0.25, help="seconds (recovery runs)")
    p.add_argument("--heartbeat-timeout", type=float, default=1.0, help="seconds (recovery runs)")
    p.add_argument("--restart-delay", type=int, default=0, help="fixed-delay restart delay, ms (recovery runs)")
    p.add_argument("--timeout", type=float, default=300, help="cancel a job after this many seconds")
    p.add_argument("--write-docs", action="store_true", help="put the section into docs/benchmarks.md")
    a = p.parse_args(argv)
    a.only = {x.strip().lower() for x in a.only.split(",") if x.strip()}
    unknown = a.only - {"overhead", "state", "pause", "recovery"}
    if unknown:
        p.error(f"--only expects overhead, state, pause, recovery; got {', '.join(sorted(unknown))}")
    a.n = a.n or (100_000 if a.quick else 3_000_000)
    a.repeat = a.repeat or (1 if a.quick else 5)
    a.parallelism = [int(x) for x in a.parallelism.split(",") if x.strip()]
    keys = a.state_keys or ("10000" if a.quick else "100000,1000000")
    a.state_keys = [int(x) for x in keys.split(",") if x.strip()]
    a.pause_keys = a.pause_keys or (20_000 if a.quick else 1_000_000)
    a.pause_parallelism = [int(x) for x in a.pause_parallelism.split(",") if x.strip()]
    a.trials = a.trials or (1 if a.quick else 3)
    a.recovery_seconds = a.recovery_seconds or (6.0 if a.quick else 10.0)
    return a


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    started = dt.datetime.now(dt.UTC)
    load = os.getloadavg()
    overhead = measure_overhead(a) if "overhead" in a.only else []
    state = measure_state(a) if "state" in a.only else []
    pause = measure_pause(a) if "pause" in a.only else []
    recovery = measure_recovery(a) if "recovery" in a.only else []
    rep = Report(a, started, load, overhead, state, recovery, pause)
    print()
    for header, rows in (
        (OVERHEAD_HEADER, overhead_rows(overhead)),
        (STATE_HEADER, state_rows(state)),
        (PAUSE_HEADER, pause_rows(pause)),
        (RECOVERY_HEADER, recovery_rows(recovery)),
    ):
        if rows:
            print(text_table(header, rows))
            print()
    for line in pause_ratios(pause):
        print(line)
    print(text_table(["target", "measured", "status"], targets(overhead, recovery)).replace("**", ""))
    if a.write_docs:
        text = DOCS.read_text() if DOCS.is_file() else ""
        DOCS.write_text(splice_section(text, render_section(rep), SECTION_BEGIN, SECTION_END))
        log(f"wrote the checkpoint section of {DOCS}")
    failed = (
        any(s.errors for s in overhead)
        or any(r.error for r in state)
        or any(r.error for r in pause)
        or any(t.error for rs in recovery for t in rs.trials)
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
