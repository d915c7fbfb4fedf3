"""``CheckpointCoordinator``: the JobMaster's checkpoint bookkeeping as a pure state machine (seed 002:
trigger → PendingCheckpoint → acknowledge → CompletedCheckpoint → notify).

The coordinator never sends a message, writes a file or reads a clock: every method takes ``now_ms`` and
returns the actions the driver (the JobMaster, on its event loop) must carry out — trigger these tasks,
arm a timeout, finalize (write ``_metadata``) then report back, notify completion or abortion, dispose a
location, fail the job. ``tests/unit/checkpoint/test_coordinator.py`` drives it with events alone.

Flink's rules kept: one id sequence that only grows (also across restores); at most
``max_concurrent`` pending checkpoints and ``min_pause_ms`` between the end of one and the start of the
next (periodic triggers only; savepoints skip both); a checkpoint completes when every task it waits for
has acknowledged; a decline, an expiry or a task failure aborts it; completing checkpoint *n* subsumes
pending ones older than *n*; more than ``tolerable_failures`` failed checkpoints in a row fail the job.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from strom.config import CheckpointingOptions, Configuration, WebOptions, millis
from strom.exceptions import CheckpointError
from strom.runtime.checkpoint.checkpoint_stats_tracker import CheckpointStatsTracker

__all__ = [
    "CheckpointCoordinator",
    "CheckpointCoordinatorConfiguration",
    "CheckpointStats",
    "CompletedCheckpoint",
    "DisposeCheckpoint",
    "FailJob",
    "FinalizeCheckpoint",
    "NotifyCheckpointAborted",
    "NotifyCheckpointComplete",
    "PendingCheckpoint",
    "ScheduleTimeout",
    "TriggerTasks",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointCoordinatorConfiguration:
    interval_ms: int = 0
    timeout_ms: int = 600_000
    min_pause_ms: int = 0
    max_concurrent: int = 1
    tolerable_failures: int = 0
    exactly_once: bool = True
    unaligned: bool = False  # checkpoints (never savepoints) let barriers overtake in-flight data
    history_size: int = 10  # web.checkpoints.history: the checkpoints whose statistics are kept in full
    #: with ``unaligned``: > 0 starts checkpoints aligned, switched to unaligned in a task after this alignment time
    aligned_timeout_ms: int = 0

    @classmethod
    def from_configuration(cls, c: Configuration) -> CheckpointCoordinatorConfiguration | None:
        """The job's ``execution.checkpointing.*`` settings, checked (Flink's ``CheckpointCoordinatorConfiguration``
        built from a ``CheckpointConfig``); ``None`` when checkpointing is off."""
        interval = millis(c.get(CheckpointingOptions.CHECKPOINTING_INTERVAL))
        if interval <= 0:
            return None
        mode = c.get(CheckpointingOptions.CHECKPOINTING_CONSISTENCY_MODE).upper()
        if mode not in ("EXACTLY_ONCE", "AT_LEAST_ONCE"):
            raise CheckpointError(
                f"expected EXACTLY_ONCE or AT_LEAST_ONCE for execution.checkpointing.mode; got {mode!r}; "
                "hint: env.enable_checkpointing(interval_ms, CheckpointingMode.EXACTLY_ONCE)"
            )
        unaligned = c.get(CheckpointingOptions.ENABLE_UNALIGNED)
        max_concurrent = c.get(CheckpointingOptions.MAX_CONCURRENT_CHECKPOINTS)
        if unaligned and (mode != "EXACTLY_ONCE" or max_concurrent > 1):
            raise CheckpointError(
                "expected EXACTLY_ONCE mode and at most 1 concurrent checkpoint with unaligned checkpoints; "
                f"got {mode} and {max_concurrent}; hint: unaligned checkpoints exist to make exactly-once "
                "barriers fast under backpressure — use EXACTLY_ONCE with max concurrent checkpoints 1"
            )
        return cls(
            interval_ms=interval,
            timeout_ms=millis(c.get(CheckpointingOptions.CHECKPOINTING_TIMEOUT)),
            min_pause_ms=millis(c.get(CheckpointingOptions.MIN_PAUSE_BETWEEN_CHECKPOINTS)),
            max_concurrent=max_concurrent,
            tolerable_failures=c.get(CheckpointingOptions.TOLERABLE_FAILURE_NUMBER),
            exactly_once=mode == "EXACTLY_ONCE",
            unaligned=unaligned,
            history_size=max(1, c.get(WebOptions.CHECKPOINTS_HISTORY_SIZE)),
            aligned_timeout_ms=millis(c.get(CheckpointingOptions.ALIGNED_CHECKPOINT_TIMEOUT)) if unaligned else 0,
        )


# -- actions ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class TriggerTasks:
    checkpoint_id: int
    timestamp_ms: int
    is_savepoint: bool
    executions: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ScheduleTimeout:
    checkpoint_id: int
    delay_ms: int


@dataclass(frozen=True, slots=True)
class FinalizeCheckpoint:
    """All acknowledged: write the metadata, then call :meth:`CheckpointCoordinator.on_finalized`."""

    pending: PendingCheckpoint


@dataclass(frozen=True, slots=True)
class NotifyCheckpointComplete:
    checkpoint_id: int
    executions: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NotifyCheckpointAborted:
    checkpoint_id: int
    executions: tuple[str, ...]
    reason: str


@dataclass(frozen=True, slots=True)
class DisposeCheckpoint:
    checkpoint_id: int
    #: execution id -> what its task acknowledged before the abort (the files it wrote, shared ones included)
    states: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True)
class FailJob:
    reason: str


CoordinatorAction = (
    TriggerTasks
    | ScheduleTimeout
    | FinalizeCheckpoint
    | NotifyCheckpointComplete
    | NotifyCheckpointAborted
    | DisposeCheckpoint
    | FailJob
)


# -- state ----------------------------------------------------------------------------------------------------
@dataclass(slots=True)
class PendingCheckpoint:
    checkpoint_id: int
    timestamp_ms: int
    is_savepoint: bool
    tasks_to_ack: tuple[str, ...]
    not_yet_acknowledged: set[str]
    states: dict[str, Any] = field(default_factory=dict)  # execution id -> what its task acknowledged
    stats: dict[str, dict[str, float]] = field(default_factory=dict)  # execution id -> size, alignment, ...
    finalizing: bool = False


@dataclass(frozen=True, slots=True)
class CompletedCheckpoint:
    checkpoint_id: int
    timestamp_ms: int
    completed_ms: int
    is_savepoint: bool
    states: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointStats:
    """One line of the checkpoint history a running job exposes."""

    checkpoint_id: int
    status: str  # IN_PROGRESS | COMPLETED | FAILED
    is_savepoint: bool
    trigger_timestamp_ms: int
    duration_ms: int | None
    state_size: int
    failure_reason: str = ""
    subtasks: dict[str, dict[str, float]] = field(default_factory=dict)


class CheckpointCoordinator:
    def __init__(self, config: CheckpointCoordinatorConfiguration, *, first_checkpoint_id: int = 1) -> None:
        self.config = config
        self.next_checkpoint_id = first_checkpoint_id
        self.pending: dict[int, PendingCheckpoint] = {}
        self.latest_completed: CompletedCheckpoint | None = None
        self.last_completion_ms: int | None = None
        self.consecutive_failures = 0
        #: the statistics of the job's checkpoints, bounded (Flink's ``CheckpointStatsTracker``)
        self.stats = CheckpointStatsTracker(config.history_size)

    # -- trigger ------------------------------------------------------------------------------------------------
    def trigger(
        self,
        now_ms: int,
        *,
        tasks_to_trigger: tuple[str, ...],
        tasks_to_ack: tuple[str, ...],
        is_savepoint: bool = False,
    ) -> tuple[list[CoordinatorAction], str]:
        """Start a checkpoint; returns its actions, or no actions and the reason it was not started."""
        if not tasks_to_trigger or not tasks_to_ack:
            return [], "no running task to trigger: the job is not running (or already finishing)"
        if not is_savepoint:
            running = sum(1 for p in self.pending.values() if not p.is_savepoint)
            if running >= self.config.max_concurrent:
                return [], f"{running} checkpoint(s) still pending (max concurrent {self.config.max_concurrent})"
            if self.last_completion_ms is not None and now_ms - self.last_completion_ms < self.config.min_pause_ms:
                return [], f"minimum pause of {self.config.min_pause_ms} ms since the last checkpoint not over"
        cid = self.next_checkpoint_id
        self.next_checkpoint_id += 1
        self.pending[cid] = PendingCheckpoint(
            checkpoint_id=cid,
            timestamp_ms=now_ms,
            is_savepoint=is_savepoint,
            tasks_to_ack=tasks_to_ack,
            not_yet_acknowledged=set(tasks_to_ack),
        )
        self.stats.report(
            CheckpointStats(
                checkpoint_id=cid,
                status="IN_PROGRESS",
                is_savepoint=is_savepoint,
                trigger_timestamp_ms=now_ms,
                duration_ms=None,
                state_size=0,
            )
        )
        return [
            TriggerTasks(cid, now_ms, is_savepoint, tasks_to_trigger),
            ScheduleTimeout(cid, self.config.timeout_ms),
        ], ""

    # -- acknowledge / decline ------------------------------------------------------------------------------
    def receive_acknowledge(
        self, checkpoint_id: int, execution_id: str, state: Any, stats: dict[str, float] | None = None
    ) -> list[CoordinatorAction]:
        p = self.pending.get(checkpoint_id)
        if p is None or p.finalizing or execution_id not in p.not_yet_acknowledged:
            return []  # late, duplicate or of an aborted checkpoint: the driver discards its state
        p.not_yet_acknowledged.discard(execution_id)
        p.states[execution_id] = state
        p.stats[execution_id] = dict(stats or {})
        if p.not_yet_acknowledged:
            return []
        p.finalizing = True
        return [FinalizeCheckpoint(p)]

    def receive_decline(
        self, checkpoint_id: int, execution_id: str, reason: str, *, counts: bool = True
    ) -> list[CoordinatorAction]:
        """A task cannot take the checkpoint. ``counts=False`` for declines that are no checkpoint failure
        (the task was not running yet or any more, the checkpoint was cancelled upstream), as Flink's
        ``CheckpointFailureManager`` ignores them."""
        p = self.pending.get(checkpoint_id)
        if p is None or execution_id not in p.tasks_to_ack:
            return []
        return self._abort(p, f"declined by a task: {reason}", counts=counts)

    def on_task_finished(self, execution_id: str) -> list[CoordinatorAction]:
        """A task finished without acknowledging a pending checkpoint: a trigger reached it while it was closing
        and will never run (Flink declines it as ``CHECKPOINT_DECLINED_TASK_CLOSING``). Abort those checkpoints —
        no failure — so the next one is triggered without it instead of this one waiting for its timeout."""
        actions: list[CoordinatorAction] = []
        for p in list(self.pending.values()):
            if execution_id in p.not_yet_acknowledged and not p.finalizing:
                actions += self._abort(p, f"task {execution_id} finished before acknowledging it", counts=False)
        return actions

    def on_timeout(self, checkpoint_id: int) -> list[CoordinatorAction]:
        p = self.pending.get(checkpoint_id)
        if p is None or p.finalizing:
            return []
        return self._abort(p, f"expired before completing (timeout {self.config.timeout_ms} ms)", counts=True)

    def on_finalized(self, checkpoint_id: int, now_ms: int) -> list[CoordinatorAction]:
        """The metadata is durable: the checkpoint is complete."""
        p = self.pending.pop(checkpoint_id, None)
        if p is None:
            return []
        completed = CompletedCheckpoint(
            checkpoint_id=checkpoint_id,
            timestamp_ms=p.timestamp_ms,
            completed_ms=now_ms,
            is_savepoint=p.is_savepoint,
            states=p.states,
        )
        actions: list[CoordinatorAction] = []
        if not p.is_savepoint:
            self.latest_completed = completed
            self.last_completion_ms = now_ms
            self.consecutive_failures = 0
            for older in sorted(c for c in self.pending if c < checkpoint_id and not self.pending[c].is_savepoint):
                actions += self._abort(self.pending[older], f"subsumed by checkpoint {checkpoint_id}", counts=False)
        self.stats.report(
            CheckpointStats(
                checkpoint_id=checkpoint_id,
                status="COMPLETED",
                is_savepoint=p.is_savepoint,
                trigger_timestamp_ms=p.timestamp_ms,
                duration_ms=now_ms - p.timestamp_ms,
                state_size=int(sum(s.get("state_size", 0) for s in p.stats.values())),
                subtasks=p.stats,
            )
        )
        return [NotifyCheckpointComplete(checkpoint_id, p.tasks_to_ack), *actions]

    def on_finalize_failed(self, checkpoint_id: int, reason: str) -> list[CoordinatorAction]:
        p = self.pending.get(checkpoint_id)
        if p is None:
            return []
        return self._abort(p, f"could not be written: {reason}", counts=True)

    def abort_all(self, reason: str) -> list[CoordinatorAction]:
        """Failover or job end: every pending checkpoint is aborted (not counted as a checkpoint failure)."""
        actions: list[CoordinatorAction] = []
        for cid in sorted(self.pending):
            actions += self._abort(self.pending[cid], reason, counts=False)
        return actions

    def _abort(self, p: PendingCheckpoint, reason: str, *, counts: bool) -> list[CoordinatorAction]:
        self.pending.pop(p.checkpoint_id, None)
        self.stats.report(
            CheckpointStats(
                checkpoint_id=p.checkpoint_id,
                status="FAILED",
                is_savepoint=p.is_savepoint,
                trigger_timestamp_ms=p.timestamp_ms,
                duration_ms=None,
                state_size=0,
                failure_reason=reason,
                subtasks=p.stats,
            )
        )
        actions: list[CoordinatorAction] = [
            NotifyCheckpointAborted(p.checkpoint_id, p.tasks_to_ack, reason),
            DisposeCheckpoint(p.checkpoint_id, dict(p.states)),
        ]
        if counts and not p.is_savepoint:
            self.consecutive_failures += 1
            if self.consecutive_failures > self.config.tolerable_failures:
                actions.append(
                    FailJob(
                        f"expected at most {self.config.tolerable_failures} failed checkpoint(s) in a row; got "
                        f"{self.consecutive_failures} (last: checkpoint {p.checkpoint_id} {reason}); hint: raise "
                        "execution.checkpointing.tolerable-failed-checkpoints or the checkpoint timeout"
                    )
                )
        return actions
