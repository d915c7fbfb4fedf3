"""What the REST API and the metric reporters read of a job's current execution attempts: plain rows, built on the
JobMaster's loop from its ExecutionGraph and the metrics the tasks last reported."""

from __future__ import annotations

from typing import Any

from strom.graph.execution_graph import ExecutionGraph

__all__ = ["execution_rows", "task_metrics_rows"]


def task_metrics_rows(graph: ExecutionGraph, task_metrics: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    """The latest metrics of every current execution attempt that has reported some."""
    out = []
    for ex in graph.all_executions():
        metrics = task_metrics.get(ex.attempt_id)
        if metrics is None:
            continue
        jv = ex.vertex.job_vertex.job_vertex
        out.append(
            {
                "job_vertex_id": jv.id,
                "task_name": jv.name,
                "subtask_index": ex.vertex.subtask_index,
                "parallelism": jv.parallelism,
                "attempt_number": ex.attempt_number,
                "task_manager_id": ex.slot.tm_id if ex.slot is not None else "",
                "state": ex.state.value,
                "metrics": dict(metrics),
            }
        )
    return out


def execution_rows(graph: ExecutionGraph, task_metrics: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    """Every current execution attempt, in the graph's vertex order: where it runs, its state and its latest
    metrics (empty before its first report), and when it entered and left each state (epoch ms) — for the REST
    API."""
    out = []
    for ex in graph.all_executions():
        jv = ex.vertex.job_vertex.job_vertex
        slot = ex.slot
        out.append(
            {
                "job_vertex_id": jv.id,
                "subtask_index": ex.vertex.subtask_index,
                "attempt_number": ex.attempt_number,
                "attempt_id": ex.attempt_id,
                "state": ex.state.value,
                "task_manager_id": slot.tm_id if slot is not None else "",
                "endpoint": f"{slot.data_address[0]}:{slot.data_address[1]}" if slot is not None else "",
                "metrics": dict(task_metrics.get(ex.attempt_id, {})),
                "state_timestamps": {s.value: t for s, t in ex.state_timestamps.items()},
                "state_end_timestamps": {s.value: t for s, t in ex.state_end_timestamps.items()},
            }
        )
    return out
