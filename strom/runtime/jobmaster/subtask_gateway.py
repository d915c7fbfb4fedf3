"""``SubtaskGateways``: the JobMaster's ordered line to each execution attempt (the ordering half of Flink's
``SubtaskGatewayImpl``).

Operator events and checkpoint triggers for one attempt go into one queue, drained by one asyncio task that sends
whatever has queued up as one ``deliver_to_task`` RPC and waits for its answer before the next: so a task gets
them — and puts them into its mailbox, at the same priority — in the order the JobMaster sent them. That is what
makes a source checkpoint exact: the split assignments sent before the coordinator's snapshot reach the reader
before the trigger. Each message may carry a callback that gets its result (a trigger: accepted or not) or the
error of the RPC. The drain tasks belong to the JobMaster's task group; ``close`` cancels them.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from strom.runtime.task_group import AsyncTaskGroup

__all__ = ["SubtaskGateways", "TaskCheckpointGateway"]

log = logging.getLogger(__name__)

ResultCallback = Callable[[Any, BaseException | None], None]


class SubtaskGateways:
    def __init__(
        self,
        deliver: Callable[[str, tuple[Any, ...]], Awaitable[list[Any]]],
        is_current: Callable[[str], bool],
        tasks: AsyncTaskGroup,
    ) -> None:
        self._deliver = deliver
        self._tasks = tasks
        self._is_current = is_current
        self._queues: dict[str, deque[tuple[Any, ResultCallback | None]]] = {}
        self._drains: dict[str, asyncio.Task[None]] = {}
        self._closed = False

    def send(self, attempt_id: str, message: Any, on_result: ResultCallback | None = None) -> None:
        """Queue ``message`` for ``attempt_id`` behind the ones sent before (event loop only)."""
        if self._closed or not self._is_current(attempt_id):
            if on_result is not None:
                on_result(False, None)
            return
        self._queues.setdefault(attempt_id, deque()).append((message, on_result))
        if attempt_id not in self._drains:
            task = self._tasks.create_task(self._drain(attempt_id), name=f"deliver to {attempt_id}")
            self._drains[attempt_id] = task

    async def _drain(self, attempt_id: str) -> None:
        queue = self._queues[attempt_id]
        try:
            while queue:
                batch = list(queue)
                queue.clear()
                if not self._is_current(attempt_id):
                    _answer(batch, [False] * len(batch), None)
                    continue
                try:
                    results = await self._deliver(attempt_id, tuple(m for m, _ in batch))
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    log.debug("delivering %d message(s) to %s failed: %s", len(batch), attempt_id, exc)
                    _answer(batch, [None] * len(batch), exc)
                else:
                    _answer(batch, results, None)
        finally:
            del self._drains[attempt_id]
            if not queue:
                self._queues.pop(attempt_id, None)

    def close(self) -> None:
        self._closed = True
        for task in list(self._drains.values()):
            task.cancel()
        self._queues.clear()


def _answer(batch: list[tuple[Any, ResultCallback | None]], results: list[Any], error: BaseException | None) -> None:
    for (_, callback), result in zip(batch, results, strict=True):
        if callback is not None:
            try:
                callback(result, error)
            except Exception:
                log.exception("a delivery callback failed")


class TaskCheckpointGateway:
    """The checkpoint driver's gateway to the tasks (its :class:`~strom.runtime.checkpoint.checkpoint_driver.
    CheckpointTaskGateway`): triggers through the ordered :class:`SubtaskGateways`, notifications as one-way RPCs."""

    def __init__(self, gateways: SubtaskGateways, call_task_nowait: Callable[..., None]) -> None:
        self._gateways = gateways
        self._call_task_nowait = call_task_nowait

    def trigger_checkpoint(self, attempt_id: str, message: Any, on_result: ResultCallback) -> None:
        self._gateways.send(attempt_id, message, on_result)

    def notify_checkpoint_complete(self, attempt_id: str, checkpoint_id: int) -> None:
        self._call_task_nowait(attempt_id, "notify_checkpoint_complete", checkpoint_id)

    def notify_checkpoint_aborted(self, attempt_id: str, checkpoint_id: int) -> None:
        self._call_task_nowait(attempt_id, "notify_checkpoint_aborted", checkpoint_id)
