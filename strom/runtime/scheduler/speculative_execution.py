"""``DefaultSpeculativeExecutionHandler``: speculative execution of a BATCH job (Flink's class of that name, with the
``SpeculativeScheduler``'s part of it), driven by the :class:`PipelinedRegionScheduler` on the JobMaster's loop.

Every ``slow-task-detector.check-interval`` the :class:`ExecutionTimeBasedSlowTaskDetector` looks at the running
attempts; a slow one gets a speculative attempt of its subtask (up to ``max-concurrent-executions`` at once) in a free
slot of another TaskManager than its running attempts', reading the same blocking partitions. The first attempt to
finish wins: a speculative winner becomes its subtask's current attempt — its partitions are the ones the consumers
are deployed to read — and the others are cancelled; a cancelled attempt releases its partitions on its
TaskManager, and a loser that finished too has them released by the JobMaster (``release_partitions``). A
speculative attempt that fails or whose TaskManager is lost is dropped (its original runs on); a region failover of a
subtask cancels its speculative attempts with it.

Speculative attempts are not in the vertex's ``current_execution``: the JobMaster's handling of task states, the
job's end and the REST view see the current attempts; :meth:`accept` handles the reports of the others.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from strom.graph.execution_graph import Execution, ExecutionGraph, ExecutionVertex
from strom.runtime.execution_state import ExecutionState, JobStatus
from strom.runtime.scheduler.slow_task_detector import AttemptTiming, ExecutionTimeBasedSlowTaskDetector

if TYPE_CHECKING:
    from strom.runtime.scheduler.pipelined_region_scheduler import PipelinedRegionScheduler

__all__ = ["DefaultSpeculativeExecutionHandler", "supports_concurrent_attempts"]

log = logging.getLogger(__name__)

_ACTIVE = (ExecutionState.SCHEDULED, ExecutionState.DEPLOYING, ExecutionState.INITIALIZING, ExecutionState.RUNNING)


class DefaultSpeculativeExecutionHandler:
    def __init__(
        self,
        graph: ExecutionGraph,
        regions: PipelinedRegionScheduler,
        detector: ExecutionTimeBasedSlowTaskDetector,
        *,
        max_concurrent_executions: int,
        check_interval_s: float,
        cancel: Callable[[list[Execution]], None],
    ) -> None:
        self.graph = graph
        self.regions = regions
        self.detector = detector
        self.max_concurrent_executions = max_concurrent_executions
        self.check_interval_s = check_interval_s
        self._cancel = cancel
        #: attempts that are not their subtask's current one and have not ended: speculative ones, cancelled losers
        self.others: dict[str, Execution] = {}
        #: the speculative attempts started, in order (tests and the log read it)
        self.started: list[Execution] = []

    # -- the periodic check -----------------------------------------------------------------------------------
    async def run(self) -> None:
        """Check for slow tasks every interval while the job runs."""
        while self.graph.state in (JobStatus.CREATED, JobStatus.RUNNING, JobStatus.RESTARTING):
            await asyncio.sleep(self.check_interval_s)
            if self.graph.state is JobStatus.RUNNING:
                await self.check_slow_tasks()

    async def check_slow_tasks(self) -> None:
        slow = set(self.detector.find_slow_tasks(self._timings(), self._parallelism(), int(time.time() * 1000)))
        for ex in self.graph.all_executions():
            if (
                ex.attempt_id in slow
                and supports_concurrent_attempts(ex.vertex)
                and self._live_attempts(ex.vertex) < self.max_concurrent_executions
            ):
                await self._speculate(ex.vertex)

    def _timings(self) -> list[AttemptTiming]:
        out = []
        for ex in [*self.graph.all_executions(), *self.others.values()]:
            start = ex.state_timestamps.get(ExecutionState.DEPLOYING)
            if start is None or ex.state not in (*_ACTIVE, ExecutionState.FINISHED):
                continue
            end = ex.state_timestamps.get(ExecutionState.FINISHED) if ex.state is ExecutionState.FINISHED else None
            out.append(
                AttemptTiming(
                    vertex_id=ex.vertex.job_vertex.job_vertex.id,
                    subtask=ex.vertex.subtask_index,
                    attempt_id=ex.attempt_id,
                    start_ms=start,
                    end_ms=end,
                )
            )
        return out

    def _parallelism(self) -> dict[str, int]:
        return {vid: ejv.parallelism for vid, ejv in self.graph.job_vertices.items()}

    def _attempts_of(self, ev: ExecutionVertex) -> list[Execution]:
        current = [ev.current_execution] if ev.current_execution is not None else []
        return current + [ex for ex in self.others.values() if ex.vertex is ev]

    def _live_attempts(self, ev: ExecutionVertex) -> int:
        return sum(1 for ex in self._attempts_of(ev) if not ex.state.is_terminal)

    async def _speculate(self, ev: ExecutionVertex) -> None:
        """A speculative attempt of ``ev`` in a free slot of a TaskManager none of its attempts runs on, if any."""
        avoid = {ex.slot.tm_id for ex in self._attempts_of(ev) if ex.slot is not None and not ex.state.is_terminal}
        slot = await self.regions.free_slot(avoid)
        if slot is None or ev.current_execution is None or ev.current_execution.state is ExecutionState.FINISHED:
            return
        ex = self.graph.new_speculative_execution(ev)
        ex.slot = slot
        ex.transition(ExecutionState.SCHEDULED)
        self.others[ex.attempt_id] = ex
        self.started.append(ex)
        log.info(
            "job %s: task '%s' is slow; speculative attempt #%d on %s",
            self.graph.job_id,
            ev.name,
            ex.attempt_number,
            slot.tm_id,
        )
        await self.regions.deploy_attempts([ex])

    # -- reports of the attempts that are not current ----------------------------------------------------------
    def slots_in_use(self) -> set[str]:
        """Allocation ids of the slots the other attempts occupy."""
        live = [ex for ex in self.others.values() if not ex.state.is_terminal]
        return {ex.slot.allocation_id for ex in live if ex.slot is not None}

    def accept(self, ex: Execution, target: ExecutionState) -> bool:
        """A state report of ``ex``, not its subtask's current attempt. ``True``: it won (FINISHED first) and is the
        current attempt now — the JobMaster handles the report as a current attempt's; ``False``: handled here."""
        if self.others.get(ex.attempt_id) is not ex:
            return False  # an attempt of before a restart
        ev = ex.vertex
        current = ev.current_execution
        winning = (
            target is ExecutionState.FINISHED
            and ex.state is not ExecutionState.CANCELING
            and current is not None
            and current.state in _ACTIVE
            and self.graph.state is JobStatus.RUNNING
        )
        if winning and current is not None:
            del self.others[ex.attempt_id]
            ev.current_execution = ex
            self.others[current.attempt_id] = current
            log.info(
                "job %s: speculative attempt #%d of '%s' finished first", self.graph.job_id, ex.attempt_number, ev.name
            )
            return True  # the JobMaster's handling of its FINISHED cancels the other attempts
        if ex.state is ExecutionState.CANCELING and target in (ExecutionState.FINISHED, ExecutionState.FAILED):
            target = ExecutionState.CANCELED
        ex.transition(target)
        if target.is_terminal:
            self._ended(ex, finished=target is ExecutionState.FINISHED)
        return False

    def _ended(self, ex: Execution, *, finished: bool) -> None:
        del self.others[ex.attempt_id]
        if finished or ex.state is ExecutionState.CANCELED:
            self.regions.release_partitions_of([ex], finished_only=False)
        self.regions.wake()

    # -- events of the current attempts ----------------------------------------------------------------------
    def on_current_finished(self, ex: Execution) -> None:
        """``ex`` (current) finished: its subtask's other attempts lose and are cancelled."""
        self._cancel_others(ex.vertex)

    def on_vertices_restarted(self, vertices: Iterable[ExecutionVertex]) -> None:
        """A failover gave these subtasks new attempts: their other attempts are cancelled."""
        for ev in vertices:
            self._cancel_others(ev)

    def on_job_restart(self) -> None:
        """A global restart: every other attempt is cancelled and forgotten (its reports are stale now)."""
        live = [ex for ex in self.others.values() if not ex.state.is_terminal]
        self.others.clear()
        if live:
            self._cancel(live)

    def on_task_manager_lost(self, tm_id: str) -> None:
        """The other attempts on ``tm_id`` ended with it."""
        for ex in [e for e in self.others.values() if e.slot is not None and e.slot.tm_id == tm_id]:
            if not ex.state.is_terminal:
                ex.state = ExecutionState.FAILED
            del self.others[ex.attempt_id]

    def _cancel_others(self, ev: ExecutionVertex) -> None:
        losers = [ex for ex in self.others.values() if ex.vertex is ev and not ex.state.is_terminal]
        if losers:
            self._cancel(losers)


def supports_concurrent_attempts(ev: ExecutionVertex) -> bool:
    """Whether a subtask of this vertex may run twice at once: not one with a sink (its output would be written
    twice; Flink asks a sink to support concurrent attempts) nor one whose operators have coordinators (a source's
    splits, a collect sink's results go to its current attempt only)."""
    jv = ev.job_vertex.job_vertex
    return not jv.contains_sink and not jv.coordinator_providers
