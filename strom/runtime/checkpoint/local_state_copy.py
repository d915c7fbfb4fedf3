"""Local recovery's hooks in the checkpoint storage (the storage side of Flink's ``LocalRecoveryConfig`` /
``TaskLocalStateStore``): what a :class:`~strom.runtime.checkpoint.storage.CheckpointStorageLocation` asks of the
subtask's local store while it writes a state file, and what a restore asks before it reads one.

A state file is copied as it is written (:class:`LocalTee`: each chunk goes to the remote file and to the local
copy, so a key-group stream is never held whole to be written twice); an uploaded file (an incremental RocksDB
checkpoint's SST file) is kept by hard link where it can be. A local copy that cannot be written is only warned
about: the checkpoint stands, and its restore reads the remote file.
"""

from __future__ import annotations

import logging
from typing import Protocol

from strom.runtime.checkpoint.metadata import StateHandle

__all__ = ["LocalCopyWriter", "LocalStateCopy", "LocalTee"]

log = logging.getLogger(__name__)


class LocalCopyWriter(Protocol):
    """One local copy being written: chunks in order, then :meth:`commit` (visible under its name) or :meth:`abort`."""

    def write(self, data: bytes | memoryview) -> None: ...

    def commit(self) -> None: ...

    def abort(self) -> None: ...


class LocalStateCopy(Protocol):
    """A second copy, on the TaskManager's disk, of the state files one subtask writes into its checkpoints
    (local recovery: :class:`~strom.runtime.state.task_local_state_store.TaskLocalStateStore`). Every state file
    written through a :class:`~strom.runtime.checkpoint.storage.CheckpointStorageLocation` with ``local=`` is copied
    through :meth:`open_copy` (or :meth:`keep_file`); every read with ``local=`` asks :meth:`retrieve` (or
    :meth:`retrieve_file`) first."""

    def open_copy(self, checkpoint_id: int, remote_uri: str) -> LocalCopyWriter:
        """Start the local copy of the state file ``remote_uri`` of checkpoint ``checkpoint_id``."""

    def keep_file(self, checkpoint_id: int, remote_uri: str, local_path: str) -> None:
        """Keep the local file ``local_path`` (uploaded as ``remote_uri``) as the copy of that file."""

    def retrieve(self, checkpoint_id: int, handle: StateHandle) -> bytes | None:
        """``handle``'s bytes from the local copy when it exists and matches the handle's size and checksum."""

    def retrieve_file(self, checkpoint_id: int, handle: StateHandle, target: str) -> bool:
        """Put the local copy of ``handle``'s whole file at ``target`` when it exists and matches; ``False``: none."""


class LocalTee:
    """The local copy of one remote state file, written chunk by chunk beside it. The first local error ends the
    copy (warned); the remote write goes on."""

    def __init__(self, local: LocalStateCopy | None, checkpoint_id: int | None, remote_uri: str) -> None:
        self._remote_uri = remote_uri
        self._copy: LocalCopyWriter | None = None
        if local is None or checkpoint_id is None:
            return
        try:
            self._copy = local.open_copy(checkpoint_id, remote_uri)
        except OSError as e:
            self._failed(e)

    def write(self, data: bytes | memoryview) -> None:
        if self._copy is None:
            return
        try:
            self._copy.write(data)
        except OSError as e:
            self.abort()
            self._failed(e)

    def commit(self) -> None:
        if self._copy is None:
            return
        try:
            self._copy.commit()
        except OSError as e:
            self.abort()
            self._failed(e)
        self._copy = None

    def abort(self) -> None:
        copy, self._copy = self._copy, None
        if copy is not None:
            try:
                copy.abort()
            except OSError as e:
                log.debug("removing the partial local copy of %s failed: %s", self._remote_uri, e)

    def _failed(self, e: OSError) -> None:
        log.warning("the local copy of %s was not written (%s); its restore reads the checkpoint", self._remote_uri, e)
