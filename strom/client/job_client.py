"""``JobClient``: a handle on a submitted job — status, cancel, result — and the iterator of
``execute_and_collect``.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any

from strom.client.startup_split import ClientStamps, report
from strom.exceptions import ClusterError, JobCancelledError, JobExecutionError
from strom.runtime.checkpoint.checkpoint_stats_tracker import CheckpointStatsCounts
from strom.runtime.execution_state import JobStatus
from strom.runtime.operators.user_traceback import add_source_lines

if TYPE_CHECKING:
    from strom.deploy.active_cluster import ActiveCluster
    from strom.runtime.checkpoint.coordinator import CheckpointStats
    from strom.runtime.jobmaster.jobmaster import JobResult

__all__ = [
    "CloseableIterator",
    "JobClient",
    "JobExecutionResult",
    "TaskMetrics",
    "interrupted_job",
    "mark_job_interrupted",
]


def mark_job_interrupted(interrupt: KeyboardInterrupt, job: str) -> None:
    """Ctrl-C stopped ``job`` ("'name' (id)"): should the interrupt end the program, Python prints one line,
    ``job 'name' (id) cancelled``, instead of the traceback through strom's waits (and exits by SIGINT, 130 in a
    shell). A program that catches the interrupt sees nothing printed."""
    interrupt.strom_cancelled_job = job  # type: ignore[attr-defined]
    global _previous_excepthook
    if _previous_excepthook is None:
        _previous_excepthook = sys.excepthook
        sys.excepthook = _excepthook


def interrupted_job(exc: BaseException) -> str | None:
    """The job a Ctrl-C cancelled, if ``exc`` is that interrupt."""
    job = getattr(exc, "strom_cancelled_job", None)
    return job if isinstance(exc, KeyboardInterrupt) and isinstance(job, str) else None


_previous_excepthook: object = None


def _excepthook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    job = interrupted_job(exc)
    if job is not None:
        print(f"job {job} cancelled", file=sys.stderr, flush=True)
        return
    previous = _previous_excepthook
    (previous if callable(previous) else sys.__excepthook__)(kind, exc, tb)


@dataclass(frozen=True, slots=True, kw_only=True)
class JobExecutionResult:
    job_id: str
    job_name: str
    net_runtime_ms: int
    #: "task name (i/n)" -> pid of the TaskManager process that ran the subtask
    task_pids: dict[str, int] = field(default_factory=dict)
    #: how often the job was restarted after failures
    num_restarts: int = 0
    #: the job's last checkpoints (``web.checkpoints.history``, 10 by default; id, status, trigger time, duration,
    #: size, per-subtask alignment), oldest first
    checkpoints: list[CheckpointStats] = field(default_factory=list)
    #: how many checkpoints the job triggered, completed, failed and restored over its whole life
    checkpoint_counts: CheckpointStatsCounts = field(default_factory=CheckpointStatsCounts)

    def get_job_id(self) -> str:
        return self.job_id

    def get_net_runtime(self) -> int:
        return self.net_runtime_ms


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskMetrics:
    """The latest metrics of one running subtask, as its TaskManager reported them (every heartbeat).

    ``metrics`` holds Flink's task I/O metrics: ``numRecordsIn``/``Out``, ``numBytesIn``/``Out`` (bytes
    serialized for or received from other TaskManagers) and their ``...PerSecond`` rates,
    ``backPressuredTimeMsPerSecond``, ``busyTimeMsPerSecond``, ``idleTimeMsPerSecond``, ``inPoolUsage``,
    ``outPoolUsage``, ``inputQueueLength``, ``outputQueueLength``.
    """

    job_vertex_id: str
    task_name: str
    subtask_index: int
    parallelism: int
    attempt_number: int
    task_manager_id: str
    state: str
    metrics: dict[str, float]


class JobClient:
    """Returned by ``execute_async``; owns the job's cluster and closes it once the job ends."""

    def __init__(
        self, cluster: ActiveCluster, job_id: str, job_name: str, *, stamps: ClientStamps | None = None
    ) -> None:
        self._cluster = cluster
        self.job_id = job_id
        self.job_name = job_name
        self._result: JobResult | None = None
        #: the client's steps of the job (its start-up split, :mod:`strom.client.startup_split`)
        self.stamps = stamps if stamps is not None else ClientStamps()

    def get_job_id(self) -> str:
        return self.job_id

    def get_rest_url(self) -> str:
        """The base URL of the job's cluster's REST API, Flink's paths (``<url>/jobs/<job id>``, ...); the
        embedded MiniCluster binds 127.0.0.1 on a free port unless ``rest.port`` / ``rest.bind-address`` are set."""
        return self._cluster.rest_url

    def get_rest_token(self) -> str:
        """The token REST calls that change the job (PATCH, POST) send as ``Authorization: Bearer <token>``."""
        return self._cluster.rest_token

    def get_job_status(self) -> JobStatus:
        if self._result is not None:
            return self._result.status
        assert self._cluster.dispatcher is not None
        jm = self._cluster.dispatcher.job_master(self.job_id)
        return jm.status

    def get_metrics(self) -> list[TaskMetrics]:
        """The latest metrics of each running subtask (empty before the first report and after the end)."""
        if self._result is not None:
            return []
        d = self._cluster.dispatcher
        assert d is not None
        try:
            rows = self._cluster.run(d.request_task_metrics(self.job_id), timeout=10.0)
        except ClusterError:  # the job ended and its cluster closed meanwhile
            return []
        return [TaskMetrics(**row) for row in rows]

    def get_job_metrics(self) -> dict[str, float]:
        """The job's metrics on the JobManager (Flink's job scope): ``numRestarts`` and, with checkpointing,
        ``lastCheckpointDuration``, ``lastCheckpointSize``, ``lastCompletedCheckpointId``,
        ``numberOfCompletedCheckpoints``, ``numberOfFailedCheckpoints``, ``numberOfInProgressCheckpoints``,
        ``totalNumberOfCheckpoints``, ``lastCheckpointRestoreTimestamp`` ... (empty after the end)."""
        from strom.runtime.metrics.job_metrics import request_job_metrics

        d = self._cluster.dispatcher
        if self._result is not None or d is None:
            return {}
        try:
            return self._cluster.run(request_job_metrics(d, self.job_id), timeout=10.0)
        except ClusterError:
            return {}

    def get_metric_urls(self) -> dict[str, str]:
        """The Prometheus endpoints of the cluster (``metrics.reporter.prom.*``): ``"jobmanager"`` and each
        TaskManager's id -> its ``/metrics`` URL; empty without a reporter or after the end."""
        from strom.runtime.metrics.job_metrics import request_metric_urls

        d = self._cluster.dispatcher
        if self._result is not None or d is None:
            return {}
        urls: dict[str, str] = {}
        jm_url = getattr(self._cluster, "metrics_url", "")
        if jm_url:
            urls["jobmanager"] = jm_url
        try:
            urls.update({tm: u for tm, u in self._cluster.run(request_metric_urls(d), timeout=10.0).items() if u})
        except ClusterError:
            return {}
        return urls

    def get_checkpoint_statistics(self) -> list[CheckpointStats]:
        """The job's last checkpoints (``web.checkpoints.history``, 10 by default), oldest first (Flink's checkpoint
        statistics history)."""
        if self._result is not None:
            return list(self._result.checkpoints.history)
        d = self._cluster.dispatcher
        assert d is not None
        try:
            return list(self._cluster.run(d.request_checkpoint_statistics(self.job_id), timeout=10.0).history)
        except ClusterError:
            return list(self._result.checkpoints.history) if self._result is not None else []

    def trigger_savepoint(self, path: str) -> str:
        """Take a savepoint into the directory ``path``; returns the savepoint's own directory."""
        d = self._cluster.dispatcher
        assert d is not None
        result: str = self._cluster.run(d.trigger_savepoint(self.job_id, path))
        return result

    def stop_with_savepoint(self, path: str) -> str:
        """Take a savepoint, then stop the job; returns the savepoint's directory."""
        d = self._cluster.dispatcher
        assert d is not None
        result: str = self._cluster.run(d.stop_with_savepoint(self.job_id, path))
        with contextlib.suppress(JobCancelledError):
            self._wait_result()
        return result

    def cancel(self) -> None:
        """Cancel the job and wait until it stopped."""
        if self._result is None:
            d = self._cluster.dispatcher
            assert d is not None
            self._cluster.call_soon(d.cancel_job, self.job_id)
            self._wait_result()

    def _wait_result(self) -> JobResult:
        if self._result is None:
            d = self._cluster.dispatcher
            assert d is not None
            try:
                self._result = self._cluster.run(d.request_job_result(self.job_id))
                self.stamps.ended = ClientStamps.now()
            except KeyboardInterrupt as interrupt:  # Ctrl-C: the job ends with its cluster, closed below
                mark_job_interrupted(interrupt, f"'{self.job_name}' ({self.job_id})")
                raise
            finally:
                self._cluster.close()
            self.stamps.closed = ClientStamps.now()
            if self.stamps.submitting:
                report(
                    f"'{self.job_name}' ({self.job_id})", self.stamps, all_running=self._result.all_running_ms / 1000
                )
        return self._result

    def get_job_execution_result(self) -> JobExecutionResult:
        """Wait for the end of the job; raise :class:`JobExecutionError` unless it FINISHED."""
        r = self._wait_result()
        if r.status is JobStatus.FINISHED:
            return JobExecutionResult(
                job_id=r.job_id,
                job_name=r.job_name,
                net_runtime_ms=r.net_runtime_ms,
                task_pids=r.task_pids,
                num_restarts=r.num_restarts,
                checkpoints=list(r.checkpoints.history),
                checkpoint_counts=r.checkpoints.counts,
            )
        if r.status is JobStatus.CANCELED:
            raise JobCancelledError(f"job '{r.job_name}' ({r.job_id}) was cancelled", job_id=r.job_id)
        text = add_source_lines(r.failure_text)
        err = JobExecutionError(f"job '{r.job_name}' ({r.job_id}) failed: {text}", job_id=r.job_id, cause_text=text)
        if r.failure is not None:
            raise err from r.failure
        raise err

    def close(self) -> None:
        if self._result is None:
            self.cancel()
        self._cluster.close()

    def task_manager_pids(self) -> list[int]:
        """The process ids of the TaskManagers the job's cluster started (replacements included)."""
        return list(self._cluster.task_manager_pids)

    def live_task_manager_pids(self) -> list[int]:
        """The process ids of the job's TaskManagers that are running now."""
        return list(self._cluster.live_task_manager_pids)


class CloseableIterator(Iterator[Any]):
    """Iterates a collect sink's records while the job runs; closing it cancels an unfinished job."""

    def __init__(self, client: JobClient, sink_id: str, limit: int | None) -> None:
        self._client = client
        self._sink_id = sink_id
        self._limit = limit
        self._count = 0
        self._buffer: list[Any] = []
        self._pos = 0
        self._ended = False

    @property
    def client(self) -> JobClient:
        """The :class:`JobClient` of the job whose output this iterates (metrics, status, cancel)."""
        return self._client

    def __iter__(self) -> CloseableIterator:
        return self

    def __next__(self) -> Any:
        if self._limit is not None and self._count >= self._limit:
            self.close()
            raise StopIteration
        while self._pos >= len(self._buffer):
            if self._ended:
                self._client.get_job_execution_result()  # raises if the job failed
                raise StopIteration
            self._fetch()
        value = self._buffer[self._pos]
        self._pos += 1
        self._count += 1
        return value

    def _fetch(self) -> None:
        cluster = self._client._cluster
        d = cluster.dispatcher
        assert d is not None
        jm = d.job_master(self._client.job_id)
        records, ended = cluster.run(jm.poll_collect(self._sink_id, 0.5))
        if ended:
            self._ended = True
        self._buffer = records or []
        self._pos = 0

    def close(self) -> None:
        client = self._client
        if client._result is None:
            with contextlib.suppress(JobExecutionError):
                client.cancel()
        client._cluster.close()

    def __enter__(self) -> CloseableIterator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self._client._cluster.close()
