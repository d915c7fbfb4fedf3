"""``TaskLocalStateStore``: one subtask's local copies of its checkpointed state (Flink's ``TaskLocalStateStoreImpl``,
``LocalRecoveryConfig`` and ``LocalSnapshotDirectoryProvider``), for local recovery.

With ``state.backend.local-recovery`` every state file a subtask writes into a checkpoint is also written to its
TaskManager's disk (chunk by chunk as it is written: :meth:`TaskLocalStateStore.open_copy`), as a whole file under
the same name::

    <taskmanager.state.local.root-dirs>/jid_<job id>/vtx_<vertex id>_sti_<subtask index>/chk_<n>/<state file name>

A restarted subtask on the same TaskManager — or on one restarted with the same resource id, whose working
directory holds the same root — reads a state file's slice from the local copy when the copy of exactly that
checkpoint exists and the slice's size and checksum match the handle's; otherwise it reads the remote file
(:func:`strom.runtime.checkpoint.storage.read_state`, which calls :meth:`TaskLocalStateStore.retrieve` first).

An incremental RocksDB checkpoint's files are kept the same way, every file the checkpoint references (also the SST
files an earlier checkpoint uploaded): SST files as hard links of the local RocksDB checkpoint's (immutable, so they
cost no disk), the rest as copies (:meth:`TaskLocalStateStore.keep_file`); its restore links each one whose size and
checksum match into the new instance instead of downloading it (:meth:`TaskLocalStateStore.retrieve_file`).

A completed checkpoint prunes every older one (Flink keeps only what the latest confirmed checkpoint needs), an
aborted one is removed, and the TaskManager removes a job's directory when the job ends (:func:`discard_job`).
A copy is written as ``<name>.inprogress`` and renamed, so a crash never leaves a partial file under the real name.
Thread-safety: one store per task attempt; its writes, prunes and the counters are guarded by one lock.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import threading
from dataclasses import dataclass, replace
from typing import BinaryIO

import xxhash

from strom.runtime.checkpoint.checksum import checksum
from strom.runtime.checkpoint.metadata import StateHandle

__all__ = [
    "LocalCopy",
    "LocalRecoveryConfig",
    "LocalRestoreStatistics",
    "TaskLocalStateStore",
    "discard_job",
    "local_state_root",
]

log = logging.getLogger(__name__)

_CHECKPOINT_DIR = re.compile(r"^chk_(\d+)$")
_IN_PROGRESS = ".inprogress"
_CHUNK = 4 << 20


def local_state_root(configured: str, working_dir: str) -> str:
    """The TaskManager's local state root: the first of ``taskmanager.state.local.root-dirs`` (``,`` or ``:``
    separated), else ``localState`` in its working directory (Flink's default)."""
    first = re.split(r"[,:]", configured.strip())[0].strip() if configured.strip() else ""
    return os.path.abspath(first or os.path.join(working_dir, "localState"))


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalRecoveryConfig:
    """Whether a task keeps local copies, and under which root (Flink's ``LocalRecoveryConfig``)."""

    enabled: bool
    root: str

    def store_for(self, job_id: str, vertex_id: str, subtask_index: int) -> TaskLocalStateStore | None:
        """The store of one subtask (None: local recovery is off)."""
        if not self.enabled or not self.root:
            return None
        return TaskLocalStateStore(self.root, job_id, vertex_id, subtask_index)


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalRestoreStatistics:
    """What one restore read: from the local copies and from the checkpoint directory."""

    local_bytes: int = 0
    local_reads: int = 0
    remote_bytes: int = 0
    remote_reads: int = 0
    mismatches: int = 0


def _job_dir(root: str, job_id: str) -> str:
    return os.path.join(root, f"jid_{job_id}")


def discard_job(root: str, job_id: str) -> None:
    """The job ended: remove every local copy of its state under ``root`` (a missing directory is fine)."""
    shutil.rmtree(_job_dir(root, job_id), ignore_errors=True)


def _file_name(remote_uri: str) -> str:
    return remote_uri.rstrip("/").rsplit("/", 1)[-1]


def _link_or_copy(source: str, target: str, remote_uri: str) -> None:
    """A hard link for an SST file (immutable: RocksDB never writes one again), else — or across file systems — a
    copy (a RocksDB instance opened over its files may append to a MANIFEST)."""
    if remote_uri.endswith(".sst"):
        with contextlib.suppress(OSError):  # another file system: a copy
            os.link(source, target)
            return
    shutil.copyfile(source, target)


def _matches(path: str, handle: StateHandle) -> bool:
    """Whether the file ``path`` holds exactly ``handle``'s bytes (size and xxh3 checksum, read in chunks)."""
    hasher = xxhash.xxh3_64()
    size = 0
    try:
        with open(path, "rb") as f:
            while chunk := f.read(_CHUNK):
                hasher.update(chunk)
                size += len(chunk)
    except FileNotFoundError:
        return False
    except OSError as e:
        log.warning("local state copy %s could not be read (%s); reading %s instead", path, e, handle.uri)
        return False
    if size != handle.size or hasher.hexdigest() != handle.checksum:
        log.warning("local state copy %s does not match its handle; reading %s instead", path, handle.uri)
        return False
    return True


class LocalCopy:
    """One local copy being written (:meth:`TaskLocalStateStore.open_copy`)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._temporary = path + _IN_PROGRESS
        self._file: BinaryIO | None = open(self._temporary, "wb")  # noqa: SIM115 - closed by commit() or abort()

    def write(self, data: bytes | memoryview) -> None:
        assert self._file is not None, "a local copy is written before it is committed"
        self._file.write(data)

    def commit(self) -> None:
        """Close the copy and give it its name."""
        if self._file is not None:
            self._file.close()
            self._file = None
            os.replace(self._temporary, self.path)

    def abort(self) -> None:
        """Close and remove the partial copy."""
        if self._file is not None:
            self._file.close()
            self._file = None
            with contextlib.suppress(OSError):
                os.remove(self._temporary)


class TaskLocalStateStore:
    """The local copies of one subtask's checkpoints (see the module docstring)."""

    def __init__(self, root: str, job_id: str, vertex_id: str, subtask_index: int) -> None:
        self.directory = os.path.join(_job_dir(root, job_id), f"vtx_{vertex_id}_sti_{subtask_index}")
        self._lock = threading.Lock()
        self._stats = LocalRestoreStatistics()

    def __repr__(self) -> str:
        return f"TaskLocalStateStore({self.directory!r})"

    def checkpoint_dir(self, checkpoint_id: int) -> str:
        return os.path.join(self.directory, f"chk_{checkpoint_id}")

    def local_path(self, checkpoint_id: int, remote_uri: str) -> str:
        """Where the local copy of the state file ``remote_uri`` of checkpoint ``checkpoint_id`` is."""
        return os.path.join(self.checkpoint_dir(checkpoint_id), _file_name(remote_uri))

    # -- write side (the task's asynchronous checkpoint thread) ---------------------------------------------
    def open_copy(self, checkpoint_id: int, remote_uri: str) -> LocalCopy:
        """Start the local copy of the state file ``remote_uri`` of a checkpoint (written as ``.inprogress``,
        renamed by :meth:`LocalCopy.commit`)."""
        path = self.local_path(checkpoint_id, remote_uri)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        return LocalCopy(path)

    def keep_file(self, checkpoint_id: int, remote_uri: str, local_path: str) -> None:
        """Keep the local file ``local_path`` (an SST file of an incremental RocksDB checkpoint, uploaded as
        ``remote_uri``) as its local copy: a hard link (SST files are immutable), a copy across file systems."""
        path = self.local_path(checkpoint_id, remote_uri)
        temporary = path + _IN_PROGRESS
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            os.remove(temporary)
        _link_or_copy(local_path, temporary, remote_uri)
        os.replace(temporary, path)

    # -- confirm, abort, prune -----------------------------------------------------------------------------
    def checkpoint_ids(self) -> list[int]:
        """The checkpoints with a local directory, oldest first."""
        try:
            names = os.listdir(self.directory)
        except OSError:
            return []
        return sorted(int(m.group(1)) for m in map(_CHECKPOINT_DIR.match, names) if m)

    def confirm_checkpoint(self, checkpoint_id: int) -> None:
        """Checkpoint ``checkpoint_id`` completed: the local copies of every older one are no longer needed."""
        with self._lock:
            for cid in self.checkpoint_ids():
                if cid < checkpoint_id:
                    shutil.rmtree(self.checkpoint_dir(cid), ignore_errors=True)

    def abort_checkpoint(self, checkpoint_id: int) -> None:
        """Checkpoint ``checkpoint_id`` was aborted: its local copies go."""
        with self._lock:
            shutil.rmtree(self.checkpoint_dir(checkpoint_id), ignore_errors=True)

    def discard(self) -> None:
        """Remove every local copy of this subtask."""
        with self._lock:
            shutil.rmtree(self.directory, ignore_errors=True)

    # -- read side (the task thread, INITIALIZING) --------------------------------------------------------
    def retrieve_file(self, checkpoint_id: int, handle: StateHandle, target: str) -> bool:
        """Put the local copy of ``handle``'s whole file (an SST file of checkpoint ``checkpoint_id``) at ``target``
        — a hard link, a copy across file systems — when it exists with the handle's size and checksum; ``False``
        (counted as read remotely) otherwise. The checksum is checked as it is read: the copy is verified."""
        path = self.local_path(checkpoint_id, handle.uri)
        found = handle.checksum is not None and _matches(path, handle)
        if found:
            _link_or_copy(path, target, handle.uri)
        with self._lock:
            s = self._stats
            if found:
                self._stats = replace(s, local_bytes=s.local_bytes + handle.size, local_reads=s.local_reads + 1)
            else:
                self._stats = replace(s, remote_bytes=s.remote_bytes + handle.size, remote_reads=s.remote_reads + 1)
        return found

    def retrieve(self, checkpoint_id: int, handle: StateHandle) -> bytes | None:
        """The bytes of ``handle`` from the local copy of checkpoint ``checkpoint_id``'s file, when it exists and
        the bytes match the handle's size and checksum; ``None`` (counted as read remotely) otherwise, with a
        warning naming the local file when it exists but does not match."""
        data = self._read_local(checkpoint_id, handle) if handle.checksum is not None else None
        with self._lock:
            s = self._stats
            if data is None:
                self._stats = replace(s, remote_bytes=s.remote_bytes + handle.size, remote_reads=s.remote_reads + 1)
            else:
                self._stats = replace(s, local_bytes=s.local_bytes + len(data), local_reads=s.local_reads + 1)
        return data

    def _read_local(self, checkpoint_id: int, handle: StateHandle) -> bytes | None:
        path = self.local_path(checkpoint_id, handle.uri)
        try:
            with open(path, "rb") as f:
                f.seek(handle.offset)
                data = f.read(handle.size)
        except FileNotFoundError:
            return None
        except OSError as e:
            log.warning("local state copy %s could not be read (%s); reading %s instead", path, e, handle.uri)
            self._count_mismatch()
            return None
        if len(data) != handle.size or checksum(data) != handle.checksum:
            log.warning(
                "local state copy %s does not match checkpoint %d's handle (bytes %d–%d: expected %d bytes with "
                "checksum %s; got %d bytes that differ); reading %s instead",
                path,
                checkpoint_id,
                handle.offset,
                handle.offset + handle.size,
                handle.size,
                handle.checksum,
                len(data),
                handle.uri,
            )
            self._count_mismatch()
            return None
        return data

    def _count_mismatch(self) -> None:
        with self._lock:
            self._stats = replace(self._stats, mismatches=self._stats.mismatches + 1)

    def statistics(self) -> LocalRestoreStatistics:
        """What :meth:`retrieve` read so far, locally and remotely."""
        with self._lock:
            return self._stats
