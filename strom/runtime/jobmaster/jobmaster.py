"""``JobMaster``: runs one job — builds its ExecutionGraph, schedules it, follows every task's state,
fails or cancels it as a whole, and serves its collect sinks.

Everything runs on the JobManager's event loop. No restarts yet: the first task failure (or the loss
of a TaskManager that ran a task) fails the job; the other tasks are cancelled, and the job's result
carries the root cause with the user's traceback.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from strom.graph.execution_graph import Execution, ExecutionGraph
from strom.graph.job_graph import JobGraph
from strom.runtime.deployment import TaskExecutionState
from strom.runtime.execution_state import ExecutionState, JobStatus
from strom.runtime.jobmaster.resource_manager import ResourceManager
from strom.runtime.jobmaster.scheduler import DefaultScheduler
from strom.runtime.operators.sink import CollectBatchEvent

__all__ = ["JobMaster", "JobResult"]

log = logging.getLogger(__name__)

_COLLECT_QUEUE_BATCHES = 16


@dataclass(frozen=True, slots=True, kw_only=True)
class JobResult:
    job_id: str
    job_name: str
    status: JobStatus
    net_runtime_ms: int
    failure_text: str = ""
    failure: BaseException | None = None
    #: "vertex name (i/n)" -> pid of the TaskManager process that ran it
    task_pids: dict[str, int] = field(default_factory=dict)


class _CollectBuffer:
    """Bounded hand-off from collect sink subtasks to the client; ``None`` marks the end."""

    def __init__(self, producers: int) -> None:
        self.queue: asyncio.Queue[list[Any] | None] = asyncio.Queue(maxsize=_COLLECT_QUEUE_BATCHES)
        self.producers = producers
        self.ended = 0


class JobMaster:
    def __init__(self, job_graph: JobGraph, resource_manager: ResourceManager, *, slot_timeout: float) -> None:
        self.job_graph = job_graph
        self.job_id = job_graph.job_id
        self.rm = resource_manager
        self.graph = ExecutionGraph(job_graph)
        self._task_metrics: dict[str, dict[str, float]] = {}
        self.scheduler = DefaultScheduler(self.graph, resource_manager, slot_timeout=slot_timeout)
        self.result: asyncio.Future[JobResult] = asyncio.get_running_loop().create_future()
        self.collect: dict[str, _CollectBuffer] = {}
        self._start_time = time.monotonic()
        self._pids: dict[str, int] = {}
        for v in job_graph.vertices.values():
            for sink_id in v.collect_sink_ids:
                self.collect[sink_id] = _CollectBuffer(v.parallelism)

    @property
    def status(self) -> JobStatus:
        return self.graph.state

    # -- start -------------------------------------------------------------------------------------
    async def start(self) -> None:
        self.graph.transition_state(JobStatus.RUNNING)
        try:
            await self.scheduler.allocate_slots_and_deploy()
        except Exception as exc:
            log.warning("job %s: scheduling failed: %s", self.job_id, exc)
            self.fail_job(f"scheduling failed: {type(exc).__name__}: {exc}", exc)

    # -- task state updates ------------------------------------------------------------------------
    def update_task_metrics(self, attempt_id: str, metrics: dict[str, float]) -> None:
        if attempt_id in self.graph.executions:
            self._task_metrics[attempt_id] = metrics

    def task_metrics_snapshot(self) -> list[dict[str, Any]]:
        """The latest metrics of every current execution attempt that has reported some."""
        out = []
        for ex in self.graph.all_executions():
            metrics = self._task_metrics.get(ex.attempt_id)
            if metrics is None:
                continue
            jv = ex.vertex.job_vertex.job_vertex
            out.append(
                {
                    "job_vertex_id": jv.id,
                    "task_name": jv.name,
                    "subtask_index": ex.vertex.subtask_index,
                    "parallelism": jv.parallelism,
                    "attempt_number": ex.attempt_number,
                    "task_manager_id": ex.slot.tm_id if ex.slot is not None else "",
                    "state": ex.state.value,
                    "metrics": dict(metrics),
                }
            )
        return out

    def update_task_execution_state(self, tes: TaskExecutionState) -> None:
        ex = self.graph.executions.get(tes.execution_attempt_id)
        if ex is None:
            return
        target = ExecutionState(tes.state)
        if tes.pid:
            ex.pid = tes.pid
            self._pids[ex.vertex.name] = tes.pid
        if ex.state is ExecutionState.CANCELING and target is ExecutionState.FINISHED:
            # it finished before our cancel arrived: for the job it counts as cancelled (Flink's
            # completeCancelling); refusing the report would leave the job waiting forever
            target = ExecutionState.CANCELED
        if not ex.transition(target):
            return
        if target is ExecutionState.FAILED:
            ex.failure_text = tes.error_text
            self.fail_job(
                f"task '{ex.vertex.name}' failed:\n{tes.error_text}",
                tes.error,
            )
        elif target is ExecutionState.FINISHED and self.graph.is_all_finished():
            self._job_terminated(JobStatus.FINISHED)
        elif target.is_terminal:
            self._check_terminal()

    def fail_job(self, text: str, error: BaseException | None) -> None:
        g = self.graph
        if g.state in (JobStatus.FAILING, JobStatus.CANCELLING) or g.state.is_globally_terminal:
            return
        g.failure_text = text
        g.failure = error
        g.transition_state(JobStatus.FAILING)
        self._cancel_executions()
        self._check_terminal()

    def cancel(self) -> None:
        g = self.graph
        if g.state.is_globally_terminal or g.state in (JobStatus.CANCELLING, JobStatus.FAILING):
            return
        g.transition_state(JobStatus.CANCELLING)
        self._cancel_executions()
        self._check_terminal()

    def task_manager_lost(self, tm_id: str, message: str) -> None:
        lost = [ex for ex in self.graph.all_executions() if ex.slot and ex.slot.tm_id == tm_id]
        for ex in lost:
            if not ex.state.is_terminal:
                ex.state = ExecutionState.FAILED
                ex.failure_text = message
        if lost and not self.graph.state.is_globally_terminal:
            if self.graph.state is JobStatus.CANCELLING:
                self._check_terminal()
            else:
                self.fail_job(message, None)

    def _cancel_executions(self) -> None:
        for ex in self.graph.all_executions():
            if ex.state.is_terminal:
                continue
            if ex.slot is None or ex.state in (ExecutionState.CREATED, ExecutionState.SCHEDULED):
                ex.state = ExecutionState.CANCELED
                continue
            ex.transition(ExecutionState.CANCELING)
            self._call_async(ex, "cancel_task", ex.attempt_id)

    def _call_async(self, ex: Execution, method: str, *args: Any) -> None:
        assert ex.slot is not None
        tm_id = ex.slot.tm_id

        async def call() -> None:
            try:
                await self.rm.gateway(tm_id).call(method, *args, timeout=10.0)
            except Exception as exc:
                log.debug("%s on %s failed: %s", method, tm_id, exc)
                # an unreachable TaskManager cannot run the task any more
                if not ex.state.is_terminal:
                    ex.state = ExecutionState.CANCELED
                    self._check_terminal()

        asyncio.get_running_loop().create_task(call())

    def _check_terminal(self) -> None:
        if not self.graph.is_all_terminal():
            return
        state = self.graph.state
        if state is JobStatus.FAILING:
            self._job_terminated(JobStatus.FAILED)
        elif state is JobStatus.CANCELLING:
            self._job_terminated(JobStatus.CANCELED)
        elif state is JobStatus.RUNNING and self.graph.is_all_finished():
            self._job_terminated(JobStatus.FINISHED)

    def _job_terminated(self, status: JobStatus) -> None:
        if not self.graph.transition_state(status):
            return
        log.info("job %s %s", self.job_id, status.value)
        for buf in self.collect.values():
            self._end_collect(buf)
        asyncio.get_running_loop().create_task(self._release(status))

    async def _release(self, status: JobStatus) -> None:
        try:
            await self.rm.release_job(self.job_id)
        finally:
            if not self.result.done():
                self.result.set_result(
                    JobResult(
                        job_id=self.job_id,
                        job_name=self.job_graph.job_name,
                        status=status,
                        net_runtime_ms=int((time.monotonic() - self._start_time) * 1000),
                        failure_text=self.graph.failure_text,
                        failure=self.graph.failure,
                        task_pids=dict(self._pids),
                    )
                )

    # -- collect sinks -----------------------------------------------------------------------------
    async def send_operator_event(self, attempt_id: str, event: object) -> None:
        if not isinstance(event, CollectBatchEvent):
            raise TypeError(f"expected a CollectBatchEvent; got {type(event).__name__}")
        buf = self.collect.get(event.sink_id)
        if buf is None or buf.ended >= buf.producers:
            return
        if event.records:
            await buf.queue.put(event.records)
        if event.end:
            buf.ended += 1
            if buf.ended == buf.producers:
                await buf.queue.put(None)

    def _end_collect(self, buf: _CollectBuffer) -> None:
        if buf.ended < buf.producers:
            buf.ended = buf.producers
            # wake a waiting poller; a full queue is drained by poll_collect, which sees the end flag
            if not buf.queue.full():
                buf.queue.put_nowait(None)

    async def poll_collect(self, sink_id: str, timeout: float) -> tuple[list[Any] | None, bool]:
        """Next batch of a collect sink: ``(records, False)``, or ``(None, True)`` at its end."""
        buf = self.collect[sink_id]
        try:
            item = await asyncio.wait_for(buf.queue.get(), timeout)
        except TimeoutError:
            return [], False
        if item is None:
            if buf.queue.empty():
                buf.queue.put_nowait(None)  # later polls see the end too
            return None, True
        return item, False
