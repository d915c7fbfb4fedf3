"""Incremental checkpoints of the RocksDB backend (Flink's ``RocksIncrementalSnapshotStrategy``).

Synchronous part, on the task thread: flush every column family's memtable and take a RocksDB ``Checkpoint`` (hard
links of the live SST files plus copies of MANIFEST, CURRENT, OPTIONS) into a local directory inside the instance's
directory, and write the backend's meta (states, their kinds, column families, key-group range) beside it.
Asynchronous part: upload the SST files the last checkpoint this backend knows as *completed* (confirmed by
``notify_checkpoint_complete``) did not hold into the job's ``shared/`` directory under unique names, reference the
others, and upload the private files into the checkpoint's own directory; then remove the local directory. The
result is an :class:`~strom.runtime.checkpoint.metadata.IncrementalRemoteKeyedStateHandle`.

Savepoints never come here: they stay canonical key-group blobs, restorable into either backend.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rocksdict import Checkpoint, Rdict

from strom.exceptions import CheckpointError
from strom.runtime.checkpoint.metadata import IncrementalRemoteKeyedStateHandle, StateHandle
from strom.runtime.state.key_groups import KeyGroupRange

if TYPE_CHECKING:
    from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend

__all__ = [
    "INCREMENTAL_OPTION",
    "META_FILE_NAME",
    "IncrementalSnapshot",
    "RocksIncrementalSnapshotStrategy",
    "all_column_families",
    "is_shared_file",
]

log = logging.getLogger(__name__)

#: the key that turns incremental checkpoints on (in the options the TaskManagers' backends get)
INCREMENTAL_OPTION = "execution.checkpointing.incremental"
#: the backend's own meta, a private file of every incremental checkpoint
META_FILE_NAME = "strom-rocksdb-meta.json"
META_FORMAT = "strom-rocksdb-incremental"
META_VERSION = 1
_LOCAL_CHECKPOINT_PREFIX = ".strom-chk-"


def is_shared_file(name: str) -> bool:
    """SST files are immutable and referenced across checkpoints (Flink's ``SST_FILE_SUFFIX``); the rest is private."""
    return name.endswith(".sst")


def local_checkpoint_dir(instance_path: str, checkpoint_id: int) -> str:
    """Where the synchronous part puts its hard links: inside the instance directory (same file system, removed
    with it; RocksDB ignores names it did not make)."""
    return os.path.join(instance_path, f"{_LOCAL_CHECKPOINT_PREFIX}{checkpoint_id}-{uuid.uuid4().hex[:8]}")


@dataclass(slots=True)
class IncrementalSnapshot:
    """The synchronous part's result: a local RocksDB checkpoint waiting to be uploaded (any thread), or dropped."""

    checkpoint_id: int
    key_group_range: KeyGroupRange
    local_dir: str
    #: local SST name → its handle in ``shared/``, of the last completed checkpoint this backend knows
    baseline: Mapping[str, StateHandle]
    strategy: RocksIncrementalSnapshotStrategy
    #: ``RocksDBKeyedStateBackend.open_existing``: a backend over a database directory (for :meth:`__call__`)
    open_existing: Callable[..., RocksDBKeyedStateBackend]
    cancelled: threading.Event = field(default_factory=threading.Event)
    #: bytes uploaded by :meth:`upload` (new shared files and private files)
    uploaded_bytes: int = 0
    #: the shared files :meth:`upload` wrote (not those it referenced)
    new_shared: list[StateHandle] = field(default_factory=list)

    def upload(self, location: Any, name_prefix: str, *, local: Any = None) -> IncrementalRemoteKeyedStateHandle:
        """Upload what is new through ``location.upload_file`` (a ``CheckpointStorageLocation``); on any failure
        the shared files uploaded so far are deleted again (no checkpoint references them). ``local`` (local
        recovery's ``LocalStateCopy``): every file of the checkpoint — the SST files it references from earlier
        checkpoints too — is kept in its local directory (hard links of the local RocksDB checkpoint's files), so a
        restore on this TaskManager downloads none of them."""
        new: list[StateHandle] = []
        try:
            shared: dict[str, StateHandle] = {}
            private: dict[str, StateHandle] = {}
            unique = uuid.uuid4().hex[:12]
            for name in sorted(os.listdir(self.local_dir)):
                if self.cancelled.is_set():
                    raise CheckpointError(f"checkpoint {self.checkpoint_id} was aborted during its upload")
                path = os.path.join(self.local_dir, name)
                if is_shared_file(name):
                    known = self.baseline.get(name)
                    if known is not None:
                        shared[name] = known
                        location.keep_local_file(local, known.uri, path)
                        continue
                    handle = location.upload_file(f"{name_prefix}-{unique}-{name}", path, shared=True, local=local)
                    new.append(handle)
                    shared[name] = handle
                else:
                    handle = location.upload_file(
                        f"{name_prefix}-{unique}-rocksdb-{name}", path, shared=False, local=local
                    )
                    private[name] = handle
                self.uploaded_bytes += handle.size
        except BaseException:
            _delete_quietly(new)
            raise
        finally:
            self.dispose()
        self.new_shared = new
        self.strategy.uploaded(self.checkpoint_id, shared)
        return IncrementalRemoteKeyedStateHandle(
            key_group_start=self.key_group_range.start,
            key_group_end=self.key_group_range.end,
            checkpoint_id=self.checkpoint_id,
            shared=shared,
            private=private,
        )

    def __call__(self) -> dict[int, bytes]:
        """The snapshot as canonical key-group blobs, read from the local checkpoint (for a caller that writes
        canonical state: the backend's ``async_snapshot()`` contract); the local checkpoint is removed after."""
        try:
            with open(os.path.join(self.local_dir, META_FILE_NAME), encoding="utf-8") as f:
                meta = json.load(f)
            backend = self.open_existing(self.local_dir, meta, max_parallelism=int(meta["max_parallelism"]))
            try:
                return backend.snapshot()
            finally:
                backend.dispose()
        finally:
            self.dispose()

    def discard_uploads(self) -> None:
        """The checkpoint fails after this upload (another operator's failed): the shared files only it wrote go —
        the JobMaster never hears of them."""
        self.strategy.notify_checkpoint_aborted(self.checkpoint_id)
        _delete_quietly(self.new_shared)
        self.new_shared = []

    def cancel(self) -> None:
        """The checkpoint was aborted: an upload in progress stops; a snapshot not uploaded yet is dropped."""
        self.cancelled.set()

    def dispose(self) -> None:
        shutil.rmtree(self.local_dir, ignore_errors=True)


class RocksIncrementalSnapshotStrategy:
    """What one backend uploaded per checkpoint, and which checkpoint it knows as completed (Flink's
    ``uploadedSstFiles`` and ``lastCompletedCheckpointId``). Uploads register from the asynchronous thread,
    confirmations from the task thread: a lock keeps the map consistent."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._uploaded: dict[int, dict[str, StateHandle]] = {}
        self._last_completed = -1

    def restored(self, checkpoint_id: int, shared: Mapping[str, StateHandle]) -> None:
        """The instance was restored from ``checkpoint_id`` as it is: its SST files are in ``shared/`` already."""
        with self._lock:
            self._uploaded = {checkpoint_id: dict(shared)}
            self._last_completed = checkpoint_id

    def baseline(self) -> dict[str, StateHandle]:
        with self._lock:
            return dict(self._uploaded.get(self._last_completed, {}))

    def uploaded(self, checkpoint_id: int, shared: Mapping[str, StateHandle]) -> None:
        with self._lock:
            if checkpoint_id > self._last_completed:
                self._uploaded[checkpoint_id] = dict(shared)

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        with self._lock:
            if checkpoint_id not in self._uploaded or checkpoint_id <= self._last_completed:
                return
            self._last_completed = checkpoint_id
            self._uploaded = {c: files for c, files in self._uploaded.items() if c >= checkpoint_id}

    def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        with self._lock:
            self._uploaded.pop(checkpoint_id, None)

    @property
    def last_completed_checkpoint_id(self) -> int:
        return self._last_completed

    # -- the synchronous part -----------------------------------------------------------------------------
    def snapshot(
        self, backend: RocksDBKeyedStateBackend, checkpoint_id: int, key_group_range: KeyGroupRange
    ) -> IncrementalSnapshot:
        """Flush, take the RocksDB checkpoint, write the meta: O(number of files), on the task thread."""
        families = all_column_families(backend.path, backend.options)
        for name in ("default", *families):  # every column family, also those the backend's tables do not know
            (backend.db if name == "default" else backend.db.get_column_family(name)).flush(True)
        local_dir = local_checkpoint_dir(backend.path, checkpoint_id)
        Checkpoint(backend.db).create_checkpoint(local_dir)
        try:
            with open(os.path.join(local_dir, META_FILE_NAME), "w", encoding="utf-8") as f:
                json.dump(backend_meta(backend, key_group_range, families), f, sort_keys=True)
        except BaseException:
            shutil.rmtree(local_dir, ignore_errors=True)
            raise
        return IncrementalSnapshot(
            checkpoint_id=checkpoint_id,
            key_group_range=key_group_range,
            local_dir=local_dir,
            baseline=self.baseline(),
            strategy=self,
            open_existing=type(backend).open_existing,
        )


def all_column_families(path: str, options: Any) -> list[str]:
    """The column families of the database in ``path`` but the default one, as its MANIFEST lists them."""
    return sorted(name for name in Rdict.list_cf(path, options) if name != "default")


def backend_meta(
    backend: RocksDBKeyedStateBackend, key_group_range: KeyGroupRange, families: list[str]
) -> dict[str, Any]:
    """The backend's own meta (Flink's ``KeyedBackendSerializationProxy``): states, kinds, column families."""
    return {
        "format": META_FORMAT,
        "version": META_VERSION,
        "max_parallelism": backend.max_parallelism,
        "key_groups": [key_group_range.start, key_group_range.end],
        "kinds": {name: list(kind) for name, kind in sorted(backend.registered_kinds().items())},
        "column_families": sorted({*families, *backend.column_families()}),
    }


def _delete_quietly(handles: list[StateHandle]) -> None:
    import fsspec.core

    for handle in handles:
        try:
            fs, path = fsspec.core.url_to_fs(handle.uri)
            fs.rm_file(path)
        except Exception as exc:  # best effort: an orphan in shared/ costs space, never correctness
            log.warning("could not delete %s after a failed upload: %s", handle.uri, exc)
