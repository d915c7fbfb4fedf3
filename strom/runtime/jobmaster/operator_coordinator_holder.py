"""``OperatorCoordinatorHolder``: one operator's coordinator inside the JobMaster (Flink's class of that name).

It is the coordinator's :class:`OperatorCoordinatorContext` — events to subtasks go through the JobMaster's
ordered :class:`SubtaskGateways`, a failure becomes the job's global failure — and it guards the coordinator:
whatever the coordinator raises while handling an event, taking a checkpoint or restarting fails the job (the
restart strategy applies) instead of escaping into the RPC or checkpoint machinery.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from strom.runtime.operators.coordination import (
    OperatorCoordinator,
    OperatorCoordinatorProvider,
    OperatorEventDelivery,
)

__all__ = ["OperatorCoordinatorHolder"]

log = logging.getLogger(__name__)


class OperatorCoordinatorHolder:
    def __init__(
        self,
        provider: OperatorCoordinatorProvider,
        *,
        operator_name: str,
        parallelism: int,
        send: Callable[[str, Any], None],
        fail_job: Callable[[BaseException, str], None],
        coordinator_store: dict[Any, Any] | None = None,
    ) -> None:
        self._operator_id = provider.operator_id
        self._store = coordinator_store if coordinator_store is not None else {}
        self._operator_name = operator_name
        self._parallelism = parallelism
        self._send = send  # (attempt id, message) -> the ordered gateway
        self._fail_job = fail_job
        self.coordinator: OperatorCoordinator = provider.create(self)

    # -- OperatorCoordinatorContext --------------------------------------------------------------------
    @property
    def operator_id(self) -> str:
        return self._operator_id

    @property
    def operator_name(self) -> str:
        return self._operator_name

    def current_parallelism(self) -> int:
        return self._parallelism

    @property
    def coordinator_store(self) -> dict[Any, Any]:
        return self._store

    def send_event(self, subtask: int, attempt_id: str, event: object) -> None:
        self._send(attempt_id, OperatorEventDelivery(operator_id=self._operator_id, event=event))

    def fail_job(self, cause: BaseException) -> None:
        self._fail_job(cause, f"the coordinator of operator '{self._operator_name}' failed")

    # -- driven by the JobMaster -----------------------------------------------------------------------
    def start(self, restored_checkpoint_id: int | None = None, state: bytes | None = None, *, restore: bool) -> None:
        self._guard("start", self._start, restored_checkpoint_id, state, restore)

    def _start(self, restored_checkpoint_id: int | None, state: bytes | None, restore: bool) -> None:
        if restore:
            assert restored_checkpoint_id is not None
            self.coordinator.reset_to_checkpoint(restored_checkpoint_id, state)
        self.coordinator.start()

    async def handle_event_from_operator(self, subtask: int, attempt_id: str, event: object) -> None:
        try:
            await self.coordinator.handle_event_from_operator(subtask, attempt_id, event)
        except Exception as exc:
            self.fail_job(exc)

    def checkpoint_coordinator(self, checkpoint_id: int) -> bytes | None:
        """Raises: a failed snapshot declines the checkpoint (it does not fail the job)."""
        return self.coordinator.checkpoint_coordinator(checkpoint_id)

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        self._guard("notify_checkpoint_complete", self.coordinator.notify_checkpoint_complete, checkpoint_id)

    def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        self._guard("notify_checkpoint_aborted", self.coordinator.notify_checkpoint_aborted, checkpoint_id)

    def execution_attempt_ready(self, subtask: int, attempt_id: str) -> None:
        self._guard("execution_attempt_ready", self.coordinator.execution_attempt_ready, subtask, attempt_id)

    def execution_attempt_failed(self, subtask: int, attempt_id: str | None, reason: str) -> None:
        self._guard("execution_attempt_failed", self.coordinator.execution_attempt_failed, subtask, attempt_id, reason)

    def subtask_reset(self, subtask: int, checkpoint_id: int | None) -> None:
        self._guard("subtask_reset", self.coordinator.subtask_reset, subtask, checkpoint_id)

    async def finish_pending_work(self) -> None:
        """Raises what the coordinator's pending work raised."""
        await self.coordinator.finish_pending_work()

    @property
    def failed(self) -> bool:
        return self.coordinator.failed

    def reset_after_failure(self) -> None:
        self._guard("reset_after_failure", self.coordinator.reset_after_failure)

    def close(self) -> None:
        try:
            self.coordinator.close()
        except Exception:
            log.exception("closing the coordinator of operator '%s' failed", self._operator_name)

    def _guard(self, what: str, fn: Callable[..., Any], *args: Any) -> None:
        try:
            fn(*args)
        except Exception as exc:
            log.debug("coordinator of '%s': %s failed", self._operator_name, what, exc_info=True)
            self.fail_job(exc)
