"""Flink 2.x's application REST bodies, built from snapshots (pure).

Flink 2.x runs every job inside an *application* (``ApplicationID``, ``ApplicationState``); a job submitted on its
own becomes a single-job application. strom has no other kind, so each job is one application under the job's id
and name, its state the job's (``ApplicationState``: CREATED, RUNNING, FAILING, FAILED, CANCELLING, CANCELED,
FINISHED):

- ``GET /applications/overview`` — ``MultipleApplicationsDetails``: ``{"applications": [ApplicationDetails]}``,
  each with ``jobs`` counting its jobs per job state;
- ``GET /applications/:applicationid`` — ``ApplicationDetailsInfo``: its timestamps per state and its jobs
  (``JobDetails``, as ``/jobs/overview``);
- ``GET /applications/:applicationid/exceptions`` — ``ApplicationExceptionsInfoWithHistory``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from strom.web.accessor import JobSnapshot
from strom.web.job_messages import jobs_overview

__all__ = ["APPLICATION_STATES", "application_details", "application_exceptions", "applications_overview"]

#: Flink's ``ApplicationState`` names, in its declaration order
APPLICATION_STATES = ("CREATED", "RUNNING", "FAILING", "FAILED", "CANCELLING", "CANCELED", "FINISHED")
_TERMINAL = ("FAILED", "CANCELED", "FINISHED")
_OF_JOB_STATE = {
    "INITIALIZING": "CREATED",
    "CREATED": "CREATED",
    "FAILING": "FAILING",
    "FAILED": "FAILED",
    "CANCELLING": "CANCELLING",
    "CANCELED": "CANCELED",
    "FINISHED": "FINISHED",
}


def application_state(job_state: str) -> str:
    """The ``ApplicationState`` of a single-job application whose job is in ``job_state`` (RESTARTING, SUSPENDED,
    RECONCILING: RUNNING)."""
    return _OF_JOB_STATE.get(job_state, "RUNNING")


def _times(j: JobSnapshot, now: int) -> tuple[int, int, int]:
    end = j.end_time_ms if application_state(j.state) in _TERMINAL and j.end_time_ms >= 0 else -1
    return j.start_time_ms, end, (end if end >= 0 else now) - j.start_time_ms


def applications_overview(jobs: Iterable[JobSnapshot]) -> dict[str, Any]:
    """``GET /applications/overview`` (``MultipleApplicationsDetails``)."""
    now = int(time.time() * 1000)
    out = []
    for j in jobs:
        start, end, duration = _times(j, now)
        out.append(
            {
                "id": j.job_id,
                "name": j.name,
                "start-time": start,
                "end-time": end,
                "duration": duration,
                "status": application_state(j.state),
                "jobs": {j.state: 1},
            }
        )
    return {"applications": out}


def application_details(j: JobSnapshot) -> dict[str, Any]:
    """``GET /applications/:applicationid`` (``ApplicationDetailsInfo``); timestamps 0 for states it never had."""
    now = int(time.time() * 1000)
    start, end, duration = _times(j, now)
    state = application_state(j.state)
    timestamps = dict.fromkeys(APPLICATION_STATES, 0)
    timestamps["CREATED"] = timestamps["RUNNING"] = j.start_time_ms
    if end >= 0:
        timestamps[state] = end
    return {
        "id": j.job_id,
        "name": j.name,
        "status": state,
        "start-time": start,
        "end-time": end,
        "duration": duration,
        "timestamps": timestamps,
        "jobs": jobs_overview([j])["jobs"],
    }


def application_exceptions(j: JobSnapshot) -> dict[str, Any]:
    """``GET /applications/:applicationid/exceptions`` (``ApplicationExceptionsInfoWithHistory``), newest first."""
    return {
        "exceptionHistory": {
            "entries": [
                {
                    "exceptionName": e.exception_name,
                    "stacktrace": e.stacktrace,
                    "timestamp": e.timestamp_ms,
                    "jobId": j.job_id,
                }
                for e in reversed(j.exceptions)
            ]
        }
    }
