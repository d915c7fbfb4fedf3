"""The operator coordinator seam (Flink's ``org.apache.flink.runtime.operators.coordination``).

An operator that needs a counterpart on the JobManager — a source's split enumerator, the collect sink's hand-off
to the client — offers an :class:`OperatorCoordinatorProvider` (``operator.coordinator_provider()``, taken when
the JobGraph is built). The JobMaster creates one :class:`OperatorCoordinator` per such operator and runs it on its
event loop for the life of the job, across restarts.

Events flow both ways, addressed by (execution attempt, operator id):

* task → coordinator: ``OperatorEventGateway.send_event_to_coordinator[_nowait]`` on the task thread → the
  TaskExecutor's per-attempt queue (in order) → ``JobMaster.send_operator_events`` → ``handle_event_from_operator``;
* coordinator → task: ``OperatorCoordinatorContext.send_event`` → the JobMaster's per-attempt queue, which carries
  checkpoint triggers too (:class:`OperatorEventDelivery`, :class:`TriggerCheckpointMessage`, one RPC at a time,
  in order) → the task's mailbox (both at the same priority, so in order) → ``operator.handle_operator_event``
  on the task thread.

Events from or to an attempt that is no longer current are dropped. On a checkpoint the coordinators are
snapshotted first (``checkpoint_coordinator``, on the loop), and the triggers queued behind every event sent
before the snapshot.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = [
    "CoordinatorStore",
    "OperatorCoordinator",
    "OperatorCoordinatorContext",
    "OperatorCoordinatorProvider",
    "OperatorEventDelivery",
    "OperatorEventGateway",
    "TaskOperatorEventGateway",
    "TriggerCheckpointMessage",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class OperatorEventDelivery:
    """JobMaster → task: ``event`` for the operator ``operator_id`` of the addressed attempt."""

    operator_id: str
    event: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class TriggerCheckpointMessage:
    """JobMaster → task: start checkpoint ``checkpoint_id`` (a task none of whose producers runs)."""

    checkpoint_id: int
    timestamp_ms: int
    options: Any


class TaskOperatorEventGateway(Protocol):
    """The task's line to the JobMaster (Flink's ``TaskOperatorEventGateway``); any thread."""

    def send_operator_event_to_coordinator(self, operator_id: str, event: object, *, wait: bool) -> None:
        """Queue ``event`` after the ones sent before; with ``wait``, block until the coordinator took it."""


class OperatorEventGateway:
    """One operator's line to its coordinator (Flink's ``OperatorEventGateway``)."""

    def __init__(self, task_gateway: TaskOperatorEventGateway, operator_id: str) -> None:
        self.task_gateway = task_gateway
        self.operator_id = operator_id

    def send_event_to_coordinator(self, event: object) -> None:
        """Block until the coordinator accepted ``event`` (the collect sink's back-pressure)."""
        self.task_gateway.send_operator_event_to_coordinator(self.operator_id, event, wait=True)

    def send_event_to_coordinator_nowait(self, event: object) -> None:
        """Queue ``event`` and return; the events of one task arrive in the order they were sent (either way)."""
        self.task_gateway.send_operator_event_to_coordinator(self.operator_id, event, wait=False)


class CoordinatorStore(dict[Any, Any]):
    """Flink's ``CoordinatorStore``: one per job, shared by its operator coordinators (all on the JobMaster's loop,
    so no lock); watermark alignment files each source's watermark in its group's entry."""


class OperatorCoordinatorContext(Protocol):
    """What a coordinator may do in its job (Flink's ``OperatorCoordinator.Context``); event loop only."""

    @property
    def operator_id(self) -> str: ...

    @property
    def operator_name(self) -> str: ...

    def current_parallelism(self) -> int: ...

    @property
    def coordinator_store(self) -> dict[Any, Any]:
        """Flink's ``CoordinatorStore``: one mapping shared by every coordinator of the job (watermark alignment)."""
        ...

    def send_event(self, subtask: int, attempt_id: str, event: object) -> None:
        """To the operator of ``attempt_id`` (subtask ``subtask``), in order; dropped if that attempt is stale."""

    def fail_job(self, cause: BaseException) -> None:
        """A global failure of the job (the restart strategy applies)."""


class OperatorCoordinator(ABC):
    """Runs on the JobMaster's event loop (Flink's ``OperatorCoordinator``). Methods must not block."""

    def start(self) -> None:
        """Before the first task of the job is deployed (again after ``reset_after_failure``)."""

    @property
    def failed(self) -> bool:
        """Whether this coordinator failed the job itself: on restart it is reset (``reset_after_failure``,
        ``reset_to_checkpoint``, ``start``) instead of kept."""
        return False

    def reset_after_failure(self) -> None:
        """Forget the state of a failed run before ``start`` is called again; by default there is none."""

    def close(self) -> None:
        """Once, when the job ends; idempotent."""

    @property
    def has_pending_work(self) -> bool:
        """Whether :meth:`finish_pending_work` has anything to wait for."""
        return False

    async def finish_pending_work(self) -> None:
        """The job's tasks all finished: wait for work the coordinator started that the job's result depends on
        (a global committer's last commit); raising fails the job instead of finishing it. Default: none."""

    @abstractmethod
    async def handle_event_from_operator(self, subtask: int, attempt_id: str, event: object) -> None:
        """An event from the operator of ``attempt_id``; events of one attempt come in order."""

    def checkpoint_coordinator(self, checkpoint_id: int) -> bytes | None:
        """The coordinator's state for ``checkpoint_id`` (``None``: none), taken before any task is triggered."""
        return None

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Checkpoint ``checkpoint_id`` completed; a coordinator without checkpointed state ignores it."""

    def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        """Checkpoint ``checkpoint_id`` was aborted; a coordinator without checkpointed state ignores it."""

    def reset_to_checkpoint(self, checkpoint_id: int, state: bytes | None) -> None:
        """Before ``start``: the job restores checkpoint ``checkpoint_id``, which holds ``state`` for this
        coordinator (``None``: the operator is in the checkpoint, but without coordinator state)."""

    def subtask_reset(self, subtask: int, checkpoint_id: int | None) -> None:
        """Subtask ``subtask`` restarts from ``checkpoint_id`` (``None``: from no checkpoint)."""

    def execution_attempt_failed(self, subtask: int, attempt_id: str | None, reason: str) -> None:
        """The attempt of ``subtask`` failed or is cancelled; no event reaches it any more."""

    def execution_attempt_ready(self, subtask: int, attempt_id: str) -> None:
        """The attempt of ``subtask`` runs and can take events."""


class OperatorCoordinatorProvider(ABC):
    """Creates an operator's coordinator on the JobMaster (Flink's ``OperatorCoordinator.Provider``); pickled
    into the JobGraph, so keep it small."""

    operator_id: str

    @abstractmethod
    def create(self, context: OperatorCoordinatorContext) -> OperatorCoordinator: ...
