"""Flink's REST bodies about a job vertex's subtasks, built from snapshots (pure).

- ``status-duration`` of a subtask (Flink's ``StatusDurationUtils``): for CREATED, SCHEDULED, DEPLOYING,
  INITIALIZING and RUNNING, how long its current attempt stayed in that state — until it left it, or until now while
  it is still in it; -1 for a state it never reached.
- ``AggregatedTaskDetailsInfo``: min, max, avg, sum, median, p25, p75 and p95 over the subtasks of the I/O metrics
  and of the status durations, as Flink's ``MetricsStatistics`` computes them (integers; the percentiles by Apache
  Commons Math's ``Percentile`` with its default, legacy estimation).
- ``SubtasksTimesInfo`` (``.../subtasktimes``, the Timeline tab), ``JobVertexAccumulatorsInfo`` and
  ``SubtasksAllAccumulatorsInfo`` (strom has no user accumulators: empty lists).
- ``VertexFlameGraph`` (``.../flamegraph``) from sampled Python stacks of the task threads.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from strom.web.accessor import SubtaskSnapshot, VertexSnapshot

__all__ = [
    "DURATION_STATES",
    "FLAME_GRAPH_TYPES",
    "aggregated_task_details",
    "metrics_statistics",
    "parse_flame_graph_type",
    "percentile",
    "status_duration",
    "subtask_times",
    "subtasks_accumulators",
    "subtasks_times",
    "vertex_accumulators",
    "vertex_flame_graph",
]

#: the states whose durations Flink reports per subtask (``AggregatedTaskDetailsInfo.statusNames``)
DURATION_STATES = ("CREATED", "SCHEDULED", "DEPLOYING", "INITIALIZING", "RUNNING")
_TERMINAL = ("FINISHED", "CANCELED", "FAILED")
#: Flink's ``FlameGraphTypeQueryParameter.Type``
FLAME_GRAPH_TYPES = ("FULL", "ON_CPU", "OFF_CPU")
#: innermost Python frames of a thread that waits rather than runs: its off-CPU samples (a heuristic: CPython does
#: not tell whether a thread holds the CPU)
_WAITING = frozenset(
    {"wait", "sleep", "select", "poll", "epoll", "acquire", "get", "_wait_for_tstate_lock", "recv", "recv_into",
     "accept", "join", "result", "_worker"}
)  # fmt: skip


def percentile(values: Sequence[float], p: float) -> float:
    """Apache Commons Math's ``Percentile.evaluate(p)`` (``EstimationType.LEGACY``); NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    n = len(ordered)
    pos = p * (n + 1) / 100.0
    if pos < 1:
        return float(ordered[0])
    if pos >= n:
        return float(ordered[-1])
    lower_index = math.floor(pos)
    lower, upper = ordered[lower_index - 1], ordered[lower_index]
    return float(lower + (pos - lower_index) * (upper - lower))


def _java_long(value: float) -> int:
    return 0 if math.isnan(value) else int(value)


def metrics_statistics(values: Sequence[int]) -> dict[str, int]:
    """Flink's ``MetricsStatistics.toMap``: integer min/max/avg/sum and percentiles (0 for no values)."""
    total = sum(values)
    return {
        "min": min(values, default=0),
        "max": max(values, default=0),
        "avg": int(total / len(values)) if values else 0,
        "sum": total,
        "median": _java_long(percentile(values, 50)),
        "p25": _java_long(percentile(values, 25)),
        "p75": _java_long(percentile(values, 75)),
        "p95": _java_long(percentile(values, 95)),
    }


def status_duration(s: SubtaskSnapshot, now: int) -> dict[str, int]:
    """Flink's ``StatusDurationUtils.getExecutionStateDuration`` of a subtask's current attempt."""
    out = {}
    for state in DURATION_STATES:
        start = s.state_timestamps.get(state, 0)
        end = s.state_end_timestamps.get(state, 0)
        if start <= 0:
            out[state] = -1
        elif end <= 0:
            out[state] = now - start if s.state == state else -1
        else:
            out[state] = end - start
    return out


def subtask_times(s: SubtaskSnapshot, now: int) -> tuple[int, int, int]:
    """(start, end, duration) of a subtask as Flink's ``SubtaskExecutionAttemptDetailsInfo``: it starts when it was
    deployed, ends when it reached a terminal state; -1 while unknown."""
    start = s.state_timestamps.get("DEPLOYING", -1)
    end = s.state_timestamps.get(s.state, -1) if s.state in _TERMINAL else -1
    if start < 0:
        return -1, end, -1
    return start, end, (end if end >= 0 else now) - start


def _io_values(s: SubtaskSnapshot) -> dict[str, int]:
    m = s.metrics
    return {
        "read-bytes": int(m.get("numBytesIn", 0.0)),
        "write-bytes": int(m.get("numBytesOut", 0.0)),
        "read-records": int(m.get("numRecordsIn", 0.0)),
        "write-records": int(m.get("numRecordsOut", 0.0)),
        "accumulated-backpressured-time": int(m.get("accumulatedBackPressuredTimeMs", 0.0)),
        "accumulated-idle-time": int(m.get("accumulatedIdleTimeMs", 0.0)),
        "accumulated-busy-time": int(m.get("accumulatedBusyTimeMs", 0.0)),
    }


def aggregated_task_details(subtasks: Sequence[SubtaskSnapshot], now: int) -> dict[str, Any]:
    """``AggregatedTaskDetailsInfo`` over ``subtasks``."""
    io = [_io_values(s) for s in subtasks]
    durations = [status_duration(s, now) for s in subtasks]
    names = (
        "read-bytes",
        "write-bytes",
        "read-records",
        "write-records",
        "accumulated-backpressured-time",
        "accumulated-busy-time",
        "accumulated-idle-time",
    )
    return {
        "metrics": {name: metrics_statistics([v[name] for v in io]) for name in names},
        "status-duration": {state: metrics_statistics([d[state] for d in durations]) for state in DURATION_STATES},
    }


def subtasks_times(v: VertexSnapshot, now: int) -> dict[str, Any]:
    """``GET /jobs/:jobid/vertices/:vertexid/subtasktimes`` (``SubtasksTimesInfo``, the Timeline tab): per subtask
    when its current attempt entered each state it reached, and its duration from SCHEDULED to its terminal state
    (or now; -1 before it was scheduled)."""
    subtasks = []
    for s in v.subtasks:
        start = s.state_timestamps.get("SCHEDULED", -1)
        end = s.state_timestamps.get(s.state, now) if s.state in _TERMINAL else now
        subtasks.append(
            {
                "subtask": s.subtask,
                "host": s.endpoint.rsplit(":", 1)[0] if s.endpoint else "(unassigned)",
                "duration": end - start if start >= 0 else -1,
                "timestamps": dict(s.state_timestamps),
            }
        )
    return {"id": v.id, "name": v.name, "now": now, "subtasks": subtasks}


def vertex_accumulators(v: VertexSnapshot) -> dict[str, Any]:
    """``GET /jobs/:jobid/vertices/:vertexid/accumulators`` (``JobVertexAccumulatorsInfo``)."""
    return {"id": v.id, "user-accumulators": []}


def subtasks_accumulators(v: VertexSnapshot) -> dict[str, Any]:
    """``GET /jobs/:jobid/vertices/:vertexid/subtasks/accumulators`` (``SubtasksAllAccumulatorsInfo``)."""
    return {
        "id": v.id,
        "parallelism": v.parallelism,
        "subtasks": [
            {
                "subtask": s.subtask,
                "attempt": s.attempt,
                "endpoint": s.endpoint or "(unassigned)",
                "taskmanager-id": s.task_manager_id or "(unassigned)",
                "user-accumulators": [],
            }
            for s in v.subtasks
        ],
    }


def _is_waiting(stack: Sequence[str]) -> bool:
    return bool(stack) and stack[-1].split(" ", 1)[0] in _WAITING


def vertex_flame_graph(stacks: Iterable[Sequence[str]], graph_type: str, end_timestamp: int) -> dict[str, Any]:
    """Flink's ``VertexFlameGraph``: ``{"endTimestamp", "data"}``, ``data`` a tree of ``{"name", "value",
    "children"}`` rooted at ``root`` whose values count the samples through each frame (Flink's
    ``VertexFlameGraphFactory``). ``ON_CPU`` keeps the samples of running threads, ``OFF_CPU`` those waiting
    (innermost frame a wait, a sleep, a select or a lock), ``FULL`` all."""
    root: dict[str, Any] = {"name": "root", "value": 0, "children": []}
    index: dict[int, dict[str, dict[str, Any]]] = {}
    for stack in stacks:
        waiting = _is_waiting(stack)
        if (graph_type == "ON_CPU" and waiting) or (graph_type == "OFF_CPU" and not waiting):
            continue
        node = root
        node["value"] += 1
        for frame in stack:
            children = index.setdefault(id(node), {})
            child = children.get(frame)
            if child is None:
                child = {"name": frame, "value": 0, "children": []}
                children[frame] = child
                node["children"].append(child)
            child["value"] += 1
            node = child
    return {"endTimestamp": end_timestamp, "data": root}


def parse_flame_graph_type(raw: str | None) -> str:
    """The ``type`` query parameter (Flink's default: ``FULL``); ``ValueError`` for another."""
    value = (raw or "FULL").upper()
    if value not in FLAME_GRAPH_TYPES:
        raise ValueError(f"expected type among {', '.join(FLAME_GRAPH_TYPES)}; got {raw!r}")
    return value
