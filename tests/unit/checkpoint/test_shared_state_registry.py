"""The shared-state registry (Flink's ``SharedStateRegistryImpl``): reference counts over the retained checkpoints,
subsumption, aborted checkpoints, rebuild after a failover, restore modes — pure, and through ``CheckpointStorage``."""

from __future__ import annotations

from pathlib import Path

import pytest

from strom.exceptions import CheckpointStorageError, ConfigurationError
from strom.runtime.checkpoint.metadata import (
    CheckpointMetadata,
    IncrementalRemoteKeyedStateHandle,
    OperatorState,
    StateHandle,
)
from strom.runtime.checkpoint.shared_state_registry import RestoreMode, SharedStateRegistry
from strom.runtime.checkpoint.storage import (
    CheckpointStorage,
    CheckpointStorageLocation,
    resolve_checkpoint_pointer,
    verify_state_files,
)

JOB = "0123456789abcdef0123456789abcdef"


def h(name: str) -> StateHandle:
    return StateHandle(uri=f"shared/{name}", size=1)


def uris(handles: list[StateHandle]) -> list[str]:
    return [x.uri for x in handles]


# -- the pure registry ---------------------------------------------------------------------------------------
def test_a_file_is_handed_back_once_no_retained_checkpoint_references_it() -> None:
    r = SharedStateRegistry()
    r.register_checkpoint(1, [h("a"), h("b")])
    r.register_checkpoint(2, [h("b"), h("c")])
    r.validate()
    assert r.references("shared/b") == {1, 2}
    assert uris(r.unregister_checkpoint(1)) == ["shared/a"]  # b still referenced by 2
    r.validate()
    r.register_checkpoint(3, [h("c"), h("d")])
    assert uris(r.unregister_checkpoint(2)) == ["shared/b"]
    assert uris(r.unregister_checkpoint(3)) == ["shared/c", "shared/d"]
    assert len(r) == 0 and r.checkpoints() == []
    r.validate()


def test_unregistering_an_unknown_checkpoint_hands_back_nothing() -> None:
    r = SharedStateRegistry()
    r.register_checkpoint(1, [h("a")])
    assert r.unregister_checkpoint(7) == []
    assert r.is_registered("shared/a")


def test_an_aborted_checkpoint_deletes_only_the_files_no_registered_checkpoint_references() -> None:
    r = SharedStateRegistry()
    r.register_checkpoint(1, [h("a")])
    aborted = [h("a"), h("new"), h("new")]  # reused a, uploaded new (listed twice: once handed back)
    assert uris(r.unregistered(aborted)) == ["shared/new"]
    assert r.is_registered("shared/a")


def test_files_of_a_checkpoint_restored_in_no_claim_mode_are_never_handed_back() -> None:
    r = SharedStateRegistry()
    r.register_checkpoint(5, [h("theirs"), h("both")], owned=False)
    r.register_checkpoint(6, [h("both"), h("mine")])
    assert uris(r.unregister_checkpoint(5)) == []
    assert uris(r.unregister_checkpoint(6)) == ["shared/mine"]  # 'both' came from the restored checkpoint
    r.validate()


def test_rebuild_from_the_retained_checkpoints_counts_as_before(tmp_path: Path) -> None:
    first, second = _metadata(tmp_path, 1, ["a", "b"]), _metadata(tmp_path, 2, ["b", "c"])
    live = SharedStateRegistry()
    live.register_checkpoint(1, first.operator_states["op"].shared_handles())
    live.register_checkpoint(2, second.operator_states["op"].shared_handles())
    rebuilt = SharedStateRegistry.rebuild([(first, True), (second, True)])
    rebuilt.validate()
    for name in "abc":
        uri = _shared_uri(tmp_path, name)
        assert rebuilt.references(uri) == live.references(uri)
    assert uris(rebuilt.unregister_checkpoint(1)) == [_shared_uri(tmp_path, "a")]


@pytest.mark.parametrize(("text", "mode"), [("claim", RestoreMode.CLAIM), ("NO_CLAIM", RestoreMode.NO_CLAIM)])
def test_restore_modes_parse(text: str, mode: RestoreMode) -> None:
    assert RestoreMode.parse(text) is mode


def test_an_unknown_restore_mode_is_refused_naming_the_choices() -> None:
    with pytest.raises(ConfigurationError, match=r"CLAIM or NO_CLAIM; got 'LEGACY'"):
        RestoreMode.parse("LEGACY")


# -- through CheckpointStorage (real files) -------------------------------------------------------------------
def _shared_uri(base: Path, name: str, job: str = JOB) -> str:
    return f"{base}/ckpt/{job}/shared/{name}"


def _metadata(base: Path, cid: int, shared: list[str], *, job: str = JOB) -> CheckpointMetadata:
    """A completed incremental checkpoint of ``job`` referencing the shared files ``shared`` (written)."""
    location = CheckpointStorageLocation(uri=f"{base}/ckpt/{job}/chk-{cid}")
    handles = {}
    for name in shared:
        local = base / f"local-{name}"
        local.write_bytes(name.encode() * 10)
        handles[name] = location.upload_file(name, str(local), shared=True)
    (base / "local-MANIFEST").write_bytes(b"manifest %d" % cid)
    private = {"MANIFEST": location.upload_file("op-0-rocksdb-MANIFEST", str(base / "local-MANIFEST"), shared=False)}
    inc = IncrementalRemoteKeyedStateHandle(
        key_group_start=0, key_group_end=127, checkpoint_id=cid, shared=handles, private=private
    )
    op = OperatorState(operator_id="op", parallelism=1, max_parallelism=128, incremental={0: inc})
    metadata = CheckpointMetadata(
        checkpoint_id=cid,
        job_id=job,
        timestamp_ms=1,
        is_savepoint=False,
        operator_states={"op": op},
        external_pointer=location.uri,
    )
    location.write_metadata(metadata)
    return metadata


def _shared_files(base: Path, job: str = JOB) -> set[str]:
    directory = base / "ckpt" / job / "shared"
    return {p.name for p in directory.iterdir()} if directory.exists() else set()


def test_subsumed_checkpoints_take_the_shared_files_only_they_referenced_one_checkpoint_later(tmp_path: Path) -> None:
    storage = CheckpointStorage(f"{tmp_path}/ckpt", JOB, num_retained=1)
    storage.add_completed(_metadata(tmp_path, 1, ["a", "b"]))
    storage.add_completed(_metadata(tmp_path, 2, ["b", "c"]))
    assert not (tmp_path / "ckpt" / JOB / "chk-1").exists()  # subsumed: its directory goes at once
    # a task told late that 2 completed still references the files of 1 in checkpoint 3: they stay until 3 is in
    assert _shared_files(tmp_path) == {"a", "b", "c"}
    storage.add_completed(_metadata(tmp_path, 3, ["a", "d"]))  # the late task's checkpoint references 'a'
    assert _shared_files(tmp_path) == {"a", "b", "c", "d"}
    storage.add_completed(_metadata(tmp_path, 4, ["d"]))
    assert _shared_files(tmp_path) == {"a", "d"}  # b and c were only 2's
    storage.add_completed(_metadata(tmp_path, 5, ["e"]))
    assert _shared_files(tmp_path) == {"d", "e"}
    storage.registry.validate()


def test_a_checkpoint_referencing_a_deleted_shared_file_is_recognized(tmp_path: Path) -> None:
    storage = CheckpointStorage(f"{tmp_path}/ckpt", JOB, num_retained=1)
    storage.add_completed(_metadata(tmp_path, 1, ["a"]))
    storage.add_completed(_metadata(tmp_path, 2, ["b"]))
    storage.add_completed(_metadata(tmp_path, 3, ["c"]))  # 'a' deleted
    stale = _metadata(tmp_path, 4, ["c"]).operator_states["op"].shared_handles()
    assert storage.registry.discarded_among(stale) == []
    a = StateHandle(uri=_shared_uri(tmp_path, "a"), size=10)
    assert storage.registry.discarded_among([a, *stale]) == [a]


def test_discovered_checkpoints_rebuild_the_registry_after_a_failover(tmp_path: Path) -> None:
    storage = CheckpointStorage(f"{tmp_path}/ckpt", JOB, num_retained=2)
    storage.add_completed(_metadata(tmp_path, 1, ["a", "b"]))
    storage.add_completed(_metadata(tmp_path, 2, ["b", "c"]))
    successor = CheckpointStorage(f"{tmp_path}/ckpt", JOB, num_retained=2)  # a new leader
    assert [m.checkpoint_id for m in successor.discover_completed()] == [1, 2]
    successor.add_completed(_metadata(tmp_path, 3, ["c", "d"]))  # subsumes 1; 2 is the one before the retained
    assert _shared_files(tmp_path) == {"a", "b", "c", "d"}
    successor.add_completed(_metadata(tmp_path, 4, ["d"]))  # 1 unregistered: only 'a' was its own
    assert _shared_files(tmp_path) == {"b", "c", "d"}
    successor.add_completed(_metadata(tmp_path, 5, ["d"]))
    assert _shared_files(tmp_path) == {"c", "d"}


def test_no_claim_never_deletes_the_restored_checkpoint(tmp_path: Path) -> None:
    old_job = "f" * 32
    restored = _metadata(tmp_path, 4, ["theirs"], job=old_job)
    storage = CheckpointStorage(f"{tmp_path}/ckpt", JOB, num_retained=1)
    assert storage.register_restored(restored, "NO_CLAIM") is False  # the tasks upload every file again
    assert not storage.owns(restored)
    for cid in (5, 6, 7):
        storage.add_completed(_metadata(tmp_path, cid, [f"mine{cid}"]))
    assert _shared_files(tmp_path, old_job) == {"theirs"}
    assert (tmp_path / "ckpt" / old_job / "chk-4" / "_metadata").exists()
    assert _shared_files(tmp_path) == {"mine6", "mine7"}


def test_claim_makes_the_restored_checkpoint_the_jobs_own_and_subsumes_it(tmp_path: Path) -> None:
    old_job = "f" * 32
    restored = _metadata(tmp_path, 4, ["theirs", "kept"], job=old_job)
    storage = CheckpointStorage(f"{tmp_path}/ckpt", JOB, num_retained=1)
    assert storage.register_restored(restored, RestoreMode.CLAIM) is True  # the tasks reference its files
    assert storage.owns(restored)
    kept = next(h for h in restored.operator_states["op"].shared_handles() if h.uri.endswith("kept"))
    location = CheckpointStorageLocation(uri=f"{tmp_path}/ckpt/{JOB}/chk-5")
    new = _metadata(tmp_path, 5, ["mine"])
    inc = new.operator_states["op"].incremental[0]
    shared = {**inc.shared, "kept": kept}  # the new job's first checkpoint still references a claimed file
    op = OperatorState(
        operator_id="op",
        parallelism=1,
        max_parallelism=128,
        incremental={0: IncrementalRemoteKeyedStateHandle(0, 127, 5, shared=shared, private=inc.private)},
    )
    new = CheckpointMetadata(5, JOB, 1, False, {"op": op}, location.uri)
    storage.add_completed(new)
    assert not (tmp_path / "ckpt" / old_job / "chk-4").exists()  # subsumed: the job owned it
    storage.add_completed(_metadata(tmp_path, 6, ["other"]))
    assert _shared_files(tmp_path, old_job) == {"kept"}  # 4 unregistered; 5 still references 'kept'
    storage.add_completed(_metadata(tmp_path, 7, ["more"]))
    assert _shared_files(tmp_path, old_job) == set()


def test_a_savepoint_is_never_claimed(tmp_path: Path) -> None:
    savepoint = CheckpointMetadata(3, "e" * 32, 1, True, {}, f"{tmp_path}/savepoints/savepoint-1")
    storage = CheckpointStorage(f"{tmp_path}/ckpt", JOB, num_retained=1)
    assert storage.register_restored(savepoint, "CLAIM") is False
    assert storage.completed() == []


def test_an_aborted_checkpoints_own_uploads_are_deleted(tmp_path: Path) -> None:
    storage = CheckpointStorage(f"{tmp_path}/ckpt", JOB, num_retained=1)
    storage.add_completed(_metadata(tmp_path, 1, ["a"]))
    aborted = _metadata(tmp_path, 2, ["a", "fresh"]).operator_states["op"].shared_handles()
    assert storage.discard_unregistered(aborted) == 1
    assert _shared_files(tmp_path) == {"a"}


def test_dispose_all_deletes_the_shared_directory(tmp_path: Path) -> None:
    storage = CheckpointStorage(f"{tmp_path}/ckpt", JOB, num_retained=1)
    storage.add_completed(_metadata(tmp_path, 1, ["a"]))
    storage.dispose_all()
    assert not (tmp_path / "ckpt" / JOB).exists()


# -- metadata and verification -----------------------------------------------------------------------------
def test_incremental_handles_round_trip_through_metadata(tmp_path: Path) -> None:
    written = _metadata(tmp_path, 1, ["a", "b"])
    _, read = resolve_checkpoint_pointer(written.external_pointer)
    assert read.operator_states["op"].incremental == written.operator_states["op"].incremental
    assert '"incremental"' in (Path(written.external_pointer) / "_metadata").read_text()
    private = read.operator_states["op"].incremental[0].private["MANIFEST"]
    assert private.uri == f"{written.external_pointer}/op-0-rocksdb-MANIFEST"  # inside: stored relative


def test_metadata_without_incremental_state_is_written_as_before(tmp_path: Path) -> None:
    location = CheckpointStorageLocation(uri=f"{tmp_path}/chk-1")
    op = OperatorState(operator_id="op", parallelism=1, max_parallelism=128, keyed={3: location.write_state("k", b"x")})
    location.write_metadata(CheckpointMetadata(1, JOB, 1, False, {"op": op}, location.uri))
    assert "incremental" not in (tmp_path / "chk-1" / "_metadata").read_text()
    _, read = resolve_checkpoint_pointer(location.uri)
    assert read.operator_states["op"].incremental == {}


def test_a_shared_file_deleted_by_hand_makes_the_checkpoint_unrestorable_naming_it(tmp_path: Path) -> None:
    written = _metadata(tmp_path, 3, ["000012.sst-x"])
    assert verify_state_files(written) > 0
    (tmp_path / "ckpt" / JOB / "shared" / "000012.sst-x").unlink()
    with pytest.raises(CheckpointStorageError) as e:
        verify_state_files(written)
    message = str(e.value)
    assert _shared_uri(tmp_path, "000012.sst-x") in message
    assert "checkpoint 3" in message and "operator 'op'" in message
    assert "no such file" in message and "hint:" in message
