"""``DispatcherGateway``: the one place :mod:`strom.web` touches the runtime.

The REST handlers never read the Dispatcher, a JobMaster or the ResourceManager themselves: they ask this
gateway, which copies what the runtime knows into frozen snapshots (plain data, no runtime objects) and
carries out the few actions a REST call may take (cancel, savepoint, stop with a savepoint). Every method runs
on the JobManager's event loop, where that state lives, so a snapshot is consistent.

Ids take Flink's 32-hex form: job ids already have it; a job vertex is named by the MD5 of its chain head's
operator id (Flink's ``JobVertexID`` is its head operator's id, so it too is stable across runs of the same
program with the same ``uid``\\ s).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from strom.config import CheckpointingOptions, Configuration, PipelineOptions, StateBackendOptions, millis
from strom.exceptions import StromError
from strom.runtime.checkpoint.checkpoint_stats_tracker import CheckpointStatsSnapshot

if TYPE_CHECKING:
    from strom.graph.job_graph import JobVertex
    from strom.runtime.dispatcher.dispatcher import Dispatcher
    from strom.runtime.dispatcher.job_logs import JobLogRecord
    from strom.runtime.jobmaster.job_result import ExceptionHistoryEntry
    from strom.runtime.jobmaster.jobmaster import JobMaster
    from strom.runtime.log_files import LogFiles

__all__ = [
    "CheckpointSettings",
    "CheckpointSnapshot",
    "DispatcherGateway",
    "EdgeSnapshot",
    "ExceptionSnapshot",
    "JobSnapshot",
    "RestHandlerError",
    "SubtaskSnapshot",
    "TaskManagerSnapshot",
    "VertexSnapshot",
    "vertex_hex_id",
]


class RestHandlerError(StromError):
    """A REST call that cannot be answered: ``status`` is its HTTP status (Flink's ``RestHandlerException``)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def vertex_hex_id(head_operator_id: str) -> str:
    """Flink's 32-hex ``JobVertexID`` of the vertex whose chain starts with ``head_operator_id``."""
    return hashlib.md5(head_operator_id.encode(), usedforsecurity=False).hexdigest()


@dataclass(frozen=True, slots=True, kw_only=True)
class SubtaskSnapshot:
    subtask: int
    attempt: int
    state: str  # ExecutionState name
    task_manager_id: str  # "" while not deployed
    endpoint: str  # "host:port" of its TaskManager's data server; "" while not deployed
    metrics: Mapping[str, float]  # the latest heartbeat's (or, once ended, its final ones); empty before the first
    attempt_id: str = ""
    #: ExecutionState name -> epoch ms it entered / left that state (Flink's stateTimestamps / stateEndTimestamps)
    state_timestamps: Mapping[str, int] = field(default_factory=dict)
    state_end_timestamps: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class EdgeSnapshot:
    source_vertex_id: str
    ship_strategy: str
    exchange: str


@dataclass(frozen=True, slots=True, kw_only=True)
class VertexSnapshot:
    id: str
    name: str
    parallelism: int
    max_parallelism: int
    slot_sharing_group: str
    inputs: tuple[EdgeSnapshot, ...]
    subtasks: tuple[SubtaskSnapshot, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ExceptionSnapshot:
    timestamp_ms: int
    exception_name: str
    stacktrace: str  # strom's failure text: the user's Python traceback included
    task_name: str
    task_manager_id: str
    endpoint: str
    #: the other failures of the subtasks the same restart covered (Flink's ``concurrentExceptions``)
    concurrent: tuple[ExceptionSnapshot, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointSnapshot:
    id: int
    status: str  # IN_PROGRESS | COMPLETED | FAILED
    is_savepoint: bool
    unaligned: bool
    trigger_timestamp_ms: int
    duration_ms: int | None
    state_size: int
    failure_reason: str
    external_path: str  # "" unless it completed
    #: (vertex id, subtask index, the subtask's acknowledged statistics)
    subtasks: tuple[tuple[str, int, Mapping[str, float]], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointSettings:
    interval_ms: int
    timeout_ms: int
    min_pause_ms: int
    max_concurrent: int
    tolerable_failures: int
    exactly_once: bool
    unaligned: bool
    retention: str
    num_retained: int
    storage: str
    state_backend: str


@dataclass(frozen=True, slots=True, kw_only=True)
class JobSnapshot:
    job_id: str
    name: str
    state: str  # JobStatus name
    start_time_ms: int
    end_time_ms: int  # -1 while the job runs
    vertices: tuple[VertexSnapshot, ...]
    exceptions: tuple[ExceptionSnapshot, ...]
    checkpointing: CheckpointSettings | None  # None: checkpointing disabled
    #: the checkpoints known in detail: the last ``web.checkpoints.history`` and the latest of each kind
    checkpoints: tuple[CheckpointSnapshot, ...]
    batch: bool
    restart_strategy: str = ""  # the restart strategy's name (Flink's RestartBackoffTimeStrategy class)
    #: the job's global job parameters (``pipeline.global-job-parameters``)
    user_config: Mapping[str, str] = field(default_factory=dict)
    #: the JobMaster's bounded checkpoint statistics: counts, latest ids, history ids, summary figures, restore
    checkpoint_stats: CheckpointStatsSnapshot = field(default_factory=CheckpointStatsSnapshot)


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskManagerSnapshot:
    id: str
    host: str
    rpc_port: int
    data_port: int
    num_slots: int
    free_slots: int
    pid: int
    #: job id of each allocated slot
    allocated_jobs: tuple[str, ...]
    last_heartbeat_ms: int  # 0 before its first heartbeat
    #: tasks (current attempts, not ended) in each allocated slot, in ``allocated_jobs``' order
    slot_tasks: tuple[int, ...] = ()


class DispatcherGateway:
    """Snapshots of a :class:`Dispatcher`'s jobs and TaskManagers, and the actions REST may take on a job.

    ``configuration`` is the JobManager's (``GET /jobmanager/config``); ``log_files`` its own log files (``None``:
    it writes none, a MiniCluster's JobManager in the client's process)."""

    def __init__(
        self,
        dispatcher: Dispatcher,
        *,
        configuration: Configuration | None = None,
        log_files: LogFiles | None = None,
    ) -> None:
        self._dispatcher = dispatcher
        self.configuration = configuration if configuration is not None else Configuration()
        self.log_files = log_files
        self._hardware: dict[str, dict[str, int]] = {}  # TaskManager id -> its HardwareDescription

    # -- reading -------------------------------------------------------------------------------------
    def job_ids(self) -> list[str]:
        return list(self._dispatcher.job_masters)

    def jobs(self) -> list[JobSnapshot]:
        return [_job_snapshot(jm) for jm in list(self._dispatcher.job_masters.values())]

    def job(self, job_id: str) -> JobSnapshot:
        return _job_snapshot(self._job_master(job_id))

    def task_managers(self) -> list[TaskManagerSnapshot]:
        d = self._dispatcher
        tasks: Counter[tuple[str, int]] = Counter()  # (TaskManager, slot index) -> tasks deployed there
        for jm in list(d.job_masters.values()):
            for ex in jm.graph.all_executions():
                if ex.slot is not None and not ex.state.is_terminal:
                    tasks[(ex.slot.tm_id, ex.slot.slot_index)] += 1
        out = []
        for reg in list(d.resource_manager.slot_manager.task_managers.values()):
            slots = sorted(reg.allocated.items())
            out.append(
                TaskManagerSnapshot(
                    id=reg.tm_id,
                    host=reg.rpc_address[0],
                    rpc_port=reg.rpc_address[1],
                    data_port=reg.data_address[1],
                    num_slots=reg.num_slots,
                    free_slots=len(reg.free_slots()),
                    pid=reg.pid,
                    allocated_jobs=tuple(job for _, (job, _) in slots),
                    last_heartbeat_ms=d.task_manager_heartbeats.get(reg.tm_id, 0),
                    slot_tasks=tuple(tasks[(reg.tm_id, index)] for index, _ in slots),
                )
            )
        return out

    async def request_task_manager_log_list(self, tm_id: str) -> list[tuple[str, int, int]]:
        """(name, size, mtime ms) of the files in TaskManager ``tm_id``'s log directory, asked over RPC."""
        gateway = self._dispatcher.resource_manager.gateway(tm_id)
        return list(await gateway.call("request_log_list", timeout=10.0))

    async def request_task_manager_file_chunk(
        self, tm_id: str, file_type: str, file_name: str, offset: int, length: int
    ) -> tuple[bytes, int]:
        """A chunk of a log file of TaskManager ``tm_id`` (it reads its own file) and the file's size."""
        gateway = self._dispatcher.resource_manager.gateway(tm_id)
        data, size = await gateway.call("request_file_chunk", file_type, file_name, offset, length, timeout=30.0)
        return bytes(data), int(size)

    async def request_task_manager_status_metrics(self, tm_id: str) -> dict[str, float]:
        """The ``Status.JVM.*`` metrics of TaskManager ``tm_id``'s process, asked over RPC."""
        gateway = self._dispatcher.resource_manager.gateway(tm_id)
        return dict(await gateway.call("request_status_metrics", timeout=10.0))

    async def request_task_manager_hardware(self, tm_id: str) -> dict[str, int]:
        """Flink's ``HardwareDescription`` of TaskManager ``tm_id`` (asked over RPC once, then remembered: Flink's
        is fixed at registration)."""
        known = self._hardware.get(tm_id)
        if known is None:
            gateway = self._dispatcher.resource_manager.gateway(tm_id)
            known = self._hardware[tm_id] = {
                str(k): int(v) for k, v in (await gateway.call("request_hardware_description", timeout=10.0)).items()
            }
        return dict(known)

    async def request_task_manager_thread_dump(self, tm_id: str) -> list[tuple[str, str]]:
        """(thread name, stack text) of every thread of TaskManager ``tm_id``'s process."""
        gateway = self._dispatcher.resource_manager.gateway(tm_id)
        return [(str(n), str(t)) for n, t in await gateway.call("request_thread_dump", timeout=10.0)]

    async def request_thread_info_samples(
        self, subtasks: list[SubtaskSnapshot], num_samples: int, delay_s: float
    ) -> list[tuple[str, ...]]:
        """Stacks of the task threads of ``subtasks`` (each asked of its TaskManager), all in one list."""
        by_tm: dict[str, list[str]] = {}
        for s in subtasks:
            if s.task_manager_id and s.attempt_id and s.state == "RUNNING":
                by_tm.setdefault(s.task_manager_id, []).append(s.attempt_id)
        calls = [
            self._dispatcher.resource_manager.gateway(tm).call(
                "request_thread_info_samples", ids, num_samples, delay_s, timeout=30.0 + num_samples * delay_s
            )
            for tm, ids in by_tm.items()
        ]
        stacks: list[tuple[str, ...]] = []
        for answer in await asyncio.gather(*calls, return_exceptions=True):
            if isinstance(answer, BaseException):
                continue  # a TaskManager that went away has no stacks to show
            for samples in answer.values():
                stacks.extend(tuple(stack) for stack in samples)
        return stacks

    def job_manager_metrics(self) -> dict[str, float]:
        """The JobManager's own metrics (Flink's ``JobManagerMetricGroup``: ``numRegisteredTaskManagers``,
        ``numRunningJobs``, ``taskSlotsTotal``, ``taskSlotsAvailable``), the values its Prometheus endpoint reports,
        and its process's ``Status.JVM.*`` figures."""
        from strom.runtime.metrics.job_metrics import job_manager_readings
        from strom.runtime.metrics.process_metrics import status_metrics
        from strom.runtime.metrics.scope import JOB_MANAGER_SCOPE

        readings = job_manager_readings(self._dispatcher)
        out = {r.name: r.value for r in readings if r.logical_scope == JOB_MANAGER_SCOPE}
        out.update(status_metrics())  # Status.JVM.* of this process (strom.runtime.metrics.process_metrics)
        return out

    async def request_job_manager_log_list(self) -> list[tuple[str, int, int]]:
        """(name, size, mtime ms) of the JobManager's own files in its log directory (none without a log file)."""
        files = self.log_files
        if files is None:
            return []
        return [(f.name, f.size, f.mtime) for f in await asyncio.to_thread(files.list_files)]

    async def request_job_manager_file_chunk(
        self, file_type: str, file_name: str, offset: int, length: int
    ) -> tuple[bytes, int]:
        """A chunk of a JobManager log file, read off the loop, and the file's size; ``FileNotFoundError`` without
        a log file (Flink derives the ``.out`` from ``log.file`` too, so then there is no stdout either)."""
        files = self.log_files
        if files is None:
            raise FileNotFoundError(f"The file {file_name or file_type} does not exist: the JobManager has no log file")
        return await asyncio.to_thread(files.read, file_type, file_name, offset, length)

    def job_log_records(self, job_id: str, start: int, level: int) -> tuple[str, list[JobLogRecord], int, int]:
        """The forwarded log records of a job from cursor ``start`` (:class:`JobLogBuffers`): the buffer's stream
        id, the records at or above ``level``, the next cursor and how many were dropped unread."""
        self._job_master(job_id)
        buffers = self._dispatcher.job_logs
        records, cursor, dropped = buffers.read(job_id, start, level)
        return buffers.stream, records, cursor, dropped

    # -- acting --------------------------------------------------------------------------------------
    def cancel_job(self, job_id: str) -> None:
        self._job_master(job_id)
        self._dispatcher.cancel_job(job_id)

    async def trigger_savepoint(self, job_id: str, target_dir: str) -> str:
        self._job_master(job_id)
        return await self._dispatcher.trigger_savepoint(job_id, target_dir)

    async def stop_with_savepoint(self, job_id: str, target_dir: str) -> str:
        self._job_master(job_id)
        return await self._dispatcher.stop_with_savepoint(job_id, target_dir)

    def _job_master(self, job_id: str) -> JobMaster:
        jm = self._dispatcher.job_masters.get(job_id)
        if jm is None and self._dispatcher.recovering:
            raise RestHandlerError(
                f"expected job {job_id} on this JobManager; it took over leadership and is still recovering its "
                "jobs; hint: retry in a moment (strom's clients do)",
                503,
            )
        if jm is None:
            raise RestHandlerError(
                f"expected the id of a job of this cluster; got {job_id!r}; hint: GET /jobs lists them", 404
            )
        return jm


def _job_snapshot(jm: JobMaster) -> JobSnapshot:
    graph = jm.job_graph
    hex_of = {v.id: vertex_hex_id(v.chain[0].operator_id) for v in graph.vertices.values()}
    rows: dict[str, list[SubtaskSnapshot]] = {v: [] for v in hex_of}
    for row in jm.execution_snapshot():
        rows[row["job_vertex_id"]].append(
            SubtaskSnapshot(
                subtask=row["subtask_index"],
                attempt=row["attempt_number"],
                state=row["state"],
                task_manager_id=row["task_manager_id"],
                endpoint=row["endpoint"],
                metrics=row["metrics"],
                attempt_id=row["attempt_id"],
                state_timestamps=row["state_timestamps"],
                state_end_timestamps=row["state_end_timestamps"],
            )
        )
    vertices = tuple(_vertex_snapshot(v, hex_of, rows[v.id]) for v in graph.topological_order())
    settings = _checkpoint_settings(jm.configuration) if jm.checkpoints is not None else None
    stats = jm.checkpoint_statistics()
    return JobSnapshot(
        job_id=jm.job_id,
        name=graph.job_name,
        state=jm.status.value,
        start_time_ms=jm.start_time_ms,
        end_time_ms=jm.end_time_ms,
        vertices=vertices,
        exceptions=tuple(_exception_snapshot(e) for e in jm.exception_history),
        checkpointing=settings,
        checkpoints=_checkpoints(jm, stats, hex_of, settings),
        checkpoint_stats=stats,
        batch=bool(graph.config.get("batch_execution", False)),
        restart_strategy=type(jm.restart_strategy).__name__,
        user_config={str(k): str(v) for k, v in jm.configuration.get(PipelineOptions.GLOBAL_JOB_PARAMETERS).items()},
    )


def _exception_snapshot(e: ExceptionHistoryEntry) -> ExceptionSnapshot:
    return ExceptionSnapshot(
        timestamp_ms=e.timestamp_ms,
        exception_name=e.exception_name,
        stacktrace=e.text,
        task_name=e.task_name,
        task_manager_id=e.task_manager_id,
        endpoint=e.endpoint,
        concurrent=tuple(_exception_snapshot(c) for c in e.concurrent),
    )


def _vertex_snapshot(v: JobVertex, hex_of: dict[str, str], subtasks: list[SubtaskSnapshot]) -> VertexSnapshot:
    return VertexSnapshot(
        id=hex_of[v.id],
        name=v.name,
        parallelism=v.parallelism,
        max_parallelism=v.max_parallelism,
        slot_sharing_group=v.slot_sharing_group,
        inputs=tuple(
            EdgeSnapshot(
                source_vertex_id=hex_of[e.source_vertex_id],
                ship_strategy=e.ship_strategy,
                exchange="pipelined_bounded",  # every strom exchange is pipelined through bounded buffer pools
            )
            for e in v.inputs
        ),
        subtasks=tuple(sorted(subtasks, key=lambda s: s.subtask)),
    )


def _checkpoint_settings(c: Configuration) -> CheckpointSettings:
    return CheckpointSettings(
        interval_ms=millis(c.get(CheckpointingOptions.CHECKPOINTING_INTERVAL)),
        timeout_ms=millis(c.get(CheckpointingOptions.CHECKPOINTING_TIMEOUT)),
        min_pause_ms=millis(c.get(CheckpointingOptions.MIN_PAUSE_BETWEEN_CHECKPOINTS)),
        max_concurrent=c.get(CheckpointingOptions.MAX_CONCURRENT_CHECKPOINTS),
        tolerable_failures=c.get(CheckpointingOptions.TOLERABLE_FAILURE_NUMBER),
        exactly_once=c.get(CheckpointingOptions.CHECKPOINTING_CONSISTENCY_MODE).upper() == "EXACTLY_ONCE",
        unaligned=c.get(CheckpointingOptions.ENABLE_UNALIGNED),
        retention=c.get(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION).upper(),
        num_retained=c.get(CheckpointingOptions.MAX_RETAINED_CHECKPOINTS),
        storage=c.get(CheckpointingOptions.CHECKPOINTS_DIRECTORY) or "the cluster's temporary directory",
        state_backend=c.get(StateBackendOptions.STATE_BACKEND),
    )


def _checkpoints(
    jm: JobMaster, stats: CheckpointStatsSnapshot, hex_of: dict[str, str], settings: CheckpointSettings | None
) -> tuple[CheckpointSnapshot, ...]:
    latest = (stats.latest_completed, stats.latest_savepoint, stats.latest_failed)
    known = {st.checkpoint_id: st for st in (*stats.history, *(x for x in latest if x is not None))}
    out = []
    for st in (known[c] for c in sorted(known)):
        subtasks = []
        for attempt_id, figures in st.subtasks.items():
            where = jm.vertex_of_attempt(attempt_id)
            if where is not None:
                subtasks.append((hex_of[where[0]], where[1], dict(figures)))
        out.append(
            CheckpointSnapshot(
                id=st.checkpoint_id,
                status=st.status,
                is_savepoint=st.is_savepoint,
                unaligned=settings is not None and settings.unaligned and not st.is_savepoint,
                trigger_timestamp_ms=st.trigger_timestamp_ms,
                duration_ms=st.duration_ms,
                state_size=st.state_size,
                failure_reason=st.failure_reason,
                external_path=jm.checkpoint_paths.get(st.checkpoint_id, ""),
                subtasks=tuple(subtasks),
            )
        )
    return tuple(out)
