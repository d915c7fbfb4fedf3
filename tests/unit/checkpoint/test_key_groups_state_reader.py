"""``KeyGroupsStateReader``: every key group verified before a restore begins, then read one at a time (large state)
or kept (small state)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from strom.exceptions import CorruptStateError
from strom.runtime.checkpoint.key_groups_state_reader import KeyGroupsStateReader
from strom.runtime.checkpoint.metadata import StateHandle
from strom.runtime.checkpoint.storage import CheckpointStorageLocation, read_state


def _written(tmp_path: Path) -> tuple[dict[int, bytes], dict[int, StateHandle]]:
    parts = {kg: bytes([kg]) * 1000 for kg in (1, 5, 9)}
    return parts, CheckpointStorageLocation(uri=str(tmp_path / "chk-1")).write_state_slices("op-keyed-0", parts)


def _counting(reads: list[int]) -> Callable[[StateHandle, str], bytes]:
    def read(handle: StateHandle, what: str) -> bytes:
        reads.append(handle.offset)
        return read_state(handle, what=what)

    return read


@pytest.mark.parametrize(("keep_bytes", "reads_after_verify"), [(0, 3), (1 << 20, 0)])
def test_large_state_is_read_again_one_key_group_at_a_time_small_state_is_kept(
    tmp_path: Path, keep_bytes: int, reads_after_verify: int
) -> None:
    parts, handles = _written(tmp_path)
    reads: list[int] = []
    reader = KeyGroupsStateReader(sorted(handles.items()), _counting(reads), keep_bytes=keep_bytes)
    reader.verify()
    assert len(reads) == 3
    assert dict(reader.items()) == parts and len(reader) == 3
    assert len(reads) == 3 + reads_after_verify
    reader.add({40: b"canonical"})
    assert set(reader) == {1, 5, 9, 40} and reader[40] == b"canonical"


def test_a_damaged_key_group_fails_the_verification_before_anything_is_restored(tmp_path: Path) -> None:
    _, handles = _written(tmp_path)
    path = tmp_path / "chk-1" / "op-keyed-0"
    data = bytearray(path.read_bytes())
    data[2500] ^= 1  # in key group 9
    path.write_bytes(bytes(data))
    reader = KeyGroupsStateReader(sorted(handles.items()), lambda h, what: read_state(h, what=what), keep_bytes=0)
    with pytest.raises(CorruptStateError, match="key group 9"):
        reader.verify()
