"""The JobManager's metrics (Flink's ``JobManagerMetricGroup`` / ``JobManagerJobMetricGroup``): the cluster's
slots and TaskManagers, and per job its restarts and Flink's checkpoint metrics — ``lastCheckpointDuration``,
``lastCheckpointSize``, ``numberOfCompletedCheckpoints``, ``numberOfFailedCheckpoints``,
``lastCheckpointRestoreTimestamp``, ... (docs "Metrics" → "Checkpointing", scope *Job (only available on
JobManager)*).

:func:`checkpoint_metrics` is pure (checkpoint history in, metrics out); the others read the JobManager's
state and run on its loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from strom.runtime.execution_state import JobStatus
from strom.runtime.metrics.operator_metrics import host_name
from strom.runtime.metrics.prometheus import Reading
from strom.runtime.metrics.scope import JOB_MANAGER_JOB_SCOPE, JOB_MANAGER_SCOPE, job_manager_job_variables

if TYPE_CHECKING:
    from strom.runtime.checkpoint.checkpoint_stats_tracker import CheckpointStatsSnapshot
    from strom.runtime.dispatcher.dispatcher import Dispatcher
    from strom.runtime.jobmaster.jobmaster import JobMaster

__all__ = [
    "checkpoint_metrics",
    "job_manager_readings",
    "job_metrics",
    "request_job_metrics",
    "request_metric_urls",
]


def checkpoint_metrics(stats: CheckpointStatsSnapshot, restore_timestamp_ms: int = -1) -> dict[str, float]:
    """Flink's checkpoint metrics of a job (savepoints included, as Flink counts them); the ``last...`` ones are
    -1 until a checkpoint completed, as Flink's."""
    completed = [c for c in (stats.latest_completed, stats.latest_savepoint) if c is not None]
    last = max(completed, key=lambda c: c.checkpoint_id) if completed else None
    counts = stats.counts
    return {
        "lastCheckpointDuration": float(last.duration_ms or 0) if last is not None else -1.0,
        "lastCheckpointSize": float(last.state_size) if last is not None else -1.0,
        "lastCheckpointFullSize": float(last.state_size) if last is not None else -1.0,
        "lastCompletedCheckpointId": float(last.checkpoint_id) if last is not None else -1.0,
        "lastCheckpointCompletedTimestamp": (
            float(last.trigger_timestamp_ms + (last.duration_ms or 0)) if last is not None else -1.0
        ),
        "lastCheckpointRestoreTimestamp": float(restore_timestamp_ms),
        "numberOfInProgressCheckpoints": float(counts.in_progress),
        "numberOfCompletedCheckpoints": float(counts.completed),
        "numberOfFailedCheckpoints": float(counts.failed),
        "totalNumberOfCheckpoints": float(counts.total),
    }


def job_metrics(jm: JobMaster) -> dict[str, float]:
    """The job-scope metrics of one job on the JobManager (the JobManager's loop)."""
    out = {"numRestarts": float(jm.num_restarts)}
    driver = jm.checkpoints
    if driver is not None:
        out.update(checkpoint_metrics(driver.statistics(), driver.last_restore_timestamp_ms))
    return out


async def request_job_metrics(dispatcher: Dispatcher, job_id: str) -> dict[str, float]:
    """:func:`job_metrics` of ``job_id`` (for ``JobClient.get_job_metrics``, run on the JobManager's loop)."""
    return job_metrics(dispatcher.job_master(job_id))


def job_manager_readings(dispatcher: Dispatcher | None) -> list[Reading]:
    """What the JobManager's Prometheus endpoint reports (the JobManager's loop)."""
    if dispatcher is None:
        return []
    host = host_name()
    jm_vars = {"<host>": host}
    task_managers = list(dispatcher.resource_manager.slot_manager.task_managers.values())
    masters = list(dispatcher.job_masters.values())
    out = [
        Reading(JOB_MANAGER_SCOPE, "numRegisteredTaskManagers", jm_vars, value=float(len(task_managers))),
        Reading(JOB_MANAGER_SCOPE, "numRunningJobs", jm_vars, value=float(sum(1 for m in masters if _running(m)))),
        Reading(JOB_MANAGER_SCOPE, "taskSlotsTotal", jm_vars, value=float(sum(t.num_slots for t in task_managers))),
        Reading(
            JOB_MANAGER_SCOPE,
            "taskSlotsAvailable",
            jm_vars,
            value=float(dispatcher.resource_manager.slot_manager.num_free_slots()),
        ),
    ]
    for m in masters:
        if m.status.is_globally_terminal:
            continue
        variables = job_manager_job_variables(host=host, job_id=m.job_id, job_name=m.job_graph.job_name)
        out += [Reading(JOB_MANAGER_JOB_SCOPE, k, variables, value=v) for k, v in job_metrics(m).items()]
    return out


def _running(m: JobMaster) -> bool:
    return m.status is JobStatus.RUNNING


async def request_metric_urls(dispatcher: Dispatcher) -> dict[str, str]:
    """Each registered TaskManager's Prometheus URL (``""`` where it has no reporter), by TaskManager id."""
    out: dict[str, str] = {}
    for tm_id, gateway in list(dispatcher.resource_manager.gateways.items()):
        try:
            url: Any = await gateway.call("request_metrics_url", timeout=5.0)
        except Exception:  # lost meanwhile
            continue
        out[tm_id] = str(url or "")
    return out
