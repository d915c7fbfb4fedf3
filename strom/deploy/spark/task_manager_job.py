"""The executor side: one TaskManager hosted by one Spark task (Flink's ``YarnTaskExecutorRunner``).

:func:`task_manager_partition` is the ``mapPartitions`` function of a TaskManager's single-task Spark job.
It runs the TaskManager in the Spark Python worker until the JobManager tells it to stop or is lost, and
then *returns normally* whatever happened: a TaskManager that raised would make Spark retry the task,
and failover belongs to strom (the JobManager starts a replacement with a new launch token; a retry that
Spark starts anyway — after its worker was killed — registers with a stale token, is refused and returns
at once). Nothing here keeps module-level state: Spark may reuse the Python worker for other tasks.
"""

from __future__ import annotations

import asyncio
import os
import sys
import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from strom.deploy.spark.stdout_forwarder import StdoutForwarder
from strom.runtime.taskexecutor.runner import TaskManagerSpec, run_task_manager

__all__ = ["SparkTaskManagerLaunch", "task_manager_partition"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SparkTaskManagerLaunch:
    """The one element of a TaskManager's Spark job."""

    spec: TaskManagerSpec
    #: the cluster secret (hex); it travels inside Spark's task, so enable spark.authenticate on shared clusters
    secret_hex: str
    #: the driver's ``sys.path``: entries that exist on the executor are added while the TaskManager runs
    #: (user functions pickled by reference import from there, as the MiniCluster's PYTHONPATH does)
    python_path: tuple[str, ...] = ()
    #: no log directory was configured for executors of other machines: ``strom-logs/`` in the executor's working
    #: directory
    log_in_working_dir: bool = False


def task_manager_partition(launches: Iterable[SparkTaskManagerLaunch]) -> Iterator[dict[str, Any]]:
    for launch in launches:
        yield host_task_manager(launch)


def host_task_manager(launch: SparkTaskManagerLaunch) -> dict[str, Any]:
    """Run one TaskManager to its end in this Spark Python worker; a summary dict, never an exception."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    outcome: dict[str, Any] = {
        "tm_id": launch.spec.tm_id,
        "pid": os.getpid(),
        "attempt": ctx.attemptNumber() if ctx is not None else -1,
        "status": "stopped",
    }
    added = [p for p in launch.python_path if p and p not in sys.path and os.path.isdir(p)]
    sys.path.extend(added)
    spec = launch.spec
    if launch.log_in_working_dir:
        spec = replace(spec, log_dir=os.path.join(os.getcwd(), "strom-logs"))
    stdout = StdoutForwarder()  # print() of the tasks goes to the driver's standard output, as on the MiniCluster
    stdout.install()
    try:
        asyncio.run(run_task_manager(spec, bytes.fromhex(launch.secret_hex), started=stdout.connect))
    except BaseException as exc:  # strom owns failover: report, never let Spark retry the task
        outcome["status"] = "failed"
        outcome["error"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        outcome["traceback"] = "".join(traceback.format_exception(exc))
    finally:
        stdout.close()
        for p in added:
            if p in sys.path:
                sys.path.remove(p)
    return outcome
