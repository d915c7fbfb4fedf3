"""``strom taskmanager --jobmanager HOST:PORT``: a TaskManager that joins a standalone JobManager.

A long-lived foreground process running the same :class:`TaskExecutor` as a MiniCluster's TaskManager
(:func:`strom.runtime.taskexecutor.runner.run_task_manager`). Nobody launched it, so it has no launch token yet:
it connects to the JobManager's RPC endpoint — authenticated both ways with the cluster secret, read from the
cluster directory's ``secret`` file or ``--secret-file`` — asks for an id and a fresh launch token
(``request_task_manager_registration``), then registers with them. From then on the ResourceManager treats it as
any other: a lost one (closed connection, heartbeat timeout) is unregistered and its token is never accepted again.

The JobManager may still be starting: the first connection is retried until ``taskmanager.registration.timeout``.
The process ends on SIGTERM or SIGINT (its running tasks are cancelled; their jobs fail over to other
TaskManagers) and when it loses its JobManager (exit code 1).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from strom.config import (
    ClusterOptions,
    Configuration,
)
from strom.config_logging import logging_level
from strom.deploy.active_cluster import _validate_options
from strom.deploy.standalone.high_availability import run_task_manager_with_high_availability
from strom.exceptions import ClusterError, RpcError
from strom.runtime.highavailability.services import ha_settings
from strom.runtime.net.internal_ssl import InternalSslSettings
from strom.runtime.rpc import RpcClient
from strom.runtime.taskexecutor.runner import run_task_manager
from strom.runtime.taskexecutor.task_executor import TaskExecutor
from strom.runtime.taskexecutor.task_manager_configuration import TaskManagerConfiguration

__all__ = ["run_standalone_task_manager"]

log = logging.getLogger(__name__)


async def _join(
    address: tuple[str, int], secret: bytes, proposed_id: str, timeout: float, tls: InternalSslSettings | None
) -> tuple[str, str]:
    """Connect to the JobManager (retrying while it starts) and ask for an id and a launch token."""
    deadline = time.monotonic() + timeout
    delay = 0.1
    ssl_context = tls.contexts().client if tls is not None else None
    while True:
        try:
            client = await RpcClient.connect(
                *address, secret=secret, name="taskmanager-join", timeout=5.0, ssl_context=ssl_context
            )
            break
        except (OSError, RpcError) as exc:
            if time.monotonic() + delay > deadline:
                raise ClusterError(
                    f"expected a JobManager at {address[0]}:{address[1]} within {timeout:.0f} s; got {exc}; "
                    "hint: start it first (strom jobmanager), and give both the same cluster secret"
                ) from None
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)
    try:
        tm_id, token = await client.call("request_task_manager_registration", proposed_id, timeout=10.0)
    finally:
        await client.close()
    return str(tm_id), str(token)


async def _run(
    config: Configuration,
    address: tuple[str, int],
    secret: bytes,
    proposed_id: str,
    log_dir: str = "",
    before_start: Callable[[TaskExecutor], None] | None = None,
) -> bool:
    """Run until the TaskExecutor terminates; True if it was told to stop, False if it lost its JobManager."""
    c = config
    settings = TaskManagerConfiguration.from_configuration(c)
    timeout = c.get(ClusterOptions.REGISTRATION_TIMEOUT).total_seconds()
    tm_id, token = await _join(address, secret, proposed_id, timeout, settings.internal_ssl)
    spec = replace(settings, log_dir=settings.log_dir or log_dir).spec(
        tm_id=tm_id,
        launch_token=token,
        jm_address=address,
        # the job's records to the JobManager, for an attached client (strom run -m ...) to print
        forward_logs_level=settings.log_level,
        forward_job_logs_only=True,
    )
    stopped = asyncio.Event()

    def started(executor: TaskExecutor) -> None:
        loop = asyncio.get_running_loop()

        def stop() -> None:
            stopped.set()
            executor.shutdown()  # closes it as a task of the executor's own task group

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop)
        print(
            f"strom taskmanager {executor.tm_id}: registered with the JobManager at {address[0]}:{address[1]}",
            flush=True,
        )

    await run_task_manager(spec, secret, started=started, before_start=before_start)
    return stopped.is_set()


def run_standalone_task_manager(
    config: Configuration, address: tuple[str, int], secret: bytes, *, proposed_id: str = "", log_dir: str = ""
) -> int:
    """Run a TaskManager in the foreground; returns the exit code (0 stopped by a signal, 1 otherwise). Its log
    records go to standard error and to ``taskmanager-<id>.log`` in ``env.log.dir``, else in ``log_dir`` (the
    cluster directory's ``log/``)."""
    _validate_options(config)
    logging.basicConfig(
        level=logging_level(config), format="%(asctime)s %(levelname)s [taskmanager] %(name)s: %(message)s"
    )
    try:
        settings = ha_settings(config)
        if settings is not None:  # follow the leader through the lease instead of exiting with the JobManager

            def run_once(address: tuple[str, int], tm_id: str, configure: Callable[[TaskExecutor], None]) -> Any:
                return _run(config, address, secret, tm_id, log_dir, configure)

            told_to_stop = asyncio.run(run_task_manager_with_high_availability(config, settings, proposed_id, run_once))
        else:
            told_to_stop = asyncio.run(_run(config, address, secret, proposed_id, log_dir))
    except (ClusterError, RpcError) as exc:
        print(f"strom taskmanager: {exc}", file=sys.stderr)
        return 1
    if not told_to_stop:
        print("strom taskmanager: lost its JobManager; stopping", file=sys.stderr)
        return 1
    return 0
