"""Incremental RocksDB checkpoints on real TaskManagers: the job's ``shared/`` directory keeps only what retained
checkpoints reference, a killed TaskManager restores exactly once from an incremental checkpoint, a retained one
restarts at another parallelism, and one whose shared file was deleted by hand is refused naming the file.

The job is ``test_checkpointing``'s running sums (exactly-once file sink, deterministic output)."""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from failover import committed_rows, completed_checkpoints, failover_env, kill_task_managers
from test_checkpointing import expected_rows, running_sums_job

from strom import ExternalizedCheckpointRetention, StreamExecutionEnvironment
from strom.datastream import EmbeddedRocksDBStateBackend
from strom.exceptions import StromError


def incremental_env(parallelism: int, checkpoints: Path) -> StreamExecutionEnvironment:
    env = failover_env(parallelism)
    env.set_state_backend(EmbeddedRocksDBStateBackend(enable_incremental_checkpointing=True))
    env.get_checkpoint_config().set_checkpoint_storage(str(checkpoints))
    return env


def referenced_shared(job_dir: Path) -> dict[int, set[str]]:
    """Checkpoint id → the shared files its ``_metadata`` references, of every retained checkpoint."""
    out: dict[int, set[str]] = {}
    for metadata in job_dir.glob("chk-*/_metadata"):
        try:
            doc = json.loads(metadata.read_text())
        except (OSError, ValueError):
            continue  # deleted (subsumed) while read
        out[doc["checkpoint_id"]] = {
            Path(h["uri"]).name
            for op in doc["operator_states"].values()
            for inc in op.get("incremental", {}).values()
            for h in inc["shared"].values()
        }
    return out


def shared_files(job_dir: Path) -> set[str]:
    directory = job_dir / "shared"
    try:
        return {p.name for p in directory.iterdir()}
    except FileNotFoundError:
        return set()


@pytest.mark.processes  # kills a TaskManager
@pytest.mark.slow
@pytest.mark.timeout(180)
def test_an_incremental_job_drops_unreferenced_shared_files_and_recovers_a_kill_exactly_once(tmp_path: Path) -> None:
    count = 300_000
    out = tmp_path / "out"
    env = incremental_env(2, tmp_path / "checkpoints")
    running_sums_job(env, count, out, records_per_second=100_000)
    client = env.execute_async("incremental, killed")
    killed: list[int] = []
    killer = threading.Thread(target=kill_task_managers, args=(client, 1, random.Random(3), killed))
    killer.start()
    samples: list[set[str]] = []
    try:
        completed_checkpoints(client, 1)
        (job_dir,) = (tmp_path / "checkpoints").iterdir()
        while not client.get_job_status().is_globally_terminal:
            referenced = referenced_shared(job_dir)
            samples.append(shared_files(job_dir))
            for cid, files in referenced.items():  # a retained checkpoint's files are all there (its directory
                missing = files - samples[-1]  # goes before its files: still there now, it was retained then)
                retained = (job_dir / f"chk-{cid}").exists() and not client.get_job_status().is_globally_terminal
                assert not (missing and retained), (cid, missing)  # (a finished job's directory goes as a whole)
            time.sleep(0.2)
        result = client.get_job_execution_result()
    finally:
        killer.join()
    assert killed and result.num_restarts >= 1
    assert Counter(committed_rows(out)) == Counter(expected_rows(count))
    later = [set().union(*samples[i + 1 :]) for i in range(len(samples))]
    gone = {name for i, earlier in enumerate(samples) for name in earlier - later[i]}
    assert gone, "compactions replace SST files: the registry deletes those no retained checkpoint references"
    assert any(name.endswith(".sst") for s in samples for name in s)


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_retained_incremental_checkpoint_restarts_at_parallelism_1_and_a_deleted_shared_file_is_refused(
    tmp_path: Path,
) -> None:
    count = 100_000
    out = tmp_path / "out"
    env = incremental_env(2, tmp_path / "checkpoints")
    env.get_checkpoint_config().set_externalized_checkpoint_retention(
        ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION
    )
    running_sums_job(env, count, out, records_per_second=20_000)
    client = env.execute_async("incremental, retained")
    completed_checkpoints(client, 3)
    client.cancel()
    (job_dir,) = (tmp_path / "checkpoints").iterdir()
    ((checkpoint_id, referenced),) = referenced_shared(job_dir).items()
    assert referenced and referenced <= shared_files(job_dir)
    assert len(committed_rows(out)) < count, "the checkpoint should be taken mid-way"

    env2 = incremental_env(1, tmp_path / "checkpoints2")
    running_sums_job(env2, count, out)
    result = env2.execute("restarted at p=1", savepoint_path=str(job_dir / f"chk-{checkpoint_id}"))
    assert result.num_restarts == 0
    assert Counter(committed_rows(out)) == Counter(expected_rows(count))
    assert referenced <= shared_files(job_dir), "NO_CLAIM: the restored checkpoint's files stay"

    victim = job_dir / "shared" / sorted(referenced)[0]
    victim.unlink()
    env3 = incremental_env(1, tmp_path / "checkpoints3")
    running_sums_job(env3, count, tmp_path / "out3")
    with pytest.raises(StromError) as refused:
        env3.execute("restored without a shared file", savepoint_path=str(job_dir / f"chk-{checkpoint_id}"))
    message = str(refused.value)
    assert str(victim) in message and f"checkpoint {checkpoint_id}" in message and "no such file" in message
    assert not (tmp_path / "out3").exists() or not committed_rows(tmp_path / "out3")


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_job_restarted_in_claim_mode_owns_the_retained_checkpoint_and_deletes_it_in_time(tmp_path: Path) -> None:
    count = 200_000  # the claiming job runs long enough for two checkpoints of its own (a key within one split)
    out = tmp_path / "out"
    env = incremental_env(2, tmp_path / "checkpoints")
    env.get_checkpoint_config().set_externalized_checkpoint_retention(
        ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION
    )
    running_sums_job(env, count, out, records_per_second=20_000)
    client = env.execute_async("incremental, to be claimed")
    completed_checkpoints(client, 2)
    client.cancel()
    (job_dir,) = (tmp_path / "checkpoints").iterdir()
    ((checkpoint_id, referenced),) = referenced_shared(job_dir).items()
    assert referenced <= shared_files(job_dir)

    env2 = incremental_env(2, tmp_path / "checkpoints2")  # same parallelism: each database opened as it is
    env2.get_configuration().set_string("execution.savepoint-restore-mode", "CLAIM")
    running_sums_job(env2, count, out, records_per_second=40_000)
    client2 = env2.execute_async("claimed", savepoint_path=str(job_dir / f"chk-{checkpoint_id}"))
    completed_checkpoints(client2, 2)
    deadline = time.monotonic() + 10  # (the statistics may show a completion just before the subsumption ran)
    while (job_dir / f"chk-{checkpoint_id}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not (job_dir / f"chk-{checkpoint_id}").exists(), "subsumed: the claiming job owns it"
    result = client2.get_job_execution_result()
    assert result.num_restarts == 0
    assert Counter(committed_rows(out)) == Counter(expected_rows(count))
    assert not referenced & shared_files(job_dir), "its shared files went once nothing referenced them"
