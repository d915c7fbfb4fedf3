"""``strom jobmanager``: a standalone session cluster's JobManager (Flink's ``StandaloneSessionClusterEntrypoint``).

One long-lived foreground process: the Dispatcher (with its ResourceManager and one JobMaster per job) and the REST
endpoint on one asyncio loop — the MiniCluster's JobManager, but on the main thread and without a resource
provider. Its ResourceManager starts no TaskManager: ``strom taskmanager`` processes join it (they authenticate
with the cluster secret and are given a launch token, :meth:`ResourceManager.accept_task_manager`), and a lost one
is not replaced. Jobs arrive over REST (``POST /jobs``, :mod:`strom.web.submission`), run side by side on the
TaskManagers' slots, and the JobManager outlives them. SIGTERM or SIGINT stops it: running jobs are cancelled, and
its TaskManagers, which lose their JobManager, stop too.

    strom jobmanager                                    # RPC on 127.0.0.1:6123, REST on 127.0.0.1:8081
    strom jobmanager -D rest.port=0 -D jobmanager.rpc.port=0 --cluster-dir /tmp/c   # free ports

As a TaskManager, it logs to standard error and to its own file, ``<name>.log`` in ``env.log.dir`` (default: the
cluster directory's ``log/``), which ``GET /jobmanager/logs`` lists and ``/jobmanager/log`` serves (Flink's
``log.file``); ``--name`` tells JobManagers sharing a log directory apart (default ``jobmanager``; with HA
``jobmanager-<pid>``, as several may run on one machine; ``strom cluster start`` names them after their pid files).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

from strom.config import ClusterOptions, Configuration, CoreOptions, HeartbeatOptions, RestOptions
from strom.config_logging import logging_level
from strom.deploy.active_cluster import _validate_options
from strom.deploy.standalone.cluster_dir import ClusterDirectory, JobManagerAddresses
from strom.deploy.standalone.high_availability import serve_with_high_availability
from strom.exceptions import ClusterError, ConfigurationError
from strom.runtime.dispatcher.dispatcher import Dispatcher
from strom.runtime.highavailability.services import LeaderSession, ha_settings
from strom.runtime.log_files import LogFiles
from strom.runtime.metrics.prometheus import PrometheusReporter, Reading, prometheus_settings
from strom.runtime.net.internal_ssl import internal_ssl_contexts
from strom.runtime.net.ssl_utils import create_rest_server_ssl_context
from strom.version import __version__

__all__ = ["StandaloneJobManager", "job_manager_log_files", "run_job_manager"]

log = logging.getLogger(__name__)


class StandaloneJobManager:
    """The JobManager's components; :meth:`start` and :meth:`close` run on its loop."""

    def __init__(
        self,
        config: Configuration,
        *,
        secret: bytes,
        directory: ClusterDirectory,
        ha: Any = None,
        log_files: LogFiles | None = None,
    ) -> None:
        _validate_options(config)
        #: the process's own log files (served by GET /jobmanager/logs); None: it writes none
        self.log_files = log_files
        #: HA: this leadership term (:class:`strom.runtime.highavailability.services.LeaderSession`); None without
        self.ha = ha
        self.config = config
        self.secret = secret
        self.directory = directory
        self.dispatcher: Dispatcher | None = None
        self.rest_url = ""
        self.metrics_url = ""
        self._endpoint: object | None = None
        self._submission: object | None = None
        self._reporter: PrometheusReporter | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def start(self) -> JobManagerAddresses:
        from strom.web import DispatcherGateway, DispatcherRestEndpoint, rest_token
        from strom.web.submission import JobSubmissionHandlers

        c = self.config
        ssl_context = create_rest_server_ssl_context(c)  # security.ssl.rest.*: read before anything binds
        self._loop = asyncio.get_running_loop()
        dispatcher = Dispatcher(
            secret=self.secret,
            host=c.get(ClusterOptions.JOBMANAGER_HOST),
            port=c.get(ClusterOptions.JOBMANAGER_PORT),
            heartbeat_interval=c.get(HeartbeatOptions.INTERVAL).total_seconds(),
            heartbeat_timeout=c.get(HeartbeatOptions.TIMEOUT).total_seconds(),
            slot_timeout=c.get(ClusterOptions.SLOT_REQUEST_TIMEOUT).total_seconds(),
            default_checkpoint_dir=self.directory.checkpoint_dir,
            ssl_contexts=internal_ssl_contexts(c),  # security.ssl.internal.*
        )
        dispatcher.resource_manager.accepts_standalone_task_managers = True
        dispatcher.relog_task_manager_logs = False  # its TaskManagers have log files; job records stay per job
        if self.ha is not None:  # jobs into the HA stores; every call to a TaskManager fenced with the session
            dispatcher.ha = self.ha
            dispatcher.resource_manager.fencing_token = self.ha.session_id
            dispatcher.recovering = True  # until the jobs of the JobGraphStore run here (REST: 503, not 404)
        try:
            await dispatcher.start()
        except OSError as exc:
            raise ClusterError(
                f"expected to bind the JobManager's RPC endpoint to {c.get(ClusterOptions.JOBMANAGER_HOST)}:"
                f"{c.get(ClusterOptions.JOBMANAGER_PORT)}; got {exc}; hint: another JobManager runs there, or set "
                f"{ClusterOptions.JOBMANAGER_PORT.key} (0: a free port)"
            ) from exc
        self.dispatcher = dispatcher
        submission = JobSubmissionHandlers(dispatcher, max_content_length=c.get(RestOptions.MAX_CONTENT_LENGTH))
        self._submission = submission
        endpoint = DispatcherRestEndpoint(
            DispatcherGateway(dispatcher, configuration=c, log_files=self.log_files),
            token=rest_token(self.secret),
            version=__version__,
            bind_address=c.get(RestOptions.BIND_ADDRESS),
            port=c.get(RestOptions.PORT),
            advertised_address=c.get(RestOptions.ADDRESS),
            extra_routes=submission.routes(),
            ssl_context=ssl_context,
        )
        try:
            await endpoint.start()
        except OSError as exc:
            raise ClusterError(
                f"expected to bind the REST API to {c.get(RestOptions.BIND_ADDRESS)}:{c.get(RestOptions.PORT)}; got "
                f"{exc}; hint: set {RestOptions.PORT.key} to a free port (0: any)"
            ) from exc
        self._endpoint = endpoint
        self.rest_url = endpoint.url
        settings = prometheus_settings(c)
        if settings is not None:
            self._reporter = PrometheusReporter(self._readings, settings, owner="the JobManager")
            self.metrics_url = await asyncio.to_thread(self._reporter.start)
        host, port = dispatcher.address
        addresses = JobManagerAddresses(rpc_host=host, rpc_port=port, rest_url=self.rest_url, pid=os.getpid())
        self.directory.write_addresses(addresses)
        return addresses

    def _readings(self) -> list[Reading]:
        """A scrape (the reporter's HTTP thread): read on the JobManager's loop."""
        from strom.runtime.metrics.job_metrics import job_manager_readings

        loop, dispatcher = self._loop, self.dispatcher
        if loop is None or dispatcher is None:
            return []

        async def read() -> list[Reading]:
            return job_manager_readings(dispatcher)

        return asyncio.run_coroutine_threadsafe(read(), loop).result(timeout=10.0)

    async def close(self) -> None:
        from strom.web import DispatcherRestEndpoint
        from strom.web.submission import JobSubmissionHandlers

        self.directory.remove_addresses(os.getpid())
        if self.dispatcher is not None:
            self.dispatcher.prepare_shutdown()
        reporter, self._reporter = self._reporter, None
        if reporter is not None:
            await asyncio.to_thread(reporter.close)
        endpoint, self._endpoint = self._endpoint, None
        if isinstance(endpoint, DispatcherRestEndpoint):
            await endpoint.close()
        if self.dispatcher is not None:
            await self.dispatcher.close()
        if isinstance(self._submission, JobSubmissionHandlers):
            self._submission.close()

    async def suspend(self) -> None:
        """HA: leadership lost — stop serving without touching the jobs' tasks, checkpoints or HA data (each
        JobMaster is suspended, not cancelled); the new leader recovers them."""
        from strom.web import DispatcherRestEndpoint
        from strom.web.submission import JobSubmissionHandlers

        dispatcher = self.dispatcher
        if dispatcher is not None:
            dispatcher.resource_manager.shutting_down = True
            for jm in dispatcher.job_masters.values():
                jm.suspend()
        self.directory.remove_addresses(os.getpid())
        reporter, self._reporter = self._reporter, None
        if reporter is not None:
            await asyncio.to_thread(reporter.close)
        endpoint, self._endpoint = self._endpoint, None
        if isinstance(endpoint, DispatcherRestEndpoint):
            await endpoint.close()
        if dispatcher is not None:
            await dispatcher.resource_manager.close()
            await dispatcher.rpc_server.close()
        if isinstance(self._submission, JobSubmissionHandlers):
            self._submission.close()


def job_manager_log_files(config: Configuration, directory: ClusterDirectory, name: str = "") -> LogFiles:
    """The JobManager's log files: ``<name>.log`` in ``env.log.dir``, else in the cluster directory's ``log/`` (where
    its TaskManagers write theirs); ``name`` defaults to ``jobmanager``, with HA to ``jobmanager-<pid>``."""
    if not name:
        name = "jobmanager" if ha_settings(config) is None else f"jobmanager-{os.getpid()}"
    if not name.startswith("jobmanager") or "/" in name or name.startswith("."):
        raise ClusterError(
            f"expected a JobManager name starting with 'jobmanager' and no '/'; got {name!r}; hint: e.g. jobmanager-2"
        )
    return LogFiles(
        config.get(CoreOptions.FLINK_LOG_DIR) or directory.path / "log",
        name,
        owner="JobManager",
        listing="/jobmanager/logs",
        max_files=config.get(CoreOptions.FLINK_LOG_MAX),
    )


async def _serve(config: Configuration, secret: bytes, directory: ClusterDirectory, log_files: LogFiles) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    settings = ha_settings(config)
    if settings is not None:  # standby until elected (strom.deploy.standalone.high_availability)

        def job_manager(session: LeaderSession) -> StandaloneJobManager:
            return StandaloneJobManager(config, secret=secret, directory=directory, ha=session, log_files=log_files)

        await serve_with_high_availability(settings, stop, job_manager)
        return
    jm = StandaloneJobManager(config, secret=secret, directory=directory, log_files=log_files)
    try:
        addresses = await jm.start()
        print(
            f"strom jobmanager (pid {addresses.pid}): RPC {addresses.rpc_host}:{addresses.rpc_port}, REST "
            f"{addresses.rest_url}, cluster directory {directory.path}"
            + (f", metrics {jm.metrics_url}" if jm.metrics_url else ""),
            flush=True,
        )
        await stop.wait()
        log.info("stopping the JobManager")
    finally:
        await jm.close()  # its Dispatcher lets the clean-up a job's end started finish, then cancels the rest


def run_job_manager(
    config: Configuration, directory: ClusterDirectory, *, secret_file: Path | None = None, name: str = ""
) -> int:
    """Run a JobManager in the foreground until SIGTERM/SIGINT; returns the exit code. Its log records go to
    standard error and to its log file (:func:`job_manager_log_files` of ``name``)."""
    logging.basicConfig(
        level=logging_level(config), format="%(asctime)s %(levelname)s [jobmanager] %(name)s: %(message)s"
    )
    log_files: LogFiles | None = None
    try:
        secret = directory.load_or_create_secret(secret_file)  # creates the cluster directory (mode 0700)
        log_files = job_manager_log_files(config, directory, name)
        log_files.install()
        create_rest_server_ssl_context(config)  # a bad store fails now, not once a standby is elected
        asyncio.run(_serve(config, secret, directory, log_files))
    except (ClusterError, ConfigurationError) as exc:
        print(f"strom jobmanager: {exc}", file=sys.stderr)
        return 1
    finally:
        if log_files is not None:
            log_files.close()
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    return 0
