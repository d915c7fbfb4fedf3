"""``GET /jobs/:jobid/exceptions``: an entry of a region failover lists the other failed subtasks of the restarted
region as its ``concurrentExceptions`` (Flink's ``ExceptionInfo`` shape)."""

from __future__ import annotations

from test_messages import job

from strom.web.accessor import ExceptionSnapshot
from strom.web.job_messages import job_exceptions


def test_concurrent_exceptions_have_the_shape_of_the_root() -> None:
    other = ExceptionSnapshot(
        timestamp_ms=5,
        exception_name="JobFailure",
        stacktrace="lost",
        task_name="Map (2/4)",
        task_manager_id="tm-2",
        endpoint="h:2",
    )
    root = ExceptionSnapshot(
        timestamp_ms=5,
        exception_name="JobFailure",
        stacktrace="lost",
        task_name="Source (2/4)",
        task_manager_id="tm-2",
        endpoint="h:2",
        concurrent=(other,),
    )
    (entry,) = job_exceptions(job(exceptions=(root,)))["exceptionHistory"]["entries"]
    assert entry["taskName"] == "Source (2/4)"
    (concurrent,) = entry["concurrentExceptions"]
    assert concurrent == {
        "exceptionName": "JobFailure",
        "stacktrace": "lost",
        "timestamp": 5,
        "failureLabels": {},
        "taskName": "Map (2/4)",
        "endpoint": "h:2",
        "taskManagerId": "tm-2",
    }
