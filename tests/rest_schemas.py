"""Flink's REST response shapes (field -> type) and the checker the REST, standalone-cluster and service tests share.

The table follows Flink's ``docs/static/generated/rest_v1_dispatcher.yml`` (and, where Flink 2.x changed them, its
``rest/messages`` classes). Importable from every test directory (``pythonpath`` in pyproject.toml).
"""

from __future__ import annotations

from typing import Any

__all__ = ["EXECUTION_STATES", "JOB_STATES", "SCHEMAS", "check", "is_hex32"]

INT, NUM, STR, BOOL, OBJ, LIST = int, (int, float), str, bool, dict, list

#: Flink's response schemas (field -> type), from rest_v1_dispatcher.yml / Flink 2.x's message classes
SCHEMAS: dict[str, dict[str, Any]] = {
    "DashboardConfiguration": {
        "refresh-interval": INT,
        "timezone-name": STR,
        "timezone-offset": INT,
        "flink-version": STR,
        "flink-revision": STR,
        "features": OBJ,
    },
    "Features": {"web-submit": BOOL, "web-cancel": BOOL, "web-rescale": BOOL, "web-history": BOOL},
    "ClusterOverviewWithVersion": {
        "taskmanagers": INT,
        "slots-total": INT,
        "slots-available": INT,
        "jobs-running": INT,
        "jobs-finished": INT,
        "jobs-cancelled": INT,
        "jobs-failed": INT,
        "flink-version": STR,
        "flink-commit": STR,
        "taskmanagers-blocked": INT,
        "slots-free-and-blocked": INT,
    },
    "JobIdWithStatus": {"id": STR, "status": STR},
    "JobDetails": {
        "jid": STR,
        "name": STR,
        "start-time": INT,
        "end-time": INT,
        "duration": INT,
        "state": STR,
        "last-modification": INT,
        "tasks": OBJ,
    },
    "JobDetailsInfo": {
        "jid": STR,
        "name": STR,
        "isStoppable": BOOL,
        "state": STR,
        "job-type": STR,
        "start-time": INT,
        "end-time": INT,
        "duration": INT,
        "maxParallelism": INT,
        "now": INT,
        "timestamps": OBJ,
        "vertices": LIST,
        "status-counts": OBJ,
        "plan": OBJ,
    },
    "JobDetailsVertexInfo": {
        "id": STR,
        "name": STR,
        "maxParallelism": INT,
        "parallelism": INT,
        "status": STR,
        "start-time": INT,
        "end-time": INT,
        "duration": INT,
        "tasks": OBJ,
        "metrics": OBJ,
    },
    "IOMetricsInfo": {
        "read-bytes": INT,
        "read-bytes-complete": BOOL,
        "write-bytes": INT,
        "write-bytes-complete": BOOL,
        "read-records": INT,
        "read-records-complete": BOOL,
        "write-records": INT,
        "write-records-complete": BOOL,
        "accumulated-backpressured-time": INT,
        "accumulated-idle-time": INT,
        "accumulated-busy-time": NUM,
    },
    "Plan": {"jid": STR, "name": STR, "type": STR, "nodes": LIST},
    "PlanNode": {"id": STR, "parallelism": INT, "operator": STR, "operator_strategy": STR, "description": STR},
    "PlanInput": {"num": INT, "id": STR, "ship_strategy": STR, "exchange": STR},
    "JobExceptionsInfoWithHistory": {"exceptionHistory": OBJ},
    "JobExceptionHistory": {"entries": LIST, "truncated": BOOL},
    "RootExceptionInfo": {
        "exceptionName": STR,
        "stacktrace": STR,
        "timestamp": INT,
        "failureLabels": OBJ,
        "taskName": STR,
        "endpoint": STR,
        "taskManagerId": STR,
        "concurrentExceptions": LIST,
    },
    "CheckpointingStatistics": {"counts": OBJ, "summary": OBJ, "latest": OBJ, "history": LIST},
    "Counts": {"restored": INT, "total": INT, "in_progress": INT, "completed": INT, "failed": INT},
    "StatsSummaryDto": {
        "min": INT,
        "max": INT,
        "avg": INT,
        "p50": NUM,
        "p90": NUM,
        "p95": NUM,
        "p99": NUM,
        "p999": NUM,
    },
    "CheckpointStatistics": {
        "className": STR,
        "id": INT,
        "status": STR,
        "is_savepoint": BOOL,
        "trigger_timestamp": INT,
        "latest_ack_timestamp": INT,
        "checkpointed_size": INT,
        "state_size": INT,
        "end_to_end_duration": INT,
        "alignment_buffered": INT,
        "processed_data": INT,
        "persisted_data": INT,
        "num_subtasks": INT,
        "num_acknowledged_subtasks": INT,
        "checkpoint_type": STR,
        "tasks": OBJ,
    },
    "CompletedCheckpointStatistics": {"external_path": STR, "discarded": BOOL},
    "TaskCheckpointStatistics": {
        "id": INT,
        "status": STR,
        "latest_ack_timestamp": INT,
        "checkpointed_size": INT,
        "state_size": INT,
        "end_to_end_duration": INT,
        "alignment_buffered": INT,
        "processed_data": INT,
        "persisted_data": INT,
        "num_subtasks": INT,
        "num_acknowledged_subtasks": INT,
    },
    "CheckpointConfigInfo": {
        "mode": STR,
        "interval": INT,
        "timeout": INT,
        "min_pause": INT,
        "max_concurrent": INT,
        "externalization": OBJ,
        "state_backend": STR,
        "checkpoint_storage": STR,
        "unaligned_checkpoints": BOOL,
        "tolerable_failed_checkpoints": INT,
        "aligned_checkpoint_timeout": INT,
        "checkpoints_after_tasks_finish": BOOL,
        "state_changelog_enabled": BOOL,
        "changelog_periodic_materialization_interval": INT,
        "changelog_storage": STR,
    },
    "ExternalizedCheckpointInfo": {"enabled": BOOL, "delete_on_cancellation": BOOL},
    "JobVertexDetailsInfo": {
        "id": STR,
        "name": STR,
        "parallelism": INT,
        "maxParallelism": INT,
        "now": INT,
        "subtasks": LIST,
        "aggregated": OBJ,
    },
    "SubtaskExecutionAttemptDetailsInfo": {
        "subtask": INT,
        "status": STR,
        "attempt": INT,
        "endpoint": STR,
        "start-time": INT,
        "end-time": INT,
        "duration": INT,
        "metrics": OBJ,
        "taskmanager-id": STR,
        "status-duration": OBJ,
    },
    "Metric": {"id": STR, "value": STR},
    "AggregatedMetric": {"id": STR, "min": NUM, "max": NUM, "avg": NUM, "sum": NUM, "skew": NUM},
    "JobVertexBackPressureInfo": {"status": STR, "backpressureLevel": STR, "end-timestamp": INT, "subtasks": LIST},
    "SubtaskBackPressureInfo": {
        "subtask": INT,
        "attempt-number": INT,
        "backpressureLevel": STR,
        "ratio": NUM,
        "idleRatio": NUM,
        "busyRatio": NUM,
    },
    "TaskManagerInfo": {
        "id": STR,
        "path": STR,
        "dataPort": INT,
        "jmxPort": INT,
        "timeSinceLastHeartbeat": INT,
        "slotsNumber": INT,
        "freeSlots": INT,
        "totalResource": OBJ,
        "freeResource": OBJ,
        "hardware": OBJ,
        "blocked": BOOL,
    },
    "TaskManagerDetailsInfo": {"allocatedSlots": LIST, "metrics": OBJ},
    "LogListInfo": {"logs": LIST},
    "LogInfo": {"name": STR, "size": INT, "mtime": INT},
    "ClusterConfigurationInfoEntry": {"key": STR, "value": STR},
    "EnvironmentInfo": {"jvm": OBJ, "classpath": LIST},
    "JVMInfo": {"version": STR, "arch": STR, "options": LIST},
    "TriggerResponse": {"request-id": STR},
    "ErrorResponseBody": {"errors": LIST},
}
EXECUTION_STATES = {"CREATED", "SCHEDULED", "DEPLOYING", "RUNNING", "FINISHED", "CANCELING", "CANCELED", "FAILED",
                    "RECONCILING", "INITIALIZING"}  # fmt: skip
JOB_STATES = {"INITIALIZING", "CREATED", "RUNNING", "FAILING", "FAILED", "CANCELLING", "CANCELED", "FINISHED",
              "RESTARTING", "SUSPENDED", "RECONCILING"}  # fmt: skip


def check(body: Any, schema: str) -> None:
    """``body`` has every field of Flink's ``schema``, each of its type."""
    assert isinstance(body, dict), f"{schema}: expected an object; got {body!r}"
    for name, typ in SCHEMAS[schema].items():
        assert name in body, f"{schema}: field {name!r} missing in {sorted(body)}"
        value = body[name]
        assert isinstance(value, typ) and not (typ in (INT, NUM) and isinstance(value, bool)), (
            f"{schema}.{name}: expected {typ}; got {value!r}"
        )


def is_hex32(value: str) -> bool:
    return len(value) == 32 and all(c in "0123456789abcdef" for c in value)
