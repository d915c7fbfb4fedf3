"""The OperatorCoordinator seam (Flink's ``org.apache.flink.runtime.operators.coordination``).

An operator may have a coordinator on the JobManager: one object per operator (not per subtask), driven on the
JobMaster's event loop, that exchanges *operator events* with the operator's subtasks. A subtask sends with its
``OperatorEventGateway`` (task thread → JobMaster RPC, addressed by attempt and operator id); the coordinator
answers through its :class:`OperatorCoordinatorContext` (JobMaster → the subtask's current attempt → its task's
mailbox → ``StreamOperator.handle_operator_event`` on the task thread). The JobMaster sends events and checkpoint
triggers to a task over one ordered RPC connection, and the task runs both as mail of the same priority, so a
task sees them in the order the coordinator produced them.

Checkpoints: the coordinator is snapshotted (``checkpoint_coordinator``) on the loop *before* any source task is
triggered, so every event sent before the snapshot reaches its task before that checkpoint's barrier; its bytes
are stored in the checkpoint beside the operators' state. Restart-all failover keeps the coordinator and calls
``subtask_reset`` for every subtask with the checkpoint the new attempts restore; a job started from a
checkpoint or savepoint creates the coordinator from the stored bytes.

Events from attempts that are not current any more are dropped by the JobMaster before they reach a coordinator.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Protocol

__all__ = ["OperatorCoordinator", "OperatorCoordinatorContext"]


class OperatorCoordinatorContext(Protocol):
    """What the JobMaster offers a coordinator."""

    @property
    def operator_id(self) -> str: ...

    @property
    def operator_name(self) -> str: ...

    def current_parallelism(self) -> int: ...

    def send_event(self, subtask: int, event: object) -> bool:
        """Send ``event`` to the current attempt of ``subtask`` (in order with checkpoint triggers); ``False``
        when that attempt does not run."""

    def fail_job(self, text: str, error: BaseException | None) -> None:
        """A global failure of the job (the restart strategy decides)."""


class OperatorCoordinator(ABC):
    def start(self) -> None:
        """Called on the loop before any subtask of the operator is deployed, and again before the redeployment of
        a restart (doing nothing when already started)."""

    def close(self) -> None:
        """The job ended: stop background work."""

    @abstractmethod
    def handle_event_from_operator(self, subtask: int, event: object) -> None: ...

    def checkpoint_coordinator(self, checkpoint_id: int) -> bytes | None:
        """The coordinator's state for ``checkpoint_id``, taken before the tasks are triggered (``None``: none)."""
        return None

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        pass

    def subtask_reset(self, subtask: int, restored_checkpoint_id: int | None) -> None:
        """``subtask`` restarts from checkpoint ``restored_checkpoint_id`` (``None``: from none)."""
