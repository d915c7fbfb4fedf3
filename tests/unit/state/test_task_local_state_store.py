"""Local recovery's ``TaskLocalStateStore``: the copy written beside the checkpoint, pruned on confirmation and abort,
read instead of the remote file only when it matches the handle, and the slot preference of a restarted subtask."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from strom.runtime.checkpoint.storage import CheckpointStorageLocation, read_state
from strom.runtime.resourcemanager.slot_manager import SlotManager, TaskManagerRegistration
from strom.runtime.state.task_local_state_store import (
    LocalRecoveryConfig,
    TaskLocalStateStore,
    discard_job,
    local_state_root,
)


def _store(tmp_path: Path) -> TaskLocalStateStore:
    store = LocalRecoveryConfig(enabled=True, root=str(tmp_path / "local")).store_for("job1", "vtx", 1)
    assert store is not None
    return store


def _location(tmp_path: Path, checkpoint_id: int) -> CheckpointStorageLocation:
    return CheckpointStorageLocation(uri=str(tmp_path / "remote" / "job1" / f"chk-{checkpoint_id}"))


def test_off_keeps_no_store(tmp_path: Path) -> None:
    assert LocalRecoveryConfig(enabled=False, root=str(tmp_path)).store_for("j", "v", 0) is None


def test_root_defaults_to_the_working_directory(tmp_path: Path) -> None:
    assert local_state_root("", str(tmp_path)) == str(tmp_path / "localState")
    assert local_state_root(f"{tmp_path}/a,{tmp_path}/b", "/ignored") == f"{tmp_path}/a"


def test_write_keeps_a_local_copy_per_checkpoint_and_restore_reads_it(tmp_path: Path) -> None:
    store = _store(tmp_path)
    handles = _location(tmp_path, 3).write_state_slices("op-keyed-1", {0: b"aaaa", 5: b"bbbbbb"}, local=store)
    op = _location(tmp_path, 3).write_state("op-op-1", b"operator", local=store)
    local = Path(store.checkpoint_dir(3))
    assert local == tmp_path / "local" / "jid_job1" / "vtx_vtx_sti_1" / "chk_3"
    assert (local / "op-keyed-1").read_bytes() == b"aaaabbbbbb"
    assert (local / "op-op-1").read_bytes() == b"operator"
    os.remove(tmp_path / "remote" / "job1" / "chk-3" / "op-keyed-1")  # only the local copy can serve it now
    assert read_state(handles[5], checkpoint_id=3, local=store) == b"bbbbbb"
    assert read_state(op, checkpoint_id=3, local=store) == b"operator"
    stats = store.statistics()
    assert (stats.local_reads, stats.local_bytes, stats.remote_reads, stats.mismatches) == (2, 14, 0, 0)


def test_a_streamed_write_copies_each_part_as_it_comes_and_an_empty_stream_writes_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path)
    made: list[int] = []

    def parts() -> Iterator[tuple[int, bytes]]:
        for kg in (2, 7):
            made.append(kg)
            yield kg, bytes([kg]) * 100

    handles = _location(tmp_path, 4).write_state_slices("op-keyed-1", parts(), local=store)
    assert made == [2, 7] and sorted(handles) == [2, 7]
    assert (Path(store.checkpoint_dir(4)) / "op-keyed-1").read_bytes() == bytes([2]) * 100 + bytes([7]) * 100
    assert read_state(handles[7], checkpoint_id=4) == bytes([7]) * 100
    assert _location(tmp_path, 4).write_state_slices("op-keyed-2", iter(()), local=store) == {}
    assert not (tmp_path / "remote" / "job1" / "chk-4" / "op-keyed-2").exists()
    assert not (Path(store.checkpoint_dir(4)) / "op-keyed-2").exists()


def test_a_stream_that_fails_leaves_no_local_copy(tmp_path: Path) -> None:
    store = _store(tmp_path)

    def parts() -> Iterator[tuple[int, bytes]]:
        yield 1, b"a"
        raise RuntimeError("the snapshot failed")

    with pytest.raises(RuntimeError, match="the snapshot failed"):
        _location(tmp_path, 5).write_state_slices("op-keyed-1", parts(), local=store)
    assert os.listdir(store.checkpoint_dir(5)) == []


def test_a_savepoint_keeps_no_local_copy(tmp_path: Path) -> None:
    store = _store(tmp_path)
    CheckpointStorageLocation(uri=str(tmp_path / "savepoint-abc")).write_state("op-op-1", b"x", local=store)
    assert store.checkpoint_ids() == []


def test_confirm_prunes_older_checkpoints_and_abort_removes_its_own(tmp_path: Path) -> None:
    store = _store(tmp_path)
    for cid in (1, 2, 3, 4):
        _location(tmp_path, cid).write_state("op-op-1", b"s%d" % cid, local=store)
    store.confirm_checkpoint(3)
    assert store.checkpoint_ids() == [3, 4]
    store.abort_checkpoint(4)
    assert store.checkpoint_ids() == [3]
    discard_job(str(tmp_path / "local"), "job1")
    assert not (tmp_path / "local" / "jid_job1").exists()


def test_a_mismatched_local_copy_falls_back_to_the_remote_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = _store(tmp_path)
    handle = _location(tmp_path, 2).write_state("op-op-1", b"remote bytes", local=store)
    local_copy = Path(store.local_path(2, handle.uri))
    local_copy.write_bytes(b"remote bytez")  # same size, other bytes
    with caplog.at_level(logging.WARNING):
        assert read_state(handle, checkpoint_id=2, local=store) == b"remote bytes"
    assert str(local_copy) in caplog.text
    stats = store.statistics()
    assert (stats.local_reads, stats.remote_reads, stats.remote_bytes, stats.mismatches) == (0, 1, 12, 1)


def test_a_missing_local_copy_or_another_checkpoint_reads_remotely(tmp_path: Path) -> None:
    store = _store(tmp_path)
    handle = _location(tmp_path, 2).write_state("op-op-1", b"state", local=store)
    assert read_state(handle, checkpoint_id=7, local=store) == b"state"  # no local chk_7
    store.abort_checkpoint(2)
    assert read_state(handle, checkpoint_id=2, local=store) == b"state"
    assert store.statistics().remote_reads == 2 and store.statistics().local_reads == 0


def _registration(tm_id: str, resource_id: str, slots: int = 1) -> TaskManagerRegistration:
    return TaskManagerRegistration(
        tm_id=tm_id, rpc_address=("h", 1), data_address=("h", 2), num_slots=slots, pid=1, resource_id=resource_id
    )


def test_slots_go_to_the_preferred_resource_ids() -> None:
    sm = SlotManager()
    for tm_id, rid in (("tm-2", "tm-2"), ("tm-3", "tm-1"), ("tm-4", "tm-4")):
        sm.register_task_manager(_registration(tm_id, rid))
    offers = sm.allocate("job", 3, ["tm-1", "tm-2", "gone"])
    assert [o.tm_id for o in offers[:2]] == ["tm-3", "tm-2"]
    assert [o.resource_id for o in offers] == ["tm-1", "tm-2", "tm-4"]
    sm.validate()


def test_a_preferred_task_manager_without_free_slots_is_not_forced() -> None:
    sm = SlotManager()
    sm.register_task_manager(_registration("tm-1", "tm-1"))
    sm.register_task_manager(_registration("tm-2", "tm-2"))
    offers = sm.allocate("job", 2, ["tm-1", "tm-1"])
    assert sorted(o.tm_id for o in offers) == ["tm-1", "tm-2"]
    assert offers[0].tm_id == "tm-1"
    sm.validate()
