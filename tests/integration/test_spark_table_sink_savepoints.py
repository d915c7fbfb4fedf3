"""SparkTableSink across savepoints, on real TaskManager processes (MiniCluster) with a real SparkSession (local
mode) in the client, whose catalog the JobManager's global committer updates.

Stop-with-savepoint of a keyed job at p=2, resumed as a new job at p=1 and p=3: the table ends equal to the
failure-free result, no row twice, nothing left staged. A savepoint taken while the job keeps running commits
nothing; the job is cancelled; its staged files survive the cancellation and the job resumed from the savepoint
commits them — exactly once again. A job without checkpoints at p=2 commits both subtasks' output in one commit
once both ended. Stop-with-savepoint returns only once the savepoint's output is committed."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from failover import completed_checkpoints
from spark_tables import event, failure_free, keyed_job, local_spark, location, staged_files, table_rows

from strom import Configuration, DataGeneratorSource, StreamExecutionEnvironment
from strom.api.sink import GlobalCommitter, GlobalCommittingSink, PrecommittingSinkWriter, SinkWriterContext
from strom.connectors.spark.sink import COMMITS_DIR, SparkTableSink

pytestmark = [pytest.mark.slow, pytest.mark.spark]


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield from local_spark(tmp_path_factory.mktemp("warehouse"), "strom-sink-savepoints")


def env_at(parallelism: int, interval_ms: int = 200) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration({"taskmanager.numberOfTaskSlots": parallelism})
    )
    env.set_parallelism(parallelism)
    env.enable_checkpointing(interval_ms)
    return env


def table_job(env: StreamExecutionEnvironment, n: int, table: str, rate: int = 0) -> None:
    keyed_job(env, n, SparkTableSink(table, partition_by=["bucket"]), rate)


def rows_arrive(spark: Any, name: str, client: Any, timeout_s: float = 60.0) -> int:
    """Waits until the running job committed some rows into ``name``; returns how many."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if spark.catalog.tableExists(name) and (count := len(table_rows(spark, name))):
            return count
        assert not client.get_job_status().is_globally_terminal, "the job ended before it committed anything"
        time.sleep(0.1)
    raise AssertionError(f"expected rows in '{name}' within {timeout_s} s; got none")


def assert_exactly_once(spark: Any, name: str, n: int) -> None:
    rows = table_rows(spark, name)
    assert len(rows) == len(set(rows)), "a row is in the table twice"
    assert rows == failure_free(n)
    assert staged_files(spark, name) == [], "staged files were left behind"


@pytest.mark.timeout(400)
@pytest.mark.parametrize("new_parallelism", [1, 3])
def test_stop_with_savepoint_then_resume_at_another_parallelism_is_exactly_once(
    spark: Any, tmp_path: Path, new_parallelism: int
) -> None:
    n, table = 30_000, f"stopped_p{new_parallelism}"
    env = env_at(2)
    table_job(env, n, table, rate=2_500)
    client = env.execute_async("into a Spark table, before the savepoint")
    completed_checkpoints(client, 2)
    rows_arrive(spark, table, client)
    savepoint = client.stop_with_savepoint(str(tmp_path / "savepoints"))
    # the savepoint of stop-with-savepoint commits: its rows are in the table once the job stopped, nothing staged
    first = table_rows(spark, table)
    assert 0 < len(first) < n, "the savepoint should be taken mid-way"
    assert len(first) == len(set(first))
    assert staged_files(spark, table) == [], "the stopped job left staged files"

    env2 = env_at(new_parallelism)
    table_job(env2, n, table)
    result = env2.execute("into a Spark table, after the savepoint", savepoint_path=savepoint)
    assert result.num_restarts == 0
    assert_exactly_once(spark, table, n)


@pytest.mark.timeout(400)
@pytest.mark.parametrize("new_parallelism", [2, 3])
def test_a_savepoint_of_a_running_job_cancelled_after_it_is_committed_by_the_job_resumed_from_it(
    spark: Any, tmp_path: Path, new_parallelism: int
) -> None:
    """After its first checkpoint the job takes no other (a long minimum pause), so nothing after the savepoint is
    committed before the cancellation — the precondition of exactly once from an older savepoint (as in Flink, a
    resumed job emits again what the old one committed after the savepoint)."""
    n, table = 30_000, f"resumed_p{new_parallelism}"
    env = env_at(2)
    env.get_checkpoint_config().set_min_pause_between_checkpoints(600_000)
    table_job(env, n, table, rate=2_000)
    client = env.execute_async("into a Spark table, savepoint while running")
    try:
        completed_checkpoints(client, 1)
        committed = rows_arrive(spark, table, client)
        savepoint = client.trigger_savepoint(str(tmp_path / "savepoints"))
        staged = staged_files(spark, table)
        assert staged, "the savepoint should have staged files"
        assert len(table_rows(spark, table)) == committed, "a savepoint of a running job commits nothing"
    finally:
        client.cancel()
    # the cancellation removed the writers' unfinished files and kept the savepoint's
    kept = staged_files(spark, table)
    assert kept and set(kept) <= set(staged), f"staged after the cancellation only: {set(kept) - set(staged)}"
    assert len(table_rows(spark, table)) == committed

    env2 = env_at(new_parallelism)
    table_job(env2, n, table)
    result = env2.execute("into a Spark table, resumed from the savepoint", savepoint_path=savepoint)
    assert result.num_restarts == 0
    assert_exactly_once(spark, table, n)


@pytest.mark.timeout(240)
def test_without_checkpoints_every_subtasks_output_lands_in_one_commit(spark: Any) -> None:
    n, table = 6_000, "unchecked"
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"taskmanager.numberOfTaskSlots": 2}))
    env.set_parallelism(2)
    table_job(env, n, table)
    env.execute("into a Spark table, without checkpoints")
    assert_exactly_once(spark, table, n)
    markers = sorted((location(spark, table) / COMMITS_DIR).glob("*.json"))
    assert len(markers) == 1, f"expected one commit of both subtasks' files; got {[m.name for m in markers]}"


class _CountingWriter(PrecommittingSinkWriter[Any, int]):
    def __init__(self) -> None:
        self.records = 0

    def write(self, element: Any) -> None:
        self.records += 1

    def prepare_commit(self) -> list[int]:
        n, self.records = self.records, 0
        return [n] if n else []


class _SlowCommitter(GlobalCommitter[int]):
    """Records each commit in a file — a second after it was asked to (a catalog that takes its time)."""

    def __init__(self, log: str) -> None:
        self.log = log

    def commit(self, checkpoint_id: int, committables: list[int]) -> None:
        time.sleep(1.0)
        with open(self.log, "a") as out:
            out.write(f"{checkpoint_id}\n")


class SlowlyCommittingSink(GlobalCommittingSink[Any, int]):
    def __init__(self, log: str) -> None:
        self.log = log

    def create_writer(self, context: SinkWriterContext) -> _CountingWriter:
        return _CountingWriter()

    def create_global_committer(self) -> _SlowCommitter:
        return _SlowCommitter(self.log)


@pytest.mark.timeout(240)
def test_stop_with_savepoint_returns_once_the_savepoint_is_committed(tmp_path: Path) -> None:
    log = tmp_path / "commits"
    log.touch()
    env = env_at(2)
    source = DataGeneratorSource(event, 1_000_000, 2_000)
    env.from_source(source, source_name="events").uid("events").sink_to(SlowlyCommittingSink(str(log))).uid("sink")
    client = env.execute_async("slowly committed")
    completed_checkpoints(client, 1)
    savepoint = client.stop_with_savepoint(str(tmp_path / "savepoints"))
    committed = [int(line) for line in log.read_text().split()]
    savepoint_id = json.loads((Path(savepoint.removeprefix("file://")) / "_metadata").read_text())["checkpoint_id"]
    assert savepoint_id in committed, f"savepoint {savepoint_id} not committed when the job stopped: {committed}"
