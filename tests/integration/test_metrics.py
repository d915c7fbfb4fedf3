"""Metrics on real MiniCluster jobs (TaskManager processes): PyFlink's user metrics, Flink's operator and
checkpoint metrics, through ``JobClient`` and through the Prometheus endpoints scraped over HTTP.

Cost of a user counter (not a timed test): ``benchmarks/user_metrics.py`` runs W1's map as a ``MapFunction`` in
strom's ``StreamMap`` operator on 1024-record batches, with ``self.counter.inc()`` per record and without, in paired
rounds (21 rounds of 300 000 records, one process; 2 shared cores, load average ~5.7, 2026-11-26). Two runs:
without 126 / 141 ns per record, with 175 / 199 ns: the counter adds 49 / 58 ns per record (median of the paired
differences), where bumping a plain ``int`` attribute by hand (``self.n += 1``, the floor of any counter) adds
22 / 20 ns. The rest is the method call ``inc`` is in PyFlink's API; ``inc`` itself is one attribute add on a
``__slots__`` object (46 ns in ``timeit``, as a hand-written slotted class's). A task without user metrics runs
no new code per record: the watermark and late-record metrics read what the operators keep anyway.
"""

from __future__ import annotations

import os
import random
import time
import urllib.request
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from strom import (
    Configuration,
    MapFunction,
    RuntimeContext,
    StreamExecutionEnvironment,
    TumblingEventTimeWindows,
    WatermarkStrategy,
)
from strom.api.source import Source, SourceReader, SourceReaderContext, SourceSplit
from strom.metrics import Counter, Distribution, Meter, MetricGroup

LONG_MIN = -(1 << 63)


# -- a source that emits its records, then stays open (the job keeps RUNNING, its metrics readable) ----------
class _HoldOpenReader(SourceReader[Any]):
    def __init__(self) -> None:
        self.first: list[Any] = []
        self.later: list[Any] = []
        self.flag = ""

    def add_splits(self, splits: Sequence[SourceSplit]) -> None:
        for s in splits:
            first, later, self.flag = s.payload
            self.first += first
            self.later += later

    def poll_batch(self) -> list[Any] | None:
        if self.first:
            batch, self.first = self.first, []
            return batch
        if self.later and os.path.exists(self.flag):
            batch, self.later = self.later, []
            return batch
        time.sleep(0.02)  # nothing now: keep the shared CPUs free
        return []

    def snapshot_state(self, checkpoint_id: int) -> list[SourceSplit]:
        return [SourceSplit(split_id="held", payload=(self.first, self.later, self.flag))]


class HoldOpenSource(Source[Any]):
    """Subtask ``i`` emits ``first[i::p]`` at once and ``later[i::p]`` once the file ``flag`` exists; then it idles."""

    def __init__(self, first: list[Any], later: Sequence[Any] = (), flag: str = "") -> None:
        self.first = first
        self.later = list(later)
        self.flag = flag

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        return [
            SourceSplit(
                split_id=f"held-{i}", payload=(self.first[i::parallelism], self.later[i::parallelism], self.flag)
            )
            for i in range(parallelism)
        ]

    def create_reader(self, context: SourceReaderContext) -> _HoldOpenReader:
        return _HoldOpenReader()


class Measured(MapFunction):
    """Every user metric kind PyFlink has, fed by each record."""

    def open(self, runtime_context: RuntimeContext) -> None:
        group: MetricGroup = runtime_context.get_metrics_group()
        self.records: Counter = group.counter("records")
        self.events: Meter = group.meter("events", time_span_in_seconds=60)
        self.sizes: Distribution = group.add_group("sizes").distribution("value")
        self.evens: Counter = group.add_group("kind", "even").counter("seen")
        self.last = -1
        group.gauge("last_value", lambda: self.last)

    def map(self, value: int) -> int:
        self.records.inc()
        self.events.mark_event()
        self.sizes.update(value)
        if value % 2 == 0:
            self.evens.inc()
        self.last = value
        return value


# -- helpers -------------------------------------------------------------------------------------------------
def wait_for(what: str, probe: Callable[[], Any], timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(0.1)
    raise AssertionError(f"expected {what} within {timeout} s; last saw {last!r}")


def scrape(url: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """``/metrics`` parsed with prometheus_client's parser: sample name -> [(labels, value)]."""
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, []).append((dict(sample.labels), sample.value))
    return out


def task_values(client: Any, task: str, name: str) -> list[float]:
    return [m.metrics[name] for m in client.get_metrics() if task in m.task_name and name in m.metrics]


def port_range() -> str:
    base = random.randrange(20000, 40000, 50)  # other tests on the machine may hold ports of a fixed range
    return f"{base}-{base + 49}"


# -- tests ---------------------------------------------------------------------------------------------------
@pytest.mark.timeout(180)
def test_user_operator_and_checkpoint_metrics_via_job_client_and_prometheus(tmp_path: Path) -> None:
    n = 3000
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration(
            {
                "metrics.reporter.prom.factory.class": "org.apache.flink.metrics.prometheus.PrometheusReporterFactory",
                "metrics.reporter.prom.port": port_range(),
                "taskmanager.numberOfTaskSlots": 1,
            }
        )
    )
    env.set_parallelism(2)
    env.enable_checkpointing(300)
    env.get_checkpoint_config().set_checkpoint_storage(f"file://{tmp_path}/checkpoints")
    (
        env.from_source(HoldOpenSource(list(range(n))), WatermarkStrategy.no_watermarks(), "numbers")
        .rebalance()
        .map(Measured())
        .name("measure")
        .add_sink(lambda v: None)
    )
    client = env.execute_async("metrics job")
    try:
        # -- JobClient: the user metrics of both subtasks add up to what the job did
        def counted() -> bool:
            return sum(task_values(client, "measure", "measure.records")) == n

        wait_for("the counters of both subtasks to add up to the input", counted)
        rows = [m for m in client.get_metrics() if "measure" in m.task_name]
        assert sorted(r.subtask_index for r in rows) == [0, 1]
        assert sum(r.metrics["measure.events_count"] for r in rows) == n
        assert sum(r.metrics["measure.sizes.value_count"] for r in rows) == n
        assert sum(r.metrics["measure.kind.even.seen"] for r in rows) == n // 2
        assert min(r.metrics["measure.sizes.value_min"] for r in rows) == 0
        assert max(r.metrics["measure.sizes.value_max"] for r in rows) == n - 1
        assert all(r.metrics["measure.events"] > 0 for r in rows)  # the meter's rate
        assert {r.metrics["measure.last_value"] for r in rows} <= set(range(n))
        assert all(r.metrics["measure.currentInputWatermark"] == LONG_MIN for r in rows)  # no watermarks

        # -- Prometheus: one endpoint per TaskManager and the JobManager's, Flink's names and labels
        urls = client.get_metric_urls()
        assert set(urls) == {"jobmanager", "tm-1", "tm-2"}, urls
        assert len(set(urls.values())) == 3
        records: dict[str, float] = {}
        for tm in ("tm-1", "tm-2"):
            samples = scrape(urls[tm])
            for labels, value in samples["flink_taskmanager_job_task_operator_records"]:
                assert labels["operator_name"] == "measure"
                assert labels["job_name"] == "metrics_job"  # label values filtered as Flink's
                assert labels["tm_id"] == tm.replace("-", "_")
                for key in ("job_id", "task_id", "task_attempt_id", "task_name", "operator_id", "host"):
                    assert labels[key]
                records[labels["subtask_index"]] = value
            io = samples["flink_taskmanager_job_task_numRecordsIn"]
            assert {"job_name", "task_name", "subtask_index", "tm_id", "host", "job_id", "task_id"} <= set(io[0][0])
            assert "flink_taskmanager_job_task_operator_currentInputWatermark" in samples
            assert "flink_taskmanager_job_task_operator_currentOutputWatermark" in samples
            assert "flink_taskmanager_job_task_Shuffle_Netty_Input_Buffers_inPoolUsage" in samples
            evens = samples.get("flink_taskmanager_job_task_operator_kind_seen", [])
            assert all(labels["kind"] == "even" for labels, _ in evens)  # add_group(key, value): a label
            quantiles = {
                labels["quantile"] for labels, _ in samples.get("flink_taskmanager_job_task_operator_sizes_value", [])
            }
            assert {"0.0", "0.5", "0.99", "1.0"} <= quantiles
        assert sorted(records) == ["0", "1"] and sum(records.values()) == n

        # -- checkpoint metrics on the JobManager, through JobClient and its endpoint
        wait_for(
            "two completed checkpoints", lambda: client.get_job_metrics().get("numberOfCompletedCheckpoints", 0) >= 2
        )
        job = client.get_job_metrics()
        assert job["lastCheckpointDuration"] >= 0 and job["lastCheckpointSize"] > 0
        assert job["lastCompletedCheckpointId"] >= 2 and job["numberOfFailedCheckpoints"] == 0
        assert job["lastCheckpointRestoreTimestamp"] == -1 and job["numRestarts"] == 0
        jm = scrape(urls["jobmanager"])
        ((labels, completed),) = jm["flink_jobmanager_job_numberOfCompletedCheckpoints"]
        assert completed >= 2 and labels["job_name"] == "metrics_job" and labels["job_id"] == client.get_job_id()
        assert "flink_jobmanager_job_lastCheckpointDuration" in jm and "flink_jobmanager_job_lastCheckpointSize" in jm
        assert jm["flink_jobmanager_numRegisteredTaskManagers"][0][1] == 2
        assert jm["flink_jobmanager_taskSlotsTotal"][0][1] == 2
    finally:
        client.cancel()


@pytest.mark.timeout(180)
def test_watermark_and_late_records_dropped_by_a_window(tmp_path: Path) -> None:
    flag = tmp_path / "send-late"
    on_time = [("a", t * 1000) for t in range(1, 13)]  # up to 12 s: the window [0 s, 5 s) fires
    late = [("a", 500), ("a", 1500), ("a", 2500)]  # behind the watermark, no allowed lateness: dropped
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"taskmanager.numberOfTaskSlots": 1}))
    env.set_parallelism(1)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(timedelta(0)).with_timestamp_assigner(lambda e, ts: e[1])
    (
        env.from_source(HoldOpenSource(on_time, late, str(flag)), strategy, "events")
        .key_by(lambda e: e[0])
        .window(TumblingEventTimeWindows.of(timedelta(seconds=5)))
        .reduce(lambda a, b: (a[0], max(a[1], b[1])))
        .name("windows")
        .add_sink(lambda v: None)
    )
    client = env.execute_async("late records")
    try:

        def window_watermark() -> float:
            values = [
                m.metrics[k]
                for m in client.get_metrics()
                for k in m.metrics
                if k.endswith(".currentInputWatermark") and "numLateRecordsDropped" in str(m.metrics)
            ]
            return max(values, default=LONG_MIN)

        wait_for("the window operator's input watermark to pass 11 s", lambda: window_watermark() >= 11_999)
        rows = client.get_metrics()
        window_row = next(m for m in rows if any(k.endswith(".numLateRecordsDropped") for k in m.metrics))
        dropped_key = next(k for k in window_row.metrics if k.endswith(".numLateRecordsDropped"))
        assert window_row.metrics[dropped_key] == 0
        assert window_row.metrics["currentInputWatermark"] >= 11_999  # the task's too
        source_row = next(m for m in rows if m is not window_row)
        output_wm = [v for k, v in source_row.metrics.items() if k.endswith(".currentOutputWatermark")]
        assert max(output_wm) >= 11_999  # the source's generator emitted it
        flag.touch()
        wait_for(
            "the late records to be counted",
            lambda: task_values(client, window_row.task_name, dropped_key) == [float(len(late))],
        )
        assert client.get_metric_urls() == {}  # no reporter configured: no endpoint
    finally:
        client.cancel()


@pytest.mark.timeout(180)
def test_restore_timestamp_after_starting_from_a_savepoint(tmp_path: Path) -> None:
    def job() -> StreamExecutionEnvironment:
        env = StreamExecutionEnvironment.get_execution_environment(Configuration({"taskmanager.numberOfTaskSlots": 1}))
        env.set_parallelism(1)
        env.enable_checkpointing(60_000)  # a savepoint is what this test takes
        env.get_checkpoint_config().set_checkpoint_storage(f"file://{tmp_path}/checkpoints")
        (
            env.from_source(HoldOpenSource(list(range(10))), WatermarkStrategy.no_watermarks(), "numbers")
            .uid("numbers")
            .map(Measured())
            .uid("measure")
            .add_sink(lambda v: None)
        )
        return env

    first = job().execute_async("restore metrics")
    wait_for("the records counted", lambda: _records(first) == [10.0])
    assert first.get_job_metrics()["lastCheckpointRestoreTimestamp"] == -1
    before_ms = time.time() * 1000
    savepoint = first.stop_with_savepoint(str(tmp_path / "savepoints"))
    second = job().execute_async("restore metrics", savepoint_path=savepoint)
    try:
        metrics = wait_for("the restored job's metrics", second.get_job_metrics)
        assert metrics["lastCheckpointRestoreTimestamp"] >= before_ms
        assert metrics["numberOfCompletedCheckpoints"] == 0
    finally:
        second.cancel()


def _records(client: Any) -> list[float]:
    return [v for m in client.get_metrics() for k, v in m.metrics.items() if k.endswith(".records")]
