"""What a job's end gives its client (:class:`JobResult`) and what the REST API shows of its failures
(:class:`ExceptionHistoryEntry`); the JobMaster builds both."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from strom.exceptions import UserFunctionError
from strom.runtime.checkpoint.checkpoint_stats_tracker import CheckpointStatsSnapshot
from strom.runtime.execution_state import ExecutionState, JobStatus

if TYPE_CHECKING:
    from strom.graph.execution_graph import Execution

__all__ = [
    "APPLICATION_STATUS",
    "ExceptionHistoryEntry",
    "JobResult",
    "all_running_ms",
    "last_line",
    "lost_data_connection",
    "task_failure_summary",
]

#: Flink's ``ApplicationStatus`` of a globally terminal job status
APPLICATION_STATUS = {JobStatus.FINISHED: "SUCCEEDED", JobStatus.FAILED: "FAILED", JobStatus.CANCELED: "CANCELED"}


@dataclass(frozen=True, slots=True, kw_only=True)
class JobResult:
    job_id: str
    job_name: str
    status: JobStatus
    net_runtime_ms: int
    failure_text: str = ""
    failure: BaseException | None = None
    #: "vertex name (i/n)" -> pid of the TaskManager process that ran it
    task_pids: dict[str, int] = field(default_factory=dict)
    num_restarts: int = 0
    #: the job's checkpoint statistics (bounded: counts, the latest of each kind, the last few in full)
    checkpoints: CheckpointStatsSnapshot = field(default_factory=CheckpointStatsSnapshot)
    #: when the last of its tasks (their final attempts) went RUNNING, wall-clock ms; 0: some never ran (the
    #: start-up split's end of deployment, :mod:`strom.client.startup_split`)
    all_running_ms: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class ExceptionHistoryEntry:
    """One failure of the job — a restart of a region or of the whole job, or its end (Flink's
    ``RootExceptionHistoryEntry``), for the REST API's exception history: the failure text carries the user's
    traceback."""

    timestamp_ms: int
    exception_name: str
    text: str
    #: the failed subtask ("name (i/n)") and where it ran, when a task failed; empty otherwise
    task_name: str = ""
    task_manager_id: str = ""
    endpoint: str = ""
    #: the other subtasks of the restarted set that failed with it (Flink's ``concurrentExceptions``)
    concurrent: tuple[ExceptionHistoryEntry, ...] = ()
    #: the subtasks a region failover restarted ("name (i/n)"); empty: the whole job restarted (or ended)
    restarted_tasks: tuple[str, ...] = ()


def all_running_ms(executions: Iterable[Execution]) -> int:
    """When the last of ``executions`` went RUNNING (wall-clock ms); 0 when one never did."""
    latest = 0
    for ex in executions:
        running = ex.state_timestamps.get(ExecutionState.RUNNING)
        if running is None:
            return 0
        latest = max(latest, running)
    return latest


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "(no message)"


def task_failure_summary(task_name: str, error_text: str, error: BaseException | None) -> str:
    """One line for the "fails over" record: where the task failed (the operator, for a user function's error)
    and the exception's last line (``ValueError: bad record``), not the first line of a traceback."""
    where = f"task '{task_name}'"
    if isinstance(error, UserFunctionError) and error.operator:
        where = f"operator '{error.operator}' in {where}"
    return f"{where}: {last_line(error_text)}"


#: how the network stack names the TaskManager at the other end of a data connection that failed: the connection
#: read loop (``HOST:PORT``) or the connect of a partition request (``('HOST', PORT)``)
_DATA_CONNECTION = re.compile(
    r"data (?:connection to|server of) TaskManager "
    r"(?:\('(?P<tuple_host>[^']*)', (?P<tuple_port>\d+)\)|\[?(?P<host>[^\s\[\]]+?)\]?:(?P<port>\d+))"
)


def lost_data_connection(error_text: str) -> tuple[str, int] | None:
    """The data address of the TaskManager whose data connection a task's failure says it lost (reset, closed, or
    unreachable), or ``None`` for any other failure."""
    match = _DATA_CONNECTION.search(error_text)
    if match is None:
        return None
    host = match["tuple_host"] if match["tuple_host"] is not None else match["host"]
    port = match["tuple_port"] if match["tuple_port"] is not None else match["port"]
    return host, int(port)
