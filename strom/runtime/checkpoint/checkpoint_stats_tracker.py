"""``CheckpointStatsTracker``: what the JobManager keeps of a job's checkpoints for the REST API, the metrics and
``JobClient.get_checkpoint_statistics()`` (Flink's ``CheckpointStatsTracker`` / ``CheckpointStatsSnapshot``).

Bounded, whatever the job's age, as Flink's: the counts (total, in progress, completed, failed, restored), the
latest completed checkpoint, savepoint, failure and restore, the last ``web.checkpoints.history`` checkpoints (10,
Flink's default) in full, and the figures of the last :data:`SUMMARY_WINDOW` completed ones for the summary
statistics (Flink's ``StatsSummary`` keeps a bounded histogram too). A job checkpointing every second for a day
keeps the same few kilobytes as after a minute.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from strom.runtime.checkpoint.coordinator import CheckpointStats

__all__ = [
    "SUMMARY_WINDOW",
    "CheckpointStatsCounts",
    "CheckpointStatsSnapshot",
    "CheckpointStatsTracker",
    "RestoredCheckpoint",
]

#: completed checkpoints whose figures (size, duration, persisted data) the summary statistics are taken over
SUMMARY_WINDOW = 1000


@dataclass(frozen=True, slots=True)
class CheckpointStatsCounts:
    """Flink's ``CheckpointStatsCounts``: over the job's whole life."""

    restored: int = 0
    total: int = 0
    in_progress: int = 0
    completed: int = 0
    failed: int = 0


@dataclass(frozen=True, slots=True)
class RestoredCheckpoint:
    """Flink's ``RestoredCheckpointStats``: the checkpoint or savepoint the job last restored from."""

    checkpoint_id: int
    restore_timestamp_ms: int
    is_savepoint: bool
    external_path: str


@dataclass(frozen=True, slots=True)
class CheckpointStatsSnapshot:
    """An immutable copy of the tracker, for readers on any thread."""

    counts: CheckpointStatsCounts = field(default_factory=CheckpointStatsCounts)
    #: the last ``web.checkpoints.history`` checkpoints, oldest first
    history: tuple[CheckpointStats, ...] = ()
    latest_completed: CheckpointStats | None = None
    latest_savepoint: CheckpointStats | None = None
    latest_failed: CheckpointStats | None = None
    latest_restored: RestoredCheckpoint | None = None
    #: (state size, end-to-end duration ms, persisted in-flight bytes) of the last completed checkpoints
    summary_figures: tuple[tuple[float, float, float], ...] = ()


class CheckpointStatsTracker:
    """Fed by the :class:`~strom.runtime.checkpoint.coordinator.CheckpointCoordinator` with each checkpoint's
    statistics as it is triggered, completed or failed, and by the driver with restores."""

    def __init__(self, history_size: int = 10) -> None:
        self.history_size = max(1, history_size)
        self._history: collections.OrderedDict[int, CheckpointStats] = collections.OrderedDict()
        self._status: dict[int, str] = {}  # of the checkpoints in progress only
        self._counts = {"restored": 0, "total": 0, "in_progress": 0, "completed": 0, "failed": 0}
        self._latest: dict[str, CheckpointStats] = {}
        self._restored: RestoredCheckpoint | None = None
        self._figures: collections.deque[tuple[float, float, float]] = collections.deque(maxlen=SUMMARY_WINDOW)

    def report(self, stats: CheckpointStats) -> None:
        """A checkpoint was triggered (``IN_PROGRESS``), completed or failed."""
        cid = stats.checkpoint_id
        before = self._status.pop(cid, None)
        if before is None and stats.status != "IN_PROGRESS" and cid in self._history:
            return  # its end was reported already
        if before is None:
            self._counts["total"] += 1
        else:
            self._counts["in_progress"] -= 1
        if stats.status == "IN_PROGRESS":
            self._status[cid] = stats.status
            self._counts["in_progress"] += 1
        elif stats.status == "COMPLETED":
            self._counts["completed"] += 1
            self._latest["savepoint" if stats.is_savepoint else "completed"] = stats
            persisted = sum(s.get("persisted_data_bytes", 0.0) for s in stats.subtasks.values())
            self._figures.append((float(stats.state_size), float(stats.duration_ms or 0), float(persisted)))
        else:
            self._counts["failed"] += 1
            self._latest["failed"] = stats
        self._history[cid] = stats
        self._history.move_to_end(cid)
        while len(self._history) > self.history_size:
            self._history.popitem(last=False)

    def report_restored(self, restored: RestoredCheckpoint) -> None:
        self._counts["restored"] += 1
        self._restored = restored

    def snapshot(self) -> CheckpointStatsSnapshot:
        return CheckpointStatsSnapshot(
            counts=CheckpointStatsCounts(**self._counts),
            history=tuple(self._history[c] for c in sorted(self._history)),
            latest_completed=self._latest.get("completed"),
            latest_savepoint=self._latest.get("savepoint"),
            latest_failed=self._latest.get("failed"),
            latest_restored=self._restored,
            summary_figures=tuple(self._figures),
        )
