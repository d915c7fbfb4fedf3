"""strom on Spark local mode (``local[2,4]``): TaskManagers hosted in Spark Python workers.

The same jobs give the same results as on the MiniCluster, through ``strom run --target spark`` and through
``get_execution_environment(spark=session)``; a TaskManager's worker killed mid-job is replaced once and the
exactly-once output equals a failure-free run; cancelling a job ends every Spark job it started."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from failover import committed_rows, completed_checkpoints
from spark_jobs import TEXT, reference_windows, windows, word_count

from strom import (
    Configuration,
    DataGeneratorSource,
    FileSink,
    JsonLinesEncoder,
    KeyedProcessFunction,
    StreamExecutionEnvironment,
    ValueStateDescriptor,
)
from strom.deploy.spark.session import create_session

pytestmark = [pytest.mark.slow, pytest.mark.spark]

MASTER = "local[2,4]"
JOBS = Path(__file__).with_name("spark_jobs.py")


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    session = create_session(Configuration({"spark.master": MASTER}), "strom-tests")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def spark_env(spark: Any, **config: Any) -> StreamExecutionEnvironment:
    return StreamExecutionEnvironment.get_execution_environment(Configuration(config), spark=spark)


def wait_gone(pids: list[int], timeout: float) -> list[int]:
    """The pids among ``pids`` still running (not zombies) after up to ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        alive = []
        for pid in pids:
            try:
                if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                    alive.append(pid)
            except psutil.NoSuchProcess:
                pass
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


@pytest.mark.timeout(300)
def test_strom_run_target_spark_gives_the_minicluster_results_from_inside_spark_tasks(tmp_path: Path) -> None:
    strom = Path(sys.executable).with_name("strom")
    outputs = {}
    for name, args in (("local", []), ("spark", ["--target", "spark", "--spark-master", MASTER])):
        out = tmp_path / f"{name}.json"
        proc = subprocess.run(
            [str(strom), "run", *args, str(JOBS), str(out)], capture_output=True, text=True, timeout=240
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        outputs[name] = json.loads(out.read_text())
    local, spark = outputs["local"], outputs["spark"]
    expected = Counter(w for line in TEXT * 50 for w in line.split())
    assert local["word_count"]["counts"] == spark["word_count"]["counts"] == expected
    assert local["windows"] == spark["windows"] == reference_windows()
    assert local["word_count"]["in_spark_task"] == [False]
    assert spark["word_count"]["in_spark_task"] == [True], "records were processed outside Spark tasks"
    assert spark["client_pid"] not in spark["word_count"]["pids"]


@pytest.mark.timeout(240)
def test_a_program_with_a_spark_session_runs_its_jobs_in_spark_tasks(spark: Any) -> None:
    result = word_count(spark_env(spark))
    assert result["counts"] == Counter(w for line in TEXT * 50 for w in line.split())
    assert result["in_spark_task"] == [True]
    assert os.getpid() not in result["pids"]
    assert windows(spark_env(spark)) == reference_windows()
    assert spark.sparkContext.statusTracker().getActiveJobsIds() == []


def warn_once(value: int) -> int:
    if value == 3:
        logging.getLogger("user.job").warning("value %d seen in pid %d", value, os.getpid())
    return value


def test_task_manager_logs_reach_the_driver(spark: Any, caplog: pytest.LogCaptureFixture) -> None:
    env = spark_env(spark)
    env.set_parallelism(1)
    with caplog.at_level(logging.WARNING, logger="strom.taskmanager"):
        out = list(env.from_sequence(1, 5).map(warn_once).execute_and_collect("logs"))
    assert out == [1, 2, 3, 4, 5]
    forwarded = [r.getMessage() for r in caplog.records if r.name == "strom.taskmanager"]
    assert any("user.job: value 3 seen in pid" in m and m.startswith("[tm-") for m in forwarded), forwarded


class RunningCount(KeyedProcessFunction):
    def open(self, ctx: Any) -> None:
        self.count = ctx.get_state(ValueStateDescriptor("count"))

    def process_element(self, value: tuple[str, int], ctx: Any) -> Any:
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        yield (value[0], value[1], n)


def keyed_event(i: int) -> tuple[str, int]:
    return (f"k{i % 7}", i)


def failure_free_output(n: int) -> list[tuple[str, int, int]]:
    """What a failure-free run commits: one source subtask keeps each key's order, so the counts are fixed."""
    seen: Counter[str] = Counter()
    out = []
    for i in range(n):
        key, v = keyed_event(i)
        seen[key] += 1
        out.append((key, v, seen[key]))
    return sorted(out)


@pytest.mark.timeout(240)
def test_a_killed_task_manager_worker_is_replaced_once_and_the_output_is_exactly_once(
    spark: Any, tmp_path: Path
) -> None:
    n = 12_000
    out = tmp_path / "out"
    env = spark_env(
        spark,
        **{
            "heartbeat.interval": "250 ms",
            "heartbeat.timeout": "2 s",
            "restart-strategy.type": "fixed-delay",
            "restart-strategy.fixed-delay.attempts": 5,
            "restart-strategy.fixed-delay.delay": 200,
            "execution.checkpointing.dir": str(tmp_path / "checkpoints"),
        },
    )
    env.set_parallelism(2)
    env.enable_checkpointing(200)
    (
        env.from_source(DataGeneratorSource(keyed_event, n, 2_000), source_name="events")
        .set_parallelism(1)
        .uid("events")
        .key_by(lambda e: e[0])
        .process(RunningCount())
        .uid("count")
        .sink_to(FileSink.for_row_format(str(out), JsonLinesEncoder()).build())
        .uid("files")
    )
    client = env.execute_async("kill a TaskManager on Spark")
    completed_checkpoints(client, 3)
    before = client.live_task_manager_pids()
    assert len(before) == 2 and os.getpid() not in before
    victim = before[0]
    os.kill(victim, signal.SIGKILL)
    result = client.get_job_execution_result()
    assert result.num_restarts >= 1
    pids = client.task_manager_pids()
    assert len(pids) == 3, f"expected the two TaskManagers and one replacement; got pids {pids}"
    assert victim in pids
    assert sorted(committed_rows(out)) == failure_free_output(n)
    assert wait_gone(pids, 20) == []
    assert spark.sparkContext.statusTracker().getActiveJobsIds() == []


@pytest.mark.timeout(180)
def test_cancelling_a_job_ends_every_spark_job_it_started_and_leaves_no_task_manager(
    spark: Any, tmp_path: Path
) -> None:
    env = spark_env(spark)
    env.set_parallelism(2)
    env.from_source(DataGeneratorSource(keyed_event, 10_000_000, 500), source_name="slow").key_by(
        lambda e: e[0]
    ).process(RunningCount()).sink_to(FileSink.for_row_format(str(tmp_path), JsonLinesEncoder()).build())
    client = env.execute_async("cancel me")
    deadline = time.monotonic() + 60
    while not client.get_metrics() and time.monotonic() < deadline:
        assert not client.get_job_status().is_globally_terminal
        time.sleep(0.1)
    metrics = client.get_metrics()
    assert metrics, "expected task metrics from the TaskManagers in Spark"
    assert {m.task_manager_id for m in metrics} <= {"tm-1", "tm-2"}
    pids = client.live_task_manager_pids()
    assert len(pids) == 2
    assert len(spark.sparkContext.statusTracker().getActiveJobsIds()) == 2
    client.cancel()
    assert wait_gone(pids, 20) == [], "TaskManager workers still running after the cancel"
    deadline = time.monotonic() + 20
    while spark.sparkContext.statusTracker().getActiveJobsIds() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert spark.sparkContext.statusTracker().getActiveJobsIds() == []
