"""Region failover of the JobMaster: a task failure restarts only the subtasks the failover strategy names
(Flink's ``DefaultScheduler.handleTaskFailure`` → ``ExecutionFailureHandler`` → ``restartTasksWithDelay`` for a
failure that is not global), while every other subtask keeps running and the job stays RUNNING.

Per failure, as Flink's ``ExecutionFailureHandler``: the failover strategy names the subtasks to restart, the
restart strategy is told of the failure once (``notify_failure``) and asked whether and after which backoff the
restart may happen; a failure that starts a new restart attempt counts in ``num_restarts`` and gets an entry of the
exception history naming the failed subtask, the other subtasks of the restart set that failed too as its
concurrent exceptions, and the restarted subtasks — one the restart strategy merged into its pending attempt
(``exponential-delay``, Flink 1.19) counts none and joins the latest entry's concurrent exceptions. Then: pending
checkpoints are aborted and the periodic trigger pauses (it resumes once every task runs again), the coordinators
hear of the failed attempts, the subtasks are cancelled, and once all of them ended and the backoff passed, they get
new attempts — in the slots they had, or in new slots where their TaskManager is gone — each restoring its share of
the latest completed checkpoint (its key groups, operator state, source splits); their source coordinators are
reset to that checkpoint for them.

When the restart set is the whole job (``full``, or a job that is one region), the JobMaster's global failover
runs instead (job status RESTARTING, all slots released), as before.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from strom.exceptions import CorruptStateError, TaskManagerStartError
from strom.graph.execution_graph import Execution, SlotAssignment
from strom.graph.pipelined_regions import ExecutionVertexID
from strom.runtime.execution_state import ExecutionState, JobStatus
from strom.runtime.jobmaster.job_result import ExceptionHistoryEntry, last_line
from strom.runtime.scheduler.failover_strategy import FailoverStrategy
from strom.runtime.scheduler.restart_strategy import NoRestartBackoffTimeStrategy, describe_exhausted

if TYPE_CHECKING:
    from strom.runtime.jobmaster.jobmaster import JobMaster

__all__ = ["RegionFailover", "exception_entry"]

log = logging.getLogger(__name__)


def vertex_id(ex: Execution) -> ExecutionVertexID:
    return ex.vertex.job_vertex.job_vertex.id, ex.vertex.subtask_index


def exception_entry(
    text: str,
    error: BaseException | None,
    ex: Execution | None,
    *,
    concurrent: tuple[ExceptionHistoryEntry, ...] = (),
    restarted: tuple[str, ...] = (),
) -> ExceptionHistoryEntry:
    slot = ex.slot if ex is not None else None
    return ExceptionHistoryEntry(
        timestamp_ms=int(time.time() * 1000),
        exception_name=type(error).__qualname__ if error is not None else "JobFailure",
        text=text,
        task_name=ex.vertex.name if ex is not None else "",
        task_manager_id=slot.tm_id if slot is not None else "",
        endpoint=f"{slot.data_address[0]}:{slot.data_address[1]}" if slot is not None else "",
        concurrent=concurrent,
        restarted_tasks=restarted,
    )


@dataclass(slots=True)
class _PendingRestart:
    """Subtasks being cancelled for a restart: the attempts that must end first (Flink's ExecutionVertexVersion)."""

    attempts: list[Execution]
    delay_ms: int
    scheduled: bool = False


class RegionFailover:
    def __init__(self, jm: JobMaster, strategy: FailoverStrategy) -> None:
        self.jm = jm
        self.strategy = strategy
        self._pending: list[_PendingRestart] = []

    @property
    def restarting(self) -> bool:
        """Whether some region is being cancelled or waits for its restart."""
        return bool(self._pending)

    def handle_task_failures(
        self, failed: list[Execution], text: str, error: BaseException | None, *, summary: str = ""
    ) -> bool:
        """Restart the regions of ``failed`` (the first is the root cause); ``False``: not a region failover (the
        strategy names the whole job, the job is not running, or the error allows no restart) — the caller's
        global failover decides."""
        jm = self.jm
        if jm.graph.state is not JobStatus.RUNNING or jm.suspended or jm.terminating or not failed:
            return False
        if jm.ha is not None and not jm.ha.is_leader_now():
            return False  # the global failover steps aside quietly: the new leader owns the job
        if isinstance(error, CorruptStateError | TaskManagerStartError):
            return False
        tasks: set[ExecutionVertexID] = set()
        for ex in failed:
            tasks |= self.strategy.get_tasks_needing_restart(vertex_id(ex))
        if tasks >= self.strategy.all_tasks():
            return False
        attempts = [jm.graph.job_vertices[vid].task_vertices[i].current_execution for vid, i in sorted(tasks)]
        live = [ex for ex in attempts if ex is not None]
        if jm.scheduler.region_scheduler is None and any(ex.slot is None for ex in live):
            return False  # a subtask still waits for its slot (an earlier restart): the global failover starts over
        strategy = jm.restart_strategy
        new_attempt = strategy.notify_failure(error if error is not None else text, int(time.monotonic() * 1000))
        self._archive(failed, text, error, live, new_attempt)
        if not strategy.can_restart():  # the job fails, worded as the global failover words it
            if jm.num_restarts or not isinstance(strategy, NoRestartBackoffTimeStrategy):
                text = f"{text}\n\n{describe_exhausted(strategy)}"
            jm.fail_job(text, error)
            return True
        if new_attempt:  # Flink's numberOfRestarts: a failure merged into the pending restart adds none
            jm.num_restarts += 1
        log.warning(
            "job %s fails over (restart #%d, region of %d of %d subtasks): %s",
            jm.job_id,
            jm.num_restarts,
            len(tasks),
            len(self.strategy.all_tasks()),
            summary or last_line(text),
        )
        if jm.checkpoints is not None:  # the restarted subtasks cannot acknowledge what is pending
            jm.checkpoints.stop_periodic()
            jm.checkpoints.abort_all("a region of the job fails over")
        jm.subtasks_failed(live, "its region fails over")
        self._pending.append(_PendingRestart(live, strategy.get_backoff_time()))
        jm.cancel_executions(live)
        self.check_cancelled()
        return True

    def _archive(
        self, failed: list[Execution], text: str, error: BaseException | None, live: list[Execution], root: bool
    ) -> None:
        """The exception history (Flink's ``archiveFromFailureHandlingResult``): a failure that starts a new restart
        attempt is a root entry — the other failed subtasks of its restart set its concurrent exceptions; one the
        restart strategy merged into the pending attempt (``exponential-delay``) joins the latest root entry's
        concurrent exceptions."""
        history = self.jm.exception_history
        restarting = {vertex_id(ex) for ex in live}
        others = tuple(
            exception_entry(ex.failure_text or text, None, ex) for ex in failed[1:] if vertex_id(ex) in restarting
        )
        if root or not history:
            restarted = tuple(ex.vertex.name for ex in live)
            history.append(exception_entry(text, error, failed[0], concurrent=others, restarted=restarted))
            return
        latest = history[-1]
        history[-1] = dataclasses.replace(
            latest,
            concurrent=(*latest.concurrent, exception_entry(text, error, failed[0]), *others),
            restarted_tasks=(*latest.restarted_tasks, *(ex.vertex.name for ex in live)),
        )

    def handle_task_manager_lost(self, lost: list[Execution], message: str) -> bool:
        """A lost TaskManager fails every region that had a subtask on it — each a failure of its own, as each of
        Flink's executions fails on its own; ``False`` when those regions are the whole job (a global failover). In
        BATCH the loss is one failure: its finished producers' lost partitions are not failures of their own."""
        if not lost:
            return False
        if self.jm.scheduler.region_scheduler is not None:  # BATCH: one failure, whose restart set covers them all
            return self.handle_task_failures(lost, message, None)
        regions = self.jm.graph.pipelined_regions
        by_region: dict[int, list[Execution]] = {}
        for ex in lost:
            by_region.setdefault(regions.region_of[vertex_id(ex)], []).append(ex)
        restart: set[ExecutionVertexID] = set()
        for group in by_region.values():
            restart |= self.strategy.get_tasks_needing_restart(vertex_id(group[0]))
        if restart >= self.strategy.all_tasks() or any(ex.slot is None for ex in lost):
            return False
        for group in by_region.values():
            self.handle_task_failures(group, message, None)
        return True

    def check_cancelled(self) -> None:
        """After any attempt ended: schedule the restart of each region whose cancelled attempts all ended."""
        for pending in self._pending:
            if not pending.scheduled and all(ex.state.is_terminal for ex in pending.attempts):
                pending.scheduled = True
                self.jm.task_group.call_later(pending.delay_ms / 1000.0, functools.partial(self._restart, pending))

    async def _restart(self, pending: _PendingRestart) -> None:
        self._pending.remove(pending)
        jm = self.jm
        # a global failover or the job's end since then supersedes this restart (its attempts are not current)
        attempts = [ex for ex in pending.attempts if ex.vertex.current_execution is ex]
        if jm.graph.state is not JobStatus.RUNNING or jm.suspended or not attempts:
            return
        if jm.ha is not None and not jm.ha.is_leader_now():
            return  # HA: not the leader any more; the new leader deploys
        new = jm.graph.reset_vertices_for_restart(frozenset(vertex_id(ex) for ex in attempts))
        restored = jm.restore_from.checkpoint_id if jm.restore_from is not None else None
        log.info("job %s: restarting %d subtasks, restoring checkpoint %s", jm.job_id, len(new), restored)
        jm.subtasks_reset(new, restored)
        try:
            if (regions := jm.scheduler.region_scheduler) is not None:  # BATCH: once their inputs are, in free slots
                await regions.restart_tasks(attempts, new)
            else:
                await self._assign_slots(attempts, new)
                await jm.scheduler.deploy_all()
        except Exception as exc:
            log.warning("job %s: redeploying a region failed: %s", jm.job_id, exc)
            jm.handle_global_failure(f"scheduling failed: {type(exc).__name__}: {exc}", exc)

    async def _assign_slots(self, old: list[Execution], new: list[Execution]) -> None:
        """Each new attempt takes its predecessor's slot; slots of TaskManagers that are gone are replaced by new
        ones (one per lost slot, shared as before)."""
        jm = self.jm
        registered = jm.rm.slot_manager.task_managers
        previous = {vertex_id(ex): ex.slot for ex in old}
        lost = sorted({s.allocation_id for s in previous.values() if s is not None and s.tm_id not in registered})
        replacement: dict[str, SlotAssignment] = {}
        if lost:
            resource_of = {s.allocation_id: s.resource_id for s in previous.values() if s is not None}
            preferred = [resource_of[a] for a in lost] if jm.scheduler.local_recovery else []
            offers = await jm.rm.request_slots(jm.job_id, len(lost), jm.scheduler.slot_timeout, preferred)
            for allocation_id, o in zip(lost, offers, strict=True):
                replacement[allocation_id] = SlotAssignment(
                    tm_id=o.tm_id,
                    slot_index=o.slot_index,
                    allocation_id=o.allocation_id,
                    data_address=o.data_address,
                    resource_id=o.resource_id,
                )
        if jm.graph.state.is_globally_terminal:
            await jm.rm.release_job(jm.job_id)  # the job ended while the new slots came: they are not used
        if jm.graph.state is not JobStatus.RUNNING:
            return
        for ex in new:
            slot = previous.get(vertex_id(ex))
            if slot is None or ex.vertex.current_execution is not ex:
                continue
            ex.slot = replacement.get(slot.allocation_id, slot)
            ex.transition(ExecutionState.SCHEDULED)
