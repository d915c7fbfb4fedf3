"""Scopes, variables and the names Flink's PrometheusReporter gives metrics — pure functions.

Flink's default scope formats (``metrics.scope.*``) and variables (docs "Metrics" → "System Scope", "List
of all Variables"):

============  ======================================================  ==============================================
scope         components (``get_scope_components``)                   variables
============  ======================================================  ==============================================
jm            ``<host>.jobmanager``                                   ``<host>``
jm-job        ``<host>.jobmanager.<job_name>``                        ``+ <job_id>, <job_name>``
task          ``<host>.taskmanager.<tm_id>.<job_name>.<task_name>``   ``<host>, <tm_id>, <job_id>, <job_name>,``
              ``.<subtask_index>``                                    ``<task_id>, <task_attempt_id>, <task_name>,``
                                                                      ``<subtask_index>, <task_attempt_num>``
operator      ``<host>.taskmanager.<tm_id>.<job_name>``               ``+ <operator_id>, <operator_name>``
              ``.<operator_name>.<subtask_index>``
============  ======================================================  ==============================================

The PrometheusReporter (``AbstractPrometheusReporter``) names a metric ``flink_`` + its *logical* scope
(``taskmanager_job_task_operator``, the user's groups appended) + ``_`` + its name, every component with the
characters outside ``[a-zA-Z0-9:_]`` replaced by ``_``; its labels are the variables without ``<>``, their
values filtered the same way (``filterLabelValueCharacters``, on by default).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = [
    "JOB_MANAGER_JOB_SCOPE",
    "JOB_MANAGER_SCOPE",
    "OPERATOR_SCOPE",
    "TASK_SCOPE",
    "filter_characters",
    "job_manager_job_variables",
    "operator_scope",
    "operator_variables",
    "prometheus_labels",
    "prometheus_name",
    "task_scope",
    "task_variables",
]

JOB_MANAGER_SCOPE = ("jobmanager",)
JOB_MANAGER_JOB_SCOPE = ("jobmanager", "job")
TASK_SCOPE = ("taskmanager", "job", "task")
OPERATOR_SCOPE = ("taskmanager", "job", "task", "operator")

_UNALLOWED = re.compile(r"[^a-zA-Z0-9:_]")


def filter_characters(text: str) -> str:
    """Flink's ``AbstractPrometheusReporter.replaceInvalidChars``."""
    return _UNALLOWED.sub("_", text)


def prometheus_name(logical_scope: tuple[str, ...], name: str) -> str:
    """``flink_<logical scope joined by _>_<name>``, e.g. ``flink_taskmanager_job_task_numRecordsIn``."""
    return "flink_" + "_".join(filter_characters(c) for c in logical_scope) + "_" + filter_characters(name)


def prometheus_labels(variables: Mapping[str, str]) -> dict[str, str] | None:
    """The labels of a metric with ``variables``; ``None`` if two variables map to the same label name (Flink
    then does not report the metric: Prometheus would reject the whole scrape)."""
    labels: dict[str, str] = {}
    for key, value in variables.items():
        name = filter_characters(key[1:-1] if key.startswith("<") and key.endswith(">") else key)
        if name in labels:
            return None
        labels[name] = filter_characters(str(value))
    return labels


def task_variables(
    *,
    host: str,
    tm_id: str,
    job_id: str,
    job_name: str,
    task_id: str,
    task_attempt_id: str,
    task_name: str,
    subtask_index: int,
    task_attempt_num: int,
) -> dict[str, str]:
    return {
        "<host>": host,
        "<tm_id>": tm_id,
        "<job_id>": job_id,
        "<job_name>": job_name,
        "<task_id>": task_id,
        "<task_attempt_id>": task_attempt_id,
        "<task_name>": task_name,
        "<subtask_index>": str(subtask_index),
        "<task_attempt_num>": str(task_attempt_num),
    }


def operator_variables(task_vars: Mapping[str, str], *, operator_id: str, operator_name: str) -> dict[str, str]:
    return {**task_vars, "<operator_id>": operator_id, "<operator_name>": operator_name}


def task_scope(v: Mapping[str, str]) -> tuple[str, ...]:
    return (v["<host>"], "taskmanager", v["<tm_id>"], v["<job_name>"], v["<task_name>"], v["<subtask_index>"])


def operator_scope(v: Mapping[str, str]) -> tuple[str, ...]:
    return (v["<host>"], "taskmanager", v["<tm_id>"], v["<job_name>"], v["<operator_name>"], v["<subtask_index>"])


def job_manager_job_variables(*, host: str, job_id: str, job_name: str) -> dict[str, str]:
    return {"<host>": host, "<job_id>": job_id, "<job_name>": job_name}
