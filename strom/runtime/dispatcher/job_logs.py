"""``JobLogBuffers``: the log records TaskManagers forwarded for each job, kept for ``strom run``'s attached client.

A TaskManager's :class:`~strom.runtime.taskexecutor.log_forwarder.LogForwarder` tags every record logged on a
task thread with that task's job. The JobManager keeps the latest :data:`MAX_RECORDS_PER_JOB` of each job here,
numbered from 0 in arrival order, for at most :data:`MAX_JOBS` jobs (the oldest job's records are dropped first).
``GET /jobs/:jobid/log-records?from=N`` (strom's own path; :mod:`strom.web.job_log_messages`) reads them with a
cursor: a client passes the ``next`` of its previous answer and gets what arrived since. ``stream`` names this
JobManager's buffer: a client that sees another one (a new leader after an HA failover) starts again at 0.
"""

from __future__ import annotations

import collections
import itertools
import secrets
from dataclasses import dataclass

__all__ = ["MAX_JOBS", "MAX_RECORDS_PER_JOB", "JobLogBuffers", "JobLogRecord"]

MAX_RECORDS_PER_JOB = 2000
MAX_JOBS = 200


@dataclass(frozen=True, slots=True)
class JobLogRecord:
    seq: int
    time_ms: int
    level: int
    task_manager: str
    logger: str
    message: str


class _Buffer:
    __slots__ = ("next_seq", "records")

    def __init__(self) -> None:
        self.records: collections.deque[JobLogRecord] = collections.deque(maxlen=MAX_RECORDS_PER_JOB)
        self.next_seq = 0


class JobLogBuffers:
    """Per job a bounded buffer of forwarded records (the JobManager's loop only)."""

    def __init__(self) -> None:
        self.stream = secrets.token_hex(8)
        self._jobs: collections.OrderedDict[str, _Buffer] = collections.OrderedDict()

    def add(self, job_id: str, task_manager: str, time_ms: int, level: int, logger: str, message: str) -> None:
        buf = self._jobs.get(job_id)
        if buf is None:
            buf = self._jobs[job_id] = _Buffer()
            while len(self._jobs) > MAX_JOBS:
                self._jobs.popitem(last=False)
        buf.records.append(JobLogRecord(buf.next_seq, time_ms, level, task_manager, logger, message))
        buf.next_seq += 1

    def read(self, job_id: str, start: int, level: int = 0, limit: int = 1000) -> tuple[list[JobLogRecord], int, int]:
        """Records numbered ``start`` and later at or above ``level`` (at most ``limit`` of them), the cursor to pass
        next, and how many records after ``start`` were dropped before they were read (the buffer is bounded)."""
        buf = self._jobs.get(job_id)
        if buf is None:
            return [], max(start, 0), 0
        start = max(start, 0)
        first = buf.records[0].seq if buf.records else buf.next_seq
        dropped = max(0, min(first, buf.next_seq) - start)
        out: list[JobLogRecord] = []
        cursor = max(start, first)
        for r in itertools.islice(buf.records, max(0, cursor - first), None):
            if len(out) == limit:
                break
            cursor = r.seq + 1
            if r.level >= level:
                out.append(r)
        return out, max(cursor, start), dropped
