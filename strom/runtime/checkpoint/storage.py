"""Where checkpoints and savepoints live (Flink's ``FsCheckpointStorageAccess``, ``FsCheckpointStorageLocation``
and ``CompletedCheckpointStore``).

Layout, through fsspec (``file://``, a plain local path, ``memory://``, ``s3://``, ...)::

    <execution.checkpointing.dir>/<job id>/chk-<n>/<state files>     written by the tasks
    <execution.checkpointing.dir>/<job id>/chk-<n>/_metadata          written last, by the JobMaster
    <execution.checkpointing.dir>/<job id>/shared/<unique>.sst        incremental RocksDB checkpoints' SST files,
                                                                       referenced by every checkpoint that holds them
    <savepoint target dir>/savepoint-<job id[:6]>-<random hex>/...    a savepoint: same content, never pruned

Shared files are counted by the :class:`~strom.runtime.checkpoint.shared_state_registry.SharedStateRegistry` and
deleted when no retained checkpoint references them any more.

Every state file and each key-group slice of one carries an xxh3-64 checksum in its handle, taken as the bytes
are written and verified as they are read (:mod:`strom.runtime.checkpoint.checksum`); ``_metadata`` carries its
own. A ``chk-<n>`` directory without ``_metadata`` is a checkpoint that never completed. A
:class:`CheckpointStorageLocation` holds only its directory URI, so it pickles into checkpoint barriers and
reaches the TaskManager processes; each call opens the file system anew.
"""

from __future__ import annotations

import contextlib
import enum
import errno
import logging
import os
import pickletools
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import xxhash

from strom.exceptions import CheckpointStorageError, ConfigurationError, CorruptStateError
from strom.runtime.checkpoint.checksum import (
    CHECKSUM_ALGORITHM,
    ChecksumWriter,
    checksum,
    describe_state,
    older_checkpoint_hint,
    verify_checksum,
)
from strom.runtime.checkpoint.local_state_copy import LocalStateCopy, LocalTee
from strom.runtime.checkpoint.metadata import CheckpointMetadata, StateHandle
from strom.runtime.checkpoint.shared_state_registry import RestoreMode, SharedStateRegistry, shared_handles_of

__all__ = [
    "METADATA_FILE_NAME",
    "CheckpointStorage",
    "CheckpointStorageLocation",
    "ExternalizedCheckpointRetention",
    "check_verifiable",
    "download_file",
    "read_state",
    "resolve_checkpoint_pointer",
    "verify_state_files",
]

log = logging.getLogger(__name__)

METADATA_FILE_NAME = "_metadata"
SHARED_STATE_DIR = "shared"
_FILE_CHUNK = 4 << 20
_IN_PROGRESS_SUFFIX = ".inprogress"
_CHECKPOINT_DIR = re.compile(r"^chk-(\d+)$")


class ExternalizedCheckpointRetention(enum.Enum):
    """``execution.checkpointing.externalized-checkpoint-retention``: what happens to the retained checkpoints
    once the job reaches a globally terminal status (Flink's ``CheckpointProperties`` per retention policy)."""

    NO_EXTERNALIZED_CHECKPOINTS = "NO_EXTERNALIZED_CHECKPOINTS"
    """Deleted whenever the job ends: FINISHED, CANCELED or FAILED."""
    DELETE_ON_CANCELLATION = "DELETE_ON_CANCELLATION"
    """Deleted when the job FINISHED or was CANCELED; kept when it FAILED."""
    RETAIN_ON_CANCELLATION = "RETAIN_ON_CANCELLATION"
    """Kept when the job was CANCELED or FAILED; deleted when it FINISHED (nothing is left to resume)."""

    @classmethod
    def parse(cls, value: str | ExternalizedCheckpointRetention) -> ExternalizedCheckpointRetention:
        if isinstance(value, ExternalizedCheckpointRetention):
            return value
        try:
            return cls(str(value).strip().upper())
        except ValueError:
            choices = ", ".join(m.value for m in cls)
            raise ConfigurationError(
                f"execution.checkpointing.externalized-checkpoint-retention expects one of {choices}; "
                f"got {value!r}; hint: RETAIN_ON_CANCELLATION keeps the last checkpoint to resume from"
            ) from None

    def discards_on(self, job_status: str) -> bool:
        """Whether the job's checkpoints are deleted when it ends in ``job_status``.

        Statuses that are not globally terminal (a JobMaster shutting down while the job lives on elsewhere,
        Flink's SUSPENDED) never discard: the checkpoints are what the job resumes from."""
        status = job_status.strip().upper()
        if status == "FINISHED":
            return True
        if status in ("CANCELED", "CANCELLED"):
            return self is not ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION
        if status == "FAILED":
            return self is ExternalizedCheckpointRetention.NO_EXTERNALIZED_CHECKPOINTS
        return False


# -- URIs and file systems --------------------------------------------------------------------------------------
def _normalize(uri: str) -> str:
    """A plain local path becomes absolute (TaskManagers may run in another working directory); URIs stay."""
    if "::" in uri:
        return uri
    if "://" in uri:
        scheme, rest = uri.split("://", 1)
        return f"{scheme}://{rest.rstrip('/') or rest[:1]}"
    return os.path.abspath(os.path.expanduser(uri))


def _join(directory: str, name: str) -> str:
    return directory.rstrip("/") + "/" + name


def _fs(uri: str) -> tuple[Any, str]:
    import fsspec.core  # imported on first use: a job without checkpoints never needs it

    try:
        fs, path = fsspec.core.url_to_fs(uri)
    except (ImportError, ValueError) as e:
        raise CheckpointStorageError(
            f"expected a file system URI fsspec can open; got {uri!r} ({e}); "
            "hint: use file://, a local path, or install the fsspec implementation for the scheme (e.g. s3fs)"
        ) from e
    return fs, str(path)


def _is_local(fs: Any) -> bool:
    protocol = fs.protocol
    protocols = (protocol,) if isinstance(protocol, str) else tuple(protocol)
    return "file" in protocols or "local" in protocols


def _check_name(name: str) -> None:
    if not name or "/" in name or "\\" in name or name in (".", "..") or name.startswith(METADATA_FILE_NAME):
        raise CheckpointStorageError(
            f"expected a state file name inside the checkpoint directory; got {name!r}; "
            f"hint: no '/', '\\', '.' or '..', and names starting with {METADATA_FILE_NAME!r} are reserved"
        )


def _remove_tree(uri: str, attempts: int = 3) -> None:
    fs, path = _fs(uri)
    try:
        fs.rm(path, recursive=True)
    except FileNotFoundError:
        return  # already gone: nothing to remove
    except OSError as e:
        if e.errno == errno.ENOTEMPTY and attempts > 1:
            # a task's asynchronous part still wrote into an aborted checkpoint: delete what it added
            _remove_tree(uri, attempts - 1)
            return
        raise CheckpointStorageError(
            f"expected to delete {uri}; got {e!r}; hint: check permissions on the checkpoint directory"
        ) from e


# -- one checkpoint's directory ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointStorageLocation:
    """The directory of one checkpoint or savepoint (Flink's ``FsCheckpointStorageLocation``).

    Only the URI is stored: the location travels inside checkpoint barriers to TaskManager processes.
    """

    uri: str

    @property
    def checkpoint_id(self) -> int | None:
        """The id of a ``chk-<n>`` directory; ``None`` for a savepoint's (which keeps no local copies)."""
        match = _CHECKPOINT_DIR.match(self.uri.rstrip("/").rsplit("/", 1)[-1])
        return int(match.group(1)) if match else None

    def _local_tee(self, local: LocalStateCopy | None, remote_uri: str) -> LocalTee:
        """Local recovery's write hook: every state file written into a checkpoint (not a savepoint) is also copied
        by ``local``, chunk by chunk as it is written."""
        return LocalTee(local, self.checkpoint_id, remote_uri)

    def write_state(self, name: str, data: bytes, *, local: LocalStateCopy | None = None) -> StateHandle:
        """Write one state file ``<uri>/<name>`` and return its handle, with the checksum of ``data``; ``local``:
        keep a local copy too (local recovery)."""
        _check_name(name)
        fs, directory = _fs(self.uri)
        target = _join(self.uri, name)
        data = data if isinstance(data, bytes) else bytes(data)
        try:
            fs.makedirs(directory, exist_ok=True)
            fs.pipe_file(_join(directory, name), data)
        except OSError as e:
            raise CheckpointStorageError(
                f"expected to write the state file {target}; got {e!r}; "
                "hint: check that execution.checkpointing.dir is writable from every TaskManager"
            ) from e
        tee = self._local_tee(local, target)
        tee.write(data)
        tee.commit()
        return StateHandle(uri=target, size=len(data), checksum=checksum(data))

    def write_state_slices(
        self,
        name: str,
        parts: Mapping[int, bytes] | Iterable[tuple[int, bytes]],
        *,
        local: LocalStateCopy | None = None,
    ) -> dict[int, StateHandle]:
        """Write ``parts`` (e.g. the key groups of one operator subtask: a mapping, or ``(key, bytes)`` pairs made
        one at a time — a streamed full snapshot) one after the other into one file ``<uri>/<name>``; return a
        handle per part, a slice of that file with the part's checksum (taken piece by piece as the part is
        written). Each part is written (and copied locally) as it comes, never all of them held at once; no part:
        no file. One file instead of one per part: writing is a few system calls, which matters when the writing
        thread competes for the GIL. Errors of the parts' producer propagate as they are."""
        pairs = iter(parts.items() if isinstance(parts, Mapping) else parts)
        first = next(pairs, None)
        if first is None:
            return {}
        _check_name(name)
        fs, directory = _fs(self.uri)
        target = _join(self.uri, name)
        handles: dict[int, StateHandle] = {}
        offset = 0
        tee = self._local_tee(local, target)
        try:
            fs.makedirs(directory, exist_ok=True)
            with fs.open(_join(directory, name), "wb") as f:  # streamed: no joined copy of the whole state
                writer = ChecksumWriter(_TeeFile(f, tee))
                item: tuple[int, bytes] | None = first
                while item is not None:
                    key, data = item
                    digest = writer.write(data)
                    handles[key] = StateHandle(uri=target, size=len(data), offset=offset, checksum=digest)
                    offset += len(data)
                    item = next(pairs, None)
        except OSError as e:
            tee.abort()
            raise CheckpointStorageError(
                f"expected to write the state file {target}; got {e!r}; "
                "hint: check that execution.checkpointing.dir is writable from every TaskManager"
            ) from e
        except BaseException:
            tee.abort()
            raise
        tee.commit()
        return handles

    def upload_file(
        self, name: str, local_path: str, *, shared: bool, local: LocalStateCopy | None = None
    ) -> StateHandle:
        """Copy the local file ``local_path`` to ``<uri>/<name>`` — or, ``shared``, to the job's
        ``<uri>/../shared/<name>`` (incremental checkpoints; ``name`` must be unique there) — streamed, with its
        checksum taken on the way; return its handle. ``local``: local recovery keeps ``local_path`` too
        (:meth:`keep_local_file`), so a restore on this TaskManager needs no download of it."""
        _check_name(name)
        directory_uri = _join(self.uri.rstrip("/").rsplit("/", 1)[0], SHARED_STATE_DIR) if shared else self.uri
        fs, directory = _fs(directory_uri)
        target = _join(directory_uri, name)
        size = 0
        try:
            fs.makedirs(directory, exist_ok=True)
            with open(local_path, "rb") as source, fs.open(_join(directory, name), "wb") as f:
                hasher = xxhash.xxh3_64()
                while chunk := source.read(_FILE_CHUNK):
                    hasher.update(chunk)
                    f.write(chunk)
                    size += len(chunk)
        except OSError as e:
            raise CheckpointStorageError(
                f"expected to upload {local_path} as the state file {target}; got {e!r}; "
                "hint: check that execution.checkpointing.dir is writable from every TaskManager"
            ) from e
        self.keep_local_file(local, target, local_path)
        return StateHandle(uri=target, size=size, checksum=hasher.hexdigest())

    def keep_local_file(self, local: LocalStateCopy | None, remote_uri: str, local_path: str) -> None:
        """Local recovery of a file this checkpoint references (uploaded now or by an earlier checkpoint — an SST
        file of an incremental RocksDB checkpoint): ``local`` keeps ``local_path`` as its copy in this checkpoint's
        local directory. Not for a savepoint; a copy that cannot be kept is only warned about."""
        checkpoint_id = self.checkpoint_id
        if local is None or checkpoint_id is None:
            return
        try:
            local.keep_file(checkpoint_id, remote_uri, local_path)
        except OSError as e:
            log.warning("the local copy of %s was not kept (%s); its restore downloads it", remote_uri, e)

    def write_metadata(self, metadata: CheckpointMetadata) -> None:
        """Write ``_metadata``, the mark of a completed checkpoint, after every state file.

        On local file systems it is written as ``_metadata.inprogress`` and renamed, so a crash never leaves a
        half-written ``_metadata``; object stores (s3, ``memory://``) make a single put visible at once.
        The metadata's pointer is set to this location, so state handles inside it are stored relative.
        """
        if metadata.external_pointer != self.uri:
            metadata = replace(metadata, external_pointer=self.uri)
        data = metadata.to_json().encode()
        fs, directory = _fs(self.uri)
        final = _join(directory, METADATA_FILE_NAME)
        try:
            fs.makedirs(directory, exist_ok=True)
            if _is_local(fs):
                temporary = final + _IN_PROGRESS_SUFFIX
                fs.pipe_file(temporary, data)
                fs.mv(temporary, final)
            else:
                fs.pipe_file(final, data)
        except OSError as e:
            raise CheckpointStorageError(
                f"expected to write {_join(self.uri, METADATA_FILE_NAME)}; got {e!r}; "
                "hint: check that execution.checkpointing.dir is writable from the JobManager"
            ) from e

    def dispose(self) -> None:
        """Delete the directory and everything in it; a missing directory is fine."""
        _remove_tree(self.uri)


def read_state(
    handle: StateHandle,
    *,
    operator_id: str = "",
    checkpoint_id: int = -1,
    what: str = "state",
    local: LocalStateCopy | None = None,
) -> bytes:
    """The bytes of a state file (or of its slice), checked against the size and the checksum recorded when it
    was written. A mismatch raises :class:`CorruptStateError` naming the file, ``operator_id`` and
    ``checkpoint_id``; ``what`` names the bytes in it (e.g. ``"keyed state of key group 7"``). Handles of
    checkpoints written before checksums (``checksum`` None) are checked by size only. ``local``: local
    recovery's one read hook — its copy of the file, when it has one that matches, is read instead."""
    if local is not None and checkpoint_id >= 0:
        kept = local.retrieve(checkpoint_id, handle)
        if kept is not None:
            return kept
    fs, path = _fs(handle.uri)
    try:
        data: bytes = fs.cat_file(path, start=handle.offset, end=handle.offset + handle.size)
    except FileNotFoundError:
        raise CheckpointStorageError(
            f"expected the state file {handle.uri}; got no such file; hint: the checkpoint directory was "
            "moved or partly deleted — restore from another checkpoint or savepoint, or move it back whole"
        ) from None
    except OSError as e:
        raise CheckpointStorageError(
            f"expected to read the state file {handle.uri}; got {e!r}; hint: check the file system is reachable"
        ) from e
    end = handle.offset + handle.size
    if len(data) != handle.size:
        raise CorruptStateError(
            f"state file {handle.uri}: expected {handle.size} bytes got {len(data)} (at offset {handle.offset}: "
            f"{describe_state(what, operator_id, checkpoint_id)}); hint: the file was truncated or overwritten — "
            f"{older_checkpoint_hint(checkpoint_id)}",
            file=handle.uri,
            operator_id=operator_id,
            checkpoint_id=checkpoint_id,
        )
    if handle.checksum is not None:
        verify_checksum(
            data,
            handle.checksum,
            file=handle.uri,
            what=f"{what} (bytes {handle.offset}–{end} of the file)",
            operator_id=operator_id,
            checkpoint_id=checkpoint_id,
        )
    elif not _is_pickle_stream(data):  # no checksum to tell: at least a damaged stream is named as damage
        raise CorruptStateError(
            f"state file {handle.uri}: expected {describe_state(what, operator_id, checkpoint_id)} as a pickle "
            f"stream (bytes {handle.offset}–{end}); got bytes that are not one; hint: the checkpoint was written "
            f"before checksums and is damaged — {older_checkpoint_hint(checkpoint_id)}",
            file=handle.uri,
            operator_id=operator_id,
            checkpoint_id=checkpoint_id,
        )
    return data


def download_file(
    handle: StateHandle,
    local_path: str | None,
    *,
    operator_id: str = "",
    checkpoint_id: int = -1,
    what: str = "state file",
) -> int:
    """Stream the whole state file of ``handle`` to ``local_path`` (``None``: only check it), verifying its size and
    checksum as :func:`read_state` does; returns its size. A missing or damaged file raises
    :class:`CheckpointStorageError` / :class:`CorruptStateError` naming it, ``what``, the operator and the
    checkpoint; a damaged download is removed."""
    fs, path = _fs(handle.uri)
    where = describe_state(what, operator_id, checkpoint_id)
    size = 0
    hasher = xxhash.xxh3_64()
    try:
        with fs.open(path, "rb") as source, open(local_path, "wb") if local_path else _NullFile() as target:
            while chunk := source.read(_FILE_CHUNK):
                hasher.update(chunk)
                target.write(chunk)
                size += len(chunk)
    except FileNotFoundError:
        raise CheckpointStorageError(
            f"expected the state file {handle.uri} ({where}); got no such file; hint: a shared file is deleted only "
            "when no retained checkpoint references it, so it was removed by hand or the directory was moved — "
            f"{older_checkpoint_hint(checkpoint_id)}"
        ) from None
    except OSError as e:
        raise CheckpointStorageError(
            f"expected to read the state file {handle.uri} ({where}); got {e!r}; hint: check the file system is "
            "reachable and the local directory writable"
        ) from e
    damage = ""
    if size != handle.size:
        damage = f"{handle.size} bytes got {size}"
    elif handle.checksum is not None and hasher.hexdigest() != handle.checksum:
        damage = f"the {CHECKSUM_ALGORITHM} checksum {handle.checksum} got {hasher.hexdigest()}"
    if damage:
        if local_path:
            with contextlib.suppress(OSError):
                os.remove(local_path)
        raise CorruptStateError(
            f"state file {handle.uri}: expected {damage} ({where}); hint: the file was damaged after it was "
            f"written — {older_checkpoint_hint(checkpoint_id)}",
            file=handle.uri,
            operator_id=operator_id,
            checkpoint_id=checkpoint_id,
        )
    return size


class _TeeFile:
    """A file object writing into the remote file and the local copy."""

    def __init__(self, file: Any, tee: LocalTee) -> None:
        self._file = file
        self._tee = tee

    def write(self, data: bytes | memoryview) -> int:
        written: int = self._file.write(data)
        self._tee.write(data)
        return written


class _NullFile:
    def __enter__(self) -> _NullFile:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def write(self, data: bytes) -> int:
        return len(data)


def _is_pickle_stream(data: bytes) -> bool:
    """Whether ``data`` parses as one pickle stream, read without running it (``pickletools.genops``)."""
    try:
        for _ in pickletools.genops(data):
            pass
    except Exception:  # any parse error: not a well-formed stream
        return False
    return True


def check_verifiable(metadata: CheckpointMetadata, restore_unverified: bool) -> None:
    """Refuse to restore a checkpoint written before checksums unless ``execution.savepoint.restore-unverified``."""
    if metadata.verified or restore_unverified:
        if not metadata.verified:
            log.warning(
                "restoring %s without verifying its state: it was written before checksums (format version 1)",
                metadata.external_pointer,
            )
        return
    raise CheckpointStorageError(
        f"expected a checkpoint whose state files carry checksums; got {metadata.external_pointer}, written before "
        "strom checked its state (metadata format version 1), so damage to it cannot be detected; hint: set "
        "execution.savepoint.restore-unverified: true to restore it anyway, then take a savepoint (a new one is "
        "verified)"
    )


def verify_state_files(metadata: CheckpointMetadata) -> int:
    """Read every state file of a checkpoint or savepoint and check its size and checksum (:func:`read_state`),
    one slice at a time; returns the bytes checked. Raises :class:`CorruptStateError` at the first damage."""
    checked = 0
    cid = metadata.checkpoint_id
    for op_id, op in metadata.operator_states.items():
        parts = [
            *((h, f"keyed state of key group {kg}") for kg, h in sorted(op.keyed.items())),
            *((h, f"operator state of subtask {i}") for i, h in sorted(op.operator.items())),
            *((h, f"in-flight data (channel state) of subtask {i}") for i, h in sorted(op.channel.items())),
            *(((op.coordinator, "coordinator state"),) if op.coordinator is not None else ()),
        ]
        for handle, what in parts:
            checked += len(read_state(handle, operator_id=op_id, checkpoint_id=cid, what=what))
        for i, inc in sorted(op.incremental.items()):
            for kind, files in (("shared", inc.shared), ("private", inc.private)):
                for name, handle in sorted(files.items()):
                    what = f"{kind} RocksDB file {name} of subtask {i}"
                    checked += download_file(handle, None, operator_id=op_id, checkpoint_id=cid, what=what)
    return checked


def resolve_checkpoint_pointer(path: str) -> tuple[str, CheckpointMetadata]:
    """Find a checkpoint or savepoint from its directory or its ``_metadata`` file (Flink's
    ``resolveCheckpointPointer``); return its directory URI and its metadata, anchored where it was found."""
    if not path or not path.strip():
        raise CheckpointStorageError(
            "expected a checkpoint or savepoint directory with a _metadata file; got an empty path; "
            "hint: pass e.g. file:///checkpoints/<job id>/chk-7"
        )
    pointer = _normalize(path.strip())
    fs, fs_path = _fs(pointer)
    try:
        if fs.isdir(fs_path):
            directory, metadata_uri = pointer, _join(pointer, METADATA_FILE_NAME)
            metadata_path = _join(fs_path, METADATA_FILE_NAME)
            if not fs.isfile(metadata_path):
                raise CheckpointStorageError(
                    f"expected a checkpoint or savepoint directory with a _metadata file; got {path} (a directory "
                    "without _metadata); hint: the checkpoint never completed — pick an older chk-<n> directory "
                    "or a savepoint"
                )
        elif fs.isfile(fs_path):
            metadata_uri, metadata_path = pointer, fs_path
            directory = pointer.rsplit("/", 1)[0]
        else:
            raise CheckpointStorageError(
                f"expected a checkpoint or savepoint directory with a _metadata file; got {path} (no such file); "
                "hint: use the path printed when the savepoint completed, or a retained <job id>/chk-<n> directory"
            )
        text = fs.cat_file(metadata_path)
    except OSError as e:
        raise CheckpointStorageError(
            f"expected to read the checkpoint metadata at {path}; got {e!r}; hint: check the file system is reachable"
        ) from e
    return directory, CheckpointMetadata.from_json(text, source=metadata_uri, location=directory)


# -- the job's checkpoints -------------------------------------------------------------------------------------
class CheckpointStorage:
    """A job's checkpoint directory and its completed checkpoints (Flink's ``FsCheckpointStorageAccess`` with a
    ``StandaloneCompletedCheckpointStore``): creates locations, keeps the newest ``num_retained`` completed
    checkpoints and deletes the older ones, and cleans up when the job ends.

    Used from the JobMaster only (not thread-safe); every method may block on I/O.
    """

    def __init__(self, base_uri: str, job_id: str, *, num_retained: int = 1) -> None:
        if not base_uri or not base_uri.strip():
            raise CheckpointStorageError(
                "expected a checkpoint directory URI in execution.checkpointing.dir; got ''; "
                "hint: e.g. file:///var/strom/checkpoints, s3://bucket/checkpoints or a local path"
            )
        if not job_id or "/" in job_id or job_id in (".", ".."):
            raise CheckpointStorageError(
                f"expected a job id usable as a directory name; got {job_id!r}; hint: job ids are hex strings"
            )
        if isinstance(num_retained, bool) or not isinstance(num_retained, int) or num_retained < 1:
            raise CheckpointStorageError(
                f"expected execution.checkpointing.num-retained ≥ 1; got {num_retained!r}; "
                "hint: 1 keeps only the latest completed checkpoint"
            )
        self.base_uri = _normalize(base_uri.strip())
        self.job_id = job_id
        self.num_retained = num_retained
        self.job_dir = _join(self.base_uri, job_id)
        self._completed: list[CheckpointMetadata] = []
        #: counts the references of the retained checkpoints to the files of ``<job dir>/shared/``
        self.registry = SharedStateRegistry()
        #: directories of checkpoints outside the job's directory that it owns (restored in CLAIM mode)
        self._claimed: set[str] = set()
        #: completed checkpoints whose shared files are registered (the retained ones and the one before), oldest first
        self._registered: list[int] = []

    def __repr__(self) -> str:
        return f"CheckpointStorage({self.job_dir!r}, num_retained={self.num_retained})"

    # -- locations ---------------------------------------------------------------------------------------------
    def initialize_location(self, checkpoint_id: int) -> CheckpointStorageLocation:
        """The (created) directory ``<base>/<job id>/chk-<checkpoint_id>``."""
        location = CheckpointStorageLocation(uri=_join(self.job_dir, f"chk-{checkpoint_id}"))
        _make_dirs(location.uri)
        return location

    def savepoint_location(self, target_dir: str, checkpoint_id: int) -> CheckpointStorageLocation:
        """A new (created) directory ``<target_dir>/savepoint-<job id[:6]>-<12 random hex digits>``."""
        if not target_dir or not target_dir.strip():
            raise CheckpointStorageError(
                f"expected a savepoint target directory for savepoint {checkpoint_id}; got ''; "
                "hint: pass a directory URI such as file:///savepoints"
            )
        name = f"savepoint-{self.job_id[:6]}-{secrets.token_hex(6)}"
        location = CheckpointStorageLocation(uri=_join(_normalize(target_dir.strip()), name))
        _make_dirs(location.uri)
        return location

    # -- completed checkpoints ---------------------------------------------------------------------------------
    def add_completed(self, metadata: CheckpointMetadata) -> None:
        """Record a completed checkpoint and register its shared files, then delete all but the newest
        ``num_retained`` (their directories go, and the shared files no retained checkpoint references any more).
        Savepoints belong to the user and are neither recorded nor deleted."""
        if metadata.is_savepoint:
            return
        self._completed = [m for m in self._completed if m.checkpoint_id != metadata.checkpoint_id]
        self._completed.append(metadata)
        self._completed.sort(key=lambda m: m.checkpoint_id)
        self.registry.register_checkpoint(metadata.checkpoint_id, shared_handles_of(metadata))
        self._registered = sorted({*self._registered, metadata.checkpoint_id})
        subsumed = self._completed[: -self.num_retained]
        self._completed = self._completed[-self.num_retained :]
        failures = []
        for old in subsumed:
            try:
                self._discard(old)
            except CheckpointStorageError as e:
                failures.append(str(e))
        # shared files outlive their subsumed checkpoint by one: a task learns that a checkpoint completed by a
        # notification that may reach it after the next barrier, and references the files of the one before
        while len(self._registered) > self.num_retained + 1:
            for handle in self.registry.unregister_checkpoint(self._registered.pop(0)):
                try:
                    _remove_file(handle.uri)
                except CheckpointStorageError as e:
                    failures.append(str(e))
        if failures:
            raise CheckpointStorageError(
                f"expected to delete {len(subsumed)} subsumed checkpoint(s); got {len(failures)} failure(s): "
                + "; ".join(failures)
            )

    def _discard(self, old: CheckpointMetadata) -> None:
        """A subsumed checkpoint's directory, when this job owns it (its shared files go with the next one)."""
        owned = old.external_pointer.startswith(self.job_dir + "/") or old.external_pointer in self._claimed
        if owned:
            _remove_tree(old.external_pointer)
            self._claimed.discard(old.external_pointer)
        else:
            log.info("checkpoint %d at %s is not this job's to delete", old.checkpoint_id, old.external_pointer)

    def register_restored(self, metadata: CheckpointMetadata, mode: str | RestoreMode) -> bool:
        """The job starts from ``metadata`` (a retained checkpoint or a savepoint). ``CLAIM``: the job owns it — one
        of its retained checkpoints, subsumed and deleted in time. ``NO_CLAIM``: its shared files are registered but
        never deleted. Returns whether the job's tasks may reference its shared files (CLAIM, or a checkpoint of
        this very job): in ``NO_CLAIM`` their first checkpoint uploads every file (Flink's forced full one)."""
        own = metadata.external_pointer.startswith(self.job_dir + "/")
        claim = RestoreMode.parse(mode) is RestoreMode.CLAIM and not metadata.is_savepoint
        if not (own or claim):
            self.registry.register_checkpoint(metadata.checkpoint_id, shared_handles_of(metadata), owned=False)
            return False
        if not own:
            self._claimed.add(metadata.external_pointer)
        if all(m.checkpoint_id != metadata.checkpoint_id for m in self._completed):
            self._completed = sorted([*self._completed, metadata], key=lambda m: m.checkpoint_id)
            self.registry.register_checkpoint(metadata.checkpoint_id, shared_handles_of(metadata))
            self._registered = sorted({*self._registered, metadata.checkpoint_id})
        return True

    def owns(self, metadata: CheckpointMetadata) -> bool:
        """Whether the job owns the checkpoint (its own, or claimed): its tasks may reference its shared files."""
        pointer = metadata.external_pointer
        return not metadata.is_savepoint and (pointer.startswith(self.job_dir + "/") or pointer in self._claimed)

    def discard_unregistered(self, handles: list[StateHandle]) -> int:
        """An aborted checkpoint's (or a late acknowledgement's) shared files: those no registered checkpoint
        references are deleted; returns how many."""
        unused = self.registry.unregistered(handles)
        for handle in unused:
            try:
                _remove_file(handle.uri)
            except CheckpointStorageError as e:
                log.warning("%s", e)
        return len(unused)

    def latest_completed(self) -> CheckpointMetadata | None:
        return self._completed[-1] if self._completed else None

    def completed(self) -> list[CheckpointMetadata]:
        """The retained completed checkpoints, oldest first."""
        return list(self._completed)

    def discover_completed(self) -> list[CheckpointMetadata]:
        """Rescan ``<base>/<job id>/chk-*`` for completed checkpoints (after a JobManager restart) and adopt
        them as the retained ones, oldest first. Directories without ``_metadata`` never completed and are
        skipped; so, with a warning, are those whose ``_metadata`` cannot be read."""
        found: list[CheckpointMetadata] = []
        for checkpoint_id, uri in self._checkpoint_dirs():
            try:
                _, metadata = resolve_checkpoint_pointer(uri)
            except CheckpointStorageError as e:
                if self._has_metadata(uri):
                    log.warning("skipping checkpoint %d: %s", checkpoint_id, e)
                else:
                    log.info("skipping incomplete checkpoint %d (%s has no _metadata)", checkpoint_id, uri)
                continue
            found.append(metadata)
        claimed = [m for m in self._completed if m.external_pointer in self._claimed]
        self._completed = sorted([*claimed, *found], key=lambda m: m.checkpoint_id)
        self.registry = SharedStateRegistry.rebuild((m, True) for m in self._completed)
        self._registered = [m.checkpoint_id for m in self._completed]
        return list(found)

    # -- cleanup -----------------------------------------------------------------------------------------------
    def dispose_all(self) -> None:
        """Delete the job's checkpoint directory with every checkpoint in it."""
        for pointer in sorted(self._claimed):  # restored in CLAIM mode: the job's own
            _remove_tree(pointer)
        for checkpoint_id in self.registry.checkpoints():  # and the shared files they referenced outside the job's
            for handle in self.registry.unregister_checkpoint(checkpoint_id):
                if not handle.uri.startswith(self.job_dir + "/"):
                    _remove_file(handle.uri)
        self._completed = []
        self._registered = []
        self._claimed.clear()
        _remove_tree(self.job_dir)

    def shutdown(self, job_status: str, retention: str | ExternalizedCheckpointRetention) -> None:
        """The job ended in ``job_status``: delete its checkpoints or keep them as ``retention`` says, and in
        any case delete the directories of checkpoints that never completed."""
        policy = ExternalizedCheckpointRetention.parse(retention)
        if policy.discards_on(job_status):
            log.info("job %s %s: deleting its checkpoints (%s)", self.job_id, job_status, policy.value)
            self.dispose_all()
            return
        for checkpoint_id, uri in self._checkpoint_dirs():
            if not self._has_metadata(uri):
                log.info("job %s: deleting incomplete checkpoint %d", self.job_id, checkpoint_id)
                _remove_tree(uri)
        if self._completed:
            log.info(
                "job %s %s: keeping checkpoint %s (%s)",
                self.job_id,
                job_status,
                self._completed[-1].external_pointer,
                policy.value,
            )

    # -- helpers -----------------------------------------------------------------------------------------------
    def _checkpoint_dirs(self) -> list[tuple[int, str]]:
        fs, path = _fs(self.job_dir)
        try:
            entries = fs.ls(path, detail=True)
        except FileNotFoundError:
            return []
        except OSError as e:
            raise CheckpointStorageError(
                f"expected to list {self.job_dir}; got {e!r}; hint: check the checkpoint file system is reachable"
            ) from e
        out = []
        for entry in entries:
            name = str(entry["name"]).rstrip("/").rsplit("/", 1)[-1]
            match = _CHECKPOINT_DIR.match(name)
            if match and entry.get("type") == "directory":
                out.append((int(match.group(1)), _join(self.job_dir, name)))
        return sorted(out)

    @staticmethod
    def _has_metadata(directory: str) -> bool:
        fs, path = _fs(directory)
        return bool(fs.isfile(_join(path, METADATA_FILE_NAME)))


def _remove_file(uri: str) -> None:
    fs, path = _fs(uri)
    try:
        fs.rm_file(path)
    except FileNotFoundError:
        return
    except OSError as e:
        raise CheckpointStorageError(
            f"expected to delete the shared state file {uri}; got {e!r}; hint: check permissions on the checkpoint "
            "directory"
        ) from e


def _make_dirs(uri: str) -> None:
    fs, path = _fs(uri)
    try:
        fs.makedirs(path, exist_ok=True)
    except OSError as e:
        raise CheckpointStorageError(
            f"expected to create the checkpoint directory {uri}; got {e!r}; "
            "hint: check that the checkpoint or savepoint directory is writable"
        ) from e
