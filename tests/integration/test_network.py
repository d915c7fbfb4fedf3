"""The data plane under load, on real TaskManager processes: backpressure bounds memory, large records
pass, oversized frames fail the job cleanly, buffer-timeout 0 delivers at once, serializers plug in."""

from __future__ import annotations

import contextlib
import json
import os
import re
import statistics
import threading
import time
from typing import Any

import psutil
import pytest

from strom import (
    BatchSerializer,
    Configuration,
    InvalidProgramError,
    JobExecutionError,
    MapFunction,
    RuntimeContext,
    StreamExecutionEnvironment,
    WatermarkStrategy,
)
from strom.api.source import Source, SourceReader, SourceReaderContext, SourceSplit
from strom.connectors import DataGeneratorSource

HALF = 500_000_000  # from_sequence(0, 2 * HALF - 1) at parallelism 2: subtask 0 reads [0, HALF), subtask 1 the rest


class SlowSink(MapFunction):
    """Sleeps 1 ms per record: a consumer far slower than its producers."""

    def map(self, value: tuple[int, bytes]) -> int:
        time.sleep(0.001)
        return value[0]


def _rss_mib(pids: list[int]) -> dict[int, float]:
    return {pid: psutil.Process(pid).memory_info().rss / 2**20 for pid in pids}


@pytest.mark.processes  # measures each TaskManager process's memory
@pytest.mark.slow
@pytest.mark.timeout(150)
def test_backpressure_bounds_memory_and_loses_nothing() -> None:
    # Two fast source subtasks (1 KiB records) feed one sink that sleeps 1 ms per record, in another slot
    # sharing group: 3 slots on two-slot TaskManagers = 2 processes, so channels are local and remote.
    # Unbounded queues would grow by ~1 GiB/s; credit-based flow control and bounded pools must hold the
    # network memory of a TaskManager to a few MiB:
    #   result partition: 2 subpartitions x 2 + 8 floating = 12 buffers of <= 32 KiB (+ one batch in flight)
    #   input gate: 2 exclusive per remote channel + 8 floating = <= 10 buffers of <= 32 KiB
    # so we assert each TaskManager's RSS grows by less than BOUND_MIB over 25 s of full backpressure.
    bound_mib = 24.0
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"taskmanager.numberOfTaskSlots": 2}))
    env.set_parallelism(2)
    stream = (
        env.from_sequence(0, 2 * HALF - 1)
        .name("fast source")
        .map(lambda i: (i, b"x" * 1024))
        .rebalance()
        .map(SlowSink())
        .name("slow sink")
        .set_parallelism(1)
        .slot_sharing_group("sink")
    )
    client_records: list[int] = []
    with stream.execute_and_collect() as results:
        client = results.client
        pids = client.task_manager_pids()
        assert len(pids) == 2
        start = time.monotonic()
        early: dict[int, float] | None = None
        peak: dict[int, float] = {}
        metrics_seen: list[Any] = []
        for value in results:
            client_records.append(value)
            elapsed = time.monotonic() - start
            if early is None and elapsed > 5:
                early = _rss_mib(pids)
            if early is not None and len(client_records) % 200 == 0:
                for pid, rss in _rss_mib(pids).items():
                    peak[pid] = max(peak.get(pid, 0.0), rss)
            if elapsed > 20 and not metrics_seen:
                metrics_seen = client.get_metrics()
            if elapsed > 30:
                break

    assert early is not None and peak
    growth = {pid: peak[pid] - early[pid] for pid in pids}
    assert all(g < bound_mib for g in growth.values()), f"TaskManager memory grew: {growth} MiB (bound {bound_mib})"

    sources = [m for m in metrics_seen if "fast source" in m.task_name]
    sinks = [m for m in metrics_seen if "slow sink" in m.task_name]
    assert len(sources) == 2 and len(sinks) == 1, [m.task_name for m in metrics_seen]
    for m in sources:
        assert m.metrics["backPressuredTimeMsPerSecond"] > 600, m.metrics
        assert m.metrics["outPoolUsage"] > 0.5, m.metrics
    assert sinks[0].metrics["busyTimeMsPerSecond"] > 600, sinks[0].metrics
    assert sinks[0].metrics["numRecordsInPerSecond"] > 100, sinks[0].metrics

    # every record arrived once, and each source subtask's records in the order it sent them
    assert len(client_records) > 10_000
    assert len(set(client_records)) == len(client_records)
    for lo in (0, HALF):
        mine = [v for v in client_records if lo <= v < lo + HALF]
        assert mine == list(range(lo, lo + len(mine)))


@pytest.mark.processes  # the record crosses between two TaskManager processes
@pytest.mark.timeout(90)
def test_a_ten_megabyte_record_passes_between_task_managers() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)  # one TaskManager per slot sharing group
    size = 10 * 2**20
    stream = (
        env.from_sequence(0, 2)
        .map(lambda i: bytes([65 + i]) * size)
        .rebalance()
        .map(lambda b: (len(b), b[:1], b.count(b[:1]), os.getpid()))
        .slot_sharing_group("other")
    )
    source_pids: set[int] = set()
    with stream.execute_and_collect() as results:
        got = sorted(results)
        source_pids = set(results.client.task_manager_pids())
    assert [(n, first, count) for n, first, count, _ in got] == [
        (size, b"A", size),
        (size, b"B", size),
        (size, b"C", size),
    ]
    assert len(source_pids) == 2  # the records crossed from one TaskManager process to the other


@pytest.mark.processes  # reads the TaskManager process's log line on its standard error
@pytest.mark.timeout(90)
def test_a_frame_over_the_size_limit_fails_the_job_cleanly(capfd: pytest.CaptureFixture[str]) -> None:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration({"taskmanager.network.max-frame-size": 1 << 20})
    )
    stream = (
        env.from_sequence(0, 3)
        .map(lambda i: b"y" * (2 << 20) if i == 2 else b"small")
        .rebalance()
        .map(len)
        .slot_sharing_group("other")
    )
    stream.print()
    started = time.monotonic()
    with pytest.raises(JobExecutionError) as info:
        env.execute("oversized frame")
    assert time.monotonic() - started < 60
    text = str(info.value)
    assert "expected a frame of at most 1048576 bytes" in text
    assert "taskmanager.network.max-frame-size" in text  # the hint
    assert "closing it" in capfd.readouterr().err  # the receiving TaskManager logged why it closed the connection


class StampedSource(Source[int]):
    """Emits ``count`` monotonic-clock stamps, one every ``1 / rate`` seconds (one split)."""

    def __init__(self, count: int, rate: float) -> None:
        self.count = count
        self.rate = rate

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        return [SourceSplit(split_id="stamps")]

    def create_reader(self, context: SourceReaderContext) -> SourceReader[int]:
        return _StampedReader(self.count, self.rate)


class _StampedReader(SourceReader[int]):
    def __init__(self, count: int, rate: float) -> None:
        self.remaining = count
        self.interval_ns = int(1e9 / rate)
        self.next_ns = 0

    def add_splits(self, splits: Any) -> None:
        self.next_ns = time.monotonic_ns()

    def poll_batch(self) -> list[int] | None:
        if self.remaining <= 0:
            return None
        now = time.monotonic_ns()
        if now < self.next_ns:
            time.sleep((self.next_ns - now) / 1e9)
            now = time.monotonic_ns()
        self.next_ns += self.interval_ns
        self.remaining -= 1
        return [now]


class Latency(MapFunction):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.pid = os.getpid()

    def map(self, stamp: int) -> tuple[float, int]:
        return ((time.monotonic_ns() - stamp) / 1e6, self.pid)


@pytest.mark.processes  # source and sink in two TaskManager processes (pids)
@pytest.mark.timeout(90)
def test_buffer_timeout_zero_delivers_each_record_at_once() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)  # one TaskManager per slot sharing group
    env.set_buffer_timeout(0)
    source = env.from_source(StampedSource(count=600, rate=300.0), WatermarkStrategy.no_watermarks(), "stamps")
    latencies = source.rebalance().map(Latency()).slot_sharing_group("sink")
    with latencies.execute_and_collect() as results:
        rows = list(results)
        tm_pids = set(results.client.task_manager_pids())
    assert len(rows) == 600
    assert len({pid for _, pid in rows}) == 1 and len(tm_pids) == 2  # the sink ran in the other TaskManager
    steady = sorted(ms for ms, _ in rows[100:])
    # flushed per record: a few ms on loopback (the default 100 ms buffer timeout would give ~50 ms)
    assert statistics.median(steady) < 20, steady[len(steady) // 2 :]


class JsonLinesSerializer(BatchSerializer):
    """A stream serializer of the user's: JSON text, so tuples arrive as lists (proving it was used)."""

    def serialize(self, batch: list[Any]) -> bytes:
        return "\n".join(json.dumps(v) for v in batch).encode()

    def deserialize(self, data: bytes | memoryview) -> list[Any]:
        return [json.loads(line) for line in bytes(data).decode().split("\n")]


@pytest.mark.timeout(90)
def test_a_stream_uses_its_own_serializer_across_task_managers() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    stream = (
        env.from_sequence(0, 99)
        .map(lambda i: (i, str(i)))
        .set_serializer(JsonLinesSerializer())
        .rebalance()
        .map(lambda v: (type(v).__name__, v[0], v[1]))
        .slot_sharing_group("other")
    )
    with stream.execute_and_collect() as results:
        got = sorted(results, key=lambda r: r[1])
    assert got == [("list", i, str(i)) for i in range(100)]


def test_set_serializer_rejects_what_is_not_a_serializer() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    with pytest.raises(InvalidProgramError, match=r"expected a strom\.BatchSerializer"):
        env.from_sequence(0, 1).set_serializer(json)  # type: ignore[arg-type]


@pytest.mark.timeout(90)
def test_records_that_cannot_be_pickled_fail_the_producer_naming_it_and_the_fix() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    (
        env.from_sequence(0, 99)
        .map(lambda i: (i, threading.Lock()))
        .name("attach a lock")
        .rebalance()
        .map(lambda v: v[0])
        .slot_sharing_group("other")  # the consumer runs in another TaskManager: every record must cross
        .add_sink(lambda v: None)
    )
    with pytest.raises(JobExecutionError) as info:
        env.execute("unpicklable records")
    text = str(info.value) + "".join(str(c) for c in _causes(info.value))
    # whether the producer (serializing what it emits) or the data server (for what was queued before the consumer
    # connected) found it, the message names the operator whose output it is, what failed and the fix
    assert "the output of operator 'attach a lock' (subtask 1) cannot leave its TaskManager" in text
    assert "lock" in text and "must be picklable" in text and "set_serializer" in text


def _causes(exc: BaseException) -> list[BaseException]:
    out = []
    while exc.__cause__ is not None:
        exc = exc.__cause__
        out.append(exc)
    return out


RECORD_BYTES = 200_000


class SlowCount(MapFunction):
    """Sleeps 2 ms per record and keeps only its index: a sink far slower than its sources."""

    def map(self, value: tuple[int, bytes]) -> int:
        time.sleep(0.002)
        assert len(value[1]) == RECORD_BYTES
        return value[0]


def _sample_peak_rss(pids: list[int], stop: threading.Event, peak: dict[int, float]) -> None:
    while not stop.is_set():
        for pid in pids:
            with contextlib.suppress(psutil.Error):  # a TaskManager that has just exited
                peak[pid] = max(peak.get(pid, 0.0), psutil.Process(pid).memory_info().rss / 2**20)
        stop.wait(0.01)


@pytest.mark.processes  # measures each TaskManager process's memory
@pytest.mark.timeout(120)
def test_large_records_behind_a_slow_sink_stay_within_the_task_managers_buffers() -> None:
    # Two source subtasks generate 200 KB records for a sink in another slot sharing group that takes 2 ms per
    # record: 3 slots on two-slot TaskManagers = 2 processes. Sources used to poll 1,024 records (200 MB) and
    # buffers to hold 1,024 records whatever their size; batches are bounded by bytes now, so a TaskManager's
    # in-flight memory is its buffer pools x one 200 KB record (an idle TaskManager takes ~45 MiB).
    bound_mib = 100.0
    count = 1_200
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"taskmanager.numberOfTaskSlots": 2}))
    env.set_parallelism(2)
    source = DataGeneratorSource(lambda i: (i, bytes([i % 251]) * RECORD_BYTES), count)
    stream = (
        env.from_source(source, WatermarkStrategy.no_watermarks(), "large records")
        .rebalance()
        .map(SlowCount())
        .name("slow sink")
        .set_parallelism(1)
        .slot_sharing_group("sink")
    )
    peak: dict[int, float] = {}
    stop = threading.Event()
    with stream.execute_and_collect() as results:
        pids = results.client.task_manager_pids()
        sampler = threading.Thread(target=_sample_peak_rss, args=(pids, stop, peak), daemon=True)
        sampler.start()
        try:
            got = list(results)
        finally:
            stop.set()
            sampler.join(timeout=10)
    assert sorted(got) == list(range(count))
    assert len(pids) == 2 and set(peak) == set(pids)
    assert all(rss < bound_mib for rss in peak.values()), f"TaskManager peak RSS {peak} MiB (bound {bound_mib})"


def _attach_a_lock_at_record_7(i: int) -> tuple[int, Any]:
    return (i, threading.Lock()) if i % 50 == 7 else (i, "fine")


@pytest.mark.processes  # counts TaskManager processes
@pytest.mark.timeout(90)
@pytest.mark.parametrize("channels", ["local", "remote"])
def test_an_unpicklable_record_fails_the_job_the_same_way_on_local_and_remote_channels(channels: str) -> None:
    # parallelism 2 and a rebalance: with one TaskManager (2 slots, one slot sharing group) every channel stays in
    # the process and batches are handed over as objects; with the consumer in its own group there are two
    # TaskManagers and records cross. Either way the first batch the producer emits is checked, and the job fails
    # naming the operator, its subtask, the record and its position in the operator's output.
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"taskmanager.numberOfTaskSlots": 2}))
    env.set_parallelism(2)
    consumer = env.from_sequence(0, 99).map(_attach_a_lock_at_record_7).name("attach a lock").rebalance().map(len)
    if channels == "remote":
        consumer = consumer.slot_sharing_group("other")
    with consumer.execute_and_collect() as results:
        pids = results.client.task_manager_pids()
        with pytest.raises(JobExecutionError) as info:
            list(results)
    assert len(pids) == (1 if channels == "local" else 2)
    text = str(info.value) + "".join(str(c) for c in _causes(info.value))
    assert re.search(
        r"the output of operator 'attach a lock' \(subtask [12]\) cannot leave its TaskManager: expected records "
        r"PickleBatchSerializer\(\) can serialize; got output record #7 \(\((7|57), <unlocked _thread\.lock object",
        text,
    ), text
    assert "TypeError: cannot pickle '_thread.lock' object" in text
    assert "must be picklable" in text and "set_serializer" in text
