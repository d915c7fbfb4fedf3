"""``RemoteJobClient``: a job on a running cluster, through the cluster's REST API.

Flink's ``RestClusterClient`` behind a ``JobClient``; the :class:`~strom.client.remote_executor.RemoteExecutor`
returns one for every job it submits, and ``strom cancel|stop`` wait for a job's end with one. The cluster outlives
the job and the client: closing a :class:`RemoteJobClient` does not cancel its job, and a Ctrl-C while ``execute()``
waits leaves the job running (``strom cancel <job id>`` stops it).

With ``high-availability.*`` in the client's configuration — or a cluster directory whose cluster was started with
it — every call follows a failover: when the JobManager stops answering (or a new leader answers 503 while it
recovers its jobs), the REST client reads the leader from the HA directory again and retries there
(:class:`~strom.deploy.standalone.rest_client.RestClusterClient`, for up to ``FAILOVER_TIMEOUT_S`` plus a few lease
durations without an answer).

An attached client with a ``log_sink`` also polls ``GET /jobs/<id>/log-records`` (strom's own path) while it
waits, and once more after the job ended: the records of the job's tasks at or above ``log_level``.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from strom.client.job_client import JobClient, JobExecutionResult
from strom.exceptions import ClusterError, JobCancelledError, JobExecutionError
from strom.runtime.execution_state import JobStatus
from strom.runtime.operators.user_traceback import add_source_lines

if TYPE_CHECKING:
    from strom.deploy.standalone.rest_client import RestClusterClient
    from strom.runtime.checkpoint.coordinator import CheckpointStats

__all__ = ["RemoteJobClient"]

_STATUS = {"SUCCEEDED": JobStatus.FINISHED, "FAILED": JobStatus.FAILED, "CANCELED": JobStatus.CANCELED}


class RemoteJobClient(JobClient):
    """A job on a remote cluster, through its REST API (Flink's ``RestClusterClient`` behind a ``JobClient``)."""

    def __init__(self, rest: RestClusterClient, job_id: str, job_name: str, *, attached: bool = True) -> None:
        # no ActiveCluster: every call goes over REST
        self.rest = rest
        self.job_id = job_id
        self.job_name = job_name
        self.attached = attached
        self._outcome: dict[str, Any] | None = None
        #: called about once a second while :meth:`get_job_execution_result` waits (``strom run``'s progress)
        self.progress: Callable[[RemoteJobClient], None] | None = None
        #: called with new log records of the job (dicts of ``GET /jobs/<id>/log-records``) while it waits
        self.log_sink: Callable[[list[dict[str, Any]]], None] | None = None
        #: the level of the records :attr:`log_sink` gets (``logging.level``)
        self.log_level = logging.WARNING
        self._log_stream = ""
        self._log_cursor = 0

    def get_rest_url(self) -> str:
        return self.rest.base_url

    def get_rest_token(self) -> str:
        return self.rest.token

    def get_job_status(self) -> JobStatus:
        if self._outcome is not None:
            return _STATUS.get(str(self._outcome.get("application-status")), JobStatus.FAILED)
        return JobStatus[str(self.rest.get(f"/jobs/{self.job_id}")["state"])]

    def job_details(self) -> dict[str, Any]:
        """``GET /jobs/<job id>`` (Flink's ``JobDetailsInfo``)."""
        details: dict[str, Any] = self.rest.get(f"/jobs/{self.job_id}")
        return details

    def trigger_savepoint(self, path: str) -> str:
        return self.rest.savepoint(self.job_id, path)

    def stop_with_savepoint(self, path: str) -> str:
        location = self.rest.savepoint(self.job_id, path, stop=True)
        with contextlib.suppress(JobCancelledError):
            self._wait_outcome()
        return location

    def cancel(self) -> None:
        if self._outcome is None:
            self.rest.cancel(self.job_id)
            self._wait_outcome()

    def _wait_outcome(self) -> dict[str, Any]:
        last_progress = 0.0
        delay = 0.05
        while self._outcome is None:
            self._outcome = self.rest.execution_result(self.job_id)  # with HA: at whichever JobManager leads
            if self._outcome is not None:
                break
            self.poll_logs()
            if self.progress is not None and time.monotonic() - last_progress >= 1.0:
                last_progress = time.monotonic()
                with contextlib.suppress(ClusterError):
                    self.progress(self)
            time.sleep(delay)
            delay = min(delay * 2, 0.5)
        self.poll_logs()  # the last lines: a TaskManager sends them before it reports its task's end
        return self._outcome

    # -- the job's log records ---------------------------------------------------------------------------
    def poll_logs(self) -> None:
        """Hand the job's new log records to :attr:`log_sink` (none: nothing to do; errors: next time)."""
        if self.log_sink is None:
            return
        level = logging.getLevelName(self.log_level)
        for _ in range(100):  # a few pages at most per call
            try:
                answer = self.rest.get(f"/jobs/{self.job_id}/log-records?from={self._log_cursor}&level={level}")
            except ClusterError:
                return
            stream = str(answer.get("stream", ""))
            if stream != self._log_stream:  # the first answer, or another JobManager's buffer (an HA failover)
                restart = bool(self._log_stream) and self._log_cursor != 0
                self._log_stream = stream
                if restart:  # read the new leader's buffer from its start
                    self._log_cursor = 0
                    continue
            records = list(answer.get("records", []))
            dropped = int(answer.get("dropped", 0))
            self._log_cursor = int(answer.get("next", self._log_cursor))
            if dropped:
                records.insert(
                    0,
                    {
                        "level": "WARNING",
                        "logger": "strom.client",
                        "taskmanager": "",
                        "timestamp": 0,
                        "message": f"{dropped} log records of the job were dropped before they were read",
                    },
                )
            if records:
                self.log_sink(records)
            if len(answer.get("records", [])) < 1000:
                return

    def detached_result(self) -> JobExecutionResult:
        """What ``execute()`` returns in detached mode: the job id only (Flink's ``DetachedJobExecutionResult``)."""
        return JobExecutionResult(job_id=self.job_id, job_name=self.job_name, net_runtime_ms=-1)

    def get_job_execution_result(self) -> JobExecutionResult:
        outcome = self._wait_outcome()
        status = str(outcome.get("application-status"))
        if status == "SUCCEEDED":
            return JobExecutionResult(
                job_id=self.job_id, job_name=self.job_name, net_runtime_ms=int(outcome.get("net-runtime", 0))
            )
        if status == "CANCELED":
            raise JobCancelledError(f"job '{self.job_name}' ({self.job_id}) was cancelled", job_id=self.job_id)
        text = add_source_lines(str(outcome.get("failure-cause", {}).get("stack-trace") or status))
        raise JobExecutionError(
            f"job '{self.job_name}' ({self.job_id}) failed: {text}", job_id=self.job_id, cause_text=text
        )

    def close(self) -> None:
        """Nothing to release: the job runs on (the cluster outlives its clients)."""

    def _remote_only(self, what: str, path: str) -> ClusterError:
        return ClusterError(
            f"expected {what} of a job on an embedded cluster; got job {self.job_id} on the remote cluster "
            f"{self.rest.base_url}; hint: read GET {self.rest.base_url}{path}"
        )

    def get_metrics(self) -> list[Any]:
        raise self._remote_only("task metrics", f"/jobs/{self.job_id}/vertices/<vertex id>/metrics")

    def get_job_metrics(self) -> dict[str, float]:
        raise self._remote_only("job metrics", f"/jobs/{self.job_id}")

    def get_metric_urls(self) -> dict[str, str]:
        raise self._remote_only("the Prometheus endpoints", "/taskmanagers")

    def get_checkpoint_statistics(self) -> list[CheckpointStats]:
        raise self._remote_only("checkpoint statistics as objects", f"/jobs/{self.job_id}/checkpoints")

    def task_manager_pids(self) -> list[int]:
        raise self._remote_only("TaskManager process ids", "/taskmanagers")

    def live_task_manager_pids(self) -> list[int]:
        raise self._remote_only("TaskManager process ids", "/taskmanagers")
