"""strom on Spark: TaskManagers hosted in Spark Python workers, on ``local[2,4]`` (executors in the driver's JVM) and
on a real Spark standalone cluster on 127.0.0.1 (a master and two workers as separate processes, executors as JVMs
of their own: the fixture ``spark_standalone``, tests/spark_cluster.py).

The same jobs give the same results as on the MiniCluster, through ``strom run --target spark`` and through
``get_execution_environment(spark=session)``; a TaskManager's worker killed mid-job is replaced once and the
exactly-once output equals a failure-free run; so does a whole Spark worker killed mid-job (its executor and that
executor's Python workers with it); cancelling a job ends every Spark job it started.

On the standalone cluster the job's Python reaches the executors as it would on machines of their own: the job
module (spark_jobs.py; its functions are pickled by reference) through ``spark.submit.pyFiles``, strom and pyspark
with the executors' Python (this interpreter, which strom gives to a master on loopback). Checkpoints and sink
output go to directories of this machine's file system, which every executor here reaches: what a shared file
system (HDFS, S3) is to real machines."""

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
from spark_cluster import SparkStandaloneCluster
from spark_jobs import (
    TEXT,
    RunningCount,
    failure_free_output,
    keyed_event,
    reference_windows,
    warn_once,
    windows,
    word_count,
)

from strom import (
    Configuration,
    DataGeneratorSource,
    FileSink,
    JsonLinesEncoder,
    StreamExecutionEnvironment,
)
from strom.deploy.spark.session import create_session
from strom.exceptions import ResourceError

pytestmark = [pytest.mark.slow, pytest.mark.spark]

LOCAL = "local[2,4]"
STANDALONE = "standalone"  # the spark_standalone fixture's spark://127.0.0.1:PORT
JOBS = Path(__file__).with_name("spark_jobs.py")


@pytest.fixture(scope="module", params=[LOCAL, STANDALONE])
def spark(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A SparkSession on ``local[2,4]``, then one on the standalone cluster (a process has one SparkContext at a
    time: pytest stops the first before it creates the second)."""
    if request.param == STANDALONE:
        cluster: SparkStandaloneCluster = request.getfixturevalue("spark_standalone")
        config = {**cluster.spark_settings(), "spark.submit.pyFiles": str(JOBS)}
    else:
        config = {"spark.master": LOCAL}
    session = create_session(Configuration(config), "strom-tests")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def on_standalone(spark: Any) -> bool:
    return str(spark.sparkContext.master).startswith("spark://")


def spark_env(spark: Any, **config: Any) -> StreamExecutionEnvironment:
    return StreamExecutionEnvironment.get_execution_environment(Configuration(config), spark=spark)


def assert_job_module_from(files: list[str], cluster: SparkStandaloneCluster | None) -> None:
    """In local mode the executors import the job module from its own directory (strom hands them the driver's
    ``sys.path``); on the cluster, from the copy Spark shipped into each executor's directory below its worker."""
    if cluster is None:
        assert files == [str(JOBS)]
    else:
        assert files, "expected the executors to import the job module"
        for f in files:
            path = Path(f)
            below = path.is_relative_to(cluster.directory) and path.relative_to(cluster.directory).parts[0]
            assert path.name == "spark_jobs.py" and str(below).startswith("work-"), (
                f"expected the job module shipped into an executor's directory below {cluster.directory}; got {f}"
            )


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


def run_spark_jobs(tmp_path: Path, name: str, args: list[str]) -> dict[str, Any]:
    out = tmp_path / f"{name}.json"
    strom = Path(sys.executable).with_name("strom")
    proc = subprocess.run([str(strom), "run", *args, str(JOBS), str(out)], capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(out.read_text())
    return result


@pytest.mark.timeout(300)
@pytest.mark.parametrize("master", [LOCAL, STANDALONE])
def test_strom_run_target_spark_gives_the_minicluster_results_from_inside_spark_tasks(
    master: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    expected = Counter(w for line in TEXT * 50 for w in line.split())
    cluster: SparkStandaloneCluster | None = None
    if master == LOCAL:
        local = run_spark_jobs(tmp_path, "local", [])
        assert local["word_count"]["counts"] == expected
        assert local["windows"] == reference_windows()
        assert local["word_count"]["in_spark_task"] == [False]
        spark = run_spark_jobs(tmp_path, "spark", ["--target", "spark", "--spark-master", LOCAL])
    else:
        # What a user of a cluster passes: its master, executor sizes (one core per worker here: another
        # application may hold the rest) and the job's own Python files for the executors.
        cluster = request.getfixturevalue("spark_standalone")
        settings = cluster.spark_settings(executor_cores=1, max_cores=2)
        args = ["--spark-master", settings.pop("spark.master")]
        for key, value in {**settings, "spark.submit.pyFiles": str(JOBS)}.items():
            args += ["-D", f"{key}={value}"]
        spark = run_spark_jobs(tmp_path, "spark", args)
    assert spark["word_count"]["counts"] == expected
    assert spark["windows"] == reference_windows()
    assert spark["word_count"]["in_spark_task"] == [True], "records were processed outside Spark tasks"
    assert spark["client_pid"] not in spark["word_count"]["pids"]
    assert_job_module_from(spark["word_count"]["module_files"], cluster)


@pytest.mark.timeout(240)
def test_a_program_with_a_spark_session_runs_its_jobs_in_spark_tasks(
    spark: Any, request: pytest.FixtureRequest
) -> None:
    result = word_count(spark_env(spark))
    assert result["counts"] == Counter(w for line in TEXT * 50 for w in line.split())
    assert result["in_spark_task"] == [True]
    assert os.getpid() not in result["pids"]
    cluster = request.getfixturevalue("spark_standalone") if on_standalone(spark) else None
    assert_job_module_from(result["module_files"], cluster)
    assert windows(spark_env(spark)) == reference_windows()
    assert spark.sparkContext.statusTracker().getActiveJobsIds() == []


def test_task_manager_logs_reach_the_driver(spark: Any, caplog: pytest.LogCaptureFixture) -> None:
    env = spark_env(spark)
    env.set_parallelism(1)
    with caplog.at_level(logging.WARNING, logger="strom.taskmanager"):
        out = list(env.from_sequence(1, 5).map(warn_once).execute_and_collect("logs"))
    assert out == [1, 2, 3, 4, 5]
    forwarded = [r.getMessage() for r in caplog.records if r.name == "strom.taskmanager"]
    assert any("user.job: value 3 seen in pid" in m and m.startswith("[tm-") for m in forwarded), forwarded


def failover_job(spark: Any, tmp_path: Path, n: int, rate: int) -> StreamExecutionEnvironment:
    """The keyed running count of ``n`` events (``rate`` per second) into an exactly-once FileSink under
    ``tmp_path/out``, checkpoints every 200 ms under ``tmp_path/checkpoints``, a lost TaskManager noticed within
    2 s. (This machine's directories: every executor here reaches them.)"""
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
        env.from_source(DataGeneratorSource(keyed_event, n, rate), source_name="events")
        .set_parallelism(1)
        .uid("events")
        .key_by(lambda e: e[0])
        .process(RunningCount())
        .uid("count")
        .sink_to(FileSink.for_row_format(str(tmp_path / "out"), JsonLinesEncoder()).build())
        .uid("files")
    )
    return env


@pytest.mark.timeout(240)
def test_a_killed_task_manager_worker_is_replaced_once_and_the_output_is_exactly_once(
    spark: Any, tmp_path: Path
) -> None:
    n = 12_000
    client = failover_job(spark, tmp_path, n, 2_000).execute_async("kill a TaskManager on Spark")
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
    assert sorted(committed_rows(tmp_path / "out")) == failure_free_output(n)
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


def wait_replacements(
    client: Any, cluster: SparkStandaloneCluster, known: set[int], count: int, timeout_s: float = 120.0
) -> dict[int, int | None]:
    """The first ``count`` live TaskManager pids not in ``known``, each with the index of the worker it runs below
    (looked up while it runs); fails the test when the job ends or ``timeout_s`` passes first."""
    deadline = time.monotonic() + timeout_s
    found: dict[int, int | None] = {}
    while len(found) < count:
        for pid in client.live_task_manager_pids():
            if pid not in known and pid not in found:
                found[pid] = cluster.worker_of(pid)
        if len(found) >= count:
            break
        assert not client.get_job_status().is_globally_terminal, f"job ended before {count} replacement(s): {found}"
        assert time.monotonic() < deadline, f"expected {count} replacement TaskManager(s); got {found}"
        time.sleep(0.05)
    return found


@pytest.mark.timeout(300)
@pytest.mark.parametrize("spark", [STANDALONE], indirect=True)
def test_a_killed_spark_worker_is_survived_exactly_once_by_task_managers_on_the_other_worker(
    spark: Any, spark_standalone: SparkStandaloneCluster, tmp_path: Path
) -> None:
    cluster = spark_standalone
    assert len(cluster.alive_workers()) == 2
    n = 12_000
    client = failover_job(spark, tmp_path, n, 1_000).execute_async("kill a Spark worker")
    try:
        completed_checkpoints(client, 3)
        before = client.live_task_manager_pids()
        assert len(before) == 2 and os.getpid() not in before
        hosts = {pid: cluster.worker_of(pid) for pid in before}
        assert None not in hosts.values(), f"expected every TaskManager below a Spark worker; got {hosts}"
        dead = hosts[before[0]]
        assert dead is not None
        killed = cluster.kill_worker(dead)  # the worker JVM, its executor JVM, that executor's Python workers
        lost = [pid for pid in before if pid in killed]
        assert lost == [pid for pid, worker in hosts.items() if worker == dead]
        replacements = wait_replacements(client, cluster, set(before), len(lost))
        assert set(replacements.values()) == {1 - dead}, f"expected replacements on worker {1 - dead}: {replacements}"
        result = client.get_job_execution_result()
    finally:
        if not client.get_job_status().is_globally_terminal:
            client.cancel()
        cluster.restart_killed_workers()
    assert result.num_restarts >= 1
    pids = client.task_manager_pids()
    assert sorted(pids) == sorted([*before, *replacements]), "expected one replacement per lost TaskManager"
    assert sorted(committed_rows(tmp_path / "out")) == failure_free_output(n)
    assert wait_gone(pids, 20) == []
    assert spark.sparkContext.statusTracker().getActiveJobsIds() == []
    assert len(cluster.alive_workers()) == 2


@pytest.mark.timeout(180)
@pytest.mark.parametrize("spark", [STANDALONE], indirect=True)
def test_more_task_managers_than_the_application_has_task_slots_fail_naming_its_capacity(spark: Any) -> None:
    assert spark.sparkContext.getConf().get("spark.cores.max") == "4"
    env = spark_env(spark, **{"spark.taskmanagers": 5, "taskmanager.registration.timeout": "3 s"})
    env.set_parallelism(1)
    env.from_sequence(1, 10).print()
    with pytest.raises(ResourceError, match=r"expected 5 TaskManagers .* still waiting for a Spark task slot "):
        env.execute("five TaskManagers on four cores")
    deadline = time.monotonic() + 30
    while spark.sparkContext.statusTracker().getActiveJobsIds() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert spark.sparkContext.statusTracker().getActiveJobsIds() == []
