"""Flink's metric REST bodies, built from snapshots (pure).

- ``MetricCollectionResponseBody`` — a JSON list: without ``?get=`` the available ids (``[{"id": ...}]``), with
  it the requested ones and their values as strings (``[{"id": ..., "value": "..."}]``); unknown ids are left
  out, as Flink's ``AbstractMetricsHandler`` does. A vertex's metric ids are ``<subtask>.<name>``.
- ``AggregatedMetricsResponseBody`` — ``[{"id", "min", "max", "avg", "sum", "skew"}]`` over the subtasks
  (``?agg=`` picks the aggregations; ``?subtasks=1,3-5`` the subtasks).
- ``JobVertexBackPressureInfo`` — from ``backPressuredTimeMsPerSecond`` (Flink ≥ 1.13 reads the same metric
  instead of sampling stacks): ratio ≤ 0.10 ok, ≤ 0.5 low, else high; ``{"status": "deprecated"}`` while no
  subtask has reported.
- watermarks — ``<subtask>.currentInputWatermark`` of each subtask that reports it.

The metrics are the ones the TaskManagers' heartbeats carry (the task I/O metrics); a value is a float in
strom, written as Flink writes a gauge's value: its string form.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from strom.web.accessor import RestHandlerError, SubtaskSnapshot, VertexSnapshot

__all__ = [
    "AGGREGATIONS",
    "aggregated_metrics",
    "back_pressure_info",
    "metric_collection",
    "parse_subtask_ranges",
    "vertex_metrics",
    "watermarks",
]

AGGREGATIONS = ("min", "max", "avg", "sum", "skew")


def _format(value: float) -> str:
    """A gauge value as Flink's REST API writes it: integral numbers without a fraction."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def metric_collection(available: Mapping[str, float], get: Sequence[str] | None) -> list[dict[str, str]]:
    """``MetricCollectionResponseBody`` of ``available`` (id -> value)."""
    if get is None:
        return [{"id": name} for name in sorted(available)]
    return [{"id": name, "value": _format(available[name])} for name in get if name in available]


def vertex_metrics(vertex: VertexSnapshot) -> dict[str, float]:
    """Every metric of a vertex's running subtasks as ``<subtask>.<name>`` -> value."""
    return {f"{s.subtask}.{name}": value for s in vertex.subtasks for name, value in s.metrics.items()}


def parse_subtask_ranges(raw: str | None, parallelism: int) -> list[int]:
    """``"1,3,5-9"`` -> the subtask indices it names (all when ``raw`` is empty)."""
    if not raw:
        return list(range(parallelism))
    out: set[int] = set()
    for part in raw.split(","):
        part = part.strip()
        try:
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                out.update(range(lo, hi + 1))
            elif part:
                out.add(int(part))
        except ValueError:
            raise RestHandlerError(
                f"expected subtasks as a comma-separated list of indices and ranges (1,3,5-9); got {raw!r}", 400
            ) from None
    return sorted(i for i in out if 0 <= i < parallelism)


def _skew(values: Sequence[float]) -> float:
    """Flink's ``DoubleDataSkew``: the mean absolute deviation relative to the mean, in percent (≤ 100)."""
    avg = sum(values) / len(values)
    if avg == 0.0:
        return 0.0
    deviation = sum(abs(avg - v) for v in values) / len(values)
    return min(deviation / avg * 100.0, 100.0)


def aggregated_metrics(
    subtasks: Iterable[SubtaskSnapshot], get: Sequence[str] | None, aggregations: Sequence[str] | None
) -> list[dict[str, Any]]:
    """``AggregatedMetricsResponseBody`` over ``subtasks``."""
    values: dict[str, list[float]] = {}
    for s in subtasks:
        for name, value in s.metrics.items():
            values.setdefault(name, []).append(value)
    if get is None:
        return [{"id": name} for name in sorted(values)]
    wanted = [a.lower() for a in aggregations] if aggregations else list(AGGREGATIONS)
    unknown = [a for a in wanted if a not in AGGREGATIONS]
    if unknown:
        raise RestHandlerError(f"expected aggregations among {', '.join(AGGREGATIONS)}; got {', '.join(unknown)}", 400)
    out = []
    for name in get:
        vs = values.get(name)
        if not vs:
            continue
        computed = {"min": min(vs), "max": max(vs), "avg": sum(vs) / len(vs), "sum": sum(vs), "skew": _skew(vs)}
        out.append({"id": name, **{a: computed[a] for a in wanted}})
    return out


def _level(ratio: float) -> str:
    if ratio <= 0.10:
        return "ok"
    return "low" if ratio <= 0.5 else "high"


def back_pressure_info(vertex: VertexSnapshot) -> dict[str, Any]:
    """``GET /jobs/:jobid/vertices/:vertexid/backpressure`` (``JobVertexBackPressureInfo``)."""
    reported = [s for s in vertex.subtasks if "backPressuredTimeMsPerSecond" in s.metrics]
    if not reported:
        return {"status": "deprecated"}
    subtasks: list[dict[str, Any]] = []
    worst = 0.0
    for s in reported:
        ratio = s.metrics["backPressuredTimeMsPerSecond"] / 1000.0
        worst = max(worst, ratio)
        subtasks.append(
            {
                "subtask": s.subtask,
                "attempt-number": s.attempt,
                "backpressureLevel": _level(ratio),
                "backpressure-level": _level(ratio),  # Flink writes both spellings; its dashboard reads this one
                "ratio": ratio,
                "idleRatio": s.metrics.get("idleTimeMsPerSecond", 0.0) / 1000.0,
                "busyRatio": s.metrics.get("busyTimeMsPerSecond", 0.0) / 1000.0,
            }
        )
    return {
        "status": "ok",
        "backpressureLevel": _level(worst),
        "backpressure-level": _level(worst),
        "end-timestamp": int(time.time() * 1000),
        "subtasks": subtasks,
    }


#: a watermark at or past Flink's ``Long.MAX_VALUE``: the end of input (a finished source's or task's last one)
_END_OF_INPUT = float(2**63 - 1)


def watermarks(vertex: VertexSnapshot) -> list[dict[str, str]]:
    """``GET /jobs/:jobid/vertices/:vertexid/watermarks``: ``<subtask>.currentInputWatermark`` of the subtasks that
    report one, but not the end-of-input watermark (``Long.MAX_VALUE``) of a subtask whose input ended: it is no
    time Flink's dashboard can show (its date pipe fails on it), and Flink drops a finished task's metrics."""
    return [
        {"id": f"{s.subtask}.currentInputWatermark", "value": _format(s.metrics["currentInputWatermark"])}
        for s in vertex.subtasks
        if "currentInputWatermark" in s.metrics and s.metrics["currentInputWatermark"] < _END_OF_INPUT
    ]
