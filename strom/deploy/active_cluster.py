"""``ActiveCluster``: a JobManager in this process whose ResourceManager starts its own TaskManagers.

Flink's *active* resource managers (YARN, Kubernetes) ask a resource provider for containers and start
TaskManagers in them; a lost TaskManager is replaced by a new one. This is that shape: the JobManager
(Dispatcher, ResourceManager, JobMasters) runs on an asyncio loop in a background thread — callers cross
into it with :meth:`run` — and a subclass, the *driver* of one resource provider, starts and stops the
TaskManagers (Flink's ``ResourceManagerDriver``):

- :class:`~strom.deploy.minicluster.MiniCluster`: child processes of this one;
- :class:`~strom.deploy.spark.SparkCluster`: single-task Spark jobs, each hosting one TaskManager.

Every TaskManager gets a fresh id and launch token (the ResourceManager accepts one registration per
token), so a lost TaskManager that comes back is fenced off; the runtime never learns who started it. Its
*resource id* (Flink's ``ResourceID``, which names its working directory, FLIP-198) is its id, except that a
TaskManager started in place of a lost one (or of one that ended before it registered) takes the lost one's: as a
TaskManager process restarted with the same ``taskmanager.resource-id``, it finds the lost one's working directory
and the local copies of checkpointed state in it (local recovery).
A lost TaskManager is released at once (Flink's ``releaseResource``: the MiniCluster kills and reaps its
process) and replaced. These driver actions run on one thread of the cluster's own, off the
JobManager loop; ``close()`` waits for them before it stops the TaskManagers, so none escapes it.

A TaskManager that ends before it registers (the driver reports it: :meth:`ActiveCluster._worker_terminated`) is a
*start failure*, as in Flink's ``ActiveResourceManager``: it is replaced at once, and a ``ThresholdMeter`` counts
these failures. When ``resourcemanager.start-worker.max-failure-rate`` of them fall within a minute, starting new
TaskManagers pauses for ``resourcemanager.start-worker.retry-interval`` and — strom's departure — what waits for
their slots fails now with :class:`~strom.exceptions.TaskManagerStartError` naming the last one's exit and log (the
cluster's start, or the job, which is then not restarted) instead of waiting for ``slot.request.timeout`` again and
again. After the pause TaskManagers are started again only while a job waits for slots.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import logging
import os
import secrets
import shutil
import tempfile
import threading
import time
import weakref
from abc import ABC, abstractmethod
from collections.abc import Coroutine
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from strom.config import (
    ClusterOptions,
    Configuration,
    ExecutionOptions,
    HeartbeatOptions,
    RestOptions,
    TaskManagerOptions,
)
from strom.config_logging import configure_client_logging
from strom.config_units import format_duration
from strom.deploy.prestarted_task_managers import task_manager_id
from strom.exceptions import ClusterError, ConfigurationError, TaskManagerStartError
from strom.runtime.checkpoint.temporary_dir import (
    create_temporary_checkpoint_dir,
    is_abandoned,
    owner_pid,
)
from strom.runtime.dispatcher.dispatcher import Dispatcher
from strom.runtime.metrics.threshold_meter import ThresholdMeter
from strom.runtime.net.internal_ssl import internal_ssl_contexts
from strom.runtime.resourcemanager.slot_manager import TaskManagerRegistration
from strom.runtime.rpc.auth import new_secret
from strom.runtime.taskexecutor.task_manager_configuration import TaskManagerConfiguration

if TYPE_CHECKING:
    from strom.web import DispatcherRestEndpoint

__all__ = ["ActiveCluster"]

log = logging.getLogger(__name__)
T = TypeVar("T")

_DRIVER_TIMEOUT = 30.0  # seconds close() waits for releases and launches still under way
#: seconds after its start a cluster starts the REST endpoint nobody asked for yet (on a free port): a job that ended
#: sooner was not watched, and did not pay for aiohttp's import (issue 33)
_REST_START_DELAY = 1.0

_LIVE: weakref.WeakSet[ActiveCluster] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for cluster in list(_LIVE):
        cluster.close()


def _validate_options(config: Configuration) -> None:
    """The cluster's options make sense together (what Flink's ``HeartbeatServices`` checks, and signs)."""
    switch_interval = config.get(TaskManagerOptions.SWITCH_INTERVAL)
    if switch_interval < 0:
        raise ConfigurationError(
            f"expected {TaskManagerOptions.SWITCH_INTERVAL.key} >= 0 (milliseconds); got {switch_interval}; "
            "hint: 0 keeps Python's own interval, the default is 1"
        )
    interval, timeout = config.get(HeartbeatOptions.INTERVAL), config.get(HeartbeatOptions.TIMEOUT)
    if interval <= timedelta(0):
        raise ConfigurationError(
            f"expected {HeartbeatOptions.INTERVAL.key} > 0; got {format_duration(interval)}; hint: the default is "
            f"'{HeartbeatOptions.INTERVAL.format_default()}'"
        )
    if timeout < interval:
        raise ConfigurationError(
            f"expected {HeartbeatOptions.TIMEOUT.key} >= {HeartbeatOptions.INTERVAL.key} "
            f"({format_duration(interval)}); got {format_duration(timeout)}; hint: a peer is declared lost after "
            f"the timeout, so it must span heartbeats (Flink's defaults: '10 s' and '50 s'; bare numbers are ms)"
        )
    rate = config.get(ClusterOptions.START_WORKER_MAX_FAILURE_RATE)
    if not 0 < rate < float("inf"):
        raise ConfigurationError(
            f"expected {ClusterOptions.START_WORKER_MAX_FAILURE_RATE.key} > 0 (TaskManager start failures per minute); "
            f"got {rate}; hint: the default is {ClusterOptions.START_WORKER_MAX_FAILURE_RATE.default}"
        )
    for option, least in (
        (ClusterOptions.SLOT_REQUEST_TIMEOUT, timedelta.resolution),
        (ClusterOptions.REGISTRATION_TIMEOUT, timedelta.resolution),
        (ExecutionOptions.CANCELLATION_TIMEOUT, timedelta(0)),
        (ClusterOptions.START_WORKER_RETRY_INTERVAL, timedelta(0)),
    ):
        value = config.get(option)
        if value < least:
            raise ConfigurationError(
                f"expected {option.key} {'> 0' if least else '>= 0'}; got {format_duration(value)}; "
                f"hint: the default is '{option.format_default()}'"
            )


def remove_abandoned_checkpoint_dirs(tmp: str | None = None) -> list[str]:
    """Remove the temporary checkpoint directories of dead processes (a client killed before it could clean
    up); returns them. Only strom's own, of this user: named ``strom-checkpoints-<pid>-*`` with an owner
    lock nobody holds, or — not yet locked by a process that just made one — whose pid is not running. A
    user-configured ``execution.checkpointing.dir`` is never touched. The uncommitted part files that the
    FileSinks of such a directory's jobs left behind go first (:func:`remove_abandoned_parts_of`)."""
    tmp = tmp or tempfile.gettempdir()
    removed: list[str] = []
    try:
        names = os.listdir(tmp)
    except OSError:
        return removed
    for name in names:
        if owner_pid(name) is None:  # not named strom-checkpoints-<pid>-*
            continue
        path = os.path.join(tmp, name)
        with contextlib.suppress(OSError):
            if os.lstat(path).st_uid == os.getuid() and is_abandoned(path):
                from strom.connectors.file_system import remove_abandoned_parts_of  # fsspec: only when there are some

                parts = remove_abandoned_parts_of(path)
                if parts:
                    log.info("removed %d part file(s) that a killed client's jobs never committed", len(parts))
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
    return removed


class ActiveCluster(ABC):
    """The JobManager side; a subclass is the driver of one resource provider (the abstract methods; it reports a
    TaskManager that ended with :meth:`_worker_terminated`)."""

    #: what the cluster calls itself in messages ("the MiniCluster", "the Spark cluster")
    kind = "the cluster"

    def __init__(self, config: Configuration, *, num_task_managers: int) -> None:
        self.config = config
        self.num_task_managers = max(1, num_task_managers)
        _validate_options(config)
        configure_client_logging(config)  # before the first record of the cluster's
        #: what every TaskManager of the cluster starts with, mapped from the configuration here, once
        self.task_manager_configuration = self._task_manager_configuration(config)
        self.slots_per_task_manager = self.task_manager_configuration.num_slots
        self.log_level = self.task_manager_configuration.log_level
        self.secret = new_secret()
        self.dispatcher: Dispatcher | None = None
        self.rest_endpoint: DispatcherRestEndpoint | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed = False
        self._lock = threading.Lock()
        self._rest_lock = threading.Lock()  # held while the REST endpoint starts, and by close() to read it
        self._next_tm = 0
        self._checkpoint_dir = ""
        self._checkpoint_dir_lock = -1
        self._registered_pids: dict[str, int] = {}  # tm id -> pid, every TaskManager that registered
        self._resource_ids: dict[str, str] = {}  # tm id -> its resource id
        self._free_resource_ids: list[str] = []  # of lost TaskManagers: the next ones started take them
        #: releases and replacements of lost TaskManagers, one at a time, off the JobManager loop
        self._driver = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="strom-rm-driver")
        self._driver_jobs: set[concurrent.futures.Future[None]] = set()
        # Flink's ActiveResourceManager, touched on the JobManager loop only: TaskManagers to start (lost ones and
        # those that ended before registering), the start failures of the last minute, a pause after too many
        self._missing = 0
        self._start_failures = ThresholdMeter(
            max_events_per_interval=config.get(ClusterOptions.START_WORKER_MAX_FAILURE_RATE), interval_s=60.0
        )
        self._retry_interval = config.get(ClusterOptions.START_WORKER_RETRY_INTERVAL).total_seconds()
        self._paused_until = 0.0

    # -- driver interface (Flink's ResourceManagerDriver) ---------------------------------------------
    @abstractmethod
    def _launch_task_manager(self, tm_id: str, launch_token: str) -> None:
        """Start TaskManager ``tm_id`` with ``launch_token`` (any thread but the JobManager loop's)."""

    @abstractmethod
    def _stop_task_managers(self) -> None:
        """Stop every TaskManager and wait (bounded) until they are gone."""

    def _task_manager_configuration(self, config: Configuration) -> TaskManagerConfiguration:
        """The TaskManagers' settings (Flink's ``TaskManagerConfiguration``); a driver drops what its hosts lack."""
        return TaskManagerConfiguration.from_configuration(config)

    def _release_task_manager(self, tm_id: str) -> None:
        """TaskManager ``tm_id`` was declared lost: make sure it is gone (driver thread). Default: nothing."""

    def _start_failure_hint(self) -> str:
        """The hint of the error when TaskManagers keep ending before they register."""
        return "see the TaskManagers' error output above"

    def _worker_terminated(self, tm_id: str, diagnostics: str) -> None:
        """The driver saw TaskManager ``tm_id`` end, ``diagnostics`` says how (Flink's ``onWorkerTerminated``; any
        thread). Before it registered that is a start failure; a registered one's end is its loss, which the
        ResourceManager sees by itself (its connection closes, its heartbeats stop)."""
        if self._loop is not None:
            self.call_soon(self._on_worker_terminated, tm_id, diagnostics)

    def _default_checkpoint_dir(self) -> str:
        """A temporary checkpoint directory, created on first use, removed on close."""
        with self._lock:
            if not self._checkpoint_dir:
                self._checkpoint_dir, self._checkpoint_dir_lock = create_temporary_checkpoint_dir()
            return self._checkpoint_dir

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> ActiveCluster:
        for path in remove_abandoned_checkpoint_dirs():
            log.info("removed %s, the temporary checkpoint directory of a client that was killed", path)
        _LIVE.add(self)
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="strom-jobmanager", daemon=True)
        self._thread.start()
        try:
            self.run(self._start_dispatcher())
            for _ in range(self.num_task_managers):
                self._start_task_manager()
            if self._rest_endpoint_configured():
                self._ensure_rest_endpoint()  # while the TaskManagers start: a process start is most of a cluster's
            else:  # on a free port nobody knows before asking for its URL: on demand, or once the job ran a moment
                loop.call_later(_REST_START_DELAY, self._submit_to_driver, self._start_rest_endpoint_later)
            self._wait_for_registration()
        except BaseException:
            self.close()
            raise
        return self

    async def _start_dispatcher(self) -> None:
        c = self.config
        self.dispatcher = Dispatcher(
            secret=self.secret,
            host=c.get(ClusterOptions.JOBMANAGER_HOST),
            heartbeat_interval=c.get(HeartbeatOptions.INTERVAL).total_seconds(),
            heartbeat_timeout=c.get(HeartbeatOptions.TIMEOUT).total_seconds(),
            slot_timeout=c.get(ClusterOptions.SLOT_REQUEST_TIMEOUT).total_seconds(),
            default_checkpoint_dir=self._default_checkpoint_dir,
            ssl_contexts=internal_ssl_contexts(c),  # security.ssl.internal.*
        )
        rm = self.dispatcher.resource_manager
        rm.listeners.append(self._task_manager_lost)
        rm.registration_listeners.append(self._task_manager_registered)
        rm.slot_request_listeners.append(self._request_workers_if_required)
        await self.dispatcher.start()

    def _rest_endpoint_configured(self) -> bool:
        """Whether the REST endpoint was asked for: a port, an address, TLS — then it starts with the cluster and its
        errors fail the start. Otherwise it binds a free port nobody can know before asking for :attr:`rest_url`."""
        from strom.runtime.net.ssl_utils import is_rest_ssl_enabled

        c = self.config
        return any(c.contains(o) for o in (RestOptions.PORT, RestOptions.BIND_ADDRESS)) or is_rest_ssl_enabled(c)

    def _ensure_rest_endpoint(self) -> None:
        """Start the REST endpoint unless it runs (any thread but the JobManager loop; waits for a start under way)."""
        with self._rest_lock:
            if self.rest_endpoint is None and not self._closed:
                self._start_rest_endpoint()

    def _start_rest_endpoint_later(self) -> None:
        """Driver thread, :data:`_REST_START_DELAY` after the start: a job still running may be watched."""
        try:
            self._ensure_rest_endpoint()
        except Exception as exc:
            log.warning("%s could not start its REST endpoint: %s", self.kind, exc)

    def _start_rest_endpoint(self) -> None:
        """The REST API and web UI. Started after the TaskManagers were launched, so that importing aiohttp and the
        web modules here (the caller's thread, off the JobManager loop) overlaps with their start."""
        from strom.runtime.net.ssl_utils import create_rest_server_ssl_context
        from strom.web import start_rest_endpoint  # aiohttp is imported only once a cluster starts

        assert self.dispatcher is not None
        c = self.config
        # Flink's port (8081) when rest.port is set; otherwise a free one: many embedded clusters may run at once
        self.rest_endpoint = self.run(
            start_rest_endpoint(
                self.dispatcher,
                secret=self.secret,
                bind_address=c.get(RestOptions.BIND_ADDRESS),
                port=c.get(RestOptions.PORT) if c.contains(RestOptions.PORT) else 0,
                advertised_address=c.get(RestOptions.ADDRESS),
                configuration=c,
                ssl_context=create_rest_server_ssl_context(c),  # security.ssl.rest.*: HTTPS
            )
        )
        log.info("%s's REST API: %s", self.kind, self.rest_endpoint.url)

    def _rest_endpoint_on_demand(self) -> DispatcherRestEndpoint | None:
        """The REST endpoint, started now if it is not yet (not from the JobManager loop, which starting needs)."""
        if self.rest_endpoint is None and self._loop is not None and threading.current_thread() is not self._thread:
            self._ensure_rest_endpoint()
        return self.rest_endpoint

    @property
    def rest_url(self) -> str:
        """The base URL of the cluster's REST API (Flink's paths: ``<url>/jobs``, ``<url>/overview``, ...)."""
        endpoint = self._rest_endpoint_on_demand()
        return endpoint.url if endpoint is not None else ""

    @property
    def rest_token(self) -> str:
        """The token calls that change a job (PATCH, POST) send as ``Authorization: Bearer <token>``."""
        endpoint = self._rest_endpoint_on_demand()
        return endpoint.token if endpoint is not None else ""

    def _start_task_manager(self) -> str:
        """Announce a new TaskManager to the ResourceManager, then have the driver start it."""
        assert self.dispatcher is not None
        with self._lock:
            self._next_tm += 1
            tm_id = task_manager_id(self._next_tm)
            self._resource_ids[tm_id] = self._free_resource_ids.pop(0) if self._free_resource_ids else tm_id
        token = secrets.token_hex(16)
        rm = self.dispatcher.resource_manager
        self.call_soon(rm.expect_task_manager, tm_id, token)
        try:
            self._launch_task_manager(tm_id, token)
        except BaseException:
            self.call_soon(rm.forget_task_manager, tm_id)
            raise
        return tm_id

    def resource_id_of(self, tm_id: str) -> str:
        """TaskManager ``tm_id``'s resource id: its own id, or that of the lost TaskManager it replaces."""
        with self._lock:
            return self._resource_ids.get(tm_id, tm_id)

    def _free_resource_id(self, tm_id: str) -> None:
        """TaskManager ``tm_id`` is gone: the next one started takes its resource id (and working directory)."""
        with self._lock:
            resource_id = self._resource_ids.get(tm_id)
            if resource_id is not None and resource_id not in self._free_resource_ids:
                self._free_resource_ids.append(resource_id)

    def _task_manager_registered(self, reg: TaskManagerRegistration) -> None:
        with self._lock:
            self._registered_pids[reg.tm_id] = reg.pid

    def _task_manager_lost(self, tm_id: str, message: str) -> None:
        """On the JobManager loop: release the lost TaskManager (on the driver thread) and start a replacement."""
        self._submit_to_driver(self._release, tm_id)
        self._free_resource_id(tm_id)
        self._missing += 1
        self._request_workers_if_required()

    def _on_worker_terminated(self, tm_id: str, diagnostics: str) -> None:
        """On the JobManager loop: a TaskManager ended; before it registered, a start failure."""
        with self._lock:
            if self._closed or tm_id in self._registered_pids:
                return
        assert self.dispatcher is not None
        rm = self.dispatcher.resource_manager
        if rm.shutting_down:
            return
        rm.forget_task_manager(tm_id)  # should it still try: never accepted
        self._free_resource_id(tm_id)
        now = time.monotonic()
        self._start_failures.mark_event(now)
        self._missing += 1
        log.warning("TaskManager %s ended before it registered: %s", tm_id, diagnostics)
        if self._start_failures.exceeds_threshold(now):
            self._pause_worker_starts(tm_id, diagnostics, now)
        self._request_workers_if_required()

    def _pause_worker_starts(self, tm_id: str, diagnostics: str, now: float) -> None:
        """Too many start failures within a minute: pause, and fail what waits for slots now."""
        assert self.dispatcher is not None and self._loop is not None
        stats = self._start_failures.statistics(now)
        key = ClusterOptions.START_WORKER_MAX_FAILURE_RATE.key
        error = TaskManagerStartError(
            f"expected the TaskManagers {self.kind} starts to register; got {stats.events_in_interval} that ended "
            f"before registering within a minute ({key}: {stats.max_events_per_interval:g}), the last: TaskManager "
            f"{tm_id} {diagnostics}; hint: {self._start_failure_hint()}"
        )
        log.warning(
            "%d TaskManagers ended before registering within a minute: starting new ones pauses for %s",
            stats.events_in_interval,
            format_duration(timedelta(seconds=self._retry_interval)),
        )
        self._paused_until = now + self._retry_interval
        self._loop.call_later(self._retry_interval, self._request_workers_if_required)
        self.dispatcher.resource_manager.fail_slot_requests(error)

    def _request_workers_if_required(self) -> None:
        """On the JobManager loop (also a slot request listener): start the missing TaskManagers on the driver
        thread — unless paused, or, once start failures reached the maximum rate, while no job waits for slots."""
        if self._missing <= 0 or self.dispatcher is None:
            return
        with self._lock:
            if self._closed:
                return
        now = time.monotonic()
        if now < self._paused_until:
            return  # the end of the pause calls again
        if self._start_failures.exceeds_threshold(now) and not self.dispatcher.resource_manager.slots_wanted:
            return  # the next slot request calls again
        count, self._missing = self._missing, 0
        for _ in range(count):
            self._submit_to_driver(self._start_replacement)

    def _submit_to_driver(self, fn: Any, *args: Any) -> None:
        with self._lock:
            if self._closed:
                return
            job = self._driver.submit(fn, *args)
            self._driver_jobs.add(job)
        job.add_done_callback(self._driver_jobs.discard)

    def _release(self, lost_tm_id: str) -> None:
        try:
            self._release_task_manager(lost_tm_id)
        except Exception as exc:
            log.warning("could not release the lost TaskManager %s: %s", lost_tm_id, exc)

    def _start_replacement(self) -> None:
        """Driver thread: start a TaskManager for one that was lost or ended before registering."""
        with self._lock:
            if self._closed:
                return
        try:
            tm_id = self._start_task_manager()
        except Exception as exc:  # as Flink's failed requestResource: a start failure
            log.warning("could not start a TaskManager: %s", exc)
            self.call_soon(self._on_worker_terminated, "(new)", f"could not be started: {type(exc).__name__}: {exc}")
            return
        log.info("started TaskManager %s to replace one that was lost or ended before registering", tm_id)

    def _wait_for_registration(self) -> None:
        """Until the cluster's TaskManagers registered; a :class:`TaskManagerStartError` if they keep ending before
        (each that does is replaced), a :class:`~strom.exceptions.ResourceError` after the registration timeout."""
        assert self.dispatcher is not None
        timeout = self.config.get(ClusterOptions.REGISTRATION_TIMEOUT).total_seconds()
        self.run(self.dispatcher.resource_manager.wait_for_task_managers(self.num_task_managers, timeout))

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        _LIVE.discard(self)
        loop = self._loop
        dispatcher = self.dispatcher
        running = loop is not None and dispatcher is not None and loop.is_running()
        if running:
            assert dispatcher is not None
            self.call_soon(dispatcher.prepare_shutdown)
        with self._lock:
            jobs = list(self._driver_jobs)
        concurrent.futures.wait(jobs, timeout=_DRIVER_TIMEOUT)  # a launch under way lands in what is stopped next
        self._driver.shutdown(wait=False, cancel_futures=True)
        try:
            self._stop_task_managers()
        finally:
            if running:
                assert dispatcher is not None
                try:
                    with self._rest_lock:  # a start under way ends first (it finds the cluster closed afterwards)
                        endpoint = self.rest_endpoint
                    if endpoint is not None:
                        self.run(endpoint.close(), timeout=10)
                    # the Dispatcher's close lets the clean-up each job's end started finish (its JobMasters' task
                    # groups), then cancels what is left: no task is destroyed pending
                    self.run(dispatcher.close(), timeout=20)
                except Exception as exc:
                    log.debug("closing the dispatcher: %s", exc)
            if loop is not None:
                loop.call_soon_threadsafe(loop.stop)
                if self._thread is not None:
                    self._thread.join(timeout=10)
                if not loop.is_running():
                    loop.close()
            if self._checkpoint_dir:
                from strom.connectors.file_system import remove_abandoned_parts_of  # a job used checkpoints: imported

                os.close(self._checkpoint_dir_lock)  # abandoned now: nothing restores its checkpoints any more
                remove_abandoned_parts_of(self._checkpoint_dir)  # what a cancelled or failed job left pending
                shutil.rmtree(self._checkpoint_dir, ignore_errors=True)

    def __enter__(self) -> ActiveCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- crossing into the JobManager loop ---------------------------------------------------------
    def submit(self, coro: Coroutine[Any, Any, T]) -> Any:
        if self._loop is None or (self._closed and not self._loop.is_running()):
            coro.close()
            raise ClusterError(f"{self.kind} is not running")
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        fut = self.submit(coro)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:  # short waits keep Ctrl-C responsive
            try:
                return fut.result(timeout=0.2)  # type: ignore[no-any-return]
            except TimeoutError:
                if deadline is not None and time.monotonic() > deadline:
                    fut.cancel()
                    raise
            except KeyboardInterrupt:
                fut.cancel()
                raise

    def call_soon(self, fn: Any, *args: Any) -> None:
        assert self._loop is not None
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            self._loop.call_soon_threadsafe(fn, *args)

    # -- introspection -----------------------------------------------------------------------------
    @property
    def task_manager_pids(self) -> list[int]:
        """Every TaskManager process that registered, replacements included."""
        with self._lock:
            return list(self._registered_pids.values())

    @property
    def live_task_manager_pids(self) -> list[int]:
        """The TaskManager processes registered now (lost ones not)."""
        if self.dispatcher is None:
            return []
        return [reg.pid for reg in list(self.dispatcher.resource_manager.slot_manager.task_managers.values())]
