"""What an operator hands over at a checkpoint and gets back on restore (Flink's ``OperatorSnapshotFutures``
and ``OperatorSubtaskState``).

The synchronous part of a checkpoint (on the task thread) yields an :class:`OperatorSnapshot` whose keyed state may
still be a *supplier* — the keyed backend's ``async_snapshot()``, a point-in-time copy not yet serialized (Flink's
``keyedStateManagedFuture``); the asynchronous part calls :meth:`OperatorSnapshot.resolve` off the task thread to
get the bytes, or :meth:`OperatorSnapshot.cancel` when the checkpoint is dropped first. A supplier that can stream
its key groups (a :class:`~strom.runtime.state.full_snapshot_async_writer.KeyGroupStreamSupplier`) is resolved with
``streamed=True`` into ``keyed_stream``: the key groups are made while the checkpoint file is written, one at a time
(Flink's ``FullSnapshotAsyncWriter``), so the whole state is never held in memory twice.

An incremental RocksDB checkpoint's supplier is an :class:`IncrementalKeyedSnapshot` instead: resolving keeps it as
``keyed_incremental``, and the asynchronous part uploads its files into the checkpoint's location."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from strom.runtime.checkpoint.metadata import IncrementalRemoteKeyedStateHandle
from strom.runtime.state.full_snapshot_async_writer import KeyGroupStreamSupplier

__all__ = ["IncrementalKeyedSnapshot", "OperatorRestoreState", "OperatorSnapshot", "OperatorSubtaskStateHandles"]


@runtime_checkable
class IncrementalKeyedSnapshot(Protocol):
    """The synchronous part of an incremental keyed snapshot (a local RocksDB checkpoint), uploaded off the task
    thread by :meth:`upload` into a ``CheckpointStorageLocation`` (Flink's ``RocksIncrementalSnapshotStrategy``'s
    asynchronous part)."""

    uploaded_bytes: int

    def upload(self, location: Any, name_prefix: str, *, local: Any = None) -> IncrementalRemoteKeyedStateHandle:
        """``local`` (a ``LocalStateCopy``, local recovery): every file the checkpoint references is kept locally."""

    def cancel(self) -> None: ...

    def dispose(self) -> None: ...

    def discard_uploads(self) -> None: ...


@dataclass(frozen=True, slots=True)
class OperatorSnapshot:
    """The state of one operator of one subtask: keyed state per key group, operator (non-keyed) state.

    ``keyed_supplier``, when set, gives the keyed state (``keyed`` is empty until :meth:`resolve`)."""

    keyed: Mapping[int, bytes] = field(default_factory=dict)
    operator: bytes | None = None
    keyed_supplier: Callable[[], Mapping[int, bytes]] | None = None
    #: resolved from an incremental supplier: uploaded by the asynchronous part instead of ``keyed``
    keyed_incremental: IncrementalKeyedSnapshot | None = None
    #: resolved with ``streamed=True`` from a streaming supplier: the key groups' bytes as they are made, in
    #: key-group order, to write instead of ``keyed`` (read once)
    keyed_stream: Iterator[tuple[int, bytes]] | None = None

    @property
    def size(self) -> int:
        return sum(len(b) for b in self.keyed.values()) + len(self.operator or b"")

    @property
    def is_empty(self) -> bool:
        """No state at all (resolved snapshots only)."""
        return (
            not self.keyed
            and self.operator is None
            and self.keyed_supplier is None
            and self.keyed_incremental is None
            and self.keyed_stream is None
        )

    def resolve(self, *, streamed: bool = False) -> OperatorSnapshot:
        """The asynchronous part: the snapshot with its keyed bytes (calls the supplier once; raises what it
        raises), or with its incremental snapshot still to upload. Off the task thread. ``streamed``: a supplier
        that can stream its key groups gives ``keyed_stream`` instead, nothing made yet."""
        supplier = self.keyed_supplier
        if supplier is None:
            return self
        if isinstance(supplier, IncrementalKeyedSnapshot):
            return OperatorSnapshot(operator=self.operator, keyed_incremental=supplier)
        if streamed and isinstance(supplier, KeyGroupStreamSupplier):
            return OperatorSnapshot(operator=self.operator, keyed_stream=supplier.stream())
        return OperatorSnapshot(keyed=supplier(), operator=self.operator)

    def cancel(self) -> None:
        """The checkpoint will not use this snapshot: stop the supplier's work (a forked child) if it can; a local
        incremental checkpoint not uploaded is removed."""
        for part in (self.keyed_supplier, self.keyed_incremental):
            cancel = getattr(part, "cancel", None)
            if cancel is not None:
                cancel()
            if isinstance(part, IncrementalKeyedSnapshot):
                part.dispose()
        close = getattr(self.keyed_stream, "close", None)  # a generator: its view is freed
        if close is not None:
            close()


@dataclass(frozen=True, slots=True)
class OperatorSubtaskStateHandles:
    """Where a subtask wrote an operator's snapshot (what it acknowledges to the JobMaster)."""

    keyed: Mapping[int, object] = field(default_factory=dict)  # key group -> StateHandle
    operator: object | None = None  # StateHandle
    channel: object | None = None  # StateHandle: in-flight buffers of an unaligned checkpoint (head operator)
    incremental: IncrementalRemoteKeyedStateHandle | None = None  # keyed state as an incremental RocksDB checkpoint


@dataclass(frozen=True, slots=True)
class OperatorRestoreState:
    """What one new subtask restores for one operator (state bytes, already read from storage).

    ``keyed`` holds only the key groups this subtask owns now; ``operator`` holds the operator-state blobs of
    *every* old subtask with ``old_parallelism``, for the operator to redistribute (list state: its share;
    union list state: all of it)."""

    checkpoint_id: int
    keyed: Mapping[int, bytes] = field(default_factory=dict)
    operator: tuple[bytes, ...] = ()
    old_parallelism: int = 1
