"""Checkpoint hooks for user functions (Flink's ``CheckpointedFunction`` and ``CheckpointListener``).

A function that keeps state of its own in Python attributes implements :class:`CheckpointedFunction`:
``initialize_state`` runs before ``open`` (on a fresh start and on restore) and registers the state it
needs; ``snapshot_state`` runs at every checkpoint and copies the attributes into that state::

    class BufferingSink(SinkFunction, CheckpointedFunction):
        def initialize_state(self, context):
            self.state = context.get_operator_state_store().get_list_state(ListStateDescriptor("buffer"))
            self.buffer = list(self.state.get()) if context.is_restored() else []

        def snapshot_state(self, context):
            self.state.update(self.buffer)

        def invoke(self, value, context):
            self.buffer.append(value)

A :class:`CheckpointListener` hears when a checkpoint completed (commit side effects) or was aborted.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING

from strom.exceptions import InvalidProgramError

if TYPE_CHECKING:
    from strom.runtime.state.operator_state_backend import OperatorStateBackend
    from strom.runtime.state.state_backend import KeyedStateBackend

__all__ = [
    "CheckpointListener",
    "CheckpointedFunction",
    "FunctionInitializationContext",
    "FunctionSnapshotContext",
]


@dataclass(frozen=True, slots=True)
class FunctionSnapshotContext:
    """The checkpoint being taken (Flink's ``FunctionSnapshotContext``); the timestamp is in ms."""

    checkpoint_id: int
    checkpoint_timestamp: int

    def get_checkpoint_id(self) -> int:
        return self.checkpoint_id

    def get_checkpoint_timestamp(self) -> int:
        return self.checkpoint_timestamp


class FunctionInitializationContext:
    """What ``initialize_state`` gets: the state stores and whether the job restores from a checkpoint."""

    __slots__ = ("_keyed_state_store", "_operator_state_store", "_restored_checkpoint_id")

    def __init__(
        self,
        operator_state_store: OperatorStateBackend,
        keyed_state_store: KeyedStateBackend | None,
        restored_checkpoint_id: int | None,
    ) -> None:
        self._operator_state_store = operator_state_store
        self._keyed_state_store = keyed_state_store
        self._restored_checkpoint_id = restored_checkpoint_id

    def is_restored(self) -> bool:
        """``True`` when the job restores from a checkpoint or savepoint (the state stores hold its state)."""
        return self._restored_checkpoint_id is not None

    def get_restored_checkpoint_id(self) -> int | None:
        return self._restored_checkpoint_id

    def get_operator_state_store(self) -> OperatorStateBackend:
        """Non-keyed list / union list state of this subtask."""
        return self._operator_state_store

    def get_keyed_state_store(self) -> KeyedStateBackend:
        """Keyed state; only on a keyed stream."""
        if self._keyed_state_store is None:
            raise InvalidProgramError(
                "expected a keyed stream for get_keyed_state_store(); got an operator that is not keyed; "
                "hint: call key_by(...) before this operator, or use get_operator_state_store()"
            )
        return self._keyed_state_store


class CheckpointedFunction(ABC):
    """A function with state of its own to checkpoint and restore."""

    @abstractmethod
    def snapshot_state(self, context: FunctionSnapshotContext) -> None:
        """Write the function's state into its registered state objects for checkpoint ``context.checkpoint_id``."""

    @abstractmethod
    def initialize_state(self, context: FunctionInitializationContext) -> None:
        """Register state and, when ``context.is_restored()``, read it back; runs before ``open``."""


class CheckpointListener(ABC):
    """Notified of the fate of checkpoints, e.g. to commit a transaction prepared in ``snapshot_state``."""

    @abstractmethod
    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Checkpoint ``checkpoint_id`` completed on every subtask and is durable."""

    def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        """Checkpoint ``checkpoint_id`` was aborted. The default does nothing; override to roll back."""
        return None
