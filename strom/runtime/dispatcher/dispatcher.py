"""``Dispatcher``: the JobManager's front door and its RPC endpoint.

It accepts jobs (one :class:`JobMaster` each), answers for their status and results, and exposes
the RPC methods TaskManagers call — registration and heartbeats for the ResourceManager, task state
updates and operator events for the JobMasters.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from strom.exceptions import RpcError
from strom.graph.job_graph import JobGraph
from strom.runtime.checkpoint.checkpoint_stats_tracker import CheckpointStatsSnapshot
from strom.runtime.checkpoint.storage import verify_state_files
from strom.runtime.deployment import TaskExecutionState
from strom.runtime.dispatcher.job_logs import JobLogBuffers
from strom.runtime.jobmaster.jobmaster import JobMaster, JobResult
from strom.runtime.resourcemanager.resource_manager import ResourceManager
from strom.runtime.rpc import RpcServer, rpc_method
from strom.runtime.task_group import AsyncTaskGroup

if TYPE_CHECKING:
    from strom.runtime.net.internal_ssl import InternalSslContexts

#: execution attempt id -> (job id, metric name -> value)
TaskManagerMetricsReport = dict[str, tuple[str, dict[str, float]]]

__all__ = ["Dispatcher"]

#: seconds the JobMasters' clean-up may take when the Dispatcher closes, before their tasks are cancelled
JOB_MASTER_CLOSE_GRACE = 5.0

log = logging.getLogger(__name__)
_tm_log = logging.getLogger("strom.taskmanager")


def _write_stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


class Dispatcher:
    def __init__(
        self,
        *,
        secret: bytes,
        host: str,
        port: int = 0,
        heartbeat_interval: float,
        heartbeat_timeout: float,
        slot_timeout: float,
        default_checkpoint_dir: Callable[[], str] | None = None,
        ssl_contexts: InternalSslContexts | None = None,
    ) -> None:
        self.resource_manager = ResourceManager(
            secret=secret,
            heartbeat_interval=heartbeat_interval,
            heartbeat_timeout=heartbeat_timeout,
            ssl_context=ssl_contexts.client if ssl_contexts is not None else None,
        )
        self.resource_manager.listeners.append(self._task_manager_lost)
        self.rpc_server = RpcServer(
            self,
            secret=secret,
            host=host,
            port=port,
            name="jobmanager",
            ssl_context=ssl_contexts.server if ssl_contexts is not None else None,
        )
        self.job_masters: dict[str, JobMaster] = {}
        self.slot_timeout = slot_timeout
        self.default_checkpoint_dir = default_checkpoint_dir
        #: tm id -> wall-clock time (ms) of its latest heartbeat, for the REST API
        self.task_manager_heartbeats: dict[str, int] = {}
        #: HA (``high-availability.type: file``): the leadership term whose stores jobs are written to
        #: (:class:`strom.runtime.highavailability.services.LeaderSession`); None without HA
        self.ha: Any = None
        #: HA: a new leader recovering the jobs of the JobGraphStore; an unknown job id may be one of them (the REST
        #: API answers 503 — retry — instead of 404)
        self.recovering = False
        #: HA: results of jobs that ended under an earlier leader (its JobResultStore), for execution-result
        self.recovered_results: dict[str, JobResult] = {}
        self._starting = AsyncTaskGroup("Dispatcher")  # JobMaster starts under way
        #: records TaskManagers forwarded, per job (``GET /jobs/:jobid/log-records``, ``strom run``'s log lines)
        self.job_logs = JobLogBuffers()
        #: re-log forwarded records here under ``strom.taskmanager`` (a Spark-hosted TaskManager's only way to the
        #: user); a standalone JobManager keeps them in :attr:`job_logs` only (its TaskManagers have log files)
        self.relog_task_manager_logs = True

    async def start(self) -> None:
        await self.rpc_server.start()
        self.resource_manager.start()

    def prepare_shutdown(self) -> None:
        """The cluster is stopping: cancel running jobs; TaskManagers leaving now are not failures."""
        self.resource_manager.shutting_down = True
        for jm in self.job_masters.values():
            jm.cancel()

    async def close(self) -> None:
        self.prepare_shutdown()
        self._starting.close()
        self._starting.cancel()  # still waiting for slots: nothing to start any more
        await self.resource_manager.close()
        await self.rpc_server.close()
        await self._starting.stop()
        # the clean-up each job's end started (releasing slots, checkpoint storage) finishes within the grace
        # period; then every task of every JobMaster is cancelled
        await asyncio.gather(*(jm.close(grace=JOB_MASTER_CLOSE_GRACE) for jm in self.job_masters.values()))

    @property
    def address(self) -> tuple[str, int]:
        return self.rpc_server.address

    # -- jobs (client side, in process or through a client gateway) --------------------------------
    async def submit_job(self, job_graph: JobGraph, *, wait_started: bool = True) -> str:
        """Accept the job (persisted first, with HA) and start its JobMaster; ``wait_started``: return once its
        tasks are deployed (the MiniCluster's ``execute_async``), else at once — as Flink's Dispatcher acknowledges
        a REST submission — while scheduling waits for slots, up to the slot request timeout."""
        if job_graph.job_id in self.job_masters:
            raise RpcError(f"job {job_graph.job_id} was already submitted")
        jm = JobMaster(
            job_graph,
            self.resource_manager,
            slot_timeout=self.slot_timeout,
            default_checkpoint_dir=self.default_checkpoint_dir,
        )
        if jm.restore_from is not None:
            # a savepoint or retained checkpoint the user names: every state file is checked before any task is
            # deployed (off the loop: it reads the whole state once); a damaged one fails the submission
            checked = await asyncio.to_thread(verify_state_files, jm.restore_from)
            log.info("job %s: %d bytes of state to restore verified", job_graph.job_id, checked)
        if self.ha is not None:  # into the JobGraphStore (fenced) before it runs: a new leader recovers it
            await self.ha.job_submitted(job_graph, jm)
        self.job_masters[job_graph.job_id] = jm
        if wait_started:
            await jm.start()
            return job_graph.job_id
        starting = self._starting.create_task(jm.start(), name=f"start of job {job_graph.job_id}", awaited=True)
        starting.add_done_callback(functools.partial(self._started, jm))
        return job_graph.job_id

    def _started(self, jm: JobMaster, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            log.error("job %s could not start: %s", jm.job_id, error)
            jm.fail_job(f"the job could not start: {type(error).__name__}: {error}", error)

    def job_master(self, job_id: str) -> JobMaster:
        jm = self.job_masters.get(job_id)
        if jm is None:
            raise RpcError(f"expected a known job id; got {job_id}")
        return jm

    async def request_job_result(self, job_id: str) -> JobResult:
        return await self.job_master(job_id).result

    def cancel_job(self, job_id: str) -> None:
        self.job_master(job_id).cancel()

    # -- RPC from TaskManagers ---------------------------------------------------------------------
    @rpc_method
    async def register_task_executor(
        self,
        tm_id: str,
        rpc_address: tuple[str, int],
        data_address: tuple[str, int],
        num_slots: int,
        pid: int,
        launch_token: str,
        resource_id: str = "",
    ) -> None:
        await self.resource_manager.register_task_executor(
            tm_id, rpc_address, data_address, num_slots, pid, launch_token, resource_id
        )

    @rpc_method
    def request_task_manager_registration(self, proposed_id: str = "") -> tuple[str, str]:
        """A standalone TaskManager (authenticated with the cluster secret) asks to join: its id and launch token."""
        return self.resource_manager.accept_task_manager(proposed_id)

    @rpc_method
    def log_from_task_manager(self, tm_id: str, records: list[tuple[Any, ...]]) -> None:
        """Log lines a TaskManager forwards: (level, logger, message[, job id, created]). Those of a job's task
        thread are kept in :attr:`job_logs`; with :attr:`relog_task_manager_logs` every line is re-logged here
        under ``strom.taskmanager`` with the TaskManager's id (one hosted by Spark has no terminal of its own)."""
        for level, name, message, *tagged in records:
            if tagged and tagged[0]:
                created = tagged[1] if len(tagged) > 1 else time.time()
                self.job_logs.add(tagged[0], tm_id, int(created * 1000), level, name, message)
            if self.relog_task_manager_logs:
                _tm_log.log(level, "[%s] %s: %s", tm_id, name, message)

    @rpc_method
    async def stdout_from_task_manager(self, tm_id: str, text: str) -> None:
        """What a Spark-hosted TaskManager's tasks wrote to standard output, for this process's standard output
        (:mod:`strom.deploy.spark.stdout_forwarder`); answered once written, so a slow reader holds the sinks back."""
        await asyncio.to_thread(_write_stdout, text)

    @rpc_method
    def heartbeat_from_task_manager(self, tm_id: str, report: TaskManagerMetricsReport | None = None) -> None:
        """A TaskManager is alive; its heartbeat carries the latest metrics of its tasks."""
        self.resource_manager.heartbeat_from_task_manager(tm_id)
        self.task_manager_heartbeats[tm_id] = int(time.time() * 1000)
        for attempt_id, (job_id, metrics) in (report or {}).items():
            jm = self.job_masters.get(job_id)
            if jm is not None:
                jm.update_task_metrics(attempt_id, metrics)

    async def request_task_metrics(self, job_id: str) -> list[dict[str, Any]]:
        return self.job_master(job_id).task_metrics_snapshot()

    async def request_checkpoint_statistics(self, job_id: str) -> CheckpointStatsSnapshot:
        return self.job_master(job_id).checkpoint_statistics()

    async def trigger_savepoint(self, job_id: str, target_dir: str) -> str:
        return await self.job_master(job_id).trigger_savepoint(target_dir)

    async def stop_with_savepoint(self, job_id: str, target_dir: str) -> str:
        return await self.job_master(job_id).stop_with_savepoint(target_dir)

    @rpc_method
    def update_task_execution_state(self, state: TaskExecutionState) -> None:
        jm = self.job_masters.get(state.job_id)
        if jm is not None:
            jm.update_task_execution_state(state)

    @rpc_method
    async def send_operator_events(self, job_id: str, attempt_id: str, events: list[Any]) -> None:
        """Events of one attempt's operators to their coordinators, in order."""
        await self.job_master(job_id).send_operator_events(attempt_id, events)

    @rpc_method
    def acknowledge_checkpoint(
        self, job_id: str, attempt_id: str, checkpoint_id: int, states: dict[str, Any], stats: dict[str, float]
    ) -> None:
        jm = self.job_masters.get(job_id)
        if jm is not None:
            jm.acknowledge_checkpoint(attempt_id, checkpoint_id, states, stats)

    @rpc_method
    def decline_checkpoint(
        self, job_id: str, attempt_id: str, checkpoint_id: int, reason: str, counts: bool = True
    ) -> None:
        jm = self.job_masters.get(job_id)
        if jm is not None:
            jm.decline_checkpoint(attempt_id, checkpoint_id, reason, counts)

    def _task_manager_lost(self, tm_id: str, message: str) -> None:
        for jm in self.job_masters.values():
            jm.task_manager_lost(tm_id, message)
