"""``TaskExecutor``: the TaskManager's RPC endpoint (Flink's ``TaskExecutor``).

It registers with the ResourceManager, hands its slots to jobs (``request_slot``), starts tasks
(``submit_task`` → :class:`Task` thread), cancels them, reports their state changes to the JobMaster
and exchanges heartbeats with the JobManager. All of its state is touched on the TaskManager's event
loop; task threads reach it only through :meth:`_report_threadsafe` and the operator event gateway.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import inspect
import logging
import os
import shutil
import threading
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from strom.exceptions import ClusterError, TaskCancelledError
from strom.runtime.deployment import TaskDeploymentDescriptor, TaskExecutionState
from strom.runtime.execution_state import ExecutionState
from strom.runtime.metrics.process_metrics import status_metrics
from strom.runtime.metrics.prometheus import PrometheusReporter, PrometheusSettings, Reading
from strom.runtime.network.connection_manager import NettyConnectionManager
from strom.runtime.network.partition_manager import ResultPartitionManager
from strom.runtime.network.result_partition import ResultPartitionID
from strom.runtime.network.sort_merge_result_partition import shuffle_directory, task_manager_shuffle_root
from strom.runtime.operators.coordination import OperatorEventDelivery, TriggerCheckpointMessage
from strom.runtime.python_dependency_info import PYTHON_DEPENDENCIES_KEY, PythonDependencyInfo
from strom.runtime.python_environment_manager import PythonEnvironmentManager
from strom.runtime.python_files import PYTHON_FILES_KEY, PythonFilesCache
from strom.runtime.rpc import HeartbeatMonitor, HeartbeatSender, RpcClient, RpcServer, SystemClock, rpc_method
from strom.runtime.state.task_local_state_store import discard_job
from strom.runtime.task_group import AsyncTaskGroup
from strom.runtime.taskexecutor.garbage_collection import StreamingGarbageCollection
from strom.runtime.taskexecutor.hardware_description import HardwareDescription
from strom.runtime.taskexecutor.log_files import TaskManagerLogFiles
from strom.runtime.taskexecutor.log_forwarder import LogForwarder
from strom.runtime.taskexecutor.slot_table import TaskSlotTable
from strom.runtime.taskexecutor.task import Task
from strom.runtime.taskexecutor.thread_switching import DEFAULT_SWITCH_INTERVAL_MS, TaskThreadSwitching
from strom.runtime.thread_info import sample_stacks, thread_dump

if TYPE_CHECKING:
    from strom.runtime.net.internal_ssl import InternalSslContexts

__all__ = ["TaskExecutor"]

log = logging.getLogger(__name__)

JOB_MANAGER = "jobmanager"

#: what a JobManager may call on a TaskManager through :meth:`TaskExecutor.fenced_call` (HA)
_FENCED_METHODS = frozenset(
    {
        "heartbeat_from_job_manager",
        "request_slot",
        "submit_task",
        "deliver_to_task",
        "notify_checkpoint_complete",
        "notify_checkpoint_aborted",
        "cancel_task",
        "stop_task",
        "release_job",
        "shutdown",
        "request_metrics_url",
        "request_log_list",  # read-only: the REST API's TaskManager log files
        "request_file_chunk",
        "request_status_metrics",  # read-only: the REST API's TaskManager metrics, thread dump and flame graph
        "request_thread_dump",
        "request_thread_info_samples",
    }
)
#: calls that deploy or commit: checked against a freshly read lease, not only the registered token
_COMMITTING_METHODS = frozenset({"submit_task", "notify_checkpoint_complete", "request_slot"})


class _OperatorEventGateway:
    """Task thread → JobMaster (Flink's ``TaskOperatorEventGateway``): the events of one attempt, in the order its
    operators sent them. They queue here and one asyncio task on the TaskManager's loop sends what has queued up
    as one ``send_operator_events`` call, awaiting it before the next; a sender that waits (the collect sink)
    blocks until its event was accepted. The drain task is the executor's, cancelled when it closes."""

    def __init__(self, executor: TaskExecutor, job_id: str, attempt_id: str) -> None:
        self.executor = executor
        self.job_id = job_id
        self.attempt_id = attempt_id
        self._lock = threading.Lock()
        self._queue: list[tuple[str, object, Future[None] | None]] = []
        self._draining = False

    def send_operator_event_to_coordinator(self, operator_id: str, event: object, *, wait: bool) -> None:
        ex = self.executor
        loop = ex.loop
        if loop is None or loop.is_closed() or ex.jm is None:
            raise TaskCancelledError("the TaskManager is shutting down")
        fut: Future[None] | None = Future() if wait else None
        with self._lock:
            self._queue.append((operator_id, event, fut))
            start, self._draining = not self._draining, True
        if start:
            try:
                loop.call_soon_threadsafe(self._start_drain)
            except RuntimeError:  # the loop closed
                raise TaskCancelledError("the TaskManager is shutting down") from None
        if fut is None:
            return
        while True:
            try:
                fut.result(timeout=0.5)
                return
            except TimeoutError:
                task = ex.tasks.get(self.attempt_id)
                if task is None or task.state is not ExecutionState.RUNNING:
                    fut.cancel()
                    raise TaskCancelledError("task stopped while sending to the JobMaster") from None

    def _start_drain(self) -> None:
        self.executor.spawn(self._drain(), f"operator events of {self.attempt_id}")

    async def _drain(self) -> None:
        jm = self.executor.jm
        while True:
            with self._lock:
                batch, self._queue = self._queue, []
                if not batch:
                    self._draining = False
                    return
            error: BaseException | None = None
            try:
                if jm is None:
                    raise TaskCancelledError("no JobManager connection")
                events = [OperatorEventDelivery(operator_id=op, event=e) for op, e, _ in batch]
                await jm.call("send_operator_events", self.job_id, self.attempt_id, events, timeout=None)
            except asyncio.CancelledError:
                _settle(batch, TaskCancelledError("the TaskManager is shutting down"))
                raise
            except Exception as exc:
                log.log(
                    logging.DEBUG if self.executor._closed else logging.WARNING,
                    "operator events of %s to the JobMaster failed: %s",
                    self.attempt_id,
                    exc,
                )
                error = exc
            _settle(batch, error)


def _settle(batch: list[tuple[str, object, Future[None] | None]], error: BaseException | None) -> None:
    for _, _, fut in batch:
        if fut is not None and not fut.done():
            if error is None:
                fut.set_result(None)
            else:
                fut.set_exception(error)


class _CheckpointResponder:
    """Task threads → JobMaster: acknowledge or decline a checkpoint (Flink's ``RpcCheckpointResponder``).

    Fire and forget: the task never waits for the JobMaster; a lost message makes the checkpoint expire."""

    def __init__(self, executor: TaskExecutor, job_id: str, attempt_id: str) -> None:
        self.executor = executor
        self.job_id = job_id
        self.attempt_id = attempt_id

    def acknowledge(self, checkpoint_id: int, states: dict[str, Any], stats: dict[str, float]) -> None:
        self.executor.call_job_master_threadsafe(
            "acknowledge_checkpoint", self.job_id, self.attempt_id, checkpoint_id, states, stats
        )

    def decline(self, checkpoint_id: int, reason: str, counts: bool = True) -> None:
        self.executor.call_job_master_threadsafe(
            "decline_checkpoint", self.job_id, self.attempt_id, checkpoint_id, reason, counts
        )


class TaskExecutor:
    def __init__(
        self,
        *,
        tm_id: str,
        secret: bytes,
        host: str,
        num_slots: int,
        jm_address: tuple[str, int],
        heartbeat_interval: float,
        heartbeat_timeout: float,
        cancellation_timeout: float,
        max_frame_bytes: int,
        launch_token: str,
        forward_logs_level: int | None = None,
        forward_job_logs_only: bool = False,
        switch_interval_ms: float = DEFAULT_SWITCH_INTERVAL_MS,
        prometheus: PrometheusSettings | None = None,
        log_files: TaskManagerLogFiles | None = None,
        owns_process: bool = True,
        ssl_contexts: InternalSslContexts | None = None,
        resource_id: str = "",
        local_state_root: str = "",
    ) -> None:
        self.tm_id = tm_id
        #: internal TLS (``security.ssl.internal.*``): its RPC server, data connections and JobManager connection
        self.ssl_contexts = ssl_contexts
        #: Flink's ``ResourceID``: kept by a process restarted in this one's place (its working directory's name)
        self.resource_id = resource_id or tm_id
        #: the root of the local copies of checkpointed state (local recovery; "": none kept)
        self.local_state_root = local_state_root
        #: False: hosted beside other TaskExecutors in a process it does not own (the MiniCluster's thread mode): it
        #: leaves the interpreter's collector and switch interval alone, and a fatal error closes it, not the process
        self.owns_process = owns_process
        #: this TaskManager's log directory (None: it writes no log files, as one hosted by Spark)
        self.log_files = log_files
        self.launch_token = launch_token
        self.secret = secret
        self.host = host
        self.jm_address = jm_address
        self.slot_table = TaskSlotTable(num_slots)
        self.partition_manager = ResultPartitionManager()
        self.connection_manager = NettyConnectionManager(
            self.partition_manager, secret=secret, host=host, max_frame_bytes=max_frame_bytes, ssl_contexts=ssl_contexts
        )
        self.rpc_server = RpcServer(
            self,
            secret=secret,
            host=host,
            name=f"taskexecutor-{tm_id}",
            ssl_context=ssl_contexts.server if ssl_contexts is not None else None,
        )
        self.jm: RpcClient | None = None
        self.tasks: dict[str, Task] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self.terminated = asyncio.Event()
        self.cancellation_timeout = cancellation_timeout
        self._monitor = HeartbeatMonitor(timeout=heartbeat_timeout, clock=SystemClock())
        self._heartbeats = HeartbeatSender(
            self._monitor, interval=heartbeat_interval, send=self._send_heartbeat, on_timeout=self._jm_lost
        )
        self._closed = False
        #: held while :meth:`start` runs: :meth:`close` waits for it (as Flink runs an endpoint's start and stop one
        #: after the other on its main thread), so a close during start-up cannot miss what start opens later
        self._lifecycle = asyncio.Lock()
        #: the owner of this executor's asyncio tasks (operator-event senders, the shutdown)
        self._tasks = AsyncTaskGroup(f"TaskExecutor {tm_id}")
        self._gc = StreamingGarbageCollection()
        self._switching = TaskThreadSwitching(switch_interval_ms)
        self._log_forwarder = (
            LogForwarder(self._send_logs, forward_logs_level, jobs_only=forward_job_logs_only)
            if forward_logs_level is not None
            else None
        )
        self._reporter = (
            PrometheusReporter(self._metric_readings, prometheus, owner=f"TaskManager {tm_id}")
            if prometheus is not None
            else None
        )
        #: the URL of this TaskManager's Prometheus endpoint (``""`` without a reporter)
        self.metrics_url = ""
        #: the Python files of jobs submitted to a standalone cluster (:mod:`strom.runtime.python_files`)
        self.python_files = PythonFilesCache(f"taskmanager-{tm_id}")
        #: the directories this TaskManager wrote blocking partitions into (BATCH), removed when it closes
        self.shuffle_roots: set[str] = set()
        #: python.files / python.requirements / python.archives (:mod:`strom.runtime.python_environment_manager`)
        self.python_environment = PythonEnvironmentManager(f"taskmanager-{tm_id}")
        #: HA: the fencing token (leader session) of the JobManager this TaskExecutor registered with, and a check
        #: of a token against the current lease (:func:`strom.runtime.highavailability.services.fencing_check`)
        self.fencing_token = ""
        self.leader_check: Callable[[str], Awaitable[bool]] | None = None

    # -- lifecycle ---------------------------------------------------------------------------------
    async def start(self) -> None:
        async with self._lifecycle:
            if self._closed:
                raise ClusterError(
                    f"expected TaskManager {self.tm_id} to start before it is closed; got a close first; "
                    "hint: the TaskManager was shut down while starting"
                )
            await self._start()

    async def _start(self) -> None:
        self.loop = asyncio.get_running_loop()
        await self.connection_manager.start()
        await self.rpc_server.start()
        if self._reporter is not None:
            self.metrics_url = self._reporter.start()
        self.jm = await RpcClient.connect(
            *self.jm_address,
            secret=self.secret,
            name=f"tm-{self.tm_id}->jm",
            ssl_context=self.ssl_contexts.client if self.ssl_contexts is not None else None,
        )
        self.jm.on_disconnect = self._jm_disconnected
        await self.jm.call(
            "register_task_executor",
            self.tm_id,
            self.rpc_server.address,
            self.connection_manager.address,
            len(self.slot_table.slots),
            os.getpid(),
            self.launch_token,
            self.resource_id,
        )
        if self._log_forwarder is not None:
            self._log_forwarder.start()
        self._monitor.monitor_target(JOB_MANAGER)
        self._heartbeats.start()

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        async with self._lifecycle:  # a start under way ends first (its connections bounded by their timeouts)
            await self._close()

    async def _close(self) -> None:
        for task in list(self.tasks.values()):
            task.cancel_execution()
        await self._heartbeats.close()
        self._tasks.close()
        self._tasks.cancel()  # all but this close itself
        deadline = asyncio.get_running_loop().time() + self.cancellation_timeout
        for task in list(self.tasks.values()):
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining > 0:
                await asyncio.to_thread(task.termination.wait, remaining)
        await self.connection_manager.close()
        if not any(t.thread.is_alive() for t in self.tasks.values()):
            # as it found them (a stuck task thread keeps the settings until the process ends)
            self._gc.restore()
            self._switching.restore()
        if self._log_forwarder is not None:
            await self._log_forwarder.stop()
        if self.jm is not None:
            await self.jm.close()
        await self.rpc_server.close()
        if self._reporter is not None:
            await asyncio.to_thread(self._reporter.close)
        if not any(t.thread.is_alive() for t in self.tasks.values()):
            self.python_files.close()
            self.python_environment.close()
        for root in self.shuffle_roots:  # blocking partitions of jobs not released before the TaskManager stops
            shutil.rmtree(root, ignore_errors=True)
        self.terminated.set()

    def _jm_disconnected(self) -> None:
        if self._closed:
            return
        log.warning("TaskManager %s lost its JobManager connection; shutting down", self.tm_id)
        self._shutdown_soon()

    def _jm_lost(self, target: str) -> None:
        log.warning("TaskManager %s: no heartbeat from the JobManager; shutting down", self.tm_id)
        self._shutdown_soon()

    def _shutdown_soon(self) -> None:
        if self.loop is not None and not self._closed:
            self._tasks.create_task(self.close(), name="shutdown")

    async def _send_logs(self, lines: list[tuple[int, str, str, str, float]]) -> None:
        if self.jm is not None:
            await self.jm.call("log_from_task_manager", self.tm_id, lines, timeout=10.0)

    async def _send_heartbeat(self, target: str) -> None:
        assert self.jm is not None
        await self.jm.call("heartbeat_from_task_manager", self.tm_id, self._metrics_report(), timeout=5.0)

    def _metrics_report(self) -> dict[str, tuple[str, dict[str, float]]]:
        """Sample the I/O metrics of the running tasks (on the loop, where gate credit state lives)."""
        report = {}
        for attempt_id, task in self.tasks.items():
            if task.state is ExecutionState.RUNNING:
                try:
                    report[attempt_id] = (task.tdd.job_id, task.metrics.sample())
                except Exception:  # a metric must never cost the heartbeat
                    log.exception("TaskManager %s: sampling the metrics of %s failed", self.tm_id, task.name)
        return report

    def _final_metrics(self, attempt_id: str) -> dict[str, float] | None:
        """The I/O metrics of a task that just ended (on the loop, as the heartbeat's sample)."""
        task = self.tasks.get(attempt_id)
        if task is None:
            return None
        try:
            return task.metrics.sample()
        except Exception:  # a metric must never cost the state update
            log.exception("TaskManager %s: sampling the final metrics of %s failed", self.tm_id, task.name)
            return None

    def _metric_readings(self) -> list[Reading]:
        """A Prometheus scrape (the reporter's thread): the metrics of the running tasks."""
        out: list[Reading] = []
        for task in list(self.tasks.values()):
            if task.state is ExecutionState.RUNNING:
                out += task.metrics.readings()
        return out

    @rpc_method
    def request_metrics_url(self) -> str:
        """Where this TaskManager serves its Prometheus metrics (``""``: no reporter configured)."""
        return self.metrics_url

    # -- RPC: what the REST API shows of this process (Flink's requestThreadDump, requestThreadInfoSamples, the
    # TaskManager's status metrics); read-only --------------------------------------------------------------------
    @rpc_method
    def request_status_metrics(self) -> dict[str, float]:
        """This process's ``Status.JVM.*`` metrics (:mod:`strom.runtime.metrics.process_metrics`)."""
        return status_metrics()

    @rpc_method
    def request_hardware_description(self) -> dict[str, int]:
        """Flink's ``HardwareDescription`` of this process's machine (cores, memory)."""
        return HardwareDescription.of_this_process().to_json()

    @rpc_method
    def request_thread_dump(self) -> list[tuple[str, str]]:
        """(thread name, stack text) of every thread of this process."""
        return thread_dump()

    @rpc_method
    async def request_thread_info_samples(
        self, attempt_ids: list[str], num_samples: int, delay_s: float
    ) -> dict[str, list[tuple[str, ...]]]:
        """Stacks of the task threads of ``attempt_ids`` that run here, sampled off the loop (attempt -> stacks)."""
        threads = {}
        for attempt_id in attempt_ids:
            task = self.tasks.get(attempt_id)
            if task is not None and task.thread.ident is not None and task.thread.is_alive():
                threads[attempt_id] = task.thread.ident
        if not threads:
            return {}
        n, delay = max(1, min(int(num_samples), 1000)), max(0.0, min(float(delay_s), 1.0))
        return await asyncio.to_thread(sample_stacks, threads, n, delay)

    # -- RPC: log files (Flink's requestLogList, requestFileUploadByType / ByName), read off the loop ------------
    @rpc_method
    async def request_log_list(self) -> list[tuple[str, int, int]]:
        """(name, size, mtime ms) of this TaskManager's files in its log directory."""
        if self.log_files is None:
            return []
        files = await asyncio.to_thread(self.log_files.list_files)
        return [(f.name, f.size, f.mtime) for f in files]

    @rpc_method
    async def request_file_chunk(self, file_type: str, file_name: str, offset: int, length: int) -> tuple[bytes, int]:
        """A bounded chunk of the file ``file_name`` of the log listing, or (``file_name`` empty) of Flink's
        ``file_type`` ``LOG`` / ``STDOUT``; with the file's size."""
        files = self.log_files
        if files is None:
            raise FileNotFoundError(
                f"The file {file_name or file_type} is not available on the TaskExecutor {self.tm_id}."
            )
        path = files.resolve(file_name) if file_name else files.path_of_type(file_type)
        return await asyncio.to_thread(files.read_chunk, path, offset, length)

    # -- RPC: fenced calls (HA) ---------------------------------------------------------------------
    @rpc_method
    async def fenced_call(self, token: str, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A JobManager's call carrying its fencing token (Flink's ``FencedRpcEndpoint`` with the ``JobMasterId``):
        refused unless the token is the one of the leader this TaskExecutor registered with; a deploy or commit
        also re-reads the lease, so a stale leader that woke up commits nothing."""
        from strom.runtime.highavailability.stores import LeadershipLostError

        if method not in _FENCED_METHODS:
            raise LeadershipLostError(f"expected a fenced TaskExecutor method; got {method!r}")
        if not self.fencing_token or token != self.fencing_token:
            raise LeadershipLostError(
                f"expected the fencing token of the leader TaskManager {self.tm_id} registered with "
                f"({self.fencing_token or 'none'}); got {token}; hint: a JobManager that lost its leadership"
            )
        if method in _COMMITTING_METHODS and self.leader_check is not None and not await self.leader_check(token):
            raise LeadershipLostError(
                f"expected session {token} to hold the leader lease for {method}; got another or an expired lease; "
                "hint: a JobManager that lost its leadership cannot deploy or commit"
            )
        result = getattr(self, method)(*args, **kwargs)
        if inspect.isawaitable(result):
            result = await result
        return result

    # -- RPC: slots and tasks ----------------------------------------------------------------------
    @rpc_method
    def heartbeat_from_job_manager(self) -> str:
        self._monitor.receive_heartbeat(JOB_MANAGER)
        return self.tm_id

    @rpc_method
    def request_slot(self, slot_index: int, job_id: str, allocation_id: str) -> None:
        self.slot_table.allocate_slot(slot_index, job_id, allocation_id)

    @rpc_method
    def submit_task(self, tdd: TaskDeploymentDescriptor) -> None:
        files = tdd.config.get(PYTHON_FILES_KEY)
        if isinstance(files, bytes):  # before the task thread unpickles the chain that may name them
            self.python_files.install(tdd.job_id, files)
        dependencies = tdd.config.get(PYTHON_DEPENDENCIES_KEY)
        prepare = (
            functools.partial(self.python_environment.prepare, tdd.job_id, dependencies)
            if isinstance(dependencies, PythonDependencyInfo)
            else None
        )
        self.slot_table.add_task(tdd.allocation_id, tdd.job_id, tdd.execution_attempt_id)
        if any(pd.partition_type.is_blocking for pd in tdd.produced_partitions):
            self.shuffle_roots.add(task_manager_shuffle_root(str(tdd.config.get("tmp_dirs") or ""), self.tm_id))
        task = Task(
            tdd,
            tm_id=self.tm_id,
            partition_manager=self.partition_manager,
            connection_manager=self.connection_manager,
            report=self._report_threadsafe,
            gateway=_OperatorEventGateway(self, tdd.job_id, tdd.execution_attempt_id),
            pid=os.getpid(),
            responder=_CheckpointResponder(self, tdd.job_id, tdd.execution_attempt_id),
            local_state_root=self.local_state_root,
            prepare=prepare,
        )
        self.tasks[tdd.execution_attempt_id] = task
        if self._log_forwarder is not None:
            self._log_forwarder.track(task.thread, tdd.job_id)
        if self.owns_process:
            self._gc.apply()  # before the first task runs: the runtime is loaded by now
            self._switching.apply()
        task.start_task_thread()

    # -- RPC: operator events and checkpoint triggers, in order (seed 002) ----------------------------------
    @rpc_method
    def deliver_to_task(self, attempt_id: str, messages: tuple[Any, ...]) -> list[bool]:
        """The JobMaster's messages for one attempt, in the order it sent them, into the task's mailbox in that
        order: operator events (:class:`OperatorEventDelivery`) and checkpoint triggers
        (:class:`TriggerCheckpointMessage`, for a task none of whose producers runs). Per message: whether the
        task took it (a trigger not taken is declined by the JobMaster)."""
        task = self.tasks.get(attempt_id)
        return [self._deliver(task, m) for m in messages]

    @staticmethod
    def _deliver(task: Task | None, message: Any) -> bool:
        if task is None or task.invokable is None or task.state.is_terminal:
            return False
        if isinstance(message, TriggerCheckpointMessage):
            if task.state is not ExecutionState.RUNNING:
                return False
            return task.invokable.trigger_checkpoint_async(message.checkpoint_id, message.timestamp_ms, message.options)
        if isinstance(message, OperatorEventDelivery):
            return task.invokable.dispatch_operator_event_async(message.operator_id, message.event)
        raise TypeError(f"expected an operator event or a checkpoint trigger; got {type(message).__name__}")

    @rpc_method
    def notify_checkpoint_complete(self, attempt_id: str, checkpoint_id: int) -> None:
        task = self.tasks.get(attempt_id)
        if task is not None and task.invokable is not None:
            task.invokable.notify_checkpoint_complete_async(checkpoint_id)

    @rpc_method
    def notify_checkpoint_aborted(self, attempt_id: str, checkpoint_id: int) -> None:
        task = self.tasks.get(attempt_id)
        if task is not None and task.invokable is not None:
            task.invokable.notify_checkpoint_aborted_async(checkpoint_id)

    @rpc_method
    def cancel_task(self, attempt_id: str) -> None:
        task = self.tasks.get(attempt_id)
        if task is None:
            return
        task.cancel_execution()
        self._watch_cancellation(attempt_id)

    @rpc_method
    def stop_task(self, attempt_id: str) -> None:
        """After a stop-with-savepoint's savepoint: end the task FINISHED without end of input."""
        task = self.tasks.get(attempt_id)
        if task is None:
            return
        task.stop_execution()
        self._watch_cancellation(attempt_id)

    def _watch_cancellation(self, attempt_id: str) -> None:
        assert self.loop is not None
        if self.cancellation_timeout > 0:  # 0 disables the watchdog, as Flink's task.cancellation.timeout
            self.loop.call_later(self.cancellation_timeout, self._check_cancelled, attempt_id)
        task = self.tasks.get(attempt_id)
        interval = float(task.tdd.config.get("task_cancellation_interval_s", 30.0)) if task is not None else 0.0
        if interval > 0:
            self.loop.call_later(interval, self._interrupt, attempt_id, interval)

    def _interrupt(self, attempt_id: str, interval: float) -> None:
        """Flink's TaskInterrupter: a cancelled task whose thread still runs is interrupted every
        ``task.cancellation.interval`` until it ends."""
        task = self.tasks.get(attempt_id)
        if task is not None and task.thread.is_alive() and task.interrupt() and self.loop is not None:
            self.loop.call_later(interval, self._interrupt, attempt_id, interval)

    def _check_cancelled(self, attempt_id: str) -> None:
        task = self.tasks.get(attempt_id)
        if task is not None and task.thread.is_alive():
            log.critical(
                "task %s did not stop within %.0f s of cancellation; its thread is stuck in user code. "
                "Stopping TaskManager %s (a fatal error, as Flink's task cancellation timeout).",
                task.name,
                self.cancellation_timeout,
                self.tm_id,
            )
            if not self.owns_process:  # a thread of the MiniCluster: stop this TaskExecutor (its thread stays stuck)
                self._shutdown_soon()
                return
            os._exit(70)

    @rpc_method
    def release_job(self, job_id: str, job_ended: bool = False) -> None:
        """Cancel what is left of the job, drop its partitions, free its slots; ``job_ended``: the job reached its
        end (not a restart), so the local copies of its state go too."""
        attempts = {a for a, t in self.tasks.items() if t.tdd.job_id == job_id}
        for a in attempts:
            self.tasks[a].cancel_execution()
        self.partition_manager.release_partitions_of_attempts(attempts, f"job {job_id} released")
        for directory in {
            shuffle_directory(str(t.tdd.config.get("tmp_dirs") or ""), self.tm_id, job_id)
            for a, t in self.tasks.items()
            if a in attempts
        }:
            shutil.rmtree(directory, ignore_errors=True)  # the job's blocking partitions (BATCH)
        for a in attempts:
            task = self.tasks[a]
            if not task.thread.is_alive():
                self.tasks.pop(a, None)
        self.slot_table.free_slots_of_job(job_id)
        self.python_environment.release(job_id)
        if job_ended and self.local_state_root:
            discard_job(self.local_state_root, job_id)

    @rpc_method
    def release_partitions(self, partition_ids: list[ResultPartitionID]) -> None:
        """The JobMaster replaced the attempts that wrote these (blocking) partitions: delete them."""
        for pid in partition_ids:
            self.partition_manager.release_partition(pid, "its producer is being re-run")

    @rpc_method
    def shutdown(self) -> None:
        self._shutdown_soon()

    # -- task thread → loop ------------------------------------------------------------------------
    def spawn(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        """Loop only: run ``coro`` as a task of this executor (cancelled by ``close``)."""
        if self._closed:
            coro.close()
            return
        self._tasks.create_task(coro, name=name)

    def call_job_master_threadsafe(self, method: str, *args: Any) -> None:
        """Any thread: call ``method`` on the JobMaster without waiting; failures are logged."""
        loop = self.loop
        if loop is None or loop.is_closed() or self.jm is None:
            return
        jm = self.jm

        async def call() -> None:
            try:
                await jm.call(method, *args, timeout=30.0)
            except Exception as exc:
                log.log(
                    logging.DEBUG if self._closed else logging.WARNING, "%s to the JobMaster failed: %s", method, exc
                )

        with contextlib.suppress(RuntimeError):
            asyncio.run_coroutine_threadsafe(call(), loop)

    def _report_threadsafe(self, state: TaskExecutionState) -> Future[Any] | None:
        loop = self.loop
        if loop is None or loop.is_closed() or self.jm is None:
            return None
        with contextlib.suppress(RuntimeError):
            return asyncio.run_coroutine_threadsafe(self._report(state), loop)
        return None

    async def _report(self, state: TaskExecutionState) -> None:
        if ExecutionState(state.state).is_terminal:
            state = dataclasses.replace(state, metrics=self._final_metrics(state.execution_attempt_id))
            self.slot_table.remove_task(state.execution_attempt_id)
            if self._log_forwarder is not None:  # the task's last log lines reach the JobManager before its end
                await self._log_forwarder.send_now()
        assert self.jm is not None
        try:
            await self.jm.call("update_task_execution_state", state, timeout=10.0)
        except Exception as exc:
            level = logging.DEBUG if self._closed else logging.WARNING  # expected while shutting down
            log.log(level, "could not report %s of %s: %s", state.state, state.execution_attempt_id, exc)
