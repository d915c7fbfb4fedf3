"""``CheckpointDriver``: carries out the :class:`CheckpointCoordinator`'s actions on the JobManager's event loop
(seed 002, the JobMaster's half: ``triggerCheckpoint`` → ``receiveAcknowledgeMessage`` →
``completePendingCheckpoint`` → ``sendAcknowledgeMessages``).

The pure coordinator decides; this class snapshots the operator coordinators (on the loop, before anything
else), queues the triggers to the source tasks behind the operator events sent before that snapshot (the
JobMaster's ordered gateway), writes each coordinator's state file, arms the timeouts,
writes ``_metadata`` (off the loop) once every task has acknowledged, records the completed checkpoint in
the :class:`CheckpointStorage` (which prunes to the retained number), notifies every task of completion or
abortion, deletes the files of aborted checkpoints, resolves savepoint requests and hands a
"too many failed checkpoints" verdict to the JobMaster's failover.

Its collaborators are narrow, as Flink's ``CheckpointCoordinator``'s: a :class:`DefaultCheckpointPlanCalculator`
(which attempts to trigger, wait for and commit to), the operator coordinators as
:class:`OperatorCoordinatorCheckpointContext`, a :class:`CheckpointTaskGateway` to the tasks, and
:class:`CheckpointDriverListener` callbacks into the job (a completed checkpoint, a global failure); with high
availability a :class:`CompletedCheckpointPublisher` (the fenced CompletedCheckpointStore). It never sees the
JobMaster.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from strom.exceptions import CheckpointError
from strom.runtime.checkpoint.checkpoint_stats_tracker import CheckpointStatsSnapshot, RestoredCheckpoint
from strom.runtime.checkpoint.coordinator import (
    CheckpointCoordinator,
    CheckpointCoordinatorConfiguration,
    CoordinatorAction,
    DisposeCheckpoint,
    FailJob,
    FinalizeCheckpoint,
    NotifyCheckpointAborted,
    NotifyCheckpointComplete,
    PendingCheckpoint,
    ScheduleTimeout,
    TriggerTasks,
)
from strom.runtime.checkpoint.metadata import (
    CheckpointMetadata,
    IncrementalRemoteKeyedStateHandle,
    OperatorState,
    StateHandle,
)
from strom.runtime.checkpoint.plan_calculator import DefaultCheckpointPlanCalculator
from strom.runtime.checkpoint.shared_state_registry import shared_handles_of
from strom.runtime.checkpoint.storage import CheckpointStorage, CheckpointStorageLocation
from strom.runtime.network.events import CheckpointOptions
from strom.runtime.operators.coordination import TriggerCheckpointMessage
from strom.runtime.task_group import AsyncTaskGroup

__all__ = [
    "CheckpointDriver",
    "CheckpointDriverListener",
    "CheckpointTaskGateway",
    "CompletedCheckpointPublisher",
    "OperatorCoordinatorCheckpointContext",
]

log = logging.getLogger(__name__)


def _now_ms() -> int:
    return int(time.time() * 1000)


class OperatorCoordinatorCheckpointContext(Protocol):
    """An operator coordinator as a checkpoint sees it (Flink's ``OperatorCoordinatorCheckpointContext``)."""

    def checkpoint_coordinator(self, checkpoint_id: int) -> bytes | None: ...

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None: ...

    def notify_checkpoint_aborted(self, checkpoint_id: int) -> None: ...


#: a trigger's outcome: the task's answer (accepted or not), or the error of the RPC
TriggerResult = Callable[[Any, BaseException | None], None]


class CheckpointTaskGateway(Protocol):
    """The driver's line to the execution attempts: a trigger goes behind the operator events queued before it."""

    def trigger_checkpoint(
        self, attempt_id: str, message: TriggerCheckpointMessage, on_result: TriggerResult
    ) -> None: ...

    def notify_checkpoint_complete(self, attempt_id: str, checkpoint_id: int) -> None: ...

    def notify_checkpoint_aborted(self, attempt_id: str, checkpoint_id: int) -> None: ...


class CheckpointDriverListener(Protocol):
    """What the job hears of its checkpoints (the JobMaster's side of Flink's ``CheckpointFailureManager``)."""

    def on_checkpoint_complete(self, metadata: CheckpointMetadata) -> None:
        """A checkpoint is durable (and, unless a savepoint, the next restore point)."""

    def on_global_failure(self, reason: str) -> None:
        """Too many checkpoints failed: the job fails over."""

    @property
    def stopping_with_savepoint(self) -> bool:
        """The savepoint being taken ends the job: its completion commits side effects."""


class CompletedCheckpointPublisher(Protocol):
    """High availability: a completed checkpoint into the fenced CompletedCheckpointStore, before any notify."""

    async def checkpoint_completed(self, job_id: str, metadata: CheckpointMetadata) -> None: ...


class CheckpointDriver:
    def __init__(
        self,
        job_id: str,
        config: CheckpointCoordinatorConfiguration,
        storage: CheckpointStorage,
        *,
        plan_calculator: DefaultCheckpointPlanCalculator,
        coordinators: Mapping[str, OperatorCoordinatorCheckpointContext],
        tasks: CheckpointTaskGateway,
        listener: CheckpointDriverListener,
        restored: bool = False,
        first_checkpoint_id: int = 1,
        restored_from: CheckpointMetadata | None = None,
    ) -> None:
        self.job_id = job_id
        #: the owner of the driver's tasks (periodic trigger, state writes, finalization, disposal)
        self.task_group = AsyncTaskGroup(f"checkpoints of job {job_id}")
        self.config = config
        self.storage = storage
        self.coordinator = CheckpointCoordinator(config, first_checkpoint_id=first_checkpoint_id)
        self.plan_calculator = plan_calculator
        self.coordinators = coordinators
        self.tasks = tasks
        self.listener = listener
        #: high availability: where a completed checkpoint is published first (set by the leader session)
        self.completed_checkpoint_store: CompletedCheckpointPublisher | None = None
        #: the job has a restore point: it started from a checkpoint or savepoint, or a checkpoint completed since
        self._has_restore_point = restored
        self._locations: dict[int, CheckpointStorageLocation] = {}
        self._metadata: dict[int, CheckpointMetadata] = {}
        self._timeouts: dict[int, asyncio.TimerHandle] = {}
        self._savepoints: dict[int, asyncio.Future[str]] = {}
        self._periodic: asyncio.Task[None] | None = None
        #: checkpoint id -> the task writing its coordinators' state files (operator id -> handle)
        self._coordinator_writes: dict[int, asyncio.Task[dict[str, StateHandle]]] = {}
        self._closed = False
        #: Flink's ``lastCheckpointRestoreTimestamp``: when the job last started from a checkpoint or savepoint
        #: (-1: never); after a failover, when the restored attempts all run
        self.last_restore_timestamp_ms = _now_ms() if restored else -1
        if restored_from is not None:
            self._report_restored(
                restored_from.checkpoint_id, restored_from.is_savepoint, restored_from.external_pointer
            )
        self._restoring = False  # failed over: the next start of the periodic trigger follows a restore

    # -- periodic triggering ----------------------------------------------------------------------------
    def start_periodic(self) -> None:
        """All tasks run: trigger every ``interval_ms`` (Flink's ``CheckpointCoordinatorDeActivator``)."""
        if self._restoring and self._has_restore_point:
            self.last_restore_timestamp_ms = _now_ms()
            latest = self.coordinator.latest_completed
            if latest is not None:  # a failover restores the latest completed checkpoint
                metadata = self._metadata.get(latest.checkpoint_id)
                self._report_restored(latest.checkpoint_id, False, metadata.external_pointer if metadata else "")
        self._restoring = False
        if self.config.interval_ms > 0 and self._periodic is None and not self._closed:
            self._periodic = self.task_group.create_task(
                self._periodic_loop(), name="periodic checkpoints", awaited=True
            )

    def stop_periodic(self) -> None:
        if self._periodic is not None:
            self._periodic.cancel()
            self._periodic = None

    async def _periodic_loop(self) -> None:
        interval = self.config.interval_ms / 1000.0
        while True:
            await asyncio.sleep(interval)
            self.trigger_checkpoint(is_savepoint=False).add_done_callback(_log_periodic_outcome)

    # -- triggering -----------------------------------------------------------------------------------
    def trigger_checkpoint(self, *, is_savepoint: bool, target_dir: str | None = None) -> asyncio.Future[str]:
        """Start a checkpoint (or savepoint into ``target_dir``); the future gets its directory once complete."""
        fut: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        plan = self.plan_calculator.calculate_checkpoint_plan()
        if not_ready := plan.not_ready:
            what = "savepoint" if is_savepoint else "checkpoint"
            hint = "; hint: a savepoint needs every task RUNNING — retry in a moment" if is_savepoint else ""
            fut.set_exception(CheckpointError(f"{what} not triggered: {not_ready}{hint}"))
            return fut
        actions, reason = self.coordinator.trigger(
            _now_ms(), tasks_to_trigger=plan.tasks_to_trigger, tasks_to_ack=plan.tasks_to_ack, is_savepoint=is_savepoint
        )
        if not actions:
            fut.set_exception(CheckpointError(f"checkpoint not triggered: {reason}"))
            return fut
        trigger = actions[0]
        assert isinstance(trigger, TriggerTasks)
        cid = trigger.checkpoint_id
        try:
            if is_savepoint:
                assert target_dir is not None
                self._locations[cid] = self.storage.savepoint_location(target_dir, cid)
            else:
                self._locations[cid] = self.storage.initialize_location(cid)
        except Exception as exc:
            self._run(self.coordinator.on_finalize_failed(cid, f"its location could not be created: {exc!r}"))
            fut.set_exception(CheckpointError(f"checkpoint {cid} failed: {exc}"))
            return fut
        self._savepoints[cid] = fut
        self._run(actions)
        return fut

    # -- messages from tasks -----------------------------------------------------------------------
    def receive_acknowledge(self, attempt_id: str, checkpoint_id: int, states: Any, stats: dict[str, float]) -> None:
        if checkpoint_id not in self.coordinator.pending:  # late: its checkpoint is gone, so are the files only it has
            self._discard_shared(checkpoint_id, _shared_handles({attempt_id: states}))
        self._run(self.coordinator.receive_acknowledge(checkpoint_id, attempt_id, states, stats))

    def receive_decline(self, attempt_id: str, checkpoint_id: int, reason: str, counts: bool) -> None:
        log.info("checkpoint %d declined: %s", checkpoint_id, reason)
        self._run(self.coordinator.receive_decline(checkpoint_id, attempt_id, reason, counts=counts))

    def task_finished(self, attempt_id: str) -> None:
        self._run(self.coordinator.on_task_finished(attempt_id))

    def abort_all(self, reason: str) -> None:
        """Failover or job end: pending checkpoints are aborted (not counted as checkpoint failures)."""
        self._restoring = not self._closed
        self._run(self.coordinator.abort_all(reason))

    def close(self) -> None:
        self._closed = True
        self.stop_periodic()
        self.abort_all("the job ended")
        for handle in self._timeouts.values():
            handle.cancel()
        self._timeouts.clear()
        for writes in self._coordinator_writes.values():
            writes.cancel()
        self._coordinator_writes.clear()

    # -- statistics --------------------------------------------------------------------------------------
    def statistics(self) -> CheckpointStatsSnapshot:
        """The job's checkpoint statistics, bounded (``web.checkpoints.history``)."""
        return self.coordinator.stats.snapshot()

    def _report_restored(self, checkpoint_id: int, is_savepoint: bool, external_path: str) -> None:
        restored = RestoredCheckpoint(checkpoint_id, self.last_restore_timestamp_ms, is_savepoint, external_path)
        self.coordinator.stats.report_restored(restored)

    # -- actions ---------------------------------------------------------------------------------------
    def _run(self, actions: list[CoordinatorAction]) -> None:
        for action in actions:
            if isinstance(action, TriggerTasks):
                self._trigger_tasks(action)
            elif isinstance(action, ScheduleTimeout):
                loop = asyncio.get_running_loop()
                self._timeouts[action.checkpoint_id] = loop.call_later(
                    action.delay_ms / 1000.0, self._on_timeout, action.checkpoint_id
                )
            elif isinstance(action, FinalizeCheckpoint):
                self.task_group.create_task(
                    self._finalize(action.pending), name=f"finalize {action.pending.checkpoint_id}"
                )
            elif isinstance(action, NotifyCheckpointComplete):
                self._completed(action)
            elif isinstance(action, NotifyCheckpointAborted):
                self._aborted(action)
            elif isinstance(action, DisposeCheckpoint):
                self._dispose(action.checkpoint_id)
                self._discard_shared(action.checkpoint_id, _shared_handles(action.states))
            elif isinstance(action, FailJob):
                self.listener.on_global_failure(action.reason)

    def _on_timeout(self, checkpoint_id: int) -> None:
        self._timeouts.pop(checkpoint_id, None)
        self._run(self.coordinator.on_timeout(checkpoint_id))

    def _trigger_tasks(self, action: TriggerTasks) -> None:
        cid = action.checkpoint_id
        location = self._locations.get(cid)
        try:
            # first the coordinators, with no await before the triggers are queued: every split assigned before
            # this snapshot reaches its reader before the trigger, every later one after it
            snapshots = self._snapshot_coordinators(cid)
        except Exception as exc:
            log.warning("checkpoint %d: snapshotting an operator coordinator failed: %r", cid, exc)
            if action.executions:
                reason = f"an operator coordinator could not be snapshotted: {exc!r}"
                self._run(self.coordinator.receive_decline(cid, action.executions[0], reason))
            return
        if snapshots and location is not None:
            self._coordinator_writes[cid] = self.task_group.create_task(
                asyncio.to_thread(_write_coordinator_states, location, snapshots),
                name=f"coordinator states {cid}",
                awaited=True,
            )
        unaligned = self.config.unaligned and not action.is_savepoint  # savepoints are always aligned
        timeout = self.config.aligned_timeout_ms if unaligned else 0
        options = CheckpointOptions(
            is_savepoint=action.is_savepoint,
            exactly_once=self.config.exactly_once,
            unaligned=unaligned and timeout == 0,
            location=location,
            aligned_timeout_ms=timeout,
        )
        message = TriggerCheckpointMessage(checkpoint_id=cid, timestamp_ms=action.timestamp_ms, options=options)
        for attempt_id in action.executions:

            def on_result(accepted: Any, error: BaseException | None, attempt_id: str = attempt_id) -> None:
                if accepted:
                    return
                why = f"the trigger RPC failed: {error}" if error is not None else "the task was not running"
                self._run(self.coordinator.receive_decline(cid, attempt_id, why, counts=False))

            self.tasks.trigger_checkpoint(attempt_id, message, on_result)

    def _snapshot_coordinators(self, checkpoint_id: int) -> dict[str, bytes]:
        """Every coordinator's state, taken now, before any task is triggered; raises if one fails."""
        out: dict[str, bytes] = {}
        for op_id, holder in self.coordinators.items():
            state = holder.checkpoint_coordinator(checkpoint_id)
            if state is not None:
                out[op_id] = state
        return out

    async def _finalize(self, pending: PendingCheckpoint) -> None:
        cid = pending.checkpoint_id
        location = self._locations.get(cid)
        try:
            if location is None:
                raise CheckpointError(f"checkpoint {cid} has no storage location")
            writes = self._coordinator_writes.pop(cid, None)
            coordinator_states = await writes if writes is not None else {}
            metadata = self._build_metadata(pending, location.uri, coordinator_states)
            _check_shared_files(metadata, self.storage)
            await asyncio.to_thread(location.write_metadata, metadata)
            store = self.completed_checkpoint_store
            if store is not None and not metadata.is_savepoint:
                # HA: the pointer into the CompletedCheckpointStore, fenced, before anything is notified
                await store.checkpoint_completed(self.job_id, metadata)
        except Exception as exc:
            log.warning("checkpoint %d could not be finalized: %s", cid, exc)
            self._run(self.coordinator.on_finalize_failed(cid, repr(exc)))
            return
        self._metadata[cid] = metadata
        self._run(self.coordinator.on_finalized(cid, _now_ms()))

    def _build_metadata(
        self, pending: PendingCheckpoint, pointer: str, coordinator_states: dict[str, StateHandle] | None = None
    ) -> CheckpointMetadata:
        keyed: dict[str, dict[int, StateHandle]] = {}
        operator: dict[str, dict[int, StateHandle]] = {}
        channel: dict[str, dict[int, StateHandle]] = {}
        incremental: dict[str, dict[int, IncrementalRemoteKeyedStateHandle]] = {}
        shape: dict[str, tuple[int, int]] = {}
        for attempt_id, states in pending.states.items():
            subtask, parallelism, max_parallelism = self.plan_calculator.subtask_of(attempt_id)
            for op_id, handles in (states or {}).items():
                shape[op_id] = (parallelism, max_parallelism)
                keyed.setdefault(op_id, {}).update(handles.keyed)
                if handles.operator is not None:
                    operator.setdefault(op_id, {})[subtask] = handles.operator
                if handles.channel is not None:
                    channel.setdefault(op_id, {})[subtask] = handles.channel
                if getattr(handles, "incremental", None) is not None:
                    incremental.setdefault(op_id, {})[subtask] = handles.incremental
        coordinator_states = coordinator_states or {}
        for op_id in coordinator_states:
            if op_id not in shape:  # no subtask acknowledged state for it (all finished before)
                shape[op_id] = self.plan_calculator.operator_shape(op_id)
        ops = {
            op_id: OperatorState(
                operator_id=op_id,
                parallelism=p,
                max_parallelism=mp,
                keyed=keyed.get(op_id, {}),
                operator=operator.get(op_id, {}),
                channel=channel.get(op_id, {}),
                coordinator=coordinator_states.get(op_id),
                incremental=incremental.get(op_id, {}),
            )
            for op_id, (p, mp) in shape.items()
        }
        return CheckpointMetadata(
            checkpoint_id=pending.checkpoint_id,
            job_id=self.job_id,
            timestamp_ms=pending.timestamp_ms,
            is_savepoint=pending.is_savepoint,
            operator_states=ops,
            external_pointer=pointer,
        )

    def _completed(self, action: NotifyCheckpointComplete) -> None:
        cid = action.checkpoint_id
        self._cancel_timeout(cid)
        metadata = self._metadata.pop(cid)
        location = self._locations.pop(cid, None)
        if not metadata.is_savepoint:
            self._has_restore_point = True
            try:
                self.storage.add_completed(metadata)
            except Exception as exc:  # pruning older checkpoints failed: the new one still counts
                log.warning("checkpoint %d: pruning older checkpoints failed: %s", cid, exc)
        log.info("checkpoint %d complete (%s)", cid, metadata.external_pointer)
        # a savepoint is no recovery point (a failover restores the latest checkpoint): as Flink (FLINK-25191) it
        # commits nothing — a split assignment or a sink part it made final would be lost or repeated by a failover
        # back to the checkpoint before it — except the savepoint of stop-with-savepoint, after which the job ends
        if not metadata.is_savepoint or self.listener.stopping_with_savepoint:
            for holder in self.coordinators.values():  # the enumerators first, as Flink
                holder.notify_checkpoint_complete(cid)
            for attempt_id in action.executions:
                self.tasks.notify_checkpoint_complete(attempt_id, cid)
        fut = self._savepoints.pop(cid, None)
        if fut is not None and not fut.done():
            fut.set_result(location.uri if location is not None else metadata.external_pointer)
        self.listener.on_checkpoint_complete(metadata)

    def _aborted(self, action: NotifyCheckpointAborted) -> None:
        cid = action.checkpoint_id
        self._cancel_timeout(cid)
        log.info("checkpoint %d aborted: %s", cid, action.reason)
        for holder in self.coordinators.values():
            holder.notify_checkpoint_aborted(cid)
        for attempt_id in action.executions:
            self.tasks.notify_checkpoint_aborted(attempt_id, cid)
        fut = self._savepoints.pop(cid, None)
        if fut is not None and not fut.done():
            fut.set_exception(CheckpointError(f"checkpoint {cid} was aborted: {action.reason}"))

    def _dispose(self, checkpoint_id: int) -> None:
        self._metadata.pop(checkpoint_id, None)
        writes = self._coordinator_writes.pop(checkpoint_id, None)
        if writes is not None:
            writes.cancel()
        location = self._locations.pop(checkpoint_id, None)
        if location is not None:
            self.task_group.create_task(_dispose(location, checkpoint_id), name=f"dispose {checkpoint_id}")

    def _discard_shared(self, checkpoint_id: int, handles: list[StateHandle]) -> None:
        """An aborted checkpoint's files in ``shared/`` that no completed checkpoint registered: only it had them."""
        if handles:
            discard = self.storage.discard_unregistered
            self.task_group.create_task(
                _discard_shared(discard, handles, checkpoint_id), name=f"discard shared files of {checkpoint_id}"
            )

    def _cancel_timeout(self, checkpoint_id: int) -> None:
        handle = self._timeouts.pop(checkpoint_id, None)
        if handle is not None:
            handle.cancel()


def _write_coordinator_states(location: CheckpointStorageLocation, states: dict[str, bytes]) -> dict[str, StateHandle]:
    """One state file per coordinator, with its checksum (worker thread)."""
    return {op_id: location.write_state(f"{op_id}-coordinator", data) for op_id, data in states.items()}


async def _dispose(location: Any, checkpoint_id: int) -> None:
    """Delete an aborted checkpoint's directory off the loop; a failure leaves files behind, nothing more."""
    try:
        await asyncio.to_thread(location.dispose)
    except Exception as exc:
        log.warning("checkpoint %d: deleting its directory failed: %s", checkpoint_id, exc)


def _check_shared_files(metadata: CheckpointMetadata, storage: CheckpointStorage) -> None:
    """A checkpoint never completes referencing a shared file deleted already (a task that learnt of completed
    checkpoints late referenced the files of one subsumed meanwhile): it is aborted, the next one uploads anew."""
    deleted = storage.registry.discarded_among(shared_handles_of(metadata))
    if deleted:
        raise CheckpointError(
            f"expected checkpoint {metadata.checkpoint_id} to reference only shared files that exist; got "
            f"{len(deleted)} deleted already (e.g. {deleted[0].uri}); hint: the tasks learnt late that newer "
            "checkpoints completed — the next checkpoint uploads the files again"
        )


def _shared_handles(states: Mapping[str, Any]) -> list[StateHandle]:
    """The shared files the acknowledgements ``states`` (execution id → operator id → handles) reference."""
    out: list[StateHandle] = []
    for per_operator in states.values():
        for handles in (per_operator or {}).values():
            inc = getattr(handles, "incremental", None)
            if inc is not None:
                out.extend(inc.shared.values())
    return out


async def _discard_shared(discard: Callable[[list[StateHandle]], int], handles: list[StateHandle], cid: int) -> None:
    try:
        removed = await asyncio.to_thread(discard, handles)
    except Exception as exc:
        log.warning("checkpoint %d: deleting its shared files failed: %s", cid, exc)
        return
    if removed:
        log.info("checkpoint %d aborted: %d shared file(s) only it uploaded deleted", cid, removed)


def _log_periodic_outcome(fut: asyncio.Future[str]) -> None:
    """A periodic checkpoint has no caller waiting: its failure is logged (and recorded in the statistics)."""
    if not fut.cancelled() and (exc := fut.exception()) is not None:
        log.debug("periodic checkpoint: %s", exc)
