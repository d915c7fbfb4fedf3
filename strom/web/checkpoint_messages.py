"""Flink's checkpoint REST bodies, built from snapshots (pure): ``CheckpointingStatistics`` (``GET
/jobs/:jobid/checkpoints``), ``CheckpointStatistics`` with its per-task ``TaskCheckpointStatistics``
(``.../checkpoints/details/:checkpointid``) and ``CheckpointConfigInfo`` (``.../checkpoints/config``), as in
Flink 2.x's ``rest_v1_dispatcher.yml``.

What strom measures per acknowledged subtask: state size, synchronous and asynchronous durations, alignment
duration and the in-flight bytes an unaligned checkpoint persisted. strom does not count the bytes processed
during alignment (``processed_data``, ``alignment_buffered``: 0) and writes full, not incremental, snapshots
(``checkpointed_size`` = ``state_size``). Counts, latest entries and the restore come from the JobMaster's bounded
:class:`~strom.runtime.checkpoint.checkpoint_stats_tracker.CheckpointStatsTracker`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from strom.runtime.checkpoint.checkpoint_stats_tracker import RestoredCheckpoint
from strom.runtime.checkpoint.coordinator import CheckpointStats
from strom.web.accessor import CheckpointSettings, CheckpointSnapshot, JobSnapshot

__all__ = [
    "checkpoint_config",
    "checkpoint_statistics",
    "checkpointing_statistics",
    "stats_summary",
    "task_checkpoint_statistics_with_subtasks",
]

_CLASS_NAME = {"COMPLETED": "completed", "FAILED": "failed", "IN_PROGRESS": "in_progress"}


def stats_summary(values: Sequence[float]) -> dict[str, Any]:
    """Flink's ``StatsSummaryDto``: min/max/avg and quantiles (nearest rank) of ``values``; zeros when empty."""
    if not values:
        return {"min": 0, "max": 0, "avg": 0, "p50": 0.0, "p90": 0.0, "p95": 0.0, "p99": 0.0, "p999": 0.0}
    ordered = sorted(values)

    def quantile(q: float) -> float:
        return float(ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))])

    return {
        "min": int(ordered[0]),
        "max": int(ordered[-1]),
        "avg": int(sum(ordered) / len(ordered)),
        "p50": quantile(0.5),
        "p90": quantile(0.9),
        "p95": quantile(0.95),
        "p99": quantile(0.99),
        "p999": quantile(0.999),
    }


def _num_subtasks(job: JobSnapshot) -> int:
    return sum(v.parallelism for v in job.vertices)


def _checkpoint_type(c: CheckpointSnapshot) -> str:
    if c.is_savepoint:
        return "SAVEPOINT"
    return "UNALIGNED_CHECKPOINT" if c.unaligned else "CHECKPOINT"


def _end_to_end(c: CheckpointSnapshot) -> int:
    return c.duration_ms if c.duration_ms is not None else 0


def _latest_ack(c: CheckpointSnapshot) -> int:
    return c.trigger_timestamp_ms + c.duration_ms if c.duration_ms is not None else c.trigger_timestamp_ms


def _persisted(stats: Mapping[str, float]) -> int:
    return int(stats.get("persisted_data_bytes", 0.0))


def _task_statistics(job: JobSnapshot, c: CheckpointSnapshot) -> dict[str, Any]:
    """``TaskCheckpointStatistics`` per vertex id."""
    out: dict[str, Any] = {}
    for v in job.vertices:
        mine = [stats for vid, _, stats in c.subtasks if vid == v.id]
        size = int(sum(s.get("state_size", 0.0) for s in mine))
        out[v.id] = {
            "id": c.id,
            "status": c.status,
            "latest_ack_timestamp": _latest_ack(c) if mine else -1,
            "checkpointed_size": size,
            "state_size": size,
            "end_to_end_duration": _end_to_end(c) if mine else -1,
            "alignment_buffered": 0,
            "processed_data": 0,
            "persisted_data": sum(_persisted(s) for s in mine),
            "num_subtasks": v.parallelism,
            "num_acknowledged_subtasks": v.parallelism if c.status == "COMPLETED" else len(mine),
        }
    return out


def checkpoint_statistics(
    job: JobSnapshot, c: CheckpointSnapshot, *, with_tasks: bool = True, discarded: bool = False
) -> dict[str, Any]:
    """One ``CheckpointStatistics`` (``className`` completed | failed | in_progress)."""
    n = _num_subtasks(job)
    out: dict[str, Any] = {
        "className": _CLASS_NAME.get(c.status, "in_progress"),
        "id": c.id,
        "status": c.status,
        "is_savepoint": c.is_savepoint,
        "trigger_timestamp": c.trigger_timestamp_ms,
        "latest_ack_timestamp": _latest_ack(c),
        "checkpointed_size": c.state_size,
        "state_size": c.state_size,
        "end_to_end_duration": _end_to_end(c),
        "alignment_buffered": 0,
        "processed_data": 0,
        "persisted_data": sum(_persisted(s) for _, _, s in c.subtasks),
        # FLIP-147: tasks that finished before the checkpoint count as acknowledged
        "num_subtasks": n,
        "num_acknowledged_subtasks": n if c.status == "COMPLETED" else len(c.subtasks),
        "checkpoint_type": _checkpoint_type(c),
        "tasks": _task_statistics(job, c) if with_tasks else {},
    }
    if c.is_savepoint:
        out["savepointFormat"] = "CANONICAL"
    if c.status == "COMPLETED":
        out["external_path"] = c.external_path
        out["discarded"] = discarded
    elif c.status == "FAILED":
        out["failure_timestamp"] = _latest_ack(c)
        out["failure_message"] = c.failure_reason
    return out


def _discarded_ids(job: JobSnapshot) -> set[int]:
    """Completed checkpoints no longer retained: all but the newest ``num-retained`` (savepoints are kept)."""
    settings = job.checkpointing
    kept = settings.num_retained if settings is not None else 1
    completed = sorted(c.id for c in job.checkpoints if c.status == "COMPLETED" and not c.is_savepoint)
    return set(completed[: max(0, len(completed) - kept)])


def checkpointing_statistics(job: JobSnapshot) -> dict[str, Any]:
    """``GET /jobs/:jobid/checkpoints``: counts over the job's life, a summary of its last completed checkpoints,
    the latest of each kind, the restore and the last ``web.checkpoints.history`` checkpoints (newest first, without
    per-task details, as Flink's ``CheckpointingStatistics``)."""
    stats = job.checkpoint_stats
    discarded = _discarded_ids(job)
    by_id = {c.id: c for c in job.checkpoints}
    history_ids = {c.checkpoint_id for c in stats.history}

    def entry(c: CheckpointSnapshot) -> dict[str, Any]:
        return checkpoint_statistics(job, c, with_tasks=False, discarded=c.id in discarded)

    def latest(st: CheckpointStats | None) -> dict[str, Any] | None:
        c = by_id.get(st.checkpoint_id) if st is not None else None
        return entry(c) if c is not None else None

    figures = stats.summary_figures
    counts = stats.counts
    return {
        "counts": {
            "restored": counts.restored,
            "total": counts.total,
            "in_progress": counts.in_progress,
            "completed": counts.completed,
            "failed": counts.failed,
        },
        "summary": {
            "checkpointed_size": stats_summary([f[0] for f in figures]),
            "state_size": stats_summary([f[0] for f in figures]),
            "end_to_end_duration": stats_summary([f[1] for f in figures]),
            "alignment_buffered": stats_summary([0.0 for _ in figures]),
            "processed_data": stats_summary([0.0 for _ in figures]),
            "persisted_data": stats_summary([f[2] for f in figures]),
        },
        "latest": {
            "completed": latest(stats.latest_completed),
            "savepoint": latest(stats.latest_savepoint),
            "failed": latest(stats.latest_failed),
            "restored": _restored(stats.latest_restored),
        },
        "history": [entry(c) for c in sorted(job.checkpoints, key=lambda x: x.id, reverse=True) if c.id in history_ids],
    }


def _restored(restored: RestoredCheckpoint | None) -> dict[str, Any] | None:
    """Flink's ``RestoredCheckpointStatistics``."""
    if restored is None:
        return None
    return {
        "id": restored.checkpoint_id,
        "restore_timestamp": restored.restore_timestamp_ms,
        "is_savepoint": restored.is_savepoint,
        "external_path": restored.external_path,
    }


def checkpoint_config(settings: CheckpointSettings) -> dict[str, Any]:
    """``GET /jobs/:jobid/checkpoints/config`` (``CheckpointConfigInfo``)."""
    return {
        # Flink's ProcessingModeSerializer writes the mode in lower case; its dashboard compares with "exactly_once"
        "mode": "exactly_once" if settings.exactly_once else "at_least_once",
        "interval": settings.interval_ms,
        "timeout": settings.timeout_ms,
        "min_pause": settings.min_pause_ms,
        "max_concurrent": settings.max_concurrent,
        "externalization": {
            "enabled": settings.retention != "NO_EXTERNALIZED_CHECKPOINTS",
            "delete_on_cancellation": settings.retention != "RETAIN_ON_CANCELLATION",
        },
        "state_backend": settings.state_backend,
        "checkpoint_storage": settings.storage,
        "unaligned_checkpoints": settings.unaligned,
        "tolerable_failed_checkpoints": settings.tolerable_failures,
        "aligned_checkpoint_timeout": 0,
        "checkpoints_after_tasks_finish": True,
        "state_changelog_enabled": False,
        "changelog_periodic_materialization_interval": 0,
        "changelog_storage": "",
    }


def task_checkpoint_statistics_with_subtasks(job: JobSnapshot, c: CheckpointSnapshot, vertex_id: str) -> dict[str, Any]:
    """``GET /jobs/:jobid/checkpoints/details/:checkpointid/subtasks/:vertexid``
    (``TaskCheckpointStatisticsWithSubtaskDetails``): the vertex's totals, a summary over its acknowledged subtasks
    and one entry per subtask (``completed`` with its figures, else ``pending_or_failed``). strom measures no
    per-subtask acknowledgement time: each acknowledged subtask shows the checkpoint's latest one."""
    (v,) = [v for v in job.vertices if v.id == vertex_id]
    acked = {index: stats for vid, index, stats in c.subtasks if vid == vertex_id}
    out: dict[str, Any] = dict(_task_statistics(job, c)[vertex_id])
    end_to_end = float(_end_to_end(c))

    def summary(name: str) -> dict[str, Any]:
        return stats_summary([float(s.get(name, 0.0)) for s in acked.values()])

    out["summary"] = {
        "checkpointed_size": summary("state_size"),
        "state_size": summary("state_size"),
        "end_to_end_duration": stats_summary([end_to_end for _ in acked]),
        "checkpoint_duration": {"sync": summary("sync_duration_ms"), "async": summary("async_duration_ms")},
        "alignment": {
            "buffered": stats_summary([0.0 for _ in acked]),
            "processed": stats_summary([0.0 for _ in acked]),
            "persisted": summary("persisted_data_bytes"),
            "duration": summary("alignment_duration_ms"),
        },
        "start_delay": stats_summary([0.0 for _ in acked]),
    }
    subtasks = []
    for index in range(v.parallelism):
        stats = acked.get(index)
        if stats is None:
            subtasks.append({"index": index, "status": "pending_or_failed"})
            continue
        size = int(stats.get("state_size", 0.0))
        subtasks.append(
            {
                "index": index,
                "status": "completed",
                "ack_timestamp": _latest_ack(c),
                "end_to_end_duration": _end_to_end(c),
                "state_size": size,
                "checkpointed_size": size,
                "checkpoint": {
                    "sync": int(stats.get("sync_duration_ms", 0.0)),
                    "async": int(stats.get("async_duration_ms", 0.0)),
                },
                "alignment": {
                    "buffered": 0,
                    "processed": 0,
                    "persisted": _persisted(stats),
                    "duration": int(stats.get("alignment_duration_ms", 0.0)),
                },
                "start_delay": 0,
                "unaligned_checkpoint": c.unaligned,
                "aborted": False,
            }
        )
    out["subtasks"] = subtasks
    return out
