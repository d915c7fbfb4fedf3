"""``SparkCluster``: the JobManager in the Spark driver's Python process, TaskManagers in Spark tasks.

As Flink's ResourceManager on YARN asks for containers and starts a TaskManager in each, this active
cluster asks Spark for TaskManagers: each is its own long-lived **single-task, non-barrier Spark job**
(``parallelize([launch], 1).mapPartitions(task_manager_partition).collect()``) submitted from a driver
thread in its own job group. Spark provides the executors and the placement; strom owns failover — a
TaskManager never fails its Spark task, a lost one (control connection closed, heartbeats stopped) is
replaced by a new job with a new launch token, and stale ones are fenced off by the ResourceManager. A Spark job
that ends before its TaskManager registered is a start failure (:class:`ActiveCluster`): replaced, and counted
against ``resourcemanager.start-worker.max-failure-rate``.

Releasing TaskManagers: tell each to shut down (its task then returns), wait, and cancel the job group
of any that has not ended (Spark interrupts the task and kills its Python worker).
Barrier stages are not used: a failed barrier stage is never retried, barrier stages refuse dynamic
allocation, and any failure would restart every TaskManager.
"""

from __future__ import annotations

import logging
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from strom.config import (
    CheckpointingOptions,
    ClusterOptions,
    Configuration,
    CoreOptions,
    SparkOptions,
    TaskManagerOptions,
)
from strom.deploy.active_cluster import ActiveCluster
from strom.deploy.spark.session import (
    check_session,
    get_or_create_session,
    is_local_master,
    python_of_task_managers,
    runs_on_this_machine,
)
from strom.deploy.spark.task_manager_job import SparkTaskManagerLaunch, task_manager_partition
from strom.exceptions import CheckpointError, ClusterError, ResourceError, TaskManagerStartError
from strom.runtime.taskexecutor.task_manager_configuration import TaskManagerConfiguration

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["SparkCluster", "registration_timeout_message"]

log = logging.getLogger(__name__)

_STOP_TIMEOUT = 15.0  # seconds TaskManagers get to end their Spark tasks before their job groups are cancelled


@dataclass
class _Launch:
    """One TaskManager's Spark job, as the driver thread that submitted it sees it."""

    tm_id: str
    job_group: str
    thread: threading.Thread | None = None
    outcome: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    #: the executors' Python cannot run a TaskManager at all (it lacks strom or cannot start): no use retrying
    python_unfit: bool = False
    ended: threading.Event = field(default_factory=threading.Event)


class SparkCluster(ActiveCluster):
    kind = "the Spark cluster"

    def __init__(
        self,
        config: Configuration,
        *,
        num_task_managers: int,
        spark: SparkSession | None = None,
        app_name: str = "strom",
    ) -> None:
        super().__init__(config, num_task_managers=num_task_managers)
        self.spark = spark
        self._app_name = app_name
        self._launches: dict[str, _Launch] = {}
        self._group_prefix = f"strom-{uuid.uuid4().hex[:8]}"
        #: the Python the TaskManagers run (spark.pyspark.python, PYSPARK_PYTHON, the driver's on a local master)
        self.python = ""
        #: the TaskManagers' log directory ("": each executor's working directory, see :meth:`_create_log_dir`)
        self.log_dir = ""
        self._temporary_log_dir = False
        self.session_started_at = 0.0  # monotonic, when the SparkSession was ready
        self.registered_at = 0.0  # monotonic, when every TaskManager had registered

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> SparkCluster:
        if self.spark is None:
            self.spark = get_or_create_session(self.config, self._app_name)
        else:
            check_session(self.spark)
        self.session_started_at = time.monotonic()
        self.python = python_of_task_managers(self.spark)
        if is_local_master(self.master):
            check_python(self.python)
        self._check_addresses()
        self._create_log_dir()
        super().start()
        self.registered_at = time.monotonic()
        return self

    @property
    def master(self) -> str:
        assert self.spark is not None
        return str(self.spark.sparkContext.master)

    def _check_addresses(self) -> None:
        """On a cluster manager the TaskManagers run on other hosts: loopback addresses cannot work there. They do
        when the executors are this machine: local mode, or a standalone master on loopback (only workers of this
        machine can register with it)."""
        if runs_on_this_machine(self.master):
            return
        c = self.config
        for option, hint in (
            (ClusterOptions.JOBMANAGER_HOST, "the driver's address the executors reach"),
            (TaskManagerOptions.HOST, "'auto' (each executor's own address)"),
        ):
            if c.get(option).startswith("127."):
                raise ClusterError(
                    f"expected {option.key} reachable from Spark executors on master '{self.master}'; "
                    f"got {c.get(option)} (loopback); hint: set {option.key} to {hint}"
                )

    def _default_checkpoint_dir(self) -> str:
        """Local mode or a master on loopback: a temporary directory (the executors are this machine). On a cluster
        a directory of the driver is no place for the TaskManagers' state: the user must name shared storage."""
        if not runs_on_this_machine(self.master):
            raise CheckpointError(
                f"expected {CheckpointingOptions.CHECKPOINTS_DIRECTORY.key} on storage that the driver and every "
                f"executor reach, for Spark master '{self.master}'; got none; hint: set it to an fsspec URL such "
                "as s3://bucket/checkpoints or hdfs://namenode/checkpoints (with s3fs / pyarrow installed)"
            )
        return super()._default_checkpoint_dir()

    # -- driver interface --------------------------------------------------------------------------
    def _task_manager_configuration(self, config: Configuration) -> TaskManagerConfiguration:
        """As a standalone TaskManager's: a Prometheus endpoint with ``metrics.reporter.prom.*`` (on its executor's
        host, a port of the range) and a log file ``taskmanager-<id>.log`` (:meth:`_create_log_dir`); its log
        records also go to the driver, the user's terminal."""
        return TaskManagerConfiguration.from_configuration(config)

    def _create_log_dir(self) -> None:
        """Executors on this machine: a directory per cluster, as the MiniCluster's (in ``env.log.dir``, else a
        temporary one removed with the cluster). On a cluster manager: ``env.log.dir`` on each executor's host, else
        ``strom-logs/`` in the executor's working directory (the Spark UI lists it beside the executor's own logs)."""
        configured = self.config.get(CoreOptions.FLINK_LOG_DIR)
        if not runs_on_this_machine(self.master):
            self.log_dir = configured
            return
        if configured:
            os.makedirs(configured, mode=0o700, exist_ok=True)
            prefix = f"spark-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-"
            self.log_dir = tempfile.mkdtemp(prefix=prefix, dir=configured)
        else:
            self.log_dir = tempfile.mkdtemp(prefix=f"strom-logs-{os.getpid()}-")
            self._temporary_log_dir = True
        log.info("the TaskManagers in Spark tasks log into %s", self.log_dir)

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self._temporary_log_dir and self.log_dir:
                shutil.rmtree(self.log_dir, ignore_errors=True)

    def _launch_task_manager(self, tm_id: str, launch_token: str) -> None:
        from pyspark import inheritable_thread_target

        assert self.dispatcher is not None and self.spark is not None
        spec = self.task_manager_configuration.spec(
            tm_id=tm_id,
            launch_token=launch_token,
            jm_address=self.dispatcher.address,
            forward_logs_level=min(self.log_level, logging.getLogger("strom").getEffectiveLevel()),
        )
        launch = SparkTaskManagerLaunch(
            spec=replace(spec, log_dir=self.log_dir),
            secret_hex=self.secret.hex(),
            python_path=tuple(sys.path),
            log_in_working_dir=not self.log_dir,
        )
        record = _Launch(tm_id=tm_id, job_group=f"{self._group_prefix}-{tm_id}")
        thread = threading.Thread(
            target=inheritable_thread_target(self.spark)(self._run_spark_job),
            args=(record, launch),
            name=f"strom-spark-{tm_id}",
            daemon=True,
        )
        record.thread = thread
        with self._lock:
            if self._closed:
                return
            self._launches[tm_id] = record
        thread.start()

    def _run_spark_job(self, record: _Launch, launch: SparkTaskManagerLaunch) -> None:
        """Driver thread: submit TaskManager ``record.tm_id``'s Spark job and wait for its end."""
        assert self.spark is not None
        sc = self.spark.sparkContext
        try:
            sc.setJobGroup(record.job_group, f"strom TaskManager {record.tm_id}", interruptOnCancel=True)
            rdd = sc.parallelize([launch], 1)
            cpus = self.config.get(SparkOptions.TASK_MANAGER_CPUS)
            if cpus > 0 and not is_local_master(self.master):
                from pyspark.resource import ResourceProfileBuilder, TaskResourceRequests

                profile = ResourceProfileBuilder().require(TaskResourceRequests().cpus(cpus)).build
                rdd = rdd.withResources(profile)
            outcomes = rdd.mapPartitions(task_manager_partition).collect()
            record.outcome = outcomes[0] if outcomes else {}
            if record.outcome.get("status") == "failed":
                record.error = str(record.outcome.get("error", "unknown error"))
        except Exception as exc:  # the Spark job failed or was cancelled
            text = str(exc).strip()
            record.error = _spark_error_summary(text) or type(exc).__name__
            record.python_unfit = python_cannot_host(text)
        finally:
            record.ended.set()
            self._worker_terminated(
                record.tm_id, f"ended in its Spark job (group {record.job_group}): {record.error or 'it returned'}"
            )
        if record.error and not self._closed:
            level = logging.DEBUG if "stale" in record.error else logging.WARNING
            log.log(level, "TaskManager %s ended in its Spark task: %s", record.tm_id, record.error)

    def _on_worker_terminated(self, tm_id: str, diagnostics: str) -> None:
        """As the base class; but a TaskManager whose Python cannot import strom (or cannot start) fails the start at
        once: every other would fail the same way (a wrong PYSPARK_PYTHON cost 10 attempts and their traces)."""
        with self._lock:
            record = self._launches.get(tm_id)
            fatal = record is not None and record.python_unfit and tm_id not in self._registered_pids
        if not fatal or self._closed or self.dispatcher is None or self.dispatcher.resource_manager.shutting_down:
            super()._on_worker_terminated(tm_id, diagnostics)
            return
        assert record is not None
        rm = self.dispatcher.resource_manager
        rm.forget_task_manager(tm_id)
        self._missing += 1
        self._paused_until = math.inf  # no TaskManager starts any more: the job fails, the cluster closes
        rm.fail_slot_requests(TaskManagerStartError(unfit_python_message(self.python, record.error, tm_id)))

    def _start_failure_hint(self) -> str:
        return (
            "the executors need strom and its dependencies (spark.pyspark.python / PYSPARK_PYTHON, or ship them as in "
            "docs/deploy-spark.md); the executors' logs (Spark UI) tell more"
        )

    def _wait_for_registration(self) -> None:
        """As the base class; when the TaskManagers do not all register in time, say how many still wait for a
        Spark task slot (on a cluster the usual cause: the application has fewer free cores than TaskManagers)."""
        try:
            super()._wait_for_registration()
        except TaskManagerStartError:
            raise
        except ResourceError as exc:
            with self._lock:
                registered = len(self._registered_pids)
            conf = self.spark.sparkContext.getConf() if self.spark is not None else None
            raise ResourceError(
                registration_timeout_message(
                    master=self.master,
                    expected=self.num_task_managers,
                    registered=registered,
                    waiting=self._task_managers_waiting_for_a_slot(),
                    settings={k: conf.get(k) for k in _CAPACITY_SETTINGS} if conf is not None else {},
                    error=str(exc),
                )
            ) from None

    def _task_managers_waiting_for_a_slot(self) -> int:
        """Unregistered TaskManagers whose Spark job runs no task yet (Spark's status tracker)."""
        assert self.spark is not None
        tracker = self.spark.sparkContext.statusTracker()
        with self._lock:
            unregistered = [r for r in self._launches.values() if r.tm_id not in self._registered_pids]
        waiting = 0
        for record in unregistered:
            running = 0
            for job_id in tracker.getJobIdsForGroup(record.job_group):
                job = tracker.getJobInfo(job_id)
                for stage_id in job.stageIds if job is not None else []:
                    stage = tracker.getStageInfo(stage_id)
                    running += stage.numActiveTasks if stage is not None else 0
            if running == 0 and not record.ended.is_set():
                waiting += 1
        return waiting

    def _stop_task_managers(self) -> None:
        """Tell every TaskManager to stop, wait for their Spark jobs, cancel the job groups of the rest — at once for
        a TaskManager that never registered (its task may still wait for a Spark task slot: nothing to tell)."""
        if self.dispatcher is not None and self._loop is not None and self._loop.is_running():
            try:
                self.run(self._shutdown_task_managers(), timeout=10)
            except Exception as exc:
                log.debug("asking the TaskManagers to shut down: %s", exc)
        with self._lock:
            launches = list(self._launches.values())
            unregistered = [r for r in launches if r.tm_id not in self._registered_pids]
        if self.spark is not None:
            for record in unregistered:
                if not record.ended.is_set():
                    self.spark.sparkContext.cancelJobGroup(record.job_group)
        deadline = time.monotonic() + _STOP_TIMEOUT
        for record in launches:
            record.ended.wait(max(0.0, deadline - time.monotonic()))
        if self.spark is not None:
            sc = self.spark.sparkContext
            for record in launches:
                if not record.ended.is_set():
                    log.warning("TaskManager %s did not stop; cancelling its Spark job group", record.tm_id)
                    sc.cancelJobGroup(record.job_group)
        for record in launches:
            if record.thread is not None:
                record.thread.join(timeout=10)

    async def _shutdown_task_managers(self) -> None:
        import asyncio

        assert self.dispatcher is not None
        rm = self.dispatcher.resource_manager
        calls = [gw.call("shutdown", timeout=5.0) for gw in list(rm.gateways.values())]
        await asyncio.gather(*calls, return_exceptions=True)

    # -- introspection -----------------------------------------------------------------------------
    def task_manager_outcomes(self) -> list[dict[str, Any]]:
        """What each TaskManager's Spark task returned (tm id, pid, attempt, status, error), in launch order."""
        with self._lock:
            return [dict(r.outcome) or {"tm_id": r.tm_id, "error": r.error} for r in self._launches.values()]

    def spark_job_groups(self) -> list[str]:
        with self._lock:
            return [r.job_group for r in self._launches.values()]


_CAPACITY_SETTINGS = ("spark.cores.max", "spark.executor.cores", "spark.task.cpus", "spark.dynamicAllocation.enabled")


def registration_timeout_message(
    *, master: str, expected: int, registered: int, waiting: int, settings: dict[str, str | None], error: str
) -> str:
    """The error when TaskManagers did not register in time: when some still wait for a Spark task slot, the
    capacity settings that decide how many slots the application has, else the original ``error``."""
    if waiting == 0:
        return error
    named = ", ".join(f"{k}={v}" for k, v in settings.items() if v is not None) or "Spark's defaults"
    return (
        f"expected {expected} TaskManagers to start in Spark tasks on '{master}'; got {registered} registered and "
        f"{waiting} still waiting for a Spark task slot ({named}); hint: each TaskManager holds one task slot "
        "(spark.task.cpus cores of an executor) for the job's life: give the application more cores "
        "(spark.cores.max, spark.executor.cores, free workers — another application may hold them) or use fewer "
        "TaskManagers (spark.taskmanagers, more taskmanager.numberOfTaskSlots / strom run --slots)"
    )


_UNFIT_PYTHON = re.compile(
    r"(ModuleNotFoundError|ImportError): .*|Cannot run program|error=2, No such file|PYTHON_VERSION_MISMATCH"
)


def python_cannot_host(spark_error: str) -> bool:
    """A Spark task's error says its Python cannot run a TaskManager: the function's modules do not import there
    (strom, its dependencies), the interpreter does not exist, or its version differs from the driver's."""
    return _UNFIT_PYTHON.search(spark_error) is not None


def unfit_python_message(python: str, error: str, where: str) -> str:
    return (
        f"expected the TaskManagers' Python to import strom; got {python or 'python3'} "
        f"(spark.pyspark.python / PYSPARK_PYTHON) failing in {where}: {error}; hint: point PYSPARK_PYTHON (or "
        f"spark.pyspark.python) at a Python with strom and its dependencies — this driver runs {sys.executable} — "
        "or, on a local master, unset it (the driver's own is used)"
    )


def check_python(python: str) -> None:
    """On a local master the executors are this process's JVM, started with its environment: a TaskManager's Python
    other than the driver's must import strom here too. Checked once, before any Spark task fails on it."""
    if not python or os.path.realpath(shutil.which(python) or python) == os.path.realpath(sys.executable):
        return
    try:
        proc = subprocess.run(
            [python, "-c", "import strom.deploy.spark.task_manager_job"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        error = f"{type(exc).__name__}: {exc}"
    else:
        if proc.returncode == 0:
            return
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        error = lines[-1].strip() if lines else f"exit status {proc.returncode}"
    raise TaskManagerStartError(unfit_python_message(python, error, "a check on this machine"))


def _spark_error_summary(text: str) -> str:
    """The Python error inside a Py4J/Spark error text (its last 'Error:' line), else its first line."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if "Error:" in ln and not ln.startswith("at "):
            return ln[:500]
    return lines[0][:500] if lines else ""
