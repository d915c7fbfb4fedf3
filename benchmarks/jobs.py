"""The strom jobs of the benchmarks and the functions, sources and sinks they are made of.

Everything here is shipped to the TaskManager processes by cloudpickle (by reference: the TaskManagers
import this module, as ``bench.py``'s directory is on their ``PYTHONPATH``). Timings are taken inside the
job with ``time.monotonic_ns()`` (CLOCK_MONOTONIC is system-wide on Linux, so stamps of different processes
compare) and written by the subtasks as small JSON part files into a directory baked into the functions.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from workloads import (
    W2Value,
    event,
    merge_parts,
    w1_filter,
    w1_map,
    w2_key,
    w2_reduce,
    w2_to_value,
)

from strom import (
    Configuration,
    MapFunction,
    RuntimeContext,
    Sink,
    SinkWriter,
    SinkWriterContext,
    Source,
    SourceReader,
    SourceReaderContext,
    SourceSplit,
    StreamExecutionEnvironment,
)


def write_part(out_dir: str, role: str, obj: dict[str, Any]) -> None:
    obj = {"role": role, "pid": os.getpid(), **obj}
    name = f"{role}-{os.getpid()}-{uuid.uuid4().hex[:8]}.json"
    tmp = os.path.join(out_dir, "." + name)
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, os.path.join(out_dir, name))


def read_parts(out_dir: str, role: str) -> list[dict[str, Any]]:
    parts = []
    for name in sorted(os.listdir(out_dir)):
        if name.startswith(role + "-") and name.endswith(".json"):
            with open(os.path.join(out_dir, name)) as f:
                parts.append(json.load(f))
    return parts


# ---- building blocks -----------------------------------------------------------------------------------------
class TimedMap(MapFunction[Any, Any]):
    """The job's first map; records when its subtask opened (= the source side starts).

    ``map`` is the wrapped function itself (an instance attribute shadowing the method), so the hook costs
    nothing per record: the operator calls ``fn`` directly.
    """

    def __init__(self, fn: Callable[[Any], Any], out_dir: str) -> None:
        self.fn = fn
        self.map = fn  # type: ignore[method-assign]
        self.out_dir = out_dir
        self.t_open = 0
        self.cpu_open = 0
        self.subtask = -1

    def map(self, value: Any) -> Any:  # replaced per instance in __init__
        return self.fn(value)

    def open(self, runtime_context: RuntimeContext) -> None:
        self.t_open = time.monotonic_ns()
        self.cpu_open = time.process_time_ns()  # the whole TaskManager process: see JobRun.cpu_s
        self.subtask = runtime_context.get_index_of_this_subtask()

    def close(self) -> None:
        stamps = {"t_open": self.t_open, "cpu_open": self.cpu_open, "cpu_close": time.process_time_ns()}
        write_part(self.out_dir, "source", {**stamps, "subtask": self.subtask})


class _CountingWriter(SinkWriter[Any]):
    def __init__(self, out_dir: str, subtask: int) -> None:
        self.out_dir = out_dir
        self.subtask = subtask
        self.records = 0

    def write(self, element: Any) -> None:
        self.records += 1

    def write_batch(self, elements: list[Any]) -> None:
        self.records += len(elements)

    def close(self) -> None:
        t = time.monotonic_ns()
        write_part(self.out_dir, "sink", {"t_close": t, "subtask": self.subtask, "records": self.records})


class CountingSink(Sink[Any]):
    """W1's sink: counts the records (``len(batch)`` per batch)."""

    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir

    def create_writer(self, context: SinkWriterContext) -> SinkWriter[Any]:
        return _CountingWriter(self.out_dir, context.subtask_index)


_running_count = itemgetter(2)  # (key, running sum, running count) -> running count


class _RunningCountWriter(SinkWriter[W2Value]):
    def __init__(self, out_dir: str, subtask: int) -> None:
        self.out_dir = out_dir
        self.subtask = subtask
        self.records = 0
        self.sum_running_counts = 0

    def write(self, element: W2Value) -> None:
        self.records += 1
        self.sum_running_counts += element[2]

    def write_batch(self, elements: list[W2Value]) -> None:
        self.records += len(elements)
        self.sum_running_counts += sum(map(_running_count, elements))

    def close(self) -> None:
        t = time.monotonic_ns()
        part = {"records": self.records, "sum_running_counts": self.sum_running_counts}  # parts add up
        write_part(self.out_dir, "sink", {"t_close": t, "subtask": self.subtask, **part})


class RunningCountSink(Sink[W2Value]):
    """W2's sink: counts the records and sums their running counts (``v[2]``), per batch."""

    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir

    def create_writer(self, context: SinkWriterContext) -> SinkWriter[W2Value]:
        return _RunningCountWriter(self.out_dir, context.subtask_index)


# ---- latency: a paced source and a sink in another slot -------------------------------------------------------
class _PacedReader(SourceReader[tuple[int, int]]):
    def __init__(self, total: int, rate: float, batch_size: int, out_dir: str) -> None:
        self.total = total
        self.rate = rate
        self.batch_size = batch_size
        self.out_dir = out_dir
        self.t0 = 0
        self.sent = 0

    def add_splits(self, splits: Sequence[SourceSplit]) -> None:
        pass

    def poll_batch(self) -> list[tuple[int, int]] | None:
        now = time.monotonic_ns()
        if self.t0 == 0:
            self.t0 = now
        if self.sent >= self.total:
            return None
        due = min(self.total, int((now - self.t0) * self.rate / 1e9) + 1, self.sent + self.batch_size)
        if due <= self.sent:
            return []
        batch = [(seq, now) for seq in range(self.sent, due)]
        self.sent = due
        return batch

    def close(self) -> None:
        write_part(self.out_dir, "source", {"t_open": self.t0, "sent": self.sent})


class PacedSource(Source[tuple[int, int]]):
    """``total`` records ``(seq, monotonic_ns at emission)`` at ``rate`` records/s, paced by the clock."""

    parallel = False

    def __init__(self, total: int, rate: float, out_dir: str) -> None:
        self.total = total
        self.rate = rate
        self.out_dir = out_dir

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        return [SourceSplit(split_id="paced-0")]

    def create_reader(self, context: SourceReaderContext) -> SourceReader[tuple[int, int]]:
        return _PacedReader(self.total, self.rate, context.batch_size, self.out_dir)


def stamp_latency(rec: tuple[int, int]) -> tuple[int, int]:
    """(seq, ns from the source's stamp to now)."""
    return (rec[0], time.monotonic_ns() - rec[1])


class _LatencyWriter(SinkWriter[tuple[int, int]]):
    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir
        self.seqs: list[int] = []
        self.lat_ns: list[int] = []

    def write(self, element: tuple[int, int]) -> None:
        self.seqs.append(element[0])
        self.lat_ns.append(element[1])

    def close(self) -> None:
        write_part(self.out_dir, "sink", {"t_close": time.monotonic_ns(), "seqs": self.seqs, "lat_ns": self.lat_ns})


class LatencySink(Sink[tuple[int, int]]):
    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir

    def create_writer(self, context: SinkWriterContext) -> SinkWriter[tuple[int, int]]:
        return _LatencyWriter(self.out_dir)


# ---- running a job --------------------------------------------------------------------------------------------
class JobTimeout(Exception):
    pass


@dataclass
class JobRun:
    """One run of a job: its in-job time, the wall time of ``execute()`` and the merged sink parts."""

    job_s: float
    wall_s: float
    result: dict[str, Any]
    sources: list[dict[str, Any]] = field(default_factory=list)
    sinks: list[dict[str, Any]] = field(default_factory=list)
    task_pids: dict[str, int] = field(default_factory=dict)

    @property
    def cpu_s(self) -> float | None:
        """CPU seconds the TaskManager processes spent between their first part's open and last part's close
        (all threads: tasks, network, timers), from the ``cpu_open`` / ``cpu_close`` stamps of the parts;
        ``None`` when the job's parts do not carry them."""
        spans: dict[int, tuple[int, int]] = {}
        for part in self.sources + self.sinks:
            if "cpu_open" not in part:
                return None
            lo, hi = spans.get(part["pid"], (part["cpu_open"], part["cpu_close"]))
            spans[part["pid"]] = (min(lo, part["cpu_open"]), max(hi, part["cpu_close"]))
        return sum(hi - lo for lo, hi in spans.values()) / 1e9


def _execute(env: StreamExecutionEnvironment, name: str, out_dir: str, timeout_s: float) -> JobRun:
    t0 = time.monotonic()
    client = env.execute_async(name)
    timed_out = threading.Event()

    def _cancel() -> None:
        timed_out.set()
        client.cancel()

    timer = threading.Timer(timeout_s, _cancel)
    timer.daemon = True
    timer.start()
    try:
        res = client.get_job_execution_result()
    except Exception:
        if timed_out.is_set():
            raise JobTimeout(f"{name}: no result after {timeout_s:.0f} s; cancelled") from None
        raise
    finally:
        timer.cancel()
    wall = time.monotonic() - t0
    sources = read_parts(out_dir, "source")
    sinks = read_parts(out_dir, "sink")
    if not sources or not sinks:
        raise RuntimeError(f"{name}: missing part files in {out_dir} (sources {len(sources)}, sinks {len(sinks)})")
    job_ns = max(p["t_close"] for p in sinks) - min(p["t_open"] for p in sources)
    return JobRun(
        job_s=job_ns / 1e9,
        wall_s=wall,
        result=merge_parts([{k: v for k, v in p.items() if k not in ("pid", "subtask")} for p in sinks]),
        sources=sources,
        sinks=sinks,
        task_pids=dict(res.task_pids),
    )


def _env(
    parallelism: int, buffer_timeout_ms: int | None = None, config: dict[str, Any] | None = None
) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment(Configuration(config or {}))
    env.set_parallelism(parallelism)
    if buffer_timeout_ms is not None:
        env.set_buffer_timeout(buffer_timeout_ms)
    return env


def run_w1(n: int, parallelism: int, out_dir: str, timeout_s: float, config: dict[str, Any] | None = None) -> JobRun:
    """from_sequence(0, N-1) → map(event) → map(w1_map) → filter(w1_filter) → counting sink (all chained)."""
    env = _env(parallelism, config=config)
    (
        env.from_sequence(0, n - 1)
        .map(TimedMap(event, out_dir))
        .map(w1_map)
        .filter(w1_filter)
        .sink_to(CountingSink(out_dir))
    )
    return _execute(env, f"bench W1 p={parallelism}", out_dir, timeout_s)


def run_w2(n: int, parallelism: int, out_dir: str, timeout_s: float, config: dict[str, Any] | None = None) -> JobRun:
    """... → map(event) → map(to (key, value, 1)) → key_by(key) → reduce(sum, count) → counting sink."""
    env = _env(parallelism, config=config)
    (
        env.from_sequence(0, n - 1)
        .map(TimedMap(event, out_dir))
        .map(w2_to_value)
        .key_by(w2_key)
        .reduce(w2_reduce)
        .sink_to(RunningCountSink(out_dir))
    )
    return _execute(env, f"bench W2 p={parallelism}", out_dir, timeout_s)


def run_latency(rate: float, seconds: float, buffer_timeout_ms: int, out_dir: str, timeout_s: float) -> JobRun:
    """Paced source (slot group "default") → [map(now − stamp) → sink] in slot group "sink": 2 TaskManagers."""
    env = _env(1, buffer_timeout_ms)
    total = max(1, int(rate * seconds))
    (
        env.from_source(PacedSource(total, rate, out_dir), source_name="Paced Source")
        .map(stamp_latency)
        .slot_sharing_group("sink")
        .sink_to(LatencySink(out_dir))
        .slot_sharing_group("sink")
    )
    return _execute(env, f"bench latency bt={buffer_timeout_ms}", out_dir, timeout_s)
