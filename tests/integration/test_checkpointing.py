"""Checkpoints and exactly-once recovery on real TaskManager processes, killed for real.

The jobs read a :class:`DataGeneratorSource` (index → record, replayable from its checkpointed position),
keep running sums per key and write ``(key, index, running sum)`` rows through the exactly-once
:class:`FileSink`. Keys are ``index // KEY_SPAN``: each key's indices lie in one source split, so its rows
come in index order and the whole committed output is deterministic — the failure-free output can be
computed here, and any lost or repeated record shows as a missing, extra or wrong row.
"""

from __future__ import annotations

import json
import pickle
import random
import shutil
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from failover import committed_files, committed_rows, completed_checkpoints, kill_a_task_manager, kill_task_managers

from strom import (
    BatchSerializer,
    CheckpointedFunction,
    CheckpointingMode,
    CheckpointListener,
    Configuration,
    DataGeneratorSource,
    FileSink,
    JobStatus,
    JsonLinesEncoder,
    MapFunction,
    StreamExecutionEnvironment,
)
from strom.common import Duration
from strom.connectors.file_system import RollingPolicy
from strom.exceptions import CorruptStateError, JobExecutionError

KEY_SPAN = 10_000

ON_CHECKPOINT = RollingPolicy.on_checkpoint_rolling_policy()


def event(i: int) -> tuple[int, int]:
    return (i // KEY_SPAN, i)


def expected_rows(count: int) -> list[tuple[int, int, int]]:
    sums: dict[int, int] = {}
    rows = []
    for i in range(count):
        k, v = event(i)
        sums[k] = sums.get(k, 0) + v
        rows.append((k, v, sums[k]))
    return rows


def running_sums_job(
    env: StreamExecutionEnvironment, count: int, out: Path, *, records_per_second: float | None = None
) -> None:
    (
        env.from_source(DataGeneratorSource(event, count, records_per_second), source_name="events")
        .uid("events")
        .map(lambda e: (e[0], e[1], e[1]))
        .key_by(lambda e: e[0])
        .reduce(lambda a, b: (b[0], b[1], a[2] + b[1]))
        .uid("sums")
        # parts roll at every checkpoint: the committed output shows how far the checkpoints got
        .sink_to(FileSink.for_row_format(str(out), JsonLinesEncoder()).with_rolling_policy(ON_CHECKPOINT).build())
        .uid("files")
    )


def chaos_env(
    mode: CheckpointingMode, backend: str = "hashmap", *, task_managers: int = 2, heartbeat_timeout: str = "1 s"
) -> StreamExecutionEnvironment:
    config = Configuration(
        {
            "state.backend.type": backend,
            "taskmanager.numberOfTaskSlots": 1,
            "minicluster.number-of-taskmanagers": task_managers,
            "heartbeat.interval": "250 ms",
            "heartbeat.timeout": heartbeat_timeout,  # short: a killed TaskManager is noticed at once
            "restart-strategy.type": "fixed-delay",
            "restart-strategy.fixed-delay.attempts": 20,
            "restart-strategy.fixed-delay.delay": 200,
        }
    )
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.enable_checkpointing(200, mode)
    return env


@pytest.mark.processes  # kills TaskManagers
@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize(
    ("mode", "backend"),
    [
        (CheckpointingMode.EXACTLY_ONCE, "hashmap"),
        (CheckpointingMode.AT_LEAST_ONCE, "hashmap"),
        (CheckpointingMode.EXACTLY_ONCE, "rocksdb"),
    ],
)
def test_chaos_three_task_manager_kills(tmp_path: Path, mode: CheckpointingMode, backend: str) -> None:
    # 20 s of events: the three kills (each after a checkpoint of the restarted job) must land while the job runs —
    # a kill after the sources finished restarts nothing (a loaded CI machine once took 12 s for three)
    count = 2_000_000
    out = tmp_path / "out"
    env = chaos_env(mode, backend)
    running_sums_job(env, count, out, records_per_second=100_000)
    client = env.execute_async("chaos")
    killed: list[int] = []
    killer = threading.Thread(target=kill_task_managers, args=(client, 3, random.Random(7), killed))
    killer.start()
    try:
        result = client.get_job_execution_result()
    finally:
        killer.join()
    assert len(killed) == 3, "the job ended before three TaskManagers were killed"
    assert result.num_restarts >= 3
    rows = committed_rows(out)
    expected = expected_rows(count)
    if mode is CheckpointingMode.EXACTLY_ONCE:
        assert len(rows) == len(expected)
        assert Counter(rows) == Counter(expected)
    else:  # at least once: every event is in the output; replays may repeat some
        seen = {r[1] for r in rows}
        missing = [i for i in range(count) if i not in seen]
        assert not missing, f"{len(missing)} events lost, e.g. {missing[:5]}"
    assert any(c.status == "COMPLETED" for c in result.checkpoints)


class Noting(MapFunction, CheckpointedFunction, CheckpointListener):
    """Counts records in operator state; notes every completed checkpoint id in a file; stalls in the
    snapshot of checkpoint 2 far past the checkpoint timeout (a task that does not acknowledge)."""

    def __init__(self, notes: str) -> None:
        self.notes = notes
        self.count = 0

    def initialize_state(self, context: Any) -> None:
        from strom import ListStateDescriptor

        self.state = context.get_operator_state_store().get_list_state(ListStateDescriptor("count"))

    def snapshot_state(self, context: Any) -> None:
        if context.checkpoint_id == 2:
            time.sleep(1.5)
        self.state.update([self.count])

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        with open(self.notes, "a") as f:
            f.write(f"{checkpoint_id}\n")

    def map(self, value: int) -> int:
        self.count += 1
        return value


@pytest.mark.timeout(90)
def test_checkpoint_that_is_never_acknowledged_times_out_and_the_next_completes(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    # every checkpoint's statistics kept, not only the last 10 (web.checkpoints.history): checkpoint 2 is looked at
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"web.checkpoints.history": 1000}))
    env.set_parallelism(1)
    env.enable_checkpointing(100)
    cfg = env.get_checkpoint_config()
    cfg.set_checkpoint_timeout(500)
    cfg.set_tolerable_checkpoint_failure_number(10)
    (
        env.from_source(DataGeneratorSource(lambda i: i, 40_000, records_per_second=10_000))
        .map(Noting(str(notes)))
        .name("noting")
        .sink_to(FileSink.for_row_format(str(tmp_path / "out"), JsonLinesEncoder()).build())
    )
    result = env.execute("stalling checkpoint")
    assert result.num_restarts == 0
    stats = {c.checkpoint_id: c for c in result.checkpoints}
    assert stats[2].status == "FAILED" and "expired" in stats[2].failure_reason
    completed = [c for c in sorted(stats) if stats[c].status == "COMPLETED"]
    assert any(c > 2 for c in completed), stats
    seen = [int(x) for x in notes.read_text().split()]
    assert seen == sorted(set(seen)), f"each completed id once, in order; got {seen}"
    assert 2 not in seen
    assert set(seen) <= set(completed)
    assert sorted(committed_rows_ints(tmp_path / "out")) == list(range(40_000))


def committed_rows_ints(directory: Path) -> list[int]:
    return [json.loads(line) for f in committed_files(directory) for line in f.read_text().splitlines()]


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.parametrize(
    ("new_parallelism", "before", "after"),
    [
        (3, "hashmap", "hashmap"),
        (1, "hashmap", "hashmap"),
        (3, "rocksdb", "rocksdb"),
        (1, "rocksdb", "hashmap"),
        (3, "hashmap", "rocksdb"),
    ],
)
def test_savepoint_at_parallelism_2_restores_at_another_parallelism(
    tmp_path: Path, new_parallelism: int, before: str, after: str
) -> None:
    count = 200_000
    out = tmp_path / "out"
    savepoints = tmp_path / "savepoints"

    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration({"taskmanager.numberOfTaskSlots": 2, "state.backend.type": before})
    )
    env.set_parallelism(2)
    env.enable_checkpointing(200)
    running_sums_job(env, count, out, records_per_second=50_000)
    client = env.execute_async("before the savepoint")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (not out.exists() or len(committed_rows(out)) < 20_000):
        time.sleep(0.1)
    savepoint = client.stop_with_savepoint(str(savepoints))
    first = committed_rows(out)
    assert 0 < len(first) < count, "the savepoint should be taken mid-way"
    # Flink's stop-with-savepoint: the job FINISHED (no end of input: nothing emitted after the savepoint)
    assert client.get_job_status() is JobStatus.FINISHED
    assert client.get_job_execution_result().num_restarts == 0
    assert committed_rows(out) == first

    env2 = StreamExecutionEnvironment.get_execution_environment(
        Configuration({"taskmanager.numberOfTaskSlots": 3, "state.backend.type": after})
    )
    env2.set_parallelism(new_parallelism)
    env2.enable_checkpointing(200)
    running_sums_job(env2, count, out)
    result = env2.execute("after the savepoint", savepoint_path=savepoint)
    assert result.num_restarts == 0
    rows = committed_rows(out)
    assert Counter(rows) == Counter(expected_rows(count))


class Throttled(MapFunction):
    """Slow after the key-by exchange, so the exchange's buffers fill: barriers have in-flight data to overtake."""

    def map(self, value: tuple[int, int, int]) -> tuple[int, int, int]:
        if value[1] % 50 == 0:
            time.sleep(0.004)
        return value


def unaligned_env(
    parallelism: int, directory: Path, backend: str = "hashmap", *, heartbeat_timeout: str = "1 s"
) -> StreamExecutionEnvironment:
    env = chaos_env(
        CheckpointingMode.EXACTLY_ONCE, backend, task_managers=max(2, parallelism), heartbeat_timeout=heartbeat_timeout
    )
    env.set_parallelism(parallelism)
    cfg = env.get_checkpoint_config()
    cfg.enable_unaligned_checkpoints()
    cfg.set_checkpoint_storage(str(directory))
    return env


def throttled_sums_job(env: StreamExecutionEnvironment, count: int, out: Path) -> None:
    (
        env.from_source(DataGeneratorSource(event, count), source_name="events")
        .uid("events")
        .map(lambda e: (e[0], e[1], e[1]))
        .key_by(lambda e: e[0])
        .reduce(lambda a, b: (b[0], b[1], a[2] + b[1]))
        .uid("sums")
        .map(Throttled())
        .uid("throttled")
        .sink_to(FileSink.for_row_format(str(out), JsonLinesEncoder()).build())
        .uid("files")
    )


def _persisted(stats: Any) -> float:
    return sum(s.get("persisted_data_bytes", 0.0) for s in stats.subtasks.values())


@pytest.mark.processes  # kills a TaskManager
@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_unaligned_checkpoints_persist_in_flight_data_and_recover_exactly_once(tmp_path: Path, backend: str) -> None:
    count = 100_000
    out = tmp_path / "out"
    env = unaligned_env(2, tmp_path / "checkpoints", backend)
    throttled_sums_job(env, count, out)
    client = env.execute_async("unaligned")
    completed_checkpoints(client, 1, where=lambda c: _persisted(c) > 0)  # one that stored in-flight buffers
    kill_a_task_manager(client, seed=3)
    result = client.get_job_execution_result()
    assert result.num_restarts >= 1
    assert Counter(committed_rows(out)) == Counter(expected_rows(count))


@pytest.mark.processes  # kills a TaskManager
@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_aligned_checkpoints_that_time_out_switch_to_unaligned_and_recover_exactly_once(
    tmp_path: Path, backend: str
) -> None:
    """execution.checkpointing.aligned-checkpoint-timeout: barriers start aligned; under backpressure the alignment
    times out and the checkpoint goes on unaligned, persisting in-flight data; a kill then restores exactly-once."""
    count = 100_000
    out = tmp_path / "out"
    env = unaligned_env(2, tmp_path / "checkpoints", backend)
    env.get_checkpoint_config().set_aligned_checkpoint_timeout(Duration.of_millis(20))
    throttled_sums_job(env, count, out)
    client = env.execute_async("aligned checkpoint timeout")
    completed_checkpoints(client, 1, where=lambda c: _persisted(c) > 0)  # one switched to unaligned
    kill_a_task_manager(client, seed=5)
    result = client.get_job_execution_result()
    assert result.num_restarts >= 1
    assert Counter(committed_rows(out)) == Counter(expected_rows(count))


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize(
    ("new_parallelism", "timeout_ms", "backend"),
    # RocksDB: one case of each kind (rescaling up and down, unaligned and switched), to keep the slow tier short
    [(3, 0, "hashmap"), (1, 0, "hashmap"), (3, 20, "hashmap"), (3, 0, "rocksdb"), (1, 20, "rocksdb")],
)
def test_an_unaligned_checkpoint_under_backpressure_restores_at_another_parallelism_exactly_once(
    tmp_path: Path, new_parallelism: int, timeout_ms: int, backend: str
) -> None:
    """Flink 1.13+'s rescaling of in-flight data: an unaligned checkpoint taken at p=2 under backpressure (in-flight
    buffers persisted) restores at p=3 and p=1; the running sums — which depend on every key's records arriving in
    order — come out exactly once. With an aligned checkpoint timeout, one that switched to unaligned does too."""
    from strom import ExternalizedCheckpointRetention

    count = 60_000
    out = tmp_path / "out"
    env = unaligned_env(2, tmp_path / "checkpoints", backend)
    env.get_checkpoint_config().set_externalized_checkpoint_retention(
        ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION
    )
    env.get_checkpoint_config().set_aligned_checkpoint_timeout(timeout_ms)
    throttled_sums_job(env, count, out)
    client = env.execute_async("unaligned, retained")
    completed_checkpoints(client, 2, where=lambda c: _persisted(c) > 0)
    client.cancel()
    done = [c for c in client.get_checkpoint_statistics() if c.status == "COMPLETED"]
    assert _persisted(done[-1]) > 0, "the retained checkpoint holds in-flight data"
    retained = sorted((tmp_path / "checkpoints").glob(f"*/chk-{done[-1].checkpoint_id}/_metadata"))
    assert retained, "RETAIN_ON_CANCELLATION keeps the last checkpoint"
    assert len(committed_rows(out)) < count, "the checkpoint should be taken mid-way"

    # nothing is killed from here on: a loaded machine's late heartbeat is no restart the assertion below counts
    env2 = unaligned_env(new_parallelism, tmp_path / "checkpoints2", backend, heartbeat_timeout="60 s")
    throttled_sums_job(env2, count, out)
    result = env2.execute("rescaled", savepoint_path=str(retained[-1].parent))
    assert result.num_restarts == 0
    assert Counter(committed_rows(out)) == Counter(expected_rows(count))


class _Handle:
    """A record that cannot be pickled (it holds a lock); its stream's own serializer encodes it by its key, but the
    channel state of an unaligned checkpoint is pickled."""

    def __init__(self, key: int) -> None:
        self.key = key
        self.lock = threading.Lock()


class _HandleSerializer(BatchSerializer):
    def serialize(self, batch: list[Any]) -> bytes:
        return pickle.dumps([h.key for h in batch])

    def deserialize(self, data: bytes | memoryview) -> list[Any]:
        return [_Handle(k) for k in pickle.loads(data)]


@pytest.mark.timeout(120)
def test_unpicklable_in_flight_records_abort_an_unaligned_checkpoint_not_the_job(tmp_path: Path) -> None:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration(
            {
                "taskmanager.numberOfTaskSlots": 2,
                "minicluster.number-of-taskmanagers": 1,
                "web.checkpoints.history": 100_000,  # every failed checkpoint's reason is looked at
                "heartbeat.timeout": "60 s",  # a loaded machine's late heartbeat is no restart this test counts
            }
        )
    )
    env.set_parallelism(2)
    env.set_buffer_timeout(0)  # output queues stay short: the in-flight records are mostly on the input side
    env.enable_checkpointing(100)
    env.get_checkpoint_config().enable_unaligned_checkpoints()
    env.get_checkpoint_config().set_tolerable_checkpoint_failure_number(1000)
    (
        env.from_source(DataGeneratorSource(lambda i: i, 200_000, records_per_second=50_000))
        .map(_Handle)
        .set_serializer(_HandleSerializer())  # records must serialize, even where they stay in one TaskManager
        .key_by(lambda h: h.key % 7)
        .map(lambda h: h.key)
        .sink_to(FileSink.for_row_format(str(tmp_path / "out"), JsonLinesEncoder()).build())
    )
    result = env.execute("unpicklable in flight")
    assert result.num_restarts == 0
    failed = [c for c in result.checkpoints if c.status == "FAILED"]
    assert failed and all("pickle" in c.failure_reason for c in failed), failed  # declined, not failed over
    assert any(c.status == "COMPLETED" for c in result.checkpoints)  # the final one: nothing in flight then
    assert sorted(committed_rows_ints(tmp_path / "out")) == list(range(200_000))


# ---- damaged checkpoint files ------------------------------------------------------------------------------------
DAMAGED_COUNT = 300_000


@dataclass(frozen=True)
class _Taken:
    checkpoint: Path  # a retained unaligned checkpoint holding in-flight data
    savepoint: Path


@pytest.fixture(scope="module")
def taken(tmp_path_factory: pytest.TempPathFactory) -> _Taken:
    """One job on two TaskManagers with unaligned checkpoints, stopped with a savepoint; a copy of a checkpoint
    that holds in-flight data (a job that FINISHED — as after a stop with savepoint — deletes its checkpoints, as
    Flink's)."""
    base = tmp_path_factory.mktemp("damaged")
    env = unaligned_env(2, base / "checkpoints")
    env.get_checkpoint_config().set_max_retained_checkpoints(1000)
    throttled_sums_job(env, DAMAGED_COUNT, base / "out")
    client = env.execute_async("to be damaged")
    try:
        with_data = completed_checkpoints(client, 1, where=lambda c: _persisted(c) > 0)
        (checkpoint,) = (base / "checkpoints").glob(f"*/chk-{with_data[0].checkpoint_id}")
        kept = base / "kept" / checkpoint.name
        shutil.copytree(checkpoint, kept)
        savepoint = client.stop_with_savepoint(str(base / "savepoints"))
    finally:
        client.close()
    return _Taken(checkpoint=kept, savepoint=Path(savepoint))


def _damaged_copy(source: Path, target: Path, file_name: str, offset: int | float) -> tuple[Path, int]:
    """A copy of the checkpoint ``source`` with one bit flipped at ``offset`` of one of its files (negative: from
    the end; a float: that fraction of its size); returns that file and the checkpoint id."""
    shutil.copytree(source, target)
    damaged = target / file_name
    data = bytearray(damaged.read_bytes())
    at = int(len(data) * offset) if isinstance(offset, float) else offset
    data[at] ^= 1 << 3
    damaged.write_bytes(bytes(data))
    return damaged, int(json.loads((source / "_metadata").read_text())["checkpoint_id"])


def _restore_damaged(tmp_path: Path, checkpoint: Path) -> JobExecutionError | CorruptStateError:
    """Restore the job from ``checkpoint``: it must fail — never finish — with the damage named."""
    env = unaligned_env(2, tmp_path / "checkpoints")  # fixed-delay restarts allowed: damage must not restart
    throttled_sums_job(env, DAMAGED_COUNT, tmp_path / "out")
    with pytest.raises((JobExecutionError, CorruptStateError)) as info:
        env.execute("restored from damage", savepoint_path=str(checkpoint))
    return info.value


def _assert_damage_named(error: BaseException, damaged: Path, operator_id: str, checkpoint_id: int) -> None:
    corrupt = error if isinstance(error, CorruptStateError) else error.__cause__
    assert isinstance(corrupt, CorruptStateError), error
    message = str(error)
    assert str(damaged) in message and corrupt.file == str(damaged)
    assert corrupt.operator_id == operator_id and (not operator_id or f"operator '{operator_id}'" in message)
    assert corrupt.checkpoint_id == checkpoint_id and f"checkpoint {checkpoint_id}" in message
    older = f"chk-{checkpoint_id - 1} or earlier" if checkpoint_id > 1 else "an older one"
    assert f"restore from an older checkpoint ({older}, if retained) or savepoint" in message


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.parametrize("offset", [0, 0.5, -1])
def test_a_savepoint_with_a_flipped_bit_in_keyed_state_fails_the_job(
    taken: _Taken, tmp_path: Path, offset: int
) -> None:
    damaged, checkpoint_id = _damaged_copy(taken.savepoint, tmp_path / "savepoint", "sums-keyed-1", offset)
    error = _restore_damaged(tmp_path, damaged.parent)
    assert isinstance(error, CorruptStateError)  # found by the JobMaster before any task was deployed
    _assert_damage_named(error, damaged, "sums", checkpoint_id)
    assert not (tmp_path / "out").exists()  # no task ran: the sink never opened its directory


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.parametrize("offset", [0.3, -1])
def test_a_flipped_bit_in_in_flight_data_of_an_unaligned_checkpoint_fails_the_job(
    taken: _Taken, tmp_path: Path, offset: int
) -> None:
    largest = max(taken.checkpoint.glob("*-channel-*"), key=lambda f: f.stat().st_size)
    assert largest.stat().st_size > 1000, "the checkpoint should hold in-flight records"
    damaged, checkpoint_id = _damaged_copy(taken.checkpoint, tmp_path / "checkpoint", largest.name, offset)
    error = _restore_damaged(tmp_path, damaged.parent)
    assert isinstance(error, CorruptStateError)  # found by the JobMaster before any task was deployed
    _assert_damage_named(error, damaged, largest.name.split("-channel-")[0], checkpoint_id)
    assert not (tmp_path / "out").exists()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("where", ["start", "a state handle", "its checksum", "end"])
def test_a_flipped_bit_in_metadata_fails_the_restore_before_any_task_starts(
    taken: _Taken, tmp_path: Path, where: str
) -> None:
    text = (taken.savepoint / "_metadata").read_text()
    offset = {
        "start": 0,
        "a state handle": text.index('"size": ') + len('"size": '),
        "its checksum": text.index('"checksum": "') + len('"checksum": "'),
        "end": len(text) - 3,
    }[where]
    damaged, checkpoint_id = _damaged_copy(taken.savepoint, tmp_path / "savepoint", "_metadata", offset)
    error = _restore_damaged(tmp_path, damaged.parent)
    assert isinstance(error, CorruptStateError)  # raised by the submission: no task was deployed
    _assert_damage_named(error, damaged, "", checkpoint_id)


class _DamageOnCompletion(MapFunction, CheckpointListener):
    """Subtask 0, once the first checkpoint covering its records completes: flips one bit in the middle of each
    keyed-state file of operator 'sums' in that checkpoint, then fails, so the job restores from it (a min pause
    of minutes keeps a newer checkpoint from completing first)."""

    def __init__(self, checkpoints: Path) -> None:
        self.checkpoints = checkpoints
        self.seen = 0

    def open(self, runtime_context: Any) -> None:
        self.subtask = runtime_context.get_index_of_this_subtask()

    def map(self, value: tuple[int, int, int]) -> tuple[int, int, int]:
        self.seen += 1
        return value

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        done = self.checkpoints / "damaged"
        if self.subtask != 0 or self.seen == 0 or done.exists():
            return
        files = sorted(self.checkpoints.glob(f"*/chk-{checkpoint_id}/sums-keyed-*"))
        assert files, f"no keyed state of 'sums' in checkpoint {checkpoint_id}"
        for f in files:
            data = bytearray(f.read_bytes())
            data[len(data) // 2] ^= 0x10
            f.write_bytes(bytes(data))
        done.write_text("\n".join(str(f) for f in files))
        raise RuntimeError(f"failing over onto the damaged checkpoint {checkpoint_id}")


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_failover_onto_a_damaged_checkpoint_fails_the_job_without_restarting_it(tmp_path: Path) -> None:
    """The restore a failover starts is checked by the tasks as they read their state: the job fails — whatever
    restarts the strategy still allows — naming the damaged file, and never finishes on wrong state."""
    checkpoints, out = tmp_path / "checkpoints", tmp_path / "out"
    env = chaos_env(CheckpointingMode.EXACTLY_ONCE)  # fixed-delay, 20 restarts allowed
    env.set_parallelism(2)
    cfg = env.get_checkpoint_config()
    cfg.set_checkpoint_storage(str(checkpoints))
    cfg.set_checkpoint_interval(200)
    cfg.set_min_pause_between_checkpoints(600_000)
    (
        env.from_source(DataGeneratorSource(event, 10**9, records_per_second=20_000), source_name="events")
        .uid("events")
        .map(lambda e: (e[0], e[1], e[1]))
        .key_by(lambda e: e[0])
        .reduce(lambda a, b: (b[0], b[1], a[2] + b[1]))
        .uid("sums")
        .map(_DamageOnCompletion(checkpoints))
        .uid("damage")
        .sink_to(FileSink.for_row_format(str(out), JsonLinesEncoder()).build())
        .uid("files")
    )
    with pytest.raises(JobExecutionError) as info:
        env.execute("failover onto damage")
    damaged = (checkpoints / "damaged").read_text().split("\n")
    corrupt = info.value.__cause__
    assert isinstance(corrupt, CorruptStateError), info.value
    assert corrupt.file in damaged and corrupt.operator_id == "sums"
    assert "The job is not restarted" in str(info.value)
