"""The JobMaster's driver of :class:`PipelinedRegionSchedulingStrategy` for jobs with blocking exchanges (BATCH
execution): stage after stage, on as many slots as the cluster has (Flink's ``DefaultScheduler`` with the
``PipelinedRegionSchedulingStrategy`` and its slot pool).

* Schedulable regions wait in a queue, in the order they became schedulable. The head region is deployed once the job
  holds a free slot for each of its subtasks; slots are asked of the ResourceManager only as far as it has free ones
  (or, while the job holds none that could come back, waiting for TaskManagers), so a job of 8 tasks per stage runs
  on 2 slots, two tasks at a time.
* A slot is free again when the task in it ended (FINISHED, FAILED, CANCELED); the job keeps it for its next region
  until the job ends. No slot is shared in BATCH: every region runs alone in its slots.
* A FINISHED subtask's blocking partitions are consumable: the regions reading them become schedulable when all their
  producers finished. A region failover resets subtasks (:meth:`restart_tasks`): their regions are queued again, at
  once if their inputs are still available.

Runs on the JobMaster's loop; one deployment pass at a time (:meth:`_deploy_ready` re-runs itself when woken during
one).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from strom.config import BatchExecutionOptions as B
from strom.config import Configuration
from strom.graph.execution_graph import Execution, ExecutionGraph, SlotAssignment
from strom.graph.pipelined_regions import ExecutionVertexID
from strom.runtime.execution_state import ExecutionState, JobStatus
from strom.runtime.network.result_partition import ResultPartitionID
from strom.runtime.scheduler.failover_strategy import FailoverStrategy, RestartPipelinedRegionFailoverStrategy
from strom.runtime.scheduler.pipelined_region_scheduling_strategy import PipelinedRegionSchedulingStrategy
from strom.runtime.scheduler.slow_task_detector import ExecutionTimeBasedSlowTaskDetector
from strom.runtime.scheduler.speculative_execution import DefaultSpeculativeExecutionHandler
from strom.runtime.task_group import AsyncTaskGroup

if TYPE_CHECKING:
    from strom.runtime.deployment import TaskDeploymentDescriptor
    from strom.runtime.jobmaster.jobmaster import JobMaster
    from strom.runtime.resourcemanager.resource_manager import ResourceManager
    from strom.runtime.scheduler.default_scheduler import DefaultScheduler

__all__ = ["PipelinedRegionScheduler", "has_blocking_exchanges"]

log = logging.getLogger(__name__)


def has_blocking_exchanges(graph: ExecutionGraph) -> bool:
    return any(e.partition_type.is_blocking for e in graph.job_graph.edges())


def _vertex(ex: Execution) -> ExecutionVertexID:
    return ex.vertex.job_vertex.job_vertex.id, ex.vertex.subtask_index


class PipelinedRegionScheduler:
    def __init__(
        self,
        graph: ExecutionGraph,
        scheduler: DefaultScheduler,
        resource_manager: ResourceManager,
        *,
        task_group: AsyncTaskGroup,
        on_failure: Callable[[BaseException], None],
    ) -> None:
        self.graph = graph
        self.scheduler = scheduler
        self.rm = resource_manager
        self._tasks = task_group
        self._on_failure = on_failure
        self.strategy = PipelinedRegionSchedulingStrategy(
            graph.pipelined_regions, graph.pipelined_regions.blocking_inputs
        )
        self._queue: deque[int] = deque()
        self._held: dict[str, SlotAssignment] = {}  # allocation id -> a slot this job holds
        self._deploying = False
        self._again = False
        #: the regions in the order they were deployed (one again after each of its restarts)
        self.deployments: list[int] = []
        #: a task whose submission failed (its TaskManager is gone): the JobMaster fails it over
        self.on_deploy_failure: Callable[[Execution, BaseException], None] = lambda ex, exc: on_failure(exc)
        #: speculative execution (``execution.batch.speculative.enabled``), if on
        self.speculation: DefaultSpeculativeExecutionHandler | None = None
        self._speculation_started = False

    @staticmethod
    def for_job(jm: JobMaster, failover: FailoverStrategy) -> PipelinedRegionScheduler | None:
        """The scheduler of ``jm``'s job if it has blocking exchanges (``None``: a streaming job, deployed at once);
        the region failover then re-runs a producer only if its partitions are lost."""
        if not has_blocking_exchanges(jm.graph):
            return None

        def deploy_failed(
            ex: Execution, exc: BaseException
        ) -> None:  # as Flink: the attempt fails, its region fails over
            text = f"deploying task '{ex.vertex.name}' failed: {type(exc).__name__}: {exc}"
            ex.state = ExecutionState.FAILED
            ex.failure_text = text
            if not jm.region_failover.handle_task_failures([ex], text, exc):
                jm.handle_global_failure(text, exc, execution=ex)

        scheduler = PipelinedRegionScheduler(
            jm.graph,
            jm.scheduler,
            jm.rm,
            task_group=jm.task_group,
            on_failure=lambda exc: jm.handle_global_failure(f"scheduling failed: {type(exc).__name__}: {exc}", exc),
        )
        scheduler.on_deploy_failure = deploy_failed
        scheduler.speculation = speculative_execution_handler(jm, scheduler)
        if isinstance(failover, RestartPipelinedRegionFailoverStrategy):
            failover.is_available = scheduler.is_partition_available
            failover.is_finished = scheduler.strategy_is_region_finished
        return scheduler

    # -- events from the JobMaster (its loop) --------------------------------------------------------------
    async def start(self) -> None:
        """(Re)start the job from no finished subtask: a global restart released every slot and partition."""
        self.strategy = PipelinedRegionSchedulingStrategy(
            self.graph.pipelined_regions, self.graph.pipelined_regions.blocking_inputs
        )
        self._queue.clear()
        self._held.clear()
        if self.speculation is not None:
            self.speculation.on_job_restart()
            if not self._speculation_started:
                self._speculation_started = True
                self._tasks.create_task(self.speculation.run(), name="slow task detector")
        self._enqueue(self.strategy.start_scheduling())
        await self._deploy_ready()

    def on_execution_ended(self, ex: Execution) -> None:
        """A current attempt ended: its slot is free; if it FINISHED, its partitions may make regions schedulable."""
        if ex.state is ExecutionState.FINISHED:
            self._enqueue(self.strategy.on_execution_finished(_vertex(ex)))
            if self.speculation is not None:
                self.speculation.on_current_finished(ex)
        self._wake()

    async def restart_tasks(self, old: list[Execution], new: list[Execution]) -> None:
        """Region failover gave these subtasks new attempts: the partitions the old ones wrote are released (the new
        ones write their own), and their regions are scheduled as soon as their inputs are."""
        self._release_partitions(old)
        if self.speculation is not None:
            self.speculation.on_vertices_restarted(ex.vertex for ex in new)
        restarted = {self.graph.pipelined_regions.region_of[_vertex(ex)] for ex in new}
        self._queue = deque(r for r in self._queue if r not in restarted)  # queued before: they wait for inputs again
        self._enqueue(self.strategy.restart_tasks(_vertex(ex) for ex in new))
        await self._deploy_ready()

    def _release_partitions(self, attempts: list[Execution]) -> None:
        self.release_partitions_of(attempts, finished_only=True)

    def release_partitions_of(self, attempts: list[Execution], *, finished_only: bool) -> None:
        """Tell the TaskManagers holding blocking partitions of these (replaced, or losing) attempts to delete them;
        ``finished_only``: only those of FINISHED attempts (the others released theirs when they ended)."""
        by_tm: dict[str, list[ResultPartitionID]] = {}
        for ex in attempts:
            if (finished_only and ex.state is not ExecutionState.FINISHED) or ex.slot is None:
                continue
            jv = ex.vertex.job_vertex.job_vertex
            by_tm.setdefault(ex.slot.tm_id, []).extend(
                ResultPartitionID(e.result_id, ex.vertex.subtask_index, ex.attempt_id) for e in jv.outputs
            )
        for tm_id, ids in by_tm.items():
            if ids and tm_id in self.rm.slot_manager.task_managers:
                self._tasks.create_task(self._release_on(tm_id, ids), name=f"release partitions on {tm_id}")

    async def _release_on(self, tm_id: str, ids: list[ResultPartitionID]) -> None:
        try:
            await self.rm.gateway(tm_id).call("release_partitions", ids, timeout=10.0)
        except Exception as exc:  # the job's end releases them too
            log.debug("releasing %d partitions on %s failed: %s", len(ids), tm_id, exc)

    def lost_partitions(self, tm_id: str) -> list[Execution]:
        """The FINISHED attempts on the lost TaskManager ``tm_id`` whose blocking partitions some region still needs:
        they are lost with it and must be recomputed (their consumers wait until then)."""
        regions = self.graph.pipelined_regions
        lost = []
        for ex in self.graph.all_executions():
            if ex.state is not ExecutionState.FINISHED or ex.slot is None or ex.slot.tm_id != tm_id:
                continue
            consumers = regions.consumers.get(regions.region_of[_vertex(ex)], frozenset())
            if any(not self.strategy.is_region_finished(c) for c in consumers):
                lost.append(ex)
        self.strategy.on_partitions_lost(_vertex(ex) for ex in lost)
        return lost

    def strategy_is_region_finished(self, region: int) -> bool:
        """Whether every subtask of ``region`` FINISHED (its current strategy's view: a global restart starts over)."""
        return self.strategy.is_region_finished(region)

    def is_partition_available(self, producer: ExecutionVertexID) -> bool:
        """Whether ``producer``'s blocking partitions are (or will be, once it finishes) there to read: its current
        attempt FINISHED, or has not ended yet, on a TaskManager that is still registered (Flink's result partition
        availability checker: a partition is available while it is tracked and did not fail). A producer not yet
        deployed counts as available: it runs when its turn comes, without a new attempt."""
        vid, i = producer
        ex = self.graph.job_vertices[vid].task_vertices[i].current_execution
        if ex is None or ex.state in (ExecutionState.FAILED, ExecutionState.CANCELED, ExecutionState.CANCELING):
            return False
        return ex.slot is None or ex.slot.tm_id in self.rm.slot_manager.task_managers

    # -- deployment ----------------------------------------------------------------------------------------
    def _enqueue(self, regions: list[int]) -> None:
        for r in regions:
            if r not in self._queue:
                self._queue.append(r)

    def wake(self) -> None:
        """A slot may be free: deploy what waits for one."""
        self._wake()

    def _wake(self) -> None:
        if self._queue:
            self._tasks.create_task(self._deploy_ready(), name="deploy schedulable regions")

    async def _deploy_ready(self) -> None:
        if self._deploying:
            self._again = True
            return
        self._deploying = True
        try:
            self._again = True
            while self._again and self.graph.state is JobStatus.RUNNING:
                self._again = False
                await self._deploy_queued()
        except Exception as exc:
            log.warning("job %s: scheduling a region failed: %s", self.graph.job_id, exc)
            self._on_failure(exc)
        finally:
            self._deploying = False

    async def _deploy_queued(self) -> None:
        while self._queue and self.graph.state is JobStatus.RUNNING:
            region = self._queue[0]
            if not self.strategy.is_ready(region):  # an input was lost since it was queued
                self._queue.popleft()
                continue
            waiting = self._creating(region)
            free = self._free_slots()
            if len(free) < len(waiting):
                if not await self._acquire(len(waiting) - len(free)):
                    return  # a task's end frees a slot and wakes us
                continue  # the queue may have changed while we waited: look at its head again
            self._queue.popleft()
            for ex, slot in zip(waiting, free, strict=False):
                ex.slot = slot
                ex.transition(ExecutionState.SCHEDULED)
            if waiting:
                self.deployments.append(region)
                await self._deploy(waiting)

    async def _deploy(self, executions: list[Execution]) -> None:
        """Submit the region's tasks; one whose submission fails (its TaskManager died meanwhile) fails on its own."""
        calls = []
        for ex in executions:
            tdd = self.scheduler.create_deployment_descriptor(ex)
            ex.transition(ExecutionState.DEPLOYING)
            calls.append(self._submit(ex, tdd))
        await asyncio.gather(*calls)

    async def _submit(self, ex: Execution, tdd: TaskDeploymentDescriptor) -> None:
        assert ex.slot is not None
        try:
            await self.rm.gateway(ex.slot.tm_id).call("submit_task", tdd, timeout=30.0)
        except Exception as exc:
            if ex.vertex.current_execution is ex and not ex.state.is_terminal and self.graph.state is JobStatus.RUNNING:
                self.on_deploy_failure(ex, exc)
            elif self.speculation is not None and not ex.state.is_terminal:
                self.speculation.accept(ex, ExecutionState.FAILED)  # a speculative attempt: dropped

    def _creating(self, region: int) -> list[Execution]:
        """The current attempts of ``region`` still to deploy."""
        out = []
        for vid, i in sorted(self.graph.pipelined_regions.regions[region]):
            ex = self.graph.job_vertices[vid].task_vertices[i].current_execution
            if ex is not None and ex.state is ExecutionState.CREATED:
                out.append(ex)
        return out

    def _free_slots(self) -> list[SlotAssignment]:
        registered = self.rm.slot_manager.task_managers
        for allocation_id in [a for a, s in self._held.items() if s.tm_id not in registered]:
            del self._held[allocation_id]  # its TaskManager is gone
        busy = {ex.slot.allocation_id for ex in self.graph.all_executions() if ex.slot and not ex.state.is_terminal}
        if self.speculation is not None:
            busy |= self.speculation.slots_in_use()
        return [s for a, s in self._held.items() if a not in busy]

    async def free_slot(self, avoid: set[str]) -> SlotAssignment | None:
        """A free slot of this job on a TaskManager not in ``avoid`` (for a speculative attempt): one it holds, else one
        the ResourceManager has free now (kept by the job either way); ``None`` if there is none."""
        for _ in range(2):
            for slot in self._free_slots():
                if slot.tm_id not in avoid:
                    return slot
            if not self.rm.slot_manager.num_free_slots() or not await self._acquire(1):
                return None
        return None

    async def deploy_attempts(self, executions: list[Execution]) -> None:
        """Deploy these attempts (SCHEDULED, with their slots) now."""
        await self._deploy(executions)

    async def _acquire(self, wanted: int) -> int:
        """Up to ``wanted`` more slots: as many as the ResourceManager has free now; if it has none and this job holds
        no slot that will come back, wait for TaskManagers (the request's timeout fails the job). Returns how many
        it got."""
        available = self.rm.slot_manager.num_free_slots()
        running = any(
            ex.slot is not None and ex.slot.allocation_id in self._held and not ex.state.is_terminal
            for ex in self.graph.all_executions()
        )
        count = min(wanted, available) if available or running else wanted
        if count <= 0:
            return 0
        offers = await self.rm.request_slots(self.graph.job_id, count, self.scheduler.slot_timeout)
        for o in offers:
            self._held[o.allocation_id] = SlotAssignment(
                tm_id=o.tm_id, slot_index=o.slot_index, allocation_id=o.allocation_id, data_address=o.data_address
            )
        return len(offers)


def speculative_execution_handler(
    jm: JobMaster, regions: PipelinedRegionScheduler
) -> DefaultSpeculativeExecutionHandler | None:
    """The job's speculative execution handler if ``execution.batch.speculative.enabled``, else ``None``."""
    c = Configuration(dict(jm.graph.job_graph.job_configuration))
    if not c.get(B.SPECULATIVE_ENABLED):
        return None
    detector = ExecutionTimeBasedSlowTaskDetector(
        baseline_ratio=c.get(B.SLOW_TASK_BASELINE_RATIO),
        baseline_multiplier=c.get(B.SLOW_TASK_BASELINE_MULTIPLIER),
        baseline_lower_bound_ms=int(c.get(B.SLOW_TASK_BASELINE_LOWER_BOUND).total_seconds() * 1000),
    )
    return DefaultSpeculativeExecutionHandler(
        jm.graph,
        regions,
        detector,
        max_concurrent_executions=c.get(B.SPECULATIVE_MAX_CONCURRENT_EXECUTIONS),
        check_interval_s=c.get(B.SLOW_TASK_CHECK_INTERVAL).total_seconds(),
        cancel=jm.cancel_executions,
    )
