"""``JobMaster``: runs one job — builds its ExecutionGraph, schedules it, follows every task's state,
drives its checkpoints, restarts it after failures, fails or cancels it as a whole, and holds its operator
coordinators (source split enumerators, collect sinks: :mod:`strom.runtime.operators.coordination`).

Everything runs on the JobManager's event loop. A task failure or the loss of a TaskManager that ran a task first
goes to the region failover (:mod:`strom.runtime.jobmaster.region_failover`), which restarts only the failed
subtasks' pipelined regions when the failover strategy (``region``) names less than the whole job. Otherwise, and
for too many failed checkpoints, it is a *global failure*: when the restart strategy allows, every task is
cancelled and, after the strategy's backoff, the whole graph is deployed again with new attempts, each
restoring its share of the latest completed checkpoint (Flink's restart-all failover). Otherwise the job
fails; its result carries the root cause with the user's traceback. The coordinators live on across restarts:
each restarted subtask is reset in its coordinator (a source's enumerator gets back the splits assigned since
the restored checkpoint) before its new attempt is deployed; a coordinator that itself failed is reset to the
restored checkpoint instead.

Everything the JobMaster sends one attempt — operator events, checkpoint triggers — goes through one ordered
queue (:class:`SubtaskGateways`); checkpoints snapshot the coordinators before the triggers are queued.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from strom.config import CheckpointingOptions, Configuration, WebOptions
from strom.exceptions import CheckpointError, ClusterError, CorruptStateError, TaskManagerStartError, UserFunctionError
from strom.graph.execution_graph import Execution, ExecutionGraph
from strom.graph.job_graph import JobGraph
from strom.runtime.checkpoint.checkpoint_driver import CheckpointDriver
from strom.runtime.checkpoint.checkpoint_stats_tracker import CheckpointStatsSnapshot
from strom.runtime.checkpoint.metadata import CheckpointMetadata
from strom.runtime.checkpoint.state_assignment import restore_descriptors
from strom.runtime.checkpoint.storage import (
    CheckpointStorage,
    read_state,
)
from strom.runtime.deployment import OperatorRestoreDescriptor, TaskExecutionState
from strom.runtime.execution_state import ExecutionState, JobStatus
from strom.runtime.jobmaster.enable_checkpointing import enable_checkpointing
from strom.runtime.jobmaster.execution_rows import execution_rows, task_metrics_rows
from strom.runtime.jobmaster.job_result import (
    ExceptionHistoryEntry,
    JobResult,
    all_running_ms,
    last_line,
    lost_data_connection,
    task_failure_summary,
)
from strom.runtime.jobmaster.operator_coordinator_holder import OperatorCoordinatorHolder
from strom.runtime.jobmaster.region_failover import RegionFailover, exception_entry
from strom.runtime.jobmaster.subtask_gateway import SubtaskGateways
from strom.runtime.operators.coordination import CoordinatorStore, OperatorEventDelivery
from strom.runtime.operators.sink import CollectSinkOperatorCoordinator
from strom.runtime.resourcemanager.resource_manager import ResourceManager, task_manager_lost_message
from strom.runtime.scheduler.default_scheduler import DefaultScheduler
from strom.runtime.scheduler.failover_strategy import failover_strategy_from_configuration
from strom.runtime.scheduler.pipelined_region_scheduler import PipelinedRegionScheduler
from strom.runtime.scheduler.restart_strategy import (
    NoRestartBackoffTimeStrategy,
    RestartBackoffTimeStrategy,
    describe_exhausted,
    describe_unbounded,
    restart_strategy_from_configuration,
)
from strom.runtime.task_group import AsyncTaskGroup

__all__ = ["ExceptionHistoryEntry", "JobMaster", "JobResult"]

log = logging.getLogger(__name__)


class JobMaster:
    def __init__(
        self,
        job_graph: JobGraph,
        resource_manager: ResourceManager,
        *,
        slot_timeout: float,
        default_checkpoint_dir: Callable[[], str] | None = None,
    ) -> None:
        self.job_graph = job_graph
        self.job_id = job_graph.job_id
        self.rm = resource_manager
        self.configuration = Configuration(dict(job_graph.job_configuration))
        self.graph = ExecutionGraph(job_graph)
        self._task_metrics: dict[str, dict[str, float]] = {}
        self.scheduler = DefaultScheduler(self.graph, resource_manager, slot_timeout=slot_timeout)
        self.scheduler.restore_provider = self._restore_for
        self.checkpoints: CheckpointDriver | None = None
        self._stopping_with_savepoint = False  # no periodic checkpoint may follow the savepoint
        self._terminating = False  # the savepoint is taken: every task is told to stop
        self._task_ended = asyncio.Event()
        self.restore_from: CheckpointMetadata | None = None
        #: the owner of every asyncio task this JobMaster starts (its gateways' drains too)
        self.task_group = AsyncTaskGroup(f"JobMaster {self.job_id}")
        self.gateways = SubtaskGateways(self._deliver, self.is_current_attempt, self.task_group)
        #: operator id -> its coordinator; vertex id -> the operator ids of its coordinators
        self.coordinators: dict[str, OperatorCoordinatorHolder] = {}
        self._coordinators_of: dict[str, list[str]] = {}
        self._setup_checkpointing(default_checkpoint_dir)
        self.restart_strategy: RestartBackoffTimeStrategy = restart_strategy_from_configuration(
            self.configuration, checkpointing_enabled=self.checkpoints is not None
        )
        if self.checkpoints is not None and self.restart_strategy.restarts_forever():
            # Flink's default configuration does this, and Flink's defaults run silently: a note in the log
            log.info("job %s: %s", self.job_id, describe_unbounded(self.restart_strategy))
        self.num_restarts = 0
        self._restart_scheduled = False
        strategy = failover_strategy_from_configuration(self.configuration, self.graph.pipelined_regions)
        self.scheduler.region_scheduler = PipelinedRegionScheduler.for_job(self, strategy)
        self.region_failover = RegionFailover(self, strategy)
        #: HA: the leadership term (:class:`strom.runtime.highavailability.services.LeaderSession`); None without
        self.ha: Any = None
        #: HA: leadership was lost; the job is left as it is for the new leader (no cancel, clean-up or deploy)
        self.suspended = False
        self._finishing: asyncio.Task[None] | None = None  # waiting for the coordinators before FINISHED
        self.result: asyncio.Future[JobResult] = asyncio.get_running_loop().create_future()
        self._start_time = time.monotonic()
        #: wall-clock times of the job's start and end (-1 while it runs), for the REST API
        self.start_time_ms = int(time.time() * 1000)
        self.end_time_ms = -1
        #: every global failure, oldest first (Flink's exception history)
        #: the newest failures (``web.exception-history-size``, Flink's 16): bounded, whatever the job's age
        self.exception_history: collections.deque[ExceptionHistoryEntry] = collections.deque(
            maxlen=max(1, self.configuration.get(WebOptions.EXCEPTION_HISTORY_SIZE))
        )
        #: checkpoint id -> its directory, for every checkpoint and savepoint that completed
        self.checkpoint_paths: dict[int, str] = {}
        self._pids: dict[str, int] = {}
        self.collect: dict[str, CollectSinkOperatorCoordinator] = {}
        store = CoordinatorStore()  # one per job: what its coordinators share (watermark alignment)
        for v in job_graph.vertices.values():
            names = {cfg.operator_id: cfg.name for cfg in v.chain}
            for op_id, provider in v.coordinator_providers.items():
                holder = OperatorCoordinatorHolder(
                    provider,
                    operator_name=names.get(op_id, op_id),
                    parallelism=v.parallelism,
                    send=self.gateways.send,
                    fail_job=self._coordinator_failure,
                    coordinator_store=store,
                )
                self.coordinators[op_id] = holder
                self._coordinators_of.setdefault(v.id, []).append(op_id)
                if isinstance(holder.coordinator, CollectSinkOperatorCoordinator):
                    self.collect[holder.coordinator.sink_id] = holder.coordinator

    @property
    def status(self) -> JobStatus:
        return self.graph.state

    def suspend(self) -> None:
        """This JobManager lost its leadership (HA): stop acting for the job — no more checkpoints, deployments,
        cancellations, restarts or clean-up; its tasks and checkpoints are the new leader's (Flink suspends the
        JobMaster)."""
        self.suspended = True
        if self.checkpoints is not None:
            self.checkpoints.stop_periodic()

    # -- checkpointing set-up ------------------------------------------------------------------------
    def _setup_checkpointing(self, default_dir: Callable[[], str] | None) -> None:
        enable_checkpointing(self, default_dir)

    def _restore_for(self, ex: Execution) -> dict[str, OperatorRestoreDescriptor] | None:
        """The state each operator of ``ex``'s subtask restores (``None``: the job starts from no checkpoint)."""
        if self.restore_from is None:
            return None
        job_vertex = ex.vertex.job_vertex.job_vertex
        reuse = self.checkpoints is not None and self.checkpoints.storage.owns(self.restore_from)
        return restore_descriptors(
            self.restore_from, self.job_graph, job_vertex, ex.vertex.subtask_index, reuse_shared=reuse
        )

    # -- start -------------------------------------------------------------------------------------
    async def start(self) -> None:
        self.graph.transition_state(JobStatus.RUNNING)
        await self._start_coordinators()
        if self.graph.state is JobStatus.RUNNING:
            await self._schedule()

    async def _start_coordinators(self) -> None:
        """Start every coordinator, each restored from its state in the checkpoint the job starts from."""
        md = self.restore_from
        for op_id, holder in self.coordinators.items():
            await self._start_coordinator(op_id, holder, md)

    async def _start_coordinator(
        self, op_id: str, holder: OperatorCoordinatorHolder, md: CheckpointMetadata | None
    ) -> None:
        st = md.operator_states.get(op_id) if md is not None else None
        if md is None or st is None:
            holder.start(restore=False)  # not in the checkpoint: created fresh
            return
        state: bytes | None = None
        if st.coordinator is not None:
            try:
                state = await asyncio.to_thread(
                    read_state,
                    st.coordinator,
                    operator_id=op_id,
                    checkpoint_id=md.checkpoint_id,
                    what="coordinator state",
                )
            except Exception as exc:
                self.handle_global_failure(
                    f"restoring the coordinator of operator '{holder.operator_name}' failed: {exc}", exc
                )
                return
        holder.start(md.checkpoint_id, state, restore=True)

    def _coordinator_failure(self, cause: BaseException, what: str) -> None:
        text = f"{what}: {cause}"
        if isinstance(cause, UserFunctionError) and cause.user_traceback:
            text = f"{text}\n\nUser function traceback (most recent call last):\n{cause.user_traceback}"
        self.handle_global_failure(text, cause, summary=f"{what}: {last_line(str(cause))}")

    # -- operator coordinators -----------------------------------------------------------------------
    def is_current_attempt(self, attempt_id: str) -> bool:
        """Whether ``attempt_id`` is its subtask's live attempt (events from or to others are stale)."""
        ex = self.graph.executions.get(attempt_id)
        return (
            ex is not None
            and ex.vertex.current_execution is ex
            and ex.state in (ExecutionState.DEPLOYING, ExecutionState.INITIALIZING, ExecutionState.RUNNING)
            and self.graph.state is JobStatus.RUNNING
        )

    async def _deliver(self, attempt_id: str, messages: tuple[Any, ...]) -> list[Any]:
        result: list[Any] = await self.call_task(attempt_id, "deliver_to_task", messages)
        return result

    async def send_operator_events(self, attempt_id: str, events: list[OperatorEventDelivery]) -> None:
        """Events from the operators of ``attempt_id`` to their coordinators, handled in order."""
        for delivery in events:
            if not self.is_current_attempt(attempt_id):
                return  # stale: from an attempt of before a restart, or one being cancelled
            holder = self.coordinators.get(delivery.operator_id)
            if holder is None:
                raise ValueError(f"expected an operator with a coordinator; got {delivery.operator_id!r}")
            subtask = self.graph.executions[attempt_id].vertex.subtask_index
            await holder.handle_event_from_operator(subtask, attempt_id, delivery.event)

    def subtasks_failed(self, executions: list[Execution], reason: str) -> None:
        """The coordinators of these attempts' operators hear that the attempts failed."""
        for ex in executions:
            for op_id in self._coordinators_of.get(ex.vertex.job_vertex.job_vertex.id, ()):
                self.coordinators[op_id].execution_attempt_failed(ex.vertex.subtask_index, ex.attempt_id, reason)

    def subtasks_reset(self, executions: list[Execution], restored: int | None) -> None:
        """Region failover: the coordinators reset these subtasks to the checkpoint they restore."""
        for ex in executions:
            for op_id in self._coordinators_of.get(ex.vertex.job_vertex.job_vertex.id, ()):
                self.coordinators[op_id].subtask_reset(ex.vertex.subtask_index, restored)

    async def _reset_coordinators_for_restart(self) -> None:
        """Before the new attempts deploy: each subtask is reset to the checkpoint it restores (a coordinator
        that failed the job itself is reset to that checkpoint as a whole)."""
        md = self.restore_from
        restored = md.checkpoint_id if md is not None else None
        for vertex_id, op_ids in self._coordinators_of.items():
            parallelism = self.graph.job_vertices[vertex_id].parallelism
            for op_id in op_ids:
                holder = self.coordinators[op_id]
                if holder.failed:
                    holder.reset_after_failure()
                    await self._start_coordinator(op_id, holder, md)
                    continue
                for i in range(parallelism):
                    holder.subtask_reset(i, restored)

    async def _schedule(self) -> None:
        if self.suspended or (self.ha is not None and not self.ha.is_leader_now()):
            return  # HA: not the leader any more; the new leader deploys
        try:
            await self.scheduler.allocate_slots_and_deploy()
        except Exception as exc:
            log.warning("job %s: scheduling failed: %s", self.job_id, exc)
            self.handle_global_failure(f"scheduling failed: {type(exc).__name__}: {exc}", exc)

    # -- checkpoints -------------------------------------------------------------------------------
    def vertex_of_attempt(self, attempt_id: str) -> tuple[str, int] | None:
        """(job vertex id, subtask index) of an execution attempt of this job, also of one before a restart."""
        ex = self.graph.executions.get(attempt_id)
        return (ex.vertex.job_vertex.job_vertex.id, ex.vertex.subtask_index) if ex is not None else None

    def acknowledge_checkpoint(self, attempt_id: str, checkpoint_id: int, states: Any, stats: dict[str, float]) -> None:
        if self.checkpoints is not None:
            self.checkpoints.receive_acknowledge(attempt_id, checkpoint_id, states, stats)

    def decline_checkpoint(self, attempt_id: str, checkpoint_id: int, reason: str, counts: bool = True) -> None:
        if self.checkpoints is not None:
            self.checkpoints.receive_decline(attempt_id, checkpoint_id, reason, counts)

    def on_checkpoint_complete(self, metadata: CheckpointMetadata) -> None:
        """A checkpoint is durable: the next restart restores it."""
        self.checkpoint_paths[metadata.checkpoint_id] = metadata.external_pointer
        if not metadata.is_savepoint:
            self.restore_from = metadata

    def trigger_savepoint(self, target_dir: str) -> asyncio.Future[str]:
        if self.checkpoints is None:
            fut: asyncio.Future[str] = asyncio.get_running_loop().create_future()
            fut.set_exception(
                CheckpointError(
                    "expected a job with checkpointing enabled to take a savepoint; got none; hint: call "
                    "env.enable_checkpointing(interval_ms) before executing the job"
                )
            )
            return fut
        return self.checkpoints.trigger_checkpoint(is_savepoint=True, target_dir=target_dir)

    @property
    def terminating(self) -> bool:
        """The savepoint of a stop-with-savepoint is taken: every task is told to stop."""
        return self._terminating

    @property
    def stopping_with_savepoint(self) -> bool:
        """The savepoint being taken ends the job (its completion commits side effects)."""
        return self._stopping_with_savepoint

    async def stop_with_savepoint(self, target_dir: str) -> str:
        """Flink's stop-with-savepoint (``StopMode.NO_DRAIN``): take a savepoint, wait for what its completion
        committed on the JobManager, then end every task FINISHED without end of input — the job FINISHED, or
        CANCELED if a task could not be stopped (its TaskManager was lost). Periodic checkpoints stop first: one
        completing after the savepoint would commit output that a job restored from the savepoint emits again.
        If the savepoint fails, the job and its checkpoints go on; if its commit fails, the job fails over (and
        the stop raises)."""
        self._stopping_with_savepoint = True
        if self.checkpoints is not None:
            self.checkpoints.stop_periodic()
        try:
            path = await self.trigger_savepoint(target_dir)
        except BaseException:
            self._stopping_with_savepoint = False
            if self.checkpoints is not None and self._all_running_or_finished():
                self.checkpoints.start_periodic()
            raise
        # the savepoint's side effects are committed (a global committer's commit) before the job ends
        try:
            for holder in self.coordinators.values():
                await holder.finish_pending_work()
        except BaseException:
            self._stopping_with_savepoint = False  # the coordinator failed the job: it fails over and goes on
            raise
        self._terminate_after_savepoint()
        return path

    def _terminate_after_savepoint(self) -> None:
        if self.suspended or self.graph.state is not JobStatus.RUNNING:
            self.cancel()
            return
        self._terminating = True
        self.task_group.create_task(self._stop_tasks(), name="stop after savepoint")

    async def _stop_tasks(self) -> None:
        """Downstream first, a vertex at a time, each once the vertices it feeds have ended: no task reads from an
        input its producer already released, so every task ends by its own stop."""
        for ejv in reversed(list(self.graph.job_vertices.values())):
            stopping = [ev.current_execution for ev in ejv.task_vertices if ev.current_execution is not None]
            for ex in stopping:
                if ex.state.is_terminal:
                    continue
                if ex.slot is None or ex.state in (ExecutionState.CREATED, ExecutionState.SCHEDULED):
                    ex.state = ExecutionState.CANCELED
                elif ex.state is ExecutionState.RUNNING:
                    self._call_async(ex, "stop_task", ex.attempt_id)
                else:
                    ex.transition(ExecutionState.CANCELING)
                    self._call_async(ex, "cancel_task", ex.attempt_id)
            while not all(ex.state.is_terminal for ex in stopping):
                if self.suspended or self.graph.state.is_globally_terminal:
                    return
                self._task_ended.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._task_ended.wait(), 1.0)
        self._check_terminal()

    def checkpoint_statistics(self) -> CheckpointStatsSnapshot:
        """The job's checkpoint statistics (bounded: counts, the latest of each kind, the last few in full)."""
        return self.checkpoints.statistics() if self.checkpoints is not None else CheckpointStatsSnapshot()

    def on_global_failure(self, reason: str) -> None:
        """The checkpoint driver's verdict: too many checkpoints failed."""
        self.handle_global_failure(f"checkpointing failed: {reason}", None)

    def not_leader(self) -> str:
        """Why this JobMaster may not act for its job (HA: another JobManager leads now); "" while it may."""
        if self.suspended or (self.ha is not None and not self.ha.is_leader_now()):
            return "this JobManager is not the leader (high availability)"
        return ""

    def call_task_nowait(self, attempt_id: str, method: str, *args: Any) -> None:
        async def call() -> None:
            try:
                await self.call_task(attempt_id, method, *args)
            except Exception as exc:
                log.debug("%s to %s failed: %s", method, attempt_id, exc)

        self.task_group.create_task(call(), name=f"{method} {attempt_id}")

    async def call_task(self, attempt_id: str, method: str, *args: Any) -> Any:
        ex = self.graph.executions[attempt_id]
        assert ex.slot is not None
        return await self.rm.gateway(ex.slot.tm_id).call(method, attempt_id, *args, timeout=10.0)

    # -- task state updates ------------------------------------------------------------------------
    def update_task_metrics(self, attempt_id: str, metrics: dict[str, float]) -> None:
        if attempt_id in self.graph.executions:
            self._task_metrics[attempt_id] = metrics

    def task_metrics_snapshot(self) -> list[dict[str, Any]]:
        return task_metrics_rows(self.graph, self._task_metrics)

    def execution_snapshot(self) -> list[dict[str, Any]]:
        return execution_rows(self.graph, self._task_metrics)

    def update_task_execution_state(self, tes: TaskExecutionState) -> None:
        ex = self.graph.executions.get(tes.execution_attempt_id)
        target = ExecutionState(tes.state)
        regions = self.scheduler.region_scheduler
        speculation = regions.speculation if regions is not None else None
        current = ex is not None and ex.vertex.current_execution is ex
        if ex is None or not (current or (speculation is not None and speculation.accept(ex, target))):
            return  # unknown, an attempt of before the last restart, or a speculative one (handled there)
        if tes.metrics is not None:
            self._task_metrics[ex.attempt_id] = tes.metrics  # its final counts: it may have ended between heartbeats
        if tes.pid:
            ex.pid = tes.pid
            self._pids[ex.vertex.name] = tes.pid
        if ex.state is ExecutionState.CANCELING and target in (ExecutionState.FINISHED, ExecutionState.FAILED):
            # it finished before our cancel arrived, or failed while being cancelled (an interrupted wait, a closed
            # channel): for the job it counts as cancelled (Flink's completeCancelling, also from processFail);
            # refusing the report would leave the job waiting forever
            target = ExecutionState.CANCELED
        if self._terminating and target is ExecutionState.FAILED:
            # after the savepoint: it failed while stopping, before (or instead of) being told to — the savepoint
            # has its state; the job ends CANCELED rather than failing over into a job the user stopped
            log.info("task '%s' failed while the job stops after its savepoint: %s", ex.vertex.name, tes.error_text)
            target = ExecutionState.CANCELED
        if not ex.transition(target):
            return
        if target is ExecutionState.RUNNING:
            for op_id in self._coordinators_of.get(ex.vertex.job_vertex.job_vertex.id, ()):
                self.coordinators[op_id].execution_attempt_ready(ex.vertex.subtask_index, ex.attempt_id)
        if target is ExecutionState.FINISHED and self.checkpoints is not None:
            self.checkpoints.task_finished(ex.attempt_id)  # a trigger it accepted while closing never runs
        if target is ExecutionState.FAILED:
            ex.failure_text = tes.error_text
            self._task_failed(ex, tes)
        elif (
            target in (ExecutionState.RUNNING, ExecutionState.FINISHED)
            and self.checkpoints is not None
            and not self._stopping_with_savepoint
            and self._all_running_or_finished()
        ):
            # FLIP-147: a task that finished before the last one started still needs checkpoints after it — the
            # others wait for a final checkpoint — so finished tasks do not hold the periodic trigger back
            self.checkpoints.start_periodic()
        if target.is_terminal and (regions := self.scheduler.region_scheduler) is not None:
            regions.on_execution_ended(ex)  # its slot is free; its partitions may be consumable
        if target.is_terminal:
            # the last attempt to end lets a restart, a failure, a cancellation or the finish go on — also a
            # task failing on its own while the job already restarts (its upstream TaskManager was lost)
            self._check_terminal()

    def _task_failed(self, ex: Execution, tes: TaskExecutionState) -> None:
        """A task failed: a global failure. One that lost its data connection to a TaskManager of this job names
        that TaskManager as lost — the same failure the heartbeat timeout reports, whichever arrives first (as
        Flink's root cause names the lost TaskManager)."""
        lost = self._task_manager_of_data_address(lost_data_connection(tes.error_text or ""))
        if lost is None:
            text = f"task '{ex.vertex.name}' failed:\n{tes.error_text}"
            summary = task_failure_summary(ex.vertex.name, tes.error_text, tes.error)
        else:
            tm_id, pid = lost
            cause = f"task '{ex.vertex.name}' lost its data connection to it"
            text = task_manager_lost_message(tm_id, pid, f"{cause}:\n{tes.error_text}")
            summary = task_manager_lost_message(tm_id, pid, cause)
        if not self.region_failover.handle_task_failures([ex], text, tes.error, summary=summary):
            self.handle_global_failure(text, tes.error, summary=summary, execution=ex)

    def _task_manager_of_data_address(self, address: tuple[str, int] | None) -> tuple[str, int] | None:
        """(TaskManager id, pid) of the TaskManager serving data at ``address`` to this job's tasks, if any."""
        if address is None:
            return None
        for ex in self.graph.all_executions():
            slot = ex.slot
            if slot is not None and (str(slot.data_address[0]), int(slot.data_address[1])) == address:
                registration = self.rm.slot_manager.task_managers.get(slot.tm_id)
                pids = [e.pid for e in self.graph.all_executions() if e.slot and e.slot.tm_id == slot.tm_id and e.pid]
                pid = registration.pid if registration is not None else max(pids, default=0)
                return slot.tm_id, pid
        return None

    def _all_running_or_finished(self) -> bool:
        states = [e.state for e in self.graph.all_executions()]
        return ExecutionState.RUNNING in states and all(
            st in (ExecutionState.RUNNING, ExecutionState.FINISHED) for st in states
        )

    # -- failover ----------------------------------------------------------------------------------
    def handle_global_failure(
        self, text: str, error: BaseException | None, *, summary: str = "", execution: Execution | None = None
    ) -> None:
        """Restart the whole job if the restart strategy allows it; otherwise fail it. ``summary``: the failure
        in one line for the log (default: the last line of ``text``); ``execution``: the task attempt that failed."""
        g = self.graph
        if g.state is not JobStatus.RUNNING or self.suspended:
            return  # already restarting, failing, cancelling or ended
        if self.not_leader():  # HA: woken after a pause past the lease; the new leader owns the job now
            log.info(
                "job %s: not failing over after %s: %s", self.job_id, summary or last_line(text), self.not_leader()
            )
            return
        self._record_exception(text, error, execution)
        if self.checkpoints is not None:
            self.checkpoints.stop_periodic()
            self.checkpoints.abort_all("the job fails over")
        if isinstance(error, CorruptStateError | TaskManagerStartError):
            # a restart would restore the same damaged file again, or wait for TaskManagers that do not start: fail
            # whatever the restart strategy allows (Flink's SuppressRestartsException)
            damaged = self._retained_before(error.checkpoint_id) if isinstance(error, CorruptStateError) else ""
            self.fail_job(f"{text}\n\n{damaged}" if damaged else text, error)
            return
        strategy = self.restart_strategy
        strategy.notify_failure(error if error is not None else text, int(time.monotonic() * 1000))
        if not strategy.can_restart():
            if self.num_restarts or not isinstance(strategy, NoRestartBackoffTimeStrategy):
                text = f"{text}\n\n{describe_exhausted(strategy)}"
            self.fail_job(text, error)
            return
        log.warning(
            "job %s fails over (restart #%d): %s", self.job_id, self.num_restarts + 1, summary or last_line(text)
        )
        g.failure_text = text
        g.failure = error
        g.transition_state(JobStatus.RESTARTING)
        self.subtasks_failed(g.all_executions(), "the job fails over")
        self.cancel_executions()
        self._check_terminal()

    def _record_exception(self, text: str, error: BaseException | None, ex: Execution | None) -> None:
        self.exception_history.append(exception_entry(text, error, ex))

    def _retained_before(self, checkpoint_id: int) -> str:
        """Which retained checkpoints of this job a restore could use instead of a damaged one."""
        older = [
            m
            for m in (self.checkpoints.storage.completed() if self.checkpoints is not None else [])
            if m.checkpoint_id < checkpoint_id
        ]
        if not older:
            return f"The job is not restarted: checkpoint {checkpoint_id} is damaged."
        listed = ", ".join(m.external_pointer for m in reversed(older))
        return f"The job is not restarted: checkpoint {checkpoint_id} is damaged. Older retained checkpoints: {listed}"

    def _schedule_restart(self) -> None:
        if self._restart_scheduled:
            return
        self._restart_scheduled = True
        delay = self.restart_strategy.get_backoff_time() / 1000.0
        self.task_group.call_later(delay, self._restart)

    async def _restart(self) -> None:
        self._restart_scheduled = False
        if self.graph.state is not JobStatus.RESTARTING:
            return  # cancelled meanwhile
        await self.rm.release_job(self.job_id)  # frees the old slots, cancels leftovers of the old attempts
        if self.graph.state is not JobStatus.RESTARTING:
            return
        self.num_restarts += 1
        self.graph.reset_executions_for_restart()
        self._task_metrics.clear()
        self.graph.transition_state(JobStatus.RUNNING)
        restored = self.restore_from.checkpoint_id if self.restore_from is not None else None
        log.info("job %s: restart #%d, restoring checkpoint %s", self.job_id, self.num_restarts, restored)
        await self._reset_coordinators_for_restart()
        if self.status is JobStatus.RUNNING:  # a coordinator may have failed the job again
            await self._schedule()

    def fail_job(self, text: str, error: BaseException | None) -> None:
        g = self.graph
        if g.state in (JobStatus.FAILING, JobStatus.CANCELLING) or g.state.is_globally_terminal:
            return
        g.failure_text = text
        g.failure = error
        if not g.transition_state(JobStatus.FAILING):
            g.transition_state(JobStatus.FAILED)
            self._job_terminated(JobStatus.FAILED, force=True)
            return
        self.cancel_executions()
        self._check_terminal()

    def cancel(self) -> None:
        g = self.graph
        if self.suspended:
            return
        if g.state.is_globally_terminal or g.state in (JobStatus.CANCELLING, JobStatus.FAILING):
            return
        g.transition_state(JobStatus.CANCELLING)
        self.cancel_executions()
        self._check_terminal()

    def task_manager_lost(self, tm_id: str, message: str) -> None:
        lost = [ex for ex in self.graph.all_executions() if ex.slot and ex.slot.tm_id == tm_id]
        failed = []  # those that ran: a cancelled one (its region restarts already) counts as cancelled
        for ex in lost:
            if not ex.state.is_terminal:
                cancelled = self._terminating or ex.state is ExecutionState.CANCELING
                ex.state = ExecutionState.CANCELED if cancelled else ExecutionState.FAILED
                ex.failure_text = message
                failed += [] if cancelled else [ex]
        if (regions := self.scheduler.region_scheduler) is not None and self.graph.state is JobStatus.RUNNING:
            failed += regions.lost_partitions(tm_id)  # finished, but their partitions are gone with it
        if regions is not None and regions.speculation is not None:
            regions.speculation.on_task_manager_lost(tm_id)
        region_restart = self.region_failover.restarting
        if lost and not self._terminating and self.graph.state is JobStatus.RUNNING and (failed or not region_restart):
            if not self.region_failover.handle_task_manager_lost(failed, message):
                self.handle_global_failure(message, None)
        elif lost:
            self._check_terminal()

    def cancel_executions(self, executions: list[Execution] | None = None) -> None:
        """Cancel these attempts (default: every current attempt)."""
        for ex in self.graph.all_executions() if executions is None else executions:
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

        self.task_group.create_task(call(), name=f"{method} {ex.attempt_id}")

    def _check_terminal(self) -> None:
        self._task_ended.set()
        self.region_failover.check_cancelled()
        if not self.graph.is_all_terminal():
            return
        state = self.graph.state
        if state is JobStatus.RESTARTING:
            self._schedule_restart()
        elif state is JobStatus.FAILING:
            self._job_terminated(JobStatus.FAILED)
        elif state is JobStatus.CANCELLING:
            self._job_terminated(JobStatus.CANCELED)
        elif state is JobStatus.RUNNING and self._terminating and not self.graph.is_all_finished():
            self.graph.transition_state(JobStatus.CANCELLING)  # a task could not be stopped: as a cancel
            self._job_terminated(JobStatus.CANCELED)
        elif state is JobStatus.RUNNING and self.graph.is_all_finished() and self._finishing is None:
            busy = [h for h in self.coordinators.values() if h.coordinator.has_pending_work]
            if not busy:
                self._job_terminated(JobStatus.FINISHED)
                return
            self._finishing = self.task_group.create_task(self._finish(busy), name="finish coordinators", awaited=True)

    async def _finish(self, busy: list[OperatorCoordinatorHolder]) -> None:
        """Every task finished: the job is FINISHED once its coordinators' pending work (a global committer's last
        commit) is done; if that fails, the job fails over as for any global failure."""
        try:
            for holder in busy:
                try:
                    await holder.finish_pending_work()
                except Exception as exc:
                    holder.fail_job(exc)
                    return
        finally:
            self._finishing = None
        self._check_terminal()

    def _job_terminated(self, status: JobStatus, *, force: bool = False) -> None:
        if self.suspended:
            return
        if not self.graph.transition_state(status) and not force:
            return
        self.end_time_ms = int(time.time() * 1000)
        # a finished job is the client's result, not news: only other ends are logged at INFO (as PyFlink's client)
        log.log(logging.DEBUG if status is JobStatus.FINISHED else logging.INFO, "job %s %s", self.job_id, status.value)
        if self.checkpoints is not None:
            self.checkpoints.close()
        self.gateways.close()
        for holder in self.coordinators.values():
            holder.close()
        self.task_group.create_task(self._release(status), name="release")

    async def _release(self, status: JobStatus) -> None:
        """Free the slots and apply the checkpoint retention policy; only then is the job's result known. With HA
        the result goes into the JobResultStore first (Flink's dirty entry): a leader that dies during the clean-up
        leaves a job its successor cleans up, not one it runs again."""
        result = JobResult(
            job_id=self.job_id,
            job_name=self.job_graph.job_name,
            status=status,
            net_runtime_ms=int((time.monotonic() - self._start_time) * 1000),
            failure_text=self.graph.failure_text,
            failure=self.graph.failure,
            task_pids=dict(self._pids),
            num_restarts=self.num_restarts,
            checkpoints=self.checkpoint_statistics(),
            all_running_ms=all_running_ms(self.graph.all_executions()),
        )
        try:
            await self.rm.release_job(self.job_id, job_ended=True)
            if self.ha is not None:
                try:
                    await self.ha.job_result_dirty(result)
                except (ClusterError, OSError) as exc:  # superseded: nothing is cleaned up, the next leader recovers
                    log.warning("job %s ended %s, but its result was not recorded: %s", self.job_id, status.value, exc)
                    return
            if self.checkpoints is not None:
                retention = self.configuration.get(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION)
                await _shutdown_storage(self.checkpoints.storage, status.value, retention)
            if self.ha is not None:
                await self.ha.job_ended(self.job_id)
        finally:
            if not self.result.done():
                self.result.set_result(result)

    async def close(self, grace: float = 0.0) -> None:
        """The JobManager stops: the clean-up the job's end started (releasing slots, checkpoint storage) may finish
        within ``grace`` seconds; then every task of this JobMaster and its checkpoint driver is cancelled."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        if self.checkpoints is not None:
            await self.checkpoints.task_group.stop(grace)
        await self.task_group.stop(max(0.0, deadline - loop.time()))

    # -- collect sinks -----------------------------------------------------------------------------
    async def poll_collect(self, sink_id: str, timeout: float) -> tuple[list[Any] | None, bool]:
        """Next batch of a collect sink: ``(records, False)``, or ``(None, True)`` at its end."""
        return await self.collect[sink_id].poll(timeout)


async def _shutdown_storage(storage: CheckpointStorage, status: str, retention: str) -> None:
    """Apply the retention policy off the loop — or on it when the interpreter is exiting (no more threads)."""
    try:
        await asyncio.to_thread(storage.shutdown, status, retention)
    except RuntimeError:
        storage.shutdown(status, retention)
    except Exception as exc:  # the job's outcome stands; leftover checkpoint files are only logged
        log.warning("checkpoint storage clean-up after the job ended failed: %s", exc)
