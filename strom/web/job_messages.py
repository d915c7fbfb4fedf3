"""Flink's REST response bodies for the cluster, its jobs and TaskManagers, built from snapshots (pure).

Field names and nesting follow Flink 2.x (``docs/static/generated/rest_v1_dispatcher.yml`` and the classes in
``flink-runtime/.../rest/messages``): ``DashboardConfiguration``, ``ClusterOverviewWithVersion``,
``JobIdsWithStatusOverview``, ``MultipleJobsDetails``, ``JobDetailsInfo``, ``JobPlanInfo``,
``JobExceptionsInfoWithHistory``, ``JobVertexDetailsInfo``, ``TaskManagersInfo``, ``TaskManagerDetailsInfo``,
``LogListInfo``. Times are epoch milliseconds; -1 stands for "not yet", as in Flink.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from strom.config_security import HIDDEN_CONTENT, is_sensitive_key
from strom.web.accessor import ExceptionSnapshot, JobSnapshot, SubtaskSnapshot, TaskManagerSnapshot, VertexSnapshot
from strom.web.vertex_messages import aggregated_task_details, status_duration, subtask_times

__all__ = [
    "EXECUTION_STATES",
    "JOB_STATES",
    "cluster_overview",
    "dashboard_configuration",
    "job_config_info",
    "job_details",
    "job_exceptions",
    "job_plan",
    "job_vertex_details",
    "jobs_overview",
    "jobs_with_status",
    "task_manager_details",
    "task_manager_metrics_info",
    "task_managers_info",
    "thread_dump_info",
    "vertex_state",
    "vertex_task_managers",
]

#: Flink's ExecutionState names, in its declaration order (every one appears in the count maps)
EXECUTION_STATES = (
    "CREATED",
    "SCHEDULED",
    "DEPLOYING",
    "RUNNING",
    "FINISHED",
    "CANCELING",
    "CANCELED",
    "FAILED",
    "RECONCILING",
    "INITIALIZING",
)
#: Flink's JobStatus names
JOB_STATES = (
    "INITIALIZING",
    "CREATED",
    "RUNNING",
    "FAILING",
    "FAILED",
    "CANCELLING",
    "CANCELED",
    "FINISHED",
    "RESTARTING",
    "SUSPENDED",
    "RECONCILING",
)
_TERMINAL_JOB_STATES = ("FAILED", "CANCELED", "FINISHED")


def _now() -> int:
    return int(time.time() * 1000)


def dashboard_configuration(version: str, *, refresh_interval_ms: int = 3000) -> dict[str, Any]:
    """``GET /config``."""
    offset = time.localtime().tm_gmtoff * 1000
    return {
        "refresh-interval": refresh_interval_ms,
        "timezone-name": time.strftime("%Z"),
        "timezone-offset": offset,
        "flink-version": version,
        "flink-revision": f"strom {version}",
        "features": {"web-submit": False, "web-cancel": True, "web-rescale": False, "web-history": False},
    }


def cluster_overview(version: str, tms: Sequence[TaskManagerSnapshot], jobs: Sequence[JobSnapshot]) -> dict[str, Any]:
    """``GET /overview``."""
    states = Counter(j.state for j in jobs)
    return {
        "taskmanagers": len(tms),
        "slots-total": sum(t.num_slots for t in tms),
        "slots-available": sum(t.free_slots for t in tms),
        "jobs-running": sum(n for s, n in states.items() if s not in _TERMINAL_JOB_STATES),
        "jobs-finished": states["FINISHED"],
        "jobs-cancelled": states["CANCELED"],
        "jobs-failed": states["FAILED"],
        "flink-version": version,
        "flink-commit": f"strom {version}",
        "taskmanagers-blocked": 0,
        "slots-free-and-blocked": 0,
    }


def jobs_with_status(jobs: Iterable[JobSnapshot]) -> dict[str, Any]:
    """``GET /jobs``."""
    return {"jobs": [{"id": j.job_id, "status": j.state} for j in jobs]}


def _duration(start: int, end: int, now: int) -> int:
    if start < 0:
        return -1
    return (end if end >= 0 else now) - start


def _job_details_entry(j: JobSnapshot, now: int) -> dict[str, Any]:
    counts = Counter(s.state for v in j.vertices for s in v.subtasks)
    tasks = {state.lower(): counts[state] for state in EXECUTION_STATES}
    tasks["total"] = sum(v.parallelism for v in j.vertices)
    return {
        "jid": j.job_id,
        "name": j.name,
        "start-time": j.start_time_ms,
        "end-time": j.end_time_ms,
        "duration": _duration(j.start_time_ms, j.end_time_ms, now),
        "state": j.state,
        "last-modification": j.end_time_ms if j.end_time_ms >= 0 else j.start_time_ms,
        "tasks": tasks,
        "pending-operators": 0,
    }


def jobs_overview(jobs: Iterable[JobSnapshot]) -> dict[str, Any]:
    """``GET /jobs/overview`` (``MultipleJobsDetails``)."""
    now = _now()
    return {"jobs": [_job_details_entry(j, now) for j in jobs]}


def vertex_state(subtasks: Sequence[SubtaskSnapshot]) -> str:
    """The aggregate state of a vertex from its subtasks' (Flink's ``ExecutionJobVertex.getAggregateState``)."""
    counts = Counter(s.state for s in subtasks)
    for state in ("FAILED", "CANCELING", "CANCELED", "INITIALIZING", "RUNNING"):
        if counts[state]:
            return state
    if counts["FINISHED"]:
        return "FINISHED" if counts["FINISHED"] == len(subtasks) else "RUNNING"
    for state in ("DEPLOYING", "SCHEDULED"):
        if counts[state]:
            return state
    return "CREATED"


def _metric_sum(subtasks: Iterable[SubtaskSnapshot], name: str) -> float:
    return sum(s.metrics.get(name, 0.0) for s in subtasks)


def io_metrics(subtasks: Sequence[SubtaskSnapshot]) -> dict[str, Any]:
    """Flink's ``IOMetricsInfo``: sums over the subtasks' latest reports. ``*-complete`` is false while a running
    subtask has not reported yet. Bytes count remote traffic only (local channels do not serialize)."""
    complete = all(s.metrics for s in subtasks if s.state == "RUNNING")
    backpressured = _metric_sum(subtasks, "accumulatedBackPressuredTimeMs")
    idle = _metric_sum(subtasks, "accumulatedIdleTimeMs")
    return {
        "read-bytes": int(_metric_sum(subtasks, "numBytesIn")),
        "read-bytes-complete": complete,
        "write-bytes": int(_metric_sum(subtasks, "numBytesOut")),
        "write-bytes-complete": complete,
        "read-records": int(_metric_sum(subtasks, "numRecordsIn")),
        "read-records-complete": complete,
        "write-records": int(_metric_sum(subtasks, "numRecordsOut")),
        "write-records-complete": complete,
        "accumulated-backpressured-time": int(backpressured),
        "accumulated-idle-time": int(idle),
        "accumulated-busy-time": float(_metric_sum(subtasks, "accumulatedBusyTimeMs")),
    }


def _vertex_times(j: JobSnapshot, v: VertexSnapshot, now: int) -> tuple[int, int, int]:
    """(start, end, duration) as Flink's ``JobDetailsInfo.JobVertexDetailsInfo``: the earliest start of its subtasks
    and, once all ended, their latest end (-1 while unknown). A subtask without timestamps (a snapshot of an older
    JobManager) counts from the job's start and to the job's end."""
    times = [subtask_times(s, now) for s in v.subtasks]
    starts = [t[0] for t in times if t[0] >= 0]
    if any(s.state != "CREATED" and not s.state_timestamps for s in v.subtasks):
        starts.append(j.start_time_ms)
    start = min(starts, default=-1)
    ended = bool(v.subtasks) and all(s.state in ("FINISHED", "CANCELED", "FAILED") for s in v.subtasks)
    ends = [t[1] for t in times if t[1] >= 0] or ([j.end_time_ms] if j.end_time_ms >= 0 else [])
    end = max(ends) if ended and ends else -1
    return start, end, _duration(start, end, now)


def _vertex_entry(j: JobSnapshot, v: VertexSnapshot, now: int) -> dict[str, Any]:
    start, end, duration = _vertex_times(j, v, now)
    counts = Counter(s.state for s in v.subtasks)
    return {
        "id": v.id,
        "slotSharingGroupId": v.slot_sharing_group,
        "name": v.name,
        "maxParallelism": v.max_parallelism,
        "parallelism": v.parallelism,
        "status": vertex_state(v.subtasks),
        "start-time": start,
        "end-time": end,
        "duration": duration,
        "tasks": {state: counts[state] for state in EXECUTION_STATES},
        "metrics": io_metrics(v.subtasks),
    }


def job_plan(j: JobSnapshot) -> dict[str, Any]:
    """``JobPlanInfo.Plan``: the job graph's vertices and their inputs."""
    nodes = []
    for v in j.vertices:
        node: dict[str, Any] = {
            "id": v.id,
            "parallelism": v.parallelism,
            "operator": "",
            "operator_strategy": "",
            "description": v.name,
            "optimizer_properties": {},
        }
        if v.inputs:
            node["inputs"] = [
                {"num": i, "id": e.source_vertex_id, "ship_strategy": e.ship_strategy, "exchange": e.exchange}
                for i, e in enumerate(v.inputs)
            ]
        nodes.append(node)
    return {"jid": j.job_id, "name": j.name, "type": "BATCH" if j.batch else "STREAMING", "nodes": nodes}


def job_details(j: JobSnapshot) -> dict[str, Any]:
    """``GET /jobs/:jobid`` (``JobDetailsInfo``)."""
    now = _now()
    vertices = [_vertex_entry(j, v, now) for v in j.vertices]
    per_state = Counter(v["status"] for v in vertices)
    timestamps = dict.fromkeys(JOB_STATES, 0)
    timestamps["INITIALIZING"] = timestamps["CREATED"] = timestamps["RUNNING"] = j.start_time_ms
    if j.state in _TERMINAL_JOB_STATES and j.end_time_ms >= 0:
        timestamps[j.state] = j.end_time_ms
    return {
        "jid": j.job_id,
        "name": j.name,
        "isStoppable": False,
        "state": j.state,
        "job-type": "BATCH" if j.batch else "STREAMING",
        "start-time": j.start_time_ms,
        "end-time": j.end_time_ms,
        "duration": _duration(j.start_time_ms, j.end_time_ms, now),
        "maxParallelism": max((v.max_parallelism for v in j.vertices), default=-1),
        "now": now,
        "timestamps": timestamps,
        "vertices": vertices,
        "status-counts": {state: per_state[state] for state in EXECUTION_STATES},
        "plan": job_plan(j),
        "pending-operators": 0,
    }


def _exception_info(e: ExceptionSnapshot) -> dict[str, Any]:
    """One failure (Flink's ``ExceptionInfo``): the root of an entry or one of its concurrent exceptions."""
    entry: dict[str, Any] = {
        "exceptionName": e.exception_name,
        "stacktrace": e.stacktrace,
        "timestamp": e.timestamp_ms,
        "failureLabels": {},
    }
    if e.task_name:
        entry["taskName"] = e.task_name
    if e.endpoint:
        entry["endpoint"] = e.endpoint
    if e.task_manager_id:
        entry["taskManagerId"] = e.task_manager_id
    return entry


def job_exceptions(j: JobSnapshot, max_exceptions: int | None = None) -> dict[str, Any]:
    """``GET /jobs/:jobid/exceptions`` (``JobExceptionsInfoWithHistory`` of Flink 2.x: the history only, newest
    first). ``stacktrace`` is strom's failure text, which carries the user's Python traceback."""
    entries = []
    for e in reversed(j.exceptions):
        entry = _exception_info(e)
        entry["concurrentExceptions"] = [_exception_info(c) for c in e.concurrent]
        entries.append(entry)
    limit = len(entries) if max_exceptions is None else max(0, max_exceptions)
    return {"exceptionHistory": {"entries": entries[:limit], "truncated": limit < len(entries)}}


def job_vertex_details(j: JobSnapshot, v: VertexSnapshot) -> dict[str, Any]:
    """``GET /jobs/:jobid/vertices/:vertexid`` (``JobVertexDetailsInfo``): per subtask its times, I/O metrics and
    ``status-duration``, and their aggregates (``AggregatedTaskDetailsInfo``)."""
    now = _now()
    subtasks = []
    for s in v.subtasks:
        start, end, duration = subtask_times(s, now)
        subtasks.append(
            {
                "subtask": s.subtask,
                "status": s.state,
                "attempt": s.attempt,
                "endpoint": s.endpoint or "(unassigned)",
                "start-time": start,
                "end-time": end,
                "duration": duration,
                "metrics": io_metrics([s]),
                "taskmanager-id": s.task_manager_id or "(unassigned)",
                "status-duration": status_duration(s, now),
            }
        )
    return {
        "id": v.id,
        "name": v.name,
        "parallelism": v.parallelism,
        "maxParallelism": v.max_parallelism,
        "now": now,
        "subtasks": subtasks,
        "aggregated": aggregated_task_details(v.subtasks, now),
    }


def vertex_task_managers(j: JobSnapshot, v: VertexSnapshot, now: int) -> dict[str, Any]:
    """``GET /jobs/:jobid/vertices/:vertexid/taskmanagers`` (``JobVertexTaskManagersInfo``): the vertex's subtasks
    grouped by the TaskManager that runs them."""
    by_tm: dict[str, list[SubtaskSnapshot]] = {}
    for s in v.subtasks:
        by_tm.setdefault(s.task_manager_id or "(unassigned)", []).append(s)
    entries = []
    for tm_id, subtasks in by_tm.items():
        times = [subtask_times(s, now) for s in subtasks]
        starts = [t[0] for t in times if t[0] >= 0]
        start = min(starts, default=-1)
        ended = all(t[1] >= 0 for t in times)
        end = max((t[1] for t in times), default=-1) if ended else -1
        counts = Counter(s.state for s in subtasks)
        entries.append(
            {
                "endpoint": subtasks[0].endpoint or "(unassigned)",
                "status": vertex_state(subtasks),
                "start-time": start,
                "end-time": end,
                "duration": -1 if start < 0 else (end if end >= 0 else now) - start,
                "metrics": io_metrics(subtasks),
                "status-counts": {state: counts[state] for state in EXECUTION_STATES},
                "taskmanager-id": tm_id,
                "aggregated": aggregated_task_details(subtasks, now),
            }
        )
    return {"id": v.id, "name": v.name, "now": now, "taskmanagers": entries}


#: Flink's ``HardwareDescription`` when the TaskManager could not be asked: -1 is "unknown"
UNKNOWN_HARDWARE = {"cpuCores": -1, "physicalMemory": -1, "freeMemory": -1, "managedMemory": -1}


def _task_manager_info(t: TaskManagerSnapshot, hardware: Mapping[str, int] | None = None) -> dict[str, Any]:
    """``TaskManagerInfo``. A TaskManager's resource is its slots (Flink's default: one CPU core per slot); strom
    reserves no memory per slot (0 MB). ``hardware``: what the TaskManager reported of its machine (-1: unknown)."""
    free: dict[str, Any] = {
        "cpuCores": float(t.free_slots),
        "taskHeapMemory": 0,
        "taskOffHeapMemory": 0,
        "managedMemory": 0,
        "networkMemory": 0,
        "extendedResources": {},
    }
    return {
        "id": t.id,
        "path": f"strom://{t.host}:{t.rpc_port}/taskmanager/{t.id}",
        "dataPort": t.data_port,
        "jmxPort": -1,
        # despite its name, Flink's field holds the time of the last heartbeat (epoch ms; its UI shows a date)
        "timeSinceLastHeartbeat": t.last_heartbeat_ms,
        "slotsNumber": t.num_slots,
        "freeSlots": t.free_slots,
        "assignedTasks": sum(t.slot_tasks),
        "totalResource": dict(free, cpuCores=float(t.num_slots)),
        "freeResource": free,
        "hardware": dict(UNKNOWN_HARDWARE, **(hardware or {})),
        "blocked": False,
    }


def task_managers_info(
    tms: Iterable[TaskManagerSnapshot], hardware: Mapping[str, Mapping[str, int]] | None = None
) -> dict[str, Any]:
    """``GET /taskmanagers`` (``TaskManagersInfo``); ``hardware`` by TaskManager id."""
    known = hardware or {}
    return {"taskmanagers": [_task_manager_info(t, known.get(t.id)) for t in tms]}


#: ``TaskExecutorMemoryConfiguration``: a Python TaskManager has no JVM memory budget, every component is 0
MEMORY_CONFIGURATION = dict.fromkeys(
    ("frameworkHeap", "taskHeap", "frameworkOffHeap", "taskOffHeap", "networkMemory", "managedMemory",
     "jvmMetaspace", "jvmOverhead", "totalFlinkMemory", "totalProcessMemory"),
    0,
)  # fmt: skip


def task_manager_metrics_info(status: Mapping[str, float]) -> dict[str, Any]:
    """``TaskManagerMetricsInfo`` from a process's ``Status.JVM.*`` metrics (absent ones read 0, as Flink's)."""

    def get(name: str) -> int:
        return int(status.get(name, 0.0))

    collectors = sorted(
        {k.split(".")[3] for k in status if k.startswith("Status.JVM.GarbageCollector.") and k.count(".") == 4}
    )
    return {
        "heapUsed": get("Status.JVM.Memory.Heap.Used"),
        "heapCommitted": get("Status.JVM.Memory.Heap.Committed"),
        "heapMax": get("Status.JVM.Memory.Heap.Max"),
        "nonHeapUsed": get("Status.JVM.Memory.NonHeap.Used"),
        "nonHeapCommitted": get("Status.JVM.Memory.NonHeap.Committed"),
        "nonHeapMax": get("Status.JVM.Memory.NonHeap.Max"),
        "directCount": get("Status.JVM.Memory.Direct.Count"),
        "directUsed": get("Status.JVM.Memory.Direct.MemoryUsed"),
        "directMax": get("Status.JVM.Memory.Direct.TotalCapacity"),
        "mappedCount": get("Status.JVM.Memory.Mapped.Count"),
        "mappedUsed": get("Status.JVM.Memory.Mapped.MemoryUsed"),
        "mappedMax": get("Status.JVM.Memory.Mapped.TotalCapacity"),
        "memorySegmentsAvailable": get("Status.Network.AvailableMemorySegments"),
        "memorySegmentsTotal": get("Status.Network.TotalMemorySegments"),
        "nettyShuffleMemorySegmentsAvailable": get("Status.Shuffle.Netty.AvailableMemorySegments"),
        "nettyShuffleMemorySegmentsUsed": get("Status.Shuffle.Netty.UsedMemorySegments"),
        "nettyShuffleMemorySegmentsTotal": get("Status.Shuffle.Netty.TotalMemorySegments"),
        "nettyShuffleMemoryAvailable": get("Status.Shuffle.Netty.AvailableMemory"),
        "nettyShuffleMemoryUsed": get("Status.Shuffle.Netty.UsedMemory"),
        "nettyShuffleMemoryTotal": get("Status.Shuffle.Netty.TotalMemory"),
        "garbageCollectors": [
            {
                "name": name,
                "count": get(f"Status.JVM.GarbageCollector.{name}.Count"),
                "time": get(f"Status.JVM.GarbageCollector.{name}.Time"),
            }
            for name in collectors
        ],
    }


def task_manager_details(
    t: TaskManagerSnapshot, status: Mapping[str, float] | None = None, hardware: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """``GET /taskmanagers/:id`` (``TaskManagerDetailsInfo``): ``metrics`` from the process's ``Status.JVM.*``
    figures (:mod:`strom.runtime.metrics.process_metrics`), the memory configuration all 0 (no JVM budget)."""
    out = _task_manager_info(t, hardware)
    out["allocatedSlots"] = [
        {"jobId": job, "assignedTasks": n, "resource": {"cpuCores": 1.0}}
        for job, n in zip(t.allocated_jobs, t.slot_tasks or (0,) * len(t.allocated_jobs), strict=True)
    ]
    out["memoryConfiguration"] = dict(MEMORY_CONFIGURATION)
    out["metrics"] = task_manager_metrics_info(status or {})
    return out


def thread_dump_info(threads: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """``ThreadDumpInfo`` (``/jobmanager/thread-dump``, ``/taskmanagers/:id/thread-dump``)."""
    return {"threadInfos": [{"threadName": name, "stringifiedThreadInfo": text} for name, text in threads]}


def job_config_info(j: JobSnapshot) -> dict[str, Any]:
    """``GET /jobs/:jobid/config`` (``JobConfigInfo``): the job's execution config as Flink's
    ``ArchivedExecutionConfig`` writes it, ``user-config`` its global job parameters (secrets hidden, as Flink's
    ``hideSensitiveValues``)."""
    parallelism = max((v.parallelism for v in j.vertices), default=1)
    return {
        "jid": j.job_id,
        "name": j.name,
        "execution-config": {
            "execution-mode": "PIPELINED",
            "restart-strategy": j.restart_strategy,
            "job-parallelism": parallelism,
            "object-reuse-mode": False,
            "user-config": {k: HIDDEN_CONTENT if is_sensitive_key(k) else v for k, v in j.user_config.items()},
        },
    }
