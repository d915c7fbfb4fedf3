"""``TaskManagerRunner``: start a :class:`TaskExecutor`, run it until it terminates (Flink's ``TaskManagerRunner``).

Shared by every way a TaskManager is hosted — a child process of the MiniCluster
(``python -m strom.runtime.taskexecutor``), a thread of the MiniCluster's own process in its thread mode
(:mod:`strom.deploy.task_manager_thread`), a standalone ``strom taskmanager`` and a task of a Spark job
(:mod:`strom.deploy.spark`) — so the runtime behaves the same whoever started it.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from strom.runtime.metrics.prometheus import PrometheusSettings
from strom.runtime.net.internal_ssl import InternalSslSettings
from strom.runtime.taskexecutor.log_files import TaskManagerLogFiles
from strom.runtime.taskexecutor.thread_switching import DEFAULT_SWITCH_INTERVAL_MS

if TYPE_CHECKING:
    from strom.runtime.taskexecutor.task_executor import TaskExecutor

__all__ = ["TaskManagerSpec", "resolve_bind_host", "run_task_manager"]

#: ``taskmanager.host`` value meaning "this machine's own address" (for TaskManagers on a cluster's hosts)
AUTO_HOST = "auto"


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskManagerSpec:
    """What a TaskManager needs to start; the secret travels beside it, never in argv or the environment."""

    tm_id: str
    launch_token: str
    jm_address: tuple[str, int]
    host: str = "127.0.0.1"
    num_slots: int = 1
    heartbeat_interval: float = 1.0
    heartbeat_timeout: float = 10.0
    cancellation_timeout: float = 30.0
    max_frame_bytes: int = 256 * 1024 * 1024
    #: milliseconds between GIL hand-overs of a busy thread (``taskmanager.python.switch-interval``)
    switch_interval_ms: float = DEFAULT_SWITCH_INTERVAL_MS
    #: forward log records at or above this level to the JobManager (None: do not)
    forward_logs_level: int | None = None
    #: forward only the records of task threads (tagged with their job; a standalone TaskManager)
    forward_job_logs_only: bool = False
    #: the Prometheus reporter (``metrics.reporter.prom.*``; None: none configured)
    prometheus: PrometheusSettings | None = None
    #: the log directory (``env.log.dir``) its ``taskmanager-<id>.log`` goes to ("": no log file)
    log_dir: str = ""
    #: old log files kept (``env.log.max``)
    max_log_files: int = 10
    #: the TaskManager has its process to itself; False: a thread of the MiniCluster's client process, beside others
    #: (``minicluster.taskmanager-mode: thread``; :attr:`TaskExecutor.owns_process`)
    owns_process: bool = True
    #: internal TLS (``security.ssl.internal.*``; None: off) — with passwords, so it travels as the secret does
    internal_ssl: InternalSslSettings | None = None
    #: Flink's ``ResourceID``: the identity a restarted process keeps (``taskmanager.resource-id``; "": ``tm_id``)
    resource_id: str = ""
    #: its working directory (FLIP-198), which a restarted process with the same resource id finds again
    working_dir: str = ""
    #: where the local copies of checkpointed state go (local recovery; "": ``localState`` in ``working_dir``)
    local_state_root: str = ""


def resolve_bind_host(host: str) -> str:
    """``auto`` → the address this machine's host name resolves to; anything else as given."""
    if host != AUTO_HOST:
        return host
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


async def run_task_manager(
    spec: TaskManagerSpec,
    secret: bytes,
    *,
    started: Callable[[TaskExecutor], None] | None = None,
    before_start: Callable[[TaskExecutor], None] | None = None,
) -> None:
    """Register with the JobManager and serve until the TaskExecutor terminates (it was told to shut
    down, or lost its JobManager). Raises what kept it from registering (a stale launch token included).
    With a ``log_dir``, the process's log records also go to the TaskManager's log file while it runs."""
    log_files = TaskManagerLogFiles(spec.log_dir, spec.tm_id, max_files=spec.max_log_files) if spec.log_dir else None
    if log_files is not None:
        log_files.install()
    try:
        await _run(spec, secret, log_files, started, before_start)
    finally:
        if log_files is not None:
            log_files.close()


async def _run(
    spec: TaskManagerSpec,
    secret: bytes,
    log_files: TaskManagerLogFiles | None,
    started: Callable[[TaskExecutor], None] | None,
    before_start: Callable[[TaskExecutor], None] | None,
) -> None:
    # here, not at the top: a launcher reads TaskManagerSpec without importing the TaskExecutor's runtime
    from strom.runtime.taskexecutor.task_executor import TaskExecutor

    executor = TaskExecutor(
        tm_id=spec.tm_id,
        secret=secret,
        host=resolve_bind_host(spec.host),
        num_slots=spec.num_slots,
        jm_address=spec.jm_address,
        heartbeat_interval=spec.heartbeat_interval,
        heartbeat_timeout=spec.heartbeat_timeout,
        cancellation_timeout=spec.cancellation_timeout,
        max_frame_bytes=spec.max_frame_bytes,
        launch_token=spec.launch_token,
        forward_logs_level=spec.forward_logs_level,
        forward_job_logs_only=spec.forward_job_logs_only,
        switch_interval_ms=spec.switch_interval_ms,
        prometheus=spec.prometheus,
        log_files=log_files,
        owns_process=spec.owns_process,
        ssl_contexts=spec.internal_ssl.contexts() if spec.internal_ssl is not None else None,
        resource_id=spec.resource_id,
        local_state_root=spec.local_state_root,
    )
    if before_start is not None:  # e.g. the HA fencing token, before the first call can arrive
        before_start(executor)
    try:
        await executor.start()
    except BaseException:
        await asyncio.shield(executor.close())
        raise
    if started is not None:
        started(executor)
    await executor.terminated.wait()
