"""Checkpoint files carry checksums: a single flipped bit in a state file, a key-group slice, a channel-state
file or ``_metadata`` fails the read with an error naming the file, the operator and the checkpoint — it never
restores silently into a wrong result."""

from __future__ import annotations

import json
import logging
import os
import pickle
from pathlib import Path

import pytest

from strom.exceptions import CheckpointStorageError, CorruptStateError
from strom.runtime.checkpoint.checksum import ChecksumWriter, checksum
from strom.runtime.checkpoint.metadata import CheckpointMetadata, OperatorState, StateHandle
from strom.runtime.checkpoint.storage import CheckpointStorage, check_verifiable, read_state, resolve_checkpoint_pointer

JOB = "0123456789abcdef0123456789abcdef"


def flip_bit(path: Path, offset: int, bit: int = 0) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 1 << bit
    path.write_bytes(bytes(data))


def write_checkpoint(tmp_path: Path, checkpoint_id: int = 7) -> tuple[Path, CheckpointMetadata]:
    """A checkpoint of operator 'sums' (three key groups in one file, operator state) like a task writes it."""
    location = CheckpointStorage(str(tmp_path), JOB).initialize_location(checkpoint_id)
    keyed = location.write_state_slices(
        "sums-keyed-0", {0: pickle.dumps({"a": 41}), 1: pickle.dumps({"b": 1000}), 2: pickle.dumps({"c": 7})}
    )
    operator = location.write_state("sums-op-0", pickle.dumps([("offset", 123456)]))
    metadata = CheckpointMetadata(
        checkpoint_id=checkpoint_id,
        job_id=JOB,
        timestamp_ms=1_700_000_000_000,
        is_savepoint=False,
        operator_states={
            "sums": OperatorState(
                operator_id="sums", parallelism=1, max_parallelism=128, keyed=keyed, operator={0: operator}
            )
        },
        external_pointer=location.uri,
    )
    location.write_metadata(metadata)
    return tmp_path / JOB / f"chk-{checkpoint_id}", metadata


def assert_names_the_damage(error: CorruptStateError, file: str, operator_id: str, checkpoint_id: int) -> None:
    message = str(error)
    assert file in message and error.file == file
    assert checkpoint_id == error.checkpoint_id and f"checkpoint {checkpoint_id}" in message
    assert error.operator_id == operator_id and (not operator_id or f"operator '{operator_id}'" in message)
    assert f"restore from an older checkpoint (chk-{checkpoint_id - 1} or earlier, if retained) or savepoint" in message


def test_a_flipped_bit_in_a_key_group_slice_fails_its_read_and_only_its_read(tmp_path: Path) -> None:
    directory, written = write_checkpoint(tmp_path)
    keyed = written.operator_states["sums"].keyed
    state_file = directory / "sums-keyed-0"
    size = state_file.stat().st_size
    for offset in (0, keyed[1].offset + 5, size // 2, size - 1):  # first byte, inside a value, middle, last byte
        original = state_file.read_bytes()
        flip_bit(state_file, offset, bit=offset % 8)
        _, restored = resolve_checkpoint_pointer(str(directory))
        damaged = [kg for kg, h in keyed.items() if h.offset <= offset < h.offset + h.size]
        for kg, handle in restored.operator_states["sums"].keyed.items():
            if kg in damaged:
                with pytest.raises(CorruptStateError) as info:
                    read_state(handle, operator_id="sums", checkpoint_id=7, what=f"keyed state of key group {kg}")
                assert_names_the_damage(info.value, handle.uri, "sums", 7)
                assert f"keyed state of key group {kg}" in str(info.value)
            else:
                assert pickle.loads(read_state(handle, operator_id="sums", checkpoint_id=7))  # its own checksum holds
        state_file.write_bytes(original)


@pytest.mark.parametrize("offset", [0, 3, -1])
def test_a_flipped_bit_in_a_whole_state_file_fails_its_read(tmp_path: Path, offset: int) -> None:
    directory, _ = write_checkpoint(tmp_path, checkpoint_id=3)
    state_file = directory / "sums-op-0"
    flip_bit(state_file, offset % state_file.stat().st_size, bit=7)
    _, restored = resolve_checkpoint_pointer(str(directory))
    handle = restored.operator_states["sums"].operator[0]
    with pytest.raises(CorruptStateError) as info:
        read_state(handle, operator_id="sums", checkpoint_id=3, what="operator state of old subtask 0")
    assert_names_the_damage(info.value, handle.uri, "sums", 3)


def test_every_single_bit_flip_in_metadata_fails_the_restore(tmp_path: Path) -> None:
    directory, _ = write_checkpoint(tmp_path)
    metadata_file = directory / "_metadata"
    original = metadata_file.read_bytes()
    for offset in range(len(original)):
        flip_bit(metadata_file, offset, bit=offset % 8)
        with pytest.raises(CheckpointStorageError) as info:
            resolve_checkpoint_pointer(str(directory))
        message = str(info.value)
        assert str(metadata_file) in message and "hint:" in message, (offset, message)
        if isinstance(info.value, CorruptStateError):
            assert info.value.file == str(metadata_file) and info.value.checkpoint_id == 7
            assert "restore from an older checkpoint (chk-6 or earlier, if retained) or savepoint" in message
        else:  # the version number itself: the one field read before the checksum can be
            assert "format version 1 or 2" in message and "damaged" in message, (offset, message)
        metadata_file.write_bytes(original)


def test_a_value_changed_in_metadata_fails_its_checksum(tmp_path: Path) -> None:
    directory, _ = write_checkpoint(tmp_path)
    metadata_file = directory / "_metadata"
    doc = json.loads(metadata_file.read_text())
    doc["operator_states"]["sums"]["keyed"]["1"]["size"] += 1  # still well-formed, but not what was written
    metadata_file.write_text(json.dumps(doc, indent=1))
    with pytest.raises(CorruptStateError, match="to have the xxh3-64 checksum it records") as info:
        resolve_checkpoint_pointer(str(directory))
    assert info.value.checkpoint_id == 7 and info.value.operator_id == ""


def test_metadata_without_checksums_restores_only_when_told_to(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Format version 1 (before checksums): the state cannot be verified, so a restore needs
    ``execution.savepoint.restore-unverified`` and says so once; a state file that is not a pickle stream is named
    as damaged, not left to fail as a class import."""
    directory = tmp_path / "savepoint-old"
    directory.mkdir()
    good = pickle.dumps({"version": 1, "meta": {}, "states": {}})
    (directory / "sums-keyed-0").write_bytes(good)
    (directory / "sums-keyed-1").write_bytes(b"key group 1")  # damaged: not a pickle
    legacy = {
        "format": "strom-checkpoint-metadata",
        "version": 1,
        "checkpoint_id": 4,
        "job_id": JOB,
        "timestamp_ms": 1,
        "is_savepoint": True,
        "external_pointer": f"file://{directory}",
        "operator_states": {
            "sums": {
                "parallelism": 1,
                "max_parallelism": 128,
                "keyed": {
                    "0": {"uri": "sums-keyed-0", "size": len(good)},
                    "1": {"uri": "sums-keyed-1", "size": 11},
                },
                "operator": {},
                "channel": {},
                "coordinator": None,
            }
        },
    }
    (directory / "_metadata").write_text(json.dumps(legacy))
    _, metadata = resolve_checkpoint_pointer(str(directory))
    assert not metadata.verified
    with pytest.raises(CheckpointStorageError, match=r"execution\.savepoint\.restore-unverified: true"):
        check_verifiable(metadata, restore_unverified=False)
    with caplog.at_level(logging.WARNING, logger="strom"):
        check_verifiable(metadata, restore_unverified=True)
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "without verifying" in warnings[0].getMessage()
    handles = metadata.operator_states["sums"].keyed
    assert handles[0].checksum is None
    assert read_state(handles[0], operator_id="sums", checkpoint_id=4) == good
    with pytest.raises(CorruptStateError, match=r"sums-keyed-1.*not one.*damaged"):
        read_state(handles[1], operator_id="sums", checkpoint_id=4)


def test_checksums_survive_the_metadata_round_trip(tmp_path: Path) -> None:
    directory, written = write_checkpoint(tmp_path)
    _, restored = resolve_checkpoint_pointer(str(directory))
    assert restored == written
    handles = [*restored.operator_states["sums"].keyed.values(), *restored.operator_states["sums"].operator.values()]
    assert all(h.checksum is not None for h in handles)


def test_a_truncated_state_file_is_damage_too(tmp_path: Path) -> None:
    directory, written = write_checkpoint(tmp_path)
    state_file = directory / "sums-keyed-0"
    state_file.write_bytes(state_file.read_bytes()[:-1])
    with pytest.raises(CorruptStateError) as info:
        read_state(written.operator_states["sums"].keyed[2], operator_id="sums", checkpoint_id=7)
    assert_names_the_damage(info.value, written.operator_states["sums"].keyed[2].uri, "sums", 7)


def test_the_error_crosses_process_boundaries_whole() -> None:
    error = CorruptStateError("damaged", file="file:///c/chk-3/x", operator_id="sums", checkpoint_id=3)
    clone = pickle.loads(pickle.dumps(error))
    assert (str(clone), clone.file, clone.operator_id, clone.checkpoint_id) == ("damaged", error.file, "sums", 3)
    assert isinstance(clone, CheckpointStorageError)


def test_checksum_writer_hashes_large_parts_piecewise_as_one(tmp_path: Path) -> None:
    big = os.urandom(3 * (1 << 20) + 17)
    with open(tmp_path / "f", "wb") as f:
        writer = ChecksumWriter(f)
        assert writer.write(b"small") == checksum(b"small")
        assert writer.write(big) == checksum(big)
    assert (tmp_path / "f").read_bytes() == b"small" + big


def test_handles_of_another_checkpoint_keep_their_checksum_when_pickled() -> None:
    handle = StateHandle(uri="file:///c/chk-1/x", size=3, offset=4, checksum=checksum(b"abc"))
    assert pickle.loads(pickle.dumps(handle)) == handle
