"""``ExecutionState`` of a task attempt and ``JobStatus`` of a job, each with its one transition table.

CREATED → SCHEDULED → DEPLOYING → INITIALIZING → RUNNING → FINISHED
                any non-terminal → CANCELING → CANCELED;  any non-terminal → FAILED
"""

from __future__ import annotations

import enum

__all__ = ["ExecutionState", "JobStatus", "check_job_transition", "check_transition"]


class ExecutionState(enum.Enum):
    CREATED = "CREATED"
    SCHEDULED = "SCHEDULED"
    DEPLOYING = "DEPLOYING"
    INITIALIZING = "INITIALIZING"
    RUNNING = "RUNNING"
    FINISHED = "FINISHED"
    CANCELING = "CANCELING"
    CANCELED = "CANCELED"
    FAILED = "FAILED"

    @property
    def is_terminal(self) -> bool:
        return self in (ExecutionState.FINISHED, ExecutionState.CANCELED, ExecutionState.FAILED)


_S = ExecutionState
_TRANSITIONS: dict[ExecutionState, frozenset[ExecutionState]] = {
    _S.CREATED: frozenset({_S.SCHEDULED, _S.DEPLOYING, _S.CANCELING, _S.CANCELED, _S.FAILED}),
    _S.SCHEDULED: frozenset({_S.DEPLOYING, _S.CANCELING, _S.CANCELED, _S.FAILED}),
    _S.DEPLOYING: frozenset({_S.INITIALIZING, _S.RUNNING, _S.CANCELING, _S.CANCELED, _S.FAILED}),
    _S.INITIALIZING: frozenset({_S.RUNNING, _S.FINISHED, _S.CANCELING, _S.CANCELED, _S.FAILED}),
    _S.RUNNING: frozenset({_S.FINISHED, _S.CANCELING, _S.CANCELED, _S.FAILED}),
    _S.CANCELING: frozenset({_S.CANCELED, _S.FAILED}),
    _S.FINISHED: frozenset(),
    _S.CANCELED: frozenset(),
    _S.FAILED: frozenset(),
}


def check_transition(current: ExecutionState, target: ExecutionState) -> bool:
    """Whether ``current → target`` is a legal step of a task attempt."""
    return target in _TRANSITIONS[current]


class JobStatus(enum.Enum):
    INITIALIZING = "INITIALIZING"
    CREATED = "CREATED"
    RUNNING = "RUNNING"
    FAILING = "FAILING"
    FAILED = "FAILED"
    CANCELLING = "CANCELLING"
    CANCELED = "CANCELED"
    FINISHED = "FINISHED"
    RESTARTING = "RESTARTING"

    @property
    def is_globally_terminal(self) -> bool:
        return self in (JobStatus.FAILED, JobStatus.CANCELED, JobStatus.FINISHED)


_J = JobStatus
_JOB_TRANSITIONS: dict[JobStatus, frozenset[JobStatus]] = {
    _J.INITIALIZING: frozenset({_J.CREATED, _J.FAILED, _J.CANCELED}),
    _J.CREATED: frozenset({_J.RUNNING, _J.FAILING, _J.FAILED, _J.CANCELLING, _J.CANCELED}),
    _J.RUNNING: frozenset({_J.FINISHED, _J.FAILING, _J.CANCELLING, _J.RESTARTING}),
    _J.FAILING: frozenset({_J.FAILED, _J.RESTARTING, _J.CANCELLING}),
    _J.RESTARTING: frozenset({_J.RUNNING, _J.CREATED, _J.FAILED, _J.CANCELLING}),
    _J.CANCELLING: frozenset({_J.CANCELED, _J.FAILED}),
    _J.FINISHED: frozenset(),
    _J.FAILED: frozenset(),
    _J.CANCELED: frozenset(),
}


def check_job_transition(current: JobStatus, target: JobStatus) -> bool:
    return target in _JOB_TRANSITIONS[current]
