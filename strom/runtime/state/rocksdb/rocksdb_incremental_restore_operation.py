"""Restore of the RocksDB backend from incremental checkpoints (Flink's ``RocksDBIncrementalRestoreOperation``).

* **Same key-group range** (one handle whose range is the subtask's, and an instance no state uses yet): the files
  are downloaded into the instance's directory and the database is opened as it is. The backend then knows its SST
  files are in ``shared/`` already (when the job may reference them: its own checkpoint, or ``CLAIM``), so its next
  checkpoint uploads only new ones.
* **Another range** (rescaling): each overlapping handle is downloaded into a directory apart and opened there, and
  the entries of the key groups in range are copied, column family by column family, into the instance (Flink's
  copy of key groups from temporary instances; a key-group range is one contiguous key range).
* **Into the heap backend**, or wherever canonical bytes are needed: :func:`canonical_key_groups` opens the
  downloaded database and reads it into canonical key-group blobs.

Every file is checked against its size and checksum while it is downloaded; a missing or damaged one raises an error
naming it, the operator and the checkpoint. With local recovery a file whose local copy (kept when the checkpoint was
taken on this TaskManager) matches its handle is linked from there instead of downloaded.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rocksdict import Rdict, WriteBatch

from strom.exceptions import CheckpointError, CorruptStateError
from strom.runtime.checkpoint.local_state_copy import LocalStateCopy
from strom.runtime.checkpoint.metadata import IncrementalRemoteKeyedStateHandle
from strom.runtime.checkpoint.storage import download_file
from strom.runtime.state.key_groups import KeyGroupRange
from strom.runtime.state.rocksdb.rocksdb_incremental_snapshot_strategy import (
    META_FILE_NAME,
    META_FORMAT,
    META_VERSION,
    all_column_families,
)
from strom.runtime.state.rocksdb.rocksdb_key_serialization_utils import key_group_prefix
from strom.runtime.state.rocksdb.rocksdb_priority_queue_set_factory import TIMER_QUEUE_PREFIX

if TYPE_CHECKING:
    from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend

__all__ = ["RocksDBIncrementalRestoreOperation", "canonical_key_groups", "download_checkpoint", "read_meta"]

_COPY_BATCH = 4096


def download_checkpoint(
    handle: IncrementalRemoteKeyedStateHandle,
    directory: str,
    *,
    operator_id: str,
    checkpoint_id: int,
    local: LocalStateCopy | None = None,
) -> None:
    """Every file of ``handle`` into ``directory`` under its RocksDB name, each verified. ``local`` (local recovery):
    a file whose local copy of checkpoint ``checkpoint_id`` matches its handle is taken from there, not downloaded."""
    os.makedirs(directory, exist_ok=True)
    for kind, files in (("shared", handle.shared), ("private", handle.private)):
        for name, file in sorted(files.items()):
            target = os.path.join(directory, name)
            if local is not None and local.retrieve_file(checkpoint_id, file, target):
                continue
            what = f"{kind} RocksDB file {name} (key groups {handle.key_group_start}–{handle.key_group_end})"
            download_file(file, target, operator_id=operator_id, checkpoint_id=checkpoint_id, what=what)


def read_meta(directory: str, *, operator_id: str, checkpoint_id: int, max_parallelism: int) -> dict[str, Any]:
    """The backend's meta of a downloaded checkpoint, checked (format, version, max parallelism)."""
    path = os.path.join(directory, META_FILE_NAME)
    try:
        with open(path, encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        raise CorruptStateError(
            f"expected the RocksDB meta {META_FILE_NAME} of operator '{operator_id}' in checkpoint {checkpoint_id} as "
            f"JSON; got {e!r}; hint: restore from another checkpoint or savepoint",
            file=path,
            operator_id=operator_id,
            checkpoint_id=checkpoint_id,
        ) from None
    if not isinstance(meta, dict) or meta.get("format") != META_FORMAT or meta.get("version") != META_VERSION:
        raise CheckpointError(
            f"expected RocksDB meta of format {META_FORMAT} version {META_VERSION} for operator '{operator_id}' in "
            f"checkpoint {checkpoint_id}; got {str(meta)[:80]}; hint: it was written by an incompatible strom version"
        )
    if meta.get("max_parallelism") != max_parallelism:
        raise CheckpointError(
            f"expected operator '{operator_id}' to keep the max parallelism {meta.get('max_parallelism')} of its keyed "
            f"state in checkpoint {checkpoint_id}; got {max_parallelism}; hint: set it back with "
            "env.set_max_parallelism(...)"
        )
    return meta


class RocksDBIncrementalRestoreOperation:
    """Restores one backend from the incremental handles of the old subtasks whose key groups overlap its own."""

    def __init__(
        self,
        backend: RocksDBKeyedStateBackend,
        handles: Sequence[IncrementalRemoteKeyedStateHandle],
        key_group_range: KeyGroupRange,
        *,
        operator_id: str,
        checkpoint_id: int,
        reuse_shared: bool,
        local: LocalStateCopy | None = None,
    ) -> None:
        self.backend = backend
        #: local recovery's copies, read before the checkpoint's files
        self.local = local
        self.handles = [h for h in handles if h.overlaps(key_group_range.start, key_group_range.end)]
        self.key_group_range = key_group_range
        self.operator_id = operator_id
        self.checkpoint_id = checkpoint_id
        self.reuse_shared = reuse_shared

    def restore(self) -> None:
        r = self.key_group_range
        one = self.handles[0] if len(self.handles) == 1 else None
        same_range = one is not None and (one.key_group_start, one.key_group_end) == (r.start, r.end)
        if one is not None and same_range and not self.backend.column_families():  # no state holds a family yet
            self._restore_as_is(one)
            return
        for handle in self.handles:
            self._restore_clipped(handle)

    def _restore_as_is(self, handle: IncrementalRemoteKeyedStateHandle) -> None:
        backend = self.backend

        def download(directory: str) -> dict[str, Any]:
            download_checkpoint(
                handle, directory, operator_id=self.operator_id, checkpoint_id=self.checkpoint_id, local=self.local
            )
            meta = read_meta(
                directory,
                operator_id=self.operator_id,
                checkpoint_id=self.checkpoint_id,
                max_parallelism=backend.max_parallelism,
            )
            os.remove(os.path.join(directory, META_FILE_NAME))
            return meta

        meta = backend.reopen_from(download)
        backend.merge_restored_kinds(meta["kinds"])
        if self.reuse_shared:
            backend.incremental.restored(handle.checkpoint_id, handle.shared)

    def _restore_clipped(self, handle: IncrementalRemoteKeyedStateHandle) -> None:
        backend = self.backend
        directory = os.path.join(backend.path, f".strom-restore-{uuid.uuid4().hex[:8]}")
        try:
            download_checkpoint(
                handle, directory, operator_id=self.operator_id, checkpoint_id=self.checkpoint_id, local=self.local
            )
            meta = read_meta(
                directory,
                operator_id=self.operator_id,
                checkpoint_id=self.checkpoint_id,
                max_parallelism=backend.max_parallelism,
            )
            backend.merge_restored_kinds(meta["kinds"])
            families = all_column_families(directory, backend.options)
            source = Rdict(directory, backend.options, column_families=dict.fromkeys(families, backend.options))
            try:
                lower = key_group_prefix(max(self.key_group_range.start, handle.key_group_start))
                last = min(self.key_group_range.end, handle.key_group_end)
                upper = key_group_prefix(last + 1) if last + 1 < (1 << 16) else None
                for name in ("default", *families):
                    cf = source if name == "default" else source.get_column_family(name)
                    _copy_range(cf, backend, name, lower, upper)
            finally:
                source.close()
        finally:
            shutil.rmtree(directory, ignore_errors=True)


def _copy_range(source: Any, backend: RocksDBKeyedStateBackend, name: str, lower: bytes, upper: bytes | None) -> None:
    """The entries of ``source`` in ``[lower, upper)`` into column family ``name`` of ``backend`` (a timer queue's
    family is created apart from the states': the priority queue factory takes it over when its queue is made)."""
    if name == "default":
        target = backend.db
    elif name.startswith(TIMER_QUEUE_PREFIX):
        target = _timer_family(backend, name)
    else:
        target = backend.column_family(name)
    handle = backend.db.get_column_family_handle(name)
    batch = WriteBatch(raw_mode=True)
    batch.set_default_column_family(handle)
    it = source.iter()
    it.seek(lower)
    pending = 0
    while it.valid():
        key = it.key()
        if upper is not None and key >= upper:
            break
        batch.put(key, it.value())
        pending += 1
        if pending >= _COPY_BATCH:
            target.write(batch)
            batch = WriteBatch(raw_mode=True)
            batch.set_default_column_family(handle)
            pending = 0
        it.next()
    del it
    if pending:
        target.write(batch)


def _timer_family(backend: RocksDBKeyedStateBackend, name: str) -> Any:
    try:
        cf = backend.db.get_column_family(name)
    except Exception:  # rocksdict raises a bare Exception for an unknown column family
        cf = backend.db.create_column_family(name, backend.options)
    return cf


def canonical_key_groups(
    handles: Sequence[IncrementalRemoteKeyedStateHandle],
    key_group_range: KeyGroupRange | None,
    *,
    max_parallelism: int,
    scratch_dir: str,
    operator_id: str,
    checkpoint_id: int,
    local: LocalStateCopy | None = None,
) -> dict[int, bytes]:
    """The canonical key-group blobs (the heap backend's format) of the key groups in ``key_group_range`` (``None``:
    all) held by ``handles``: each downloaded, opened as a RocksDB backend of its own and snapshotted."""
    from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend

    out: dict[int, bytes] = {}
    for handle in handles:
        r = key_group_range
        if r is not None and not handle.overlaps(r.start, r.end):
            continue
        directory = os.path.join(scratch_dir, f"strom-incremental-{uuid.uuid4().hex[:8]}")
        try:
            download_checkpoint(handle, directory, operator_id=operator_id, checkpoint_id=checkpoint_id, local=local)
            meta = read_meta(
                directory, operator_id=operator_id, checkpoint_id=checkpoint_id, max_parallelism=max_parallelism
            )
            backend = RocksDBKeyedStateBackend.open_existing(directory, meta, max_parallelism=max_parallelism)
            try:
                blobs = backend.snapshot()
            finally:
                backend.dispose()
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        out.update({kg: b for kg, b in blobs.items() if r is None or kg in r})
    return out
