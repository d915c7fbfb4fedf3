"""Flink's asynchronous REST operations (savepoint, stop-with-savepoint): a trigger answers ``202 {"request-id":
<trigger id>}`` at once, and ``GET .../savepoints/<trigger id>`` answers ``{"status": {"id": "IN_PROGRESS"}}``
until the operation ends, then ``{"status": {"id": "COMPLETED"}, "operation": {"location": ...}}`` or
``{"status": ..., "operation": {"failure-cause": {"class": ..., "stack-trace": ...}}}`` (Flink's
``AsynchronousOperationResult`` of a ``SavepointInfo``; Flink adds the Java-serialized throwable, which a Python
runtime has none of).

Each operation is a task on the JobManager's loop, owned by :class:`AsynchronousOperations`, which cancels the
ones still running when the REST endpoint closes. As Flink (``rest.async.store-duration``), finished results are
kept for a while — the newest :data:`MAX_RESULTS` here.
"""

from __future__ import annotations

import asyncio
import secrets
import traceback
from collections.abc import Coroutine
from typing import Any

from strom.runtime.task_group import AsyncTaskGroup
from strom.web.accessor import RestHandlerError

__all__ = ["MAX_RESULTS", "AsynchronousOperations", "operation_result"]

MAX_RESULTS = 1000


def operation_result(task: asyncio.Task[str]) -> dict[str, Any]:
    """The ``AsynchronousOperationResult`` of a savepoint operation's task (pure, given the task's state)."""
    if not task.done():
        return {"status": {"id": "IN_PROGRESS"}}
    if task.cancelled():
        cause: dict[str, Any] = {"class": "asyncio.CancelledError", "stack-trace": "the operation was cancelled"}
        return {"status": {"id": "COMPLETED"}, "operation": {"failure-cause": cause}}
    exc = task.exception()
    if exc is not None:
        cause = {
            "class": f"{type(exc).__module__}.{type(exc).__qualname__}",
            "stack-trace": "".join(traceback.format_exception_only(exc)).strip(),
        }
        return {"status": {"id": "COMPLETED"}, "operation": {"failure-cause": cause}}
    return {"status": {"id": "COMPLETED"}, "operation": {"location": task.result()}}


class AsynchronousOperations:
    """Savepoint operations by (job id, trigger id)."""

    def __init__(self) -> None:
        self._tasks: dict[tuple[str, str], asyncio.Task[str]] = {}
        self._group = AsyncTaskGroup("REST savepoint operations")  # their owner; results are read by polling
        self._closed = False

    def trigger(self, job_id: str, trigger_id: str | None, work: Coroutine[Any, Any, str]) -> str:
        """Start ``work`` under ``trigger_id`` (a fresh one when None); a trigger id already used for this job
        names the operation it started (Flink's idempotent triggers) and ``work`` is dropped."""
        if self._closed:
            work.close()
            raise RestHandlerError("expected a running REST endpoint; got one that is closing", 503)
        tid = trigger_id or secrets.token_hex(16)
        if (job_id, tid) in self._tasks:
            work.close()
            return tid
        self._tasks[(job_id, tid)] = self._group.create_task(work, name=f"rest-savepoint-{tid}", awaited=True)
        self._prune()
        return tid

    def result(self, job_id: str, trigger_id: str) -> dict[str, Any]:
        task = self._tasks.get((job_id, trigger_id))
        if task is None:
            raise RestHandlerError(
                f"expected the trigger id of a savepoint operation of job {job_id}; got {trigger_id!r}; hint: "
                "POST /jobs/<jobid>/savepoints or /jobs/<jobid>/stop answers with it as 'request-id'",
                404,
            )
        return operation_result(task)

    def _prune(self) -> None:
        done = [key for key, task in self._tasks.items() if task.done()]
        for key in done[: max(0, len(self._tasks) - MAX_RESULTS)]:
            del self._tasks[key]

    async def close(self) -> None:
        self._closed = True
        self._group.close()
        running = [t for t in self._tasks.values() if not t.done()]
        for t in running:
            t.cancel()
        if running:
            await asyncio.wait(running, timeout=5.0)
        for t in self._tasks.values():  # retrieve every outcome: no "exception was never retrieved" warning
            if t.done() and not t.cancelled():
                t.exception()
