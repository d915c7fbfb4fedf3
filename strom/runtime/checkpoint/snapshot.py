"""What an operator hands over at a checkpoint and gets back on restore (Flink's ``OperatorSnapshotFutures``
and ``OperatorSubtaskState``, without futures: the bytes are taken synchronously on the task thread)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["OperatorRestoreState", "OperatorSnapshot", "OperatorSubtaskStateHandles"]


@dataclass(frozen=True, slots=True)
class OperatorSnapshot:
    """The state of one operator of one subtask: keyed state per key group, operator (non-keyed) state."""

    keyed: Mapping[int, bytes] = field(default_factory=dict)
    operator: bytes | None = None

    @property
    def size(self) -> int:
        return sum(len(b) for b in self.keyed.values()) + len(self.operator or b"")


@dataclass(frozen=True, slots=True)
class OperatorSubtaskStateHandles:
    """Where a subtask wrote an operator's snapshot (what it acknowledges to the JobMaster)."""

    keyed: Mapping[int, object] = field(default_factory=dict)  # key group -> StateHandle
    operator: object | None = None  # StateHandle
    channel: object | None = None  # StateHandle: in-flight buffers of an unaligned checkpoint (head operator)


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
