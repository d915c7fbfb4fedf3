"""``TaskLocalStateStore``: one subtask's local copies of its checkpointed state (Flink's ``TaskLocalStateStoreImpl``,
``LocalRecoveryConfig`` and ``LocalSnapshotDirectoryProvider``), for local recovery.

With ``state.backend.local-recovery`` every state file a subtask writes into a checkpoint is also written to its
TaskManager's disk, as a whole file under the same name::

    <taskmanager.state.local.root-dirs>/jid_<job id>/vtx_<vertex id>_sti_<subtask index>/chk_<n>/<state file name>

A restarted subtask on the same TaskManager — or on one restarted with the same resource id, whose working
directory holds the same root — reads a state file's slice from the local copy when the copy of exactly that
checkpoint exists and the slice's size and checksum match the handle's; otherwise it reads the remote file
(:func:`strom.runtime.checkpoint.storage.read_state`, which calls :meth:`TaskLocalStateStore.retrieve` first).

A completed checkpoint prunes every older one (Flink keeps only what the latest confirmed checkpoint needs), an
aborted one is removed, and the TaskManager removes a job's directory when the job ends (:func:`discard_job`).
A copy is written as ``<name>.inprogress`` and renamed, so a crash never leaves a partial file under the real name.
Thread-safety: one store per task attempt; its writes, prunes and the counters are guarded by one lock.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import threading
from collections.abc import Iterable
from dataclasses import dataclass, replace

from strom.runtime.checkpoint.checksum import checksum
from strom.runtime.checkpoint.metadata import StateHandle

__all__ = [
    "LocalRecoveryConfig",
    "LocalRestoreStatistics",
    "TaskLocalStateStore",
    "discard_job",
    "local_state_root",
]

log = logging.getLogger(__name__)

_CHECKPOINT_DIR = re.compile(r"^chk_(\d+)$")
_IN_PROGRESS = ".inprogress"


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
    def keep(self, checkpoint_id: int, remote_uri: str, chunks: Iterable[bytes]) -> None:
        """Write the local copy of the state file ``remote_uri`` (its bytes, in ``chunks``) of a checkpoint."""
        path = self.local_path(checkpoint_id, remote_uri)
        temporary = path + _IN_PROGRESS
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(temporary, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
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
