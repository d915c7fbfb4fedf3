"""Incremental checkpoints of the RocksDB backend on a real rocksdict instance (Flink's
``RocksIncrementalSnapshotStrategy`` and ``RocksDBIncrementalRestoreOperation``): what is uploaded, what is
referenced, restores at the same and at another key-group range, into the heap backend, and damage."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from strom.api.state import MapStateDescriptor, ValueStateDescriptor
from strom.exceptions import CheckpointStorageError, CorruptStateError
from strom.runtime.checkpoint.metadata import IncrementalRemoteKeyedStateHandle
from strom.runtime.checkpoint.snapshot import IncrementalKeyedSnapshot, OperatorSnapshot
from strom.runtime.checkpoint.storage import CheckpointStorageLocation
from strom.runtime.state.heap_keyed_state_backend import HeapKeyedStateBackend
from strom.runtime.state.incremental_state_handler import prepare_keyed_snapshot
from strom.runtime.state.key_groups import KeyGroupRange
from strom.runtime.state.rocksdb.rocksdb_incremental_restore_operation import (
    RocksDBIncrementalRestoreOperation,
    canonical_key_groups,
)
from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend
from strom.runtime.state.task_local_state_store import LocalRecoveryConfig, TaskLocalStateStore

ALL = KeyGroupRange(0, 127)
KEYS = 4000


class Harness:
    """Backends in ``tmp_path``, checkpoints into ``<tmp>/ckpt/job/chk-<n>`` (shared: ``<tmp>/ckpt/job/shared``)."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.made: list[RocksDBKeyedStateBackend] = []

    def backend(self) -> RocksDBKeyedStateBackend:
        b = RocksDBKeyedStateBackend(max_parallelism=128, path=str(self.tmp / f"db-{len(self.made)}"))
        self.made.append(b)
        return b

    def checkpoint(
        self,
        backend: RocksDBKeyedStateBackend,
        cid: int,
        key_groups: KeyGroupRange = ALL,
        local: TaskLocalStateStore | None = None,
    ) -> tuple[IncrementalRemoteKeyedStateHandle, int]:
        backend.prepare_incremental_snapshot(cid, key_groups)
        snap = OperatorSnapshot(keyed_supplier=backend.async_snapshot()).resolve()
        assert snap.keyed_incremental is not None
        location = CheckpointStorageLocation(uri=str(self.tmp / "ckpt" / "job" / f"chk-{cid}"))
        handle = snap.keyed_incremental.upload(location, f"op-{cid}", local=local)
        return handle, snap.keyed_incremental.uploaded_bytes

    def restore(
        self,
        handles: list[IncrementalRemoteKeyedStateHandle],
        key_groups: KeyGroupRange,
        *,
        reuse: bool = True,
        local: TaskLocalStateStore | None = None,
    ) -> RocksDBKeyedStateBackend:
        b = self.backend()
        RocksDBIncrementalRestoreOperation(
            b,
            handles,
            key_groups,
            operator_id="op",
            checkpoint_id=handles[0].checkpoint_id,
            reuse_shared=reuse,
            local=local,
        ).restore()
        return b


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    h = Harness(tmp_path)
    yield h
    for b in h.made:
        b.dispose()


def fill(backend: RocksDBKeyedStateBackend, keys: range, seed: int) -> None:
    rng = random.Random(seed)
    state = backend.get_state(ValueStateDescriptor("v"))
    for k in keys:
        backend.current_key = k
        state.update(rng.randbytes(1024))  # incompressible: bytes uploaded track bytes changed


def values(backend: RocksDBKeyedStateBackend) -> dict[Any, bytes]:
    return dict(backend.get_table("v"))


def test_the_second_checkpoint_after_changing_one_percent_of_keys_uploads_only_new_sst_files(
    harness: Harness,
) -> None:
    b = harness.backend()
    fill(b, range(KEYS), seed=1)
    first, uploaded_first = harness.checkpoint(b, 1)
    assert uploaded_first >= first.size * 0.99  # nothing to reference yet: a full upload
    b.notify_checkpoint_complete(1)
    fill(b, range(KEYS // 100), seed=2)
    second, uploaded_second = harness.checkpoint(b, 2)
    assert set(first.shared) < set(second.shared)
    for name in first.shared:  # referenced, not uploaded again
        assert second.shared[name] == first.shared[name]
    new = set(second.shared) - set(first.shared)
    assert uploaded_second == sum(second.shared[n].size for n in new) + sum(h.size for h in second.private.values())
    assert uploaded_second < 0.05 * second.size, (uploaded_second, second.size)
    assert not [p for p in os.listdir(b.path) if p.startswith(".strom-chk-")]  # local checkpoints removed


def test_local_recovery_keeps_every_file_of_an_incremental_checkpoint_and_restores_without_the_remote_ones(
    harness: Harness,
) -> None:
    """state.backend.local-recovery: the second checkpoint's local directory holds the files it uploaded and those it
    references from the first (hard links); with the checkpoint directory's files gone, the restore reads them all
    locally — at the same key-group range and through the canonical form — and counts no remote read."""
    import shutil

    store = LocalRecoveryConfig(enabled=True, root=str(harness.tmp / "local")).store_for("job", "vtx", 0)
    assert store is not None
    b = harness.backend()
    fill(b, range(KEYS), seed=1)
    first, _ = harness.checkpoint(b, 1, local=store)
    b.notify_checkpoint_complete(1)
    store.confirm_checkpoint(1)
    fill(b, range(KEYS // 100), seed=2)
    second, _ = harness.checkpoint(b, 2, local=store)
    store.confirm_checkpoint(2)  # prunes the first checkpoint's local directory
    assert store.checkpoint_ids() == [2]
    referenced = set(first.shared) & set(second.shared)
    assert referenced, "the second checkpoint references files of the first"
    kept = set(os.listdir(store.checkpoint_dir(2)))
    assert {h.uri.rsplit("/", 1)[-1] for h in (*second.shared.values(), *second.private.values())} == kept
    shutil.rmtree(harness.tmp / "ckpt")  # the checkpoint storage is unreachable: only the local copies remain
    restored = harness.restore([second], ALL, local=store)
    assert values(restored) == values(b)
    files = len(second.shared) + len(second.private)
    stats = store.statistics()
    assert (stats.local_reads, stats.remote_reads, stats.mismatches) == (files, 0, 0)
    assert stats.local_bytes == second.size
    blobs = canonical_key_groups(
        [second], ALL, max_parallelism=128, scratch_dir=str(harness.tmp), operator_id="op", checkpoint_id=2, local=store
    )
    heap = HeapKeyedStateBackend(max_parallelism=128)
    heap.restore(blobs)
    assert dict(heap.get_table("v")) == values(b)


def test_a_damaged_local_copy_of_an_sst_file_is_downloaded_instead(harness: Harness) -> None:
    store = LocalRecoveryConfig(enabled=True, root=str(harness.tmp / "local")).store_for("job", "vtx", 0)
    assert store is not None
    b = harness.backend()
    fill(b, range(500), seed=1)
    handle, _ = harness.checkpoint(b, 1, local=store)
    name, victim = next(iter(handle.shared.items()))
    local_copy = store.local_path(1, victim.uri)
    os.remove(local_copy)  # a hard link to the live instance's file: damage a copy of its own
    Path(local_copy).write_bytes(b"damaged")
    restored = harness.restore([handle], ALL, local=store)
    assert values(restored) == values(b)
    stats = store.statistics()
    assert (stats.remote_reads, stats.remote_bytes) == (1, victim.size), name
    assert stats.local_reads == len(handle.shared) + len(handle.private) - 1


def test_a_checkpoint_not_confirmed_complete_is_never_referenced(harness: Harness) -> None:
    b = harness.backend()
    fill(b, range(500), seed=1)
    harness.checkpoint(b, 1)
    b.notify_checkpoint_aborted(1)
    second, uploaded = harness.checkpoint(b, 2)  # 1 never completed: everything again
    assert uploaded >= second.size * 0.99
    b.notify_checkpoint_complete(2)
    third, uploaded = harness.checkpoint(b, 3)
    assert set(third.shared) == set(second.shared) and uploaded == sum(h.size for h in third.private.values())


def test_a_savepoint_stays_canonical(harness: Harness) -> None:
    b = harness.backend()
    fill(b, range(10), seed=1)

    class Op:
        keyed_backend = b
        runtime_context = type(
            "Ctx",
            (),
            {
                "info": type(
                    "Info",
                    (),
                    {
                        "max_parallelism": 128,
                        "parallelism": 1,
                        "subtask_index": 0,
                        "state_backend_options": (("execution.checkpointing.incremental", True),),
                    },
                )
            },
        )

    prepare_keyed_snapshot(Op, 6, is_savepoint=False)  # an operator that never took its snapshot
    prepare_keyed_snapshot(Op, 7, is_savepoint=True)
    canonical = b.async_snapshot()
    assert not isinstance(canonical, IncrementalKeyedSnapshot) and isinstance(canonical(), dict)
    prepare_keyed_snapshot(Op, 8, is_savepoint=False)
    supplier = b.async_snapshot()
    assert OperatorSnapshot(keyed_supplier=supplier).resolve().keyed_incremental is supplier
    assert supplier() == b.snapshot()  # called as a plain supplier: canonical blobs of the local checkpoint
    assert not [p for p in os.listdir(b.path) if p.startswith(".strom-chk-")]
    prepare_keyed_snapshot(Op, 9, is_savepoint=False)
    dropped = b.async_snapshot()
    OperatorSnapshot(keyed_supplier=dropped).cancel()  # an aborted checkpoint: the local checkpoint goes
    assert not [p for p in os.listdir(b.path) if p.startswith(".strom-chk-")]


def test_restore_at_the_same_range_opens_the_database_as_is_and_uploads_only_new_files(harness: Harness) -> None:
    b = harness.backend()
    fill(b, range(1000), seed=1)
    m = b.get_state(MapStateDescriptor("m"))
    b.current_key = "k"
    m.put("x", 1)
    handle, _ = harness.checkpoint(b, 1)
    restored = harness.restore([handle], ALL)
    assert values(restored) == values(b)
    restored.current_key = "k"
    assert restored.get_state(MapStateDescriptor("m")).get("x") == 1
    fill(restored, range(5), seed=3)
    after, uploaded = harness.checkpoint(restored, 2)
    assert set(handle.shared) <= set(after.shared)
    assert uploaded < 0.2 * after.size  # the restored files are in shared/ already


def test_without_reuse_the_first_checkpoint_after_a_restore_uploads_every_file(harness: Harness) -> None:
    b = harness.backend()
    fill(b, range(500), seed=1)
    handle, _ = harness.checkpoint(b, 1)
    restored = harness.restore([handle], ALL, reuse=False)  # NO_CLAIM
    after, uploaded = harness.checkpoint(restored, 2)
    assert uploaded >= after.size * 0.99
    assert not set(h.uri for h in after.shared.values()) & set(h.uri for h in handle.shared.values())


def test_rescaling_clips_each_old_database_to_the_new_key_groups(harness: Harness) -> None:
    left, right = harness.backend(), harness.backend()
    both = harness.backend()  # what p=1 would hold
    lo, hi = KeyGroupRange(0, 63), KeyGroupRange(64, 127)
    for k in range(2000):
        target = left if left.key_group_of(k) in lo else right
        fill(target, range(k, k + 1), seed=k)
        fill(both, range(k, k + 1), seed=k)
    h_left, _ = harness.checkpoint(left, 1, lo)
    h_right, _ = harness.checkpoint(right, 1, hi)
    merged = harness.restore([h_left, h_right], ALL)  # p=2 -> 1
    assert values(merged) == values(both)
    quarter = KeyGroupRange(32, 95)  # p=2 -> 4 style: a range across both old ones
    part = harness.restore([h_left, h_right], quarter)
    assert values(part) == {k: v for k, v in values(both).items() if both.key_group_of(k) in quarter}


def test_an_incremental_checkpoint_restores_into_the_heap_backend_through_the_canonical_form(
    harness: Harness,
) -> None:
    b = harness.backend()
    fill(b, range(300), seed=1)
    handle, _ = harness.checkpoint(b, 1)
    half = KeyGroupRange(0, 63)
    blobs = canonical_key_groups(
        [handle], half, max_parallelism=128, scratch_dir=str(harness.tmp), operator_id="op", checkpoint_id=1
    )
    assert blobs and set(blobs) <= set(range(64))
    heap = HeapKeyedStateBackend(max_parallelism=128)
    heap.restore(blobs, half)
    assert dict(heap.get_table("v")) == {k: v for k, v in values(b).items() if b.key_group_of(k) in half}


def test_a_missing_shared_file_is_refused_naming_it_and_the_checkpoint(harness: Harness) -> None:
    b = harness.backend()
    fill(b, range(300), seed=1)
    handle, _ = harness.checkpoint(b, 4)
    victim = next(iter(handle.shared.values()))
    os.remove(victim.uri)
    with pytest.raises(CheckpointStorageError) as e:
        harness.restore([handle], ALL)
    assert victim.uri in str(e.value) and "checkpoint 4" in str(e.value) and "hint:" in str(e.value)


def test_a_corrupt_shared_file_is_refused_naming_it(harness: Harness) -> None:
    b = harness.backend()
    fill(b, range(300), seed=1)
    handle, _ = harness.checkpoint(b, 5)
    victim = next(iter(handle.shared.values()))
    data = bytearray(Path(victim.uri).read_bytes())
    data[len(data) // 2] ^= 0xFF
    Path(victim.uri).write_bytes(bytes(data))
    with pytest.raises(CorruptStateError) as e:
        harness.restore([handle], KeyGroupRange(0, 63))
    assert victim.uri in str(e.value) and "checkpoint 5" in str(e.value)
    assert "checksum" in str(e.value)


def test_every_column_family_is_in_the_snapshot(harness: Harness) -> None:
    b = harness.backend()
    table = b.get_table("_timers")  # an internal table: a column family of its own
    b.current_key = "t"
    table["t"] = 42
    fill(b, range(3), seed=1)
    handle, _ = harness.checkpoint(b, 1)
    restored = harness.restore([handle], ALL)
    assert dict(restored.get_table("_timers")) == {"t": 42}


# -- configuration ----------------------------------------------------------------------------------------------
def test_pyflinks_argument_and_flinks_keys_turn_incremental_checkpoints_on() -> None:
    from strom import Configuration
    from strom.config import CheckpointingOptions
    from strom.datastream import EmbeddedRocksDBStateBackend, StreamExecutionEnvironment
    from strom.exceptions import InvalidProgramError
    from strom.runtime.state.incremental_state_handler import incremental_enabled
    from strom.runtime.state.state_backend import state_backend_options

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_state_backend(EmbeddedRocksDBStateBackend(enable_incremental_checkpointing=True))
    assert env.get_configuration().get(CheckpointingOptions.INCREMENTAL_CHECKPOINTS) is True
    assert EmbeddedRocksDBStateBackend(True).is_incremental_checkpoints_enabled()
    env.set_state_backend(EmbeddedRocksDBStateBackend())  # None: the configured value stays
    assert env.get_configuration().get(CheckpointingOptions.INCREMENTAL_CHECKPOINTS) is True
    with pytest.raises(InvalidProgramError, match="expected enable_incremental_checkpointing to be True, False"):
        EmbeddedRocksDBStateBackend("yes")  # type: ignore[arg-type]
    flink1 = Configuration({"state.backend.type": "rocksdb", "state.backend.incremental": "true"})
    assert flink1.get(CheckpointingOptions.INCREMENTAL_CHECKPOINTS) is True
    assert incremental_enabled(state_backend_options(flink1))  # reaches the TaskManagers' backends
    assert not incremental_enabled(state_backend_options(Configuration({"state.backend.type": "rocksdb"})))


def test_the_compaction_style_is_flinks_key_and_unknown_styles_are_refused(tmp_path: Path) -> None:
    from strom import Configuration
    from strom.exceptions import ConfigurationError
    from strom.runtime.state.state_backend import state_backend_options

    conf = Configuration({"state.backend.type": "rocksdb", "state.backend.rocksdb.compaction.style": "FIFO"})
    with pytest.raises(ConfigurationError, match=r"compaction\.style to be one of LEVEL, UNIVERSAL; got 'FIFO'"):
        state_backend_options(conf)
    b = RocksDBKeyedStateBackend(max_parallelism=128, path=str(tmp_path / "db"), compaction_style="UNIVERSAL")
    try:
        fill(b, range(10), seed=1)
        assert len(values(b)) == 10
    finally:
        b.dispose()


def test_the_state_processor_api_reads_a_retained_incremental_checkpoint(harness: Harness) -> None:
    from strom.runtime.checkpoint.metadata import CheckpointMetadata, OperatorState
    from strom.state.savepoint import ExistingSavepoint

    b = harness.backend()
    fill(b, range(200), seed=1)
    handle, _ = harness.checkpoint(b, 1)
    location = CheckpointStorageLocation(uri=str(harness.tmp / "ckpt" / "job" / "chk-1"))
    op = OperatorState(operator_id="sums", parallelism=1, max_parallelism=128, incremental={0: handle})
    location.write_metadata(CheckpointMetadata(1, "job", 1, False, {"sums": op}, location.uri))
    savepoint = ExistingSavepoint.load(location.uri)
    state = savepoint.operator_state("sums")
    read = {k: v for group in savepoint.key_groups(state) for k, v in group.states["v"][0].items()}
    assert read == values(b)
    half = [g.key_group for g in savepoint.key_groups(state, range(64))]
    assert half and all(kg < 64 for kg in half)


def test_an_instance_whose_states_exist_already_takes_the_same_range_by_copying(harness: Harness) -> None:
    b = harness.backend()
    fill(b, range(100), seed=1)
    handle, _ = harness.checkpoint(b, 1)
    target = harness.backend()
    early = target.get_state(ValueStateDescriptor("v"))  # registered before the restore: its column family stays
    RocksDBIncrementalRestoreOperation(
        target, [handle], ALL, operator_id="op", checkpoint_id=1, reuse_shared=True
    ).restore()
    target.current_key = 7
    assert early.value() == values(b)[7]


def test_a_checkpoint_failing_after_an_upload_discards_only_the_files_that_upload_wrote(harness: Harness) -> None:
    b = harness.backend()
    fill(b, range(300), seed=1)
    first, _ = harness.checkpoint(b, 1)
    b.notify_checkpoint_complete(1)
    fill(b, range(3), seed=2)
    b.prepare_incremental_snapshot(2, ALL)
    snap = OperatorSnapshot(keyed_supplier=b.async_snapshot()).resolve().keyed_incremental
    assert snap is not None
    second = snap.upload(CheckpointStorageLocation(uri=str(harness.tmp / "ckpt" / "job" / "chk-2")), "op-2")
    new = [h for name, h in second.shared.items() if name not in first.shared]
    assert new and snap.new_shared == new
    snap.discard_uploads()  # another operator of the task failed: checkpoint 2 is declined
    assert not any(os.path.exists(h.uri) for h in new)
    assert all(os.path.exists(h.uri) for h in first.shared.values())
    third, _ = harness.checkpoint(b, 3)  # 2 is no base: its files are uploaded anew
    assert not {h.uri for h in third.shared.values()} & {h.uri for h in new}


def _timers(backend: RocksDBKeyedStateBackend) -> list[tuple[int, Any, Any]]:
    assert backend.priority_queue_factory is not None
    return backend.priority_queue_factory.create("event_t").items()


def test_timers_in_rocksdb_travel_in_their_own_column_families(harness: Harness) -> None:
    """ROCKSDB timers (the default factory) live in ``_timer_queue/*`` column families: an incremental checkpoint
    carries them, a restore as is and a clipped one hand them to the new backend's timer factory (never to its
    states), and the canonical form carries them as the heap timers' table."""
    b = harness.backend()
    assert b.priority_queue_factory is not None
    queue = b.priority_queue_factory.create("event_t")
    for k in range(200):
        queue.add(1000 + k, k, "ns")
    fill(b, range(200), seed=1)
    handle, _ = harness.checkpoint(b, 1)
    expected = _timers(b)
    same = harness.restore([handle], ALL)
    assert not any(name.startswith("_timer_queue/") for name in same.column_families())
    assert _timers(same) == expected
    half = KeyGroupRange(0, 63)
    clipped = harness.restore([handle], half)
    assert _timers(clipped) == [t for t in expected if b.key_group_of(t[1]) in half]
    blobs = canonical_key_groups(
        [handle], None, max_parallelism=128, scratch_dir=str(harness.tmp), operator_id="op", checkpoint_id=1
    )
    heap = HeapKeyedStateBackend(max_parallelism=128)
    heap.restore(blobs)
    table = heap.get_namespaced_table("_timer_state/event_t")  # key -> {(namespace, time): True}
    assert {(key, ns_time) for key, entries in table.items() for ns_time in entries} == {
        (k, ("ns", t)) for t, k, _ in expected
    }
