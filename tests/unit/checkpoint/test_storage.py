"""Checkpoint storage layout: state files, ``_metadata`` written last, retention, pointers and cleanup."""

from __future__ import annotations

import pickle
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import fsspec
import pytest

from strom.exceptions import CheckpointStorageError, ConfigurationError
from strom.runtime.checkpoint.checksum import checksum
from strom.runtime.checkpoint.metadata import CheckpointMetadata, OperatorState, StateHandle
from strom.runtime.checkpoint.storage import (
    CheckpointStorage,
    CheckpointStorageLocation,
    ExternalizedCheckpointRetention,
    read_state,
    resolve_checkpoint_pointer,
)

JOB = "0123456789abcdef0123456789abcdef"


@pytest.fixture
def memory_base() -> Iterator[str]:
    root = f"/strom-test-{uuid.uuid4().hex}"
    yield f"memory://{root}"
    fs = fsspec.filesystem("memory")
    if fs.exists(root):
        fs.rm(root, recursive=True)


@pytest.fixture(params=["file", "plain", "memory"])
def base_uri(request: pytest.FixtureRequest, tmp_path: Path, memory_base: str) -> str:
    if request.param == "file":
        return f"file://{tmp_path}/ckpt"
    if request.param == "plain":
        return str(tmp_path / "ckpt")
    return memory_base


def complete(location: CheckpointStorageLocation, checkpoint_id: int, *, savepoint: bool = False) -> CheckpointMetadata:
    """Write one keyed and one operator state file, then ``_metadata``."""
    keyed = location.write_state("op-kg-0", b"keyed-%d" % checkpoint_id)
    operator = location.write_state("op-op-0", b"operator")
    metadata = CheckpointMetadata(
        checkpoint_id=checkpoint_id,
        job_id=JOB,
        timestamp_ms=1_700_000_000_000 + checkpoint_id,
        is_savepoint=savepoint,
        operator_states={
            "op": OperatorState(
                operator_id="op", parallelism=1, max_parallelism=128, keyed={0: keyed}, operator={0: operator}
            )
        },
        external_pointer=location.uri,
    )
    location.write_metadata(metadata)
    return metadata


def exists(uri: str) -> bool:
    fs, path = fsspec.core.url_to_fs(uri)
    return bool(fs.exists(path))


def checkpoint_dirs(storage: CheckpointStorage) -> list[str]:
    fs, path = fsspec.core.url_to_fs(storage.job_dir)
    if not fs.exists(path):
        return []
    return sorted(p.rstrip("/").rsplit("/", 1)[-1] for p in fs.ls(path, detail=False))


def test_state_and_metadata_round_trip(base_uri: str) -> None:
    storage = CheckpointStorage(base_uri, JOB)
    location = storage.initialize_location(3)
    assert location.uri == f"{storage.job_dir}/chk-3"
    written = complete(location, 3)

    directory, metadata = resolve_checkpoint_pointer(location.uri)
    assert directory == location.uri
    assert metadata == written
    op = metadata.operator_states["op"]
    assert read_state(op.keyed[0]) == b"keyed-3"
    assert read_state(op.operator[0]) == b"operator"


def test_key_groups_share_one_file_as_slices_that_survive_the_metadata(base_uri: str) -> None:
    storage = CheckpointStorage(base_uri, JOB)
    location = storage.initialize_location(1)
    parts = {0: b"first", 5: b"", 7: b"x" * 1000, 127: b"last"}
    handles = location.write_state_slices("op-keyed-0", parts)
    assert len({h.uri for h in handles.values()}) == 1  # one file for the subtask's key groups
    assert location.write_state_slices("op-keyed-1", {}) == {}  # nothing to write, no file
    metadata = CheckpointMetadata(
        checkpoint_id=1,
        job_id=JOB,
        timestamp_ms=0,
        is_savepoint=False,
        operator_states={"op": OperatorState(operator_id="op", parallelism=1, max_parallelism=128, keyed=handles)},
        external_pointer=location.uri,
    )
    location.write_metadata(metadata)
    _, restored = resolve_checkpoint_pointer(location.uri)
    keyed = restored.operator_states["op"].keyed
    assert keyed == handles
    assert {kg: read_state(h) for kg, h in keyed.items()} == parts


def test_location_pickles_as_its_uri_only(tmp_path: Path) -> None:
    location = CheckpointStorage(str(tmp_path), JOB).initialize_location(1)
    clone = pickle.loads(pickle.dumps(location))
    assert clone == location
    assert clone.write_state("s", b"abc") == StateHandle(uri=f"{location.uri}/s", size=3, checksum=checksum(b"abc"))


def test_metadata_is_written_last_and_atomically(tmp_path: Path) -> None:
    location = CheckpointStorage(f"file://{tmp_path}", JOB).initialize_location(1)
    directory = tmp_path / JOB / "chk-1"
    location.write_state("a", b"1")
    assert sorted(p.name for p in directory.iterdir()) == ["a"]
    with pytest.raises(CheckpointStorageError, match="without _metadata"):
        resolve_checkpoint_pointer(location.uri)
    complete(location, 1)
    assert sorted(p.name for p in directory.iterdir()) == ["_metadata", "a", "op-kg-0", "op-op-0"]


@pytest.mark.parametrize("name", ["", "a/b", "..", ".", "_metadata", "_metadata.inprogress", "x\\y"])
def test_state_names_stay_inside_the_directory(tmp_path: Path, name: str) -> None:
    location = CheckpointStorage(str(tmp_path), JOB).initialize_location(1)
    with pytest.raises(CheckpointStorageError, match="expected a state file name"):
        location.write_state(name, b"")


def test_retention_keeps_the_newest_checkpoints(base_uri: str) -> None:
    storage = CheckpointStorage(base_uri, JOB, num_retained=2)
    for cid in range(1, 6):
        storage.add_completed(complete(storage.initialize_location(cid), cid))
    assert checkpoint_dirs(storage) == ["chk-4", "chk-5"]
    assert [m.checkpoint_id for m in storage.completed()] == [4, 5]
    latest = storage.latest_completed()
    assert latest is not None and latest.checkpoint_id == 5


def test_savepoints_are_never_pruned(tmp_path: Path) -> None:
    storage = CheckpointStorage(str(tmp_path / "ckpt"), JOB)
    savepoint = storage.savepoint_location(str(tmp_path / "sp"), 2)
    assert Path(savepoint.uri).parent == tmp_path / "sp"
    assert Path(savepoint.uri).name.startswith(f"savepoint-{JOB[:6]}-")
    storage.add_completed(complete(savepoint, 2, savepoint=True))
    for cid in (3, 4):
        storage.add_completed(complete(storage.initialize_location(cid), cid))
    assert exists(savepoint.uri)
    assert storage.latest_completed() is not None
    assert [m.checkpoint_id for m in storage.completed()] == [4]


def test_resolve_from_directory_or_metadata_file(tmp_path: Path) -> None:
    location = CheckpointStorage(f"file://{tmp_path}", JOB).initialize_location(7)
    written = complete(location, 7)
    for pointer in (location.uri, location.uri + "/", location.uri + "/_metadata"):
        directory, metadata = resolve_checkpoint_pointer(pointer)
        assert directory == location.uri
        assert metadata == written
    plain_dir, _ = resolve_checkpoint_pointer(str(tmp_path / JOB / "chk-7" / "_metadata"))
    assert plain_dir == str(tmp_path / JOB / "chk-7")


def test_moved_savepoint_still_finds_its_state(tmp_path: Path) -> None:
    storage = CheckpointStorage(str(tmp_path / "ckpt"), JOB)
    savepoint = storage.savepoint_location(str(tmp_path / "sp"), 1)
    complete(savepoint, 1, savepoint=True)
    moved = tmp_path / "elsewhere" / "my-savepoint"
    shutil.move(savepoint.uri, moved)

    directory, metadata = resolve_checkpoint_pointer(f"file://{moved}")
    assert directory == f"file://{moved}"
    assert metadata.external_pointer == directory
    handle = metadata.operator_states["op"].keyed[0]
    assert handle.uri == f"file://{moved}/op-kg-0"
    assert read_state(handle) == b"keyed-1"


def test_missing_pointer_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(CheckpointStorageError) as info:
        resolve_checkpoint_pointer(str(missing))
    message = str(info.value)
    assert "expected a checkpoint or savepoint directory with a _metadata file" in message
    assert f"got {missing} (no such file)" in message and "hint:" in message


def test_corrupted_metadata_names_the_file(tmp_path: Path) -> None:
    location = CheckpointStorage(str(tmp_path), JOB).initialize_location(1)
    complete(location, 1)
    metadata_file = tmp_path / JOB / "chk-1" / "_metadata"
    metadata_file.write_text('{"format": "strom-checkpoint-metadata", "vers')
    with pytest.raises(CheckpointStorageError, match="malformed checkpoint metadata") as info:
        resolve_checkpoint_pointer(location.uri)
    assert str(metadata_file) in str(info.value)


def test_missing_or_truncated_state_file(tmp_path: Path) -> None:
    location = CheckpointStorage(str(tmp_path), JOB).initialize_location(1)
    handle = location.write_state("s", b"0123456789")
    (tmp_path / JOB / "chk-1" / "s").write_bytes(b"01234")
    with pytest.raises(CheckpointStorageError, match="expected 10 bytes got 5"):
        read_state(handle)
    (tmp_path / JOB / "chk-1" / "s").unlink()
    with pytest.raises(CheckpointStorageError, match="no such file") as info:
        read_state(handle)
    assert handle.uri in str(info.value) and "hint:" in str(info.value)


def test_dispose_removes_the_directory_and_tolerates_absence(base_uri: str) -> None:
    location = CheckpointStorage(base_uri, JOB).initialize_location(1)
    location.write_state("s", b"x")
    location.dispose()
    assert not exists(location.uri)
    location.dispose()


def test_discover_completed_after_restart(base_uri: str) -> None:
    storage = CheckpointStorage(base_uri, JOB, num_retained=3)
    for cid in (2, 10, 9):
        storage.add_completed(complete(storage.initialize_location(cid), cid))
    storage.initialize_location(11).write_state("s", b"partial")

    restarted = CheckpointStorage(base_uri, JOB, num_retained=3)
    assert restarted.latest_completed() is None
    found = restarted.discover_completed()
    assert [m.checkpoint_id for m in found] == [2, 9, 10]
    latest = restarted.latest_completed()
    assert latest is not None and latest.checkpoint_id == 10
    assert read_state(latest.operator_states["op"].keyed[0]) == b"keyed-10"


def test_discover_in_an_empty_directory(tmp_path: Path) -> None:
    assert CheckpointStorage(str(tmp_path), JOB).discover_completed() == []


def run_and_end(base_uri: str, job_status: str, retention: str) -> CheckpointStorage:
    storage = CheckpointStorage(base_uri, JOB)
    storage.add_completed(complete(storage.initialize_location(1), 1))
    storage.initialize_location(2).write_state("s", b"pending")
    storage.shutdown(job_status, retention)
    return storage


@pytest.mark.parametrize(
    ("retention", "job_status", "kept"),
    [
        ("NO_EXTERNALIZED_CHECKPOINTS", "FINISHED", False),
        ("NO_EXTERNALIZED_CHECKPOINTS", "CANCELED", False),
        ("NO_EXTERNALIZED_CHECKPOINTS", "FAILED", False),
        ("DELETE_ON_CANCELLATION", "FINISHED", False),
        ("DELETE_ON_CANCELLATION", "CANCELED", False),
        ("DELETE_ON_CANCELLATION", "FAILED", True),
        ("RETAIN_ON_CANCELLATION", "FINISHED", False),
        ("RETAIN_ON_CANCELLATION", "CANCELED", True),
        ("RETAIN_ON_CANCELLATION", "FAILED", True),
        ("NO_EXTERNALIZED_CHECKPOINTS", "SUSPENDED", True),
    ],
)
def test_retention_on_shutdown(tmp_path: Path, retention: str, job_status: str, kept: bool) -> None:
    storage = run_and_end(str(tmp_path), job_status, retention)
    if kept:
        assert checkpoint_dirs(storage) == ["chk-1"], "the completed one stays, the pending one goes"
        resolve_checkpoint_pointer(f"{storage.job_dir}/chk-1")
    else:
        assert not exists(storage.job_dir)


def test_shutdown_on_memory_file_system(memory_base: str) -> None:
    storage = run_and_end(memory_base, "FAILED", "retain_on_cancellation")
    assert checkpoint_dirs(storage) == ["chk-1"]
    storage.dispose_all()
    assert not exists(storage.job_dir)


def test_unknown_retention_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match=r"expects one of NO_EXTERNALIZED_CHECKPOINTS.*got 'KEEP'"):
        ExternalizedCheckpointRetention.parse("KEEP")


def test_constructor_rejects_bad_arguments() -> None:
    with pytest.raises(CheckpointStorageError, match=r"execution\.checkpointing\.dir; got ''"):
        CheckpointStorage("", JOB)
    with pytest.raises(CheckpointStorageError, match="num-retained ≥ 1; got 0"):
        CheckpointStorage("/tmp/x", JOB, num_retained=0)
    with pytest.raises(CheckpointStorageError, match="job id"):
        CheckpointStorage("/tmp/x", "a/b")


def test_relative_local_paths_become_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    storage = CheckpointStorage("ckpt", JOB)
    assert storage.job_dir == f"{tmp_path}/ckpt/{JOB}"
