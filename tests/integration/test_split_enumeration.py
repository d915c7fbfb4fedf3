"""FLIP-27 split enumeration on real TaskManagers: readers pull many small splits one at a time from the
enumerator on the JobMaster; the output is exact at p=2, after a TaskManager is SIGKILLed mid-read (exactly-once
FileSink), and after a savepoint taken mid-read is restored at another parallelism (the enumerator's state
restored from its own file in the savepoint, the readers' splits redistributed)."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import pytest
from failover import committed_files, completed_checkpoints, failover_env, kill_a_task_manager
from pull_source import PullSource

from strom import Configuration, FileSink, JsonLinesEncoder, StreamExecutionEnvironment
from strom.connectors.file_system import RollingPolicy


def committed_ints(directory: Path) -> list[int]:
    if not directory.exists():
        return []
    return [json.loads(line) for f in committed_files(directory) for line in f.read_text().splitlines()]


def pull_job(env: StreamExecutionEnvironment, source: PullSource, out: Path) -> None:
    (
        env.from_source(source, source_name="pull")
        .uid("pull")
        .map(lambda i: i)
        .uid("identity")
        # parts roll at every checkpoint: the committed output shows how far the checkpoints got
        .sink_to(
            FileSink.for_row_format(str(out), JsonLinesEncoder())
            .with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy())
            .build()
        )
        .uid("files")
    )


@pytest.mark.timeout(120)
def test_two_readers_pulling_small_splits_read_every_record_once() -> None:
    source = PullSource(200, 50, per_poll=20)
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"taskmanager.numberOfTaskSlots": 2}))
    env.set_parallelism(2)
    got = list(env.from_source(source, source_name="pull").execute_and_collect())
    assert sorted(got) == source.expected()


@pytest.mark.processes  # kills a TaskManager
@pytest.mark.timeout(240)
def test_a_task_manager_killed_mid_read_loses_and_repeats_nothing(tmp_path: Path) -> None:
    source = PullSource(400, 50, per_poll=10, poll_sleep_s=0.002)
    out = tmp_path / "out"
    env = failover_env(interval_ms=100, attempts=10)
    pull_job(env, source, out)
    client = env.execute_async("pull, killed")
    completed_checkpoints(client, at_least=2)
    assert not client.get_job_status().is_globally_terminal, "the job ended before the kill"
    kill_a_task_manager(client, seed=3)
    result = client.get_job_execution_result()
    assert result.num_restarts >= 1
    rows = committed_ints(out)
    assert len(rows) == len(source.expected())
    assert Counter(rows) == Counter(source.expected())


@pytest.mark.timeout(240)
@pytest.mark.parametrize("new_parallelism", [1, 3])
def test_a_savepoint_taken_mid_read_restores_at_another_parallelism_exactly(
    tmp_path: Path, new_parallelism: int
) -> None:
    source = PullSource(300, 50, per_poll=10, poll_sleep_s=0.002, require_restored_state=True)
    out = tmp_path / "out"
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"taskmanager.numberOfTaskSlots": 2}))
    env.set_parallelism(2)
    env.enable_checkpointing(100)
    pull_job(env, source, out)
    client = env.execute_async("pull, before the savepoint")
    completed_checkpoints(client, at_least=1, where=lambda c: True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not committed_ints(out):
        time.sleep(0.05)
    savepoint = client.stop_with_savepoint(str(tmp_path / "savepoints"))
    first = committed_ints(out)
    assert 0 < len(first) < len(source.expected()), "the savepoint should be taken mid-read"
    metadata = json.loads((Path(savepoint.removeprefix("file://")) / "_metadata").read_text())
    assert metadata["operator_states"]["pull"]["coordinator"] is not None  # the enumerator's own state file

    env2 = StreamExecutionEnvironment.get_execution_environment(Configuration({"taskmanager.numberOfTaskSlots": 3}))
    env2.set_parallelism(new_parallelism)
    env2.enable_checkpointing(100)
    pull_job(env2, source, out)
    result = env2.execute("pull, after the savepoint", savepoint_path=savepoint)
    assert result.num_restarts == 0
    assert Counter(committed_ints(out)) == Counter(source.expected())


@pytest.mark.processes  # kills a TaskManager
@pytest.mark.timeout(240)
def test_a_failover_after_a_savepoint_restores_the_checkpoint_before_it_exactly(tmp_path: Path) -> None:
    """A savepoint is no recovery point (as Flink): after checkpoint 1 a savepoint is taken while the job runs,
    then a TaskManager is killed — all within the 20 s minimum pause after checkpoint 1, so no checkpoint comes
    between (the job's final checkpoint comes after it). The job restores checkpoint 1:
    the splits assigned between the two go back to the enumerator, and the savepoint committed no sink output, so
    the committed output is exact — neither the splits nor the sink parts of the savepoint are lost or repeated."""
    source = PullSource(400, 50, per_poll=10, poll_sleep_s=0.002)
    out = tmp_path / "out"
    env = failover_env(interval_ms=100, attempts=10)
    env.get_checkpoint_config().set_min_pause_between_checkpoints(20_000)
    pull_job(env, source, out)
    client = env.execute_async("savepoint, then a kill")
    completed_checkpoints(client, at_least=1)
    client.trigger_savepoint(str(tmp_path / "savepoints"))
    kill_a_task_manager(client, seed=3)
    result = client.get_job_execution_result()
    assert result.num_restarts >= 1
    got = committed_ints(out)
    assert len(got) == len(source.expected())
    assert sorted(got) == source.expected()
