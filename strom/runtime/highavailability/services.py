"""``high-availability.type: file`` services: the election driver, leader retrieval and the fenced hooks the
Dispatcher and JobMasters call (Flink's ``HighAvailabilityServices``).

- :class:`LeaderElectionDriver` runs :class:`~strom.runtime.highavailability.lease.LeaderElection` on the
  JobManager's loop: every ``retry-period`` it reads the newest lease (off the loop), feeds it to the state machine
  and performs the writes; leadership granted or revoked goes to the JobManager's callbacks, in order.
- :func:`read_leader` / :func:`wait_for_leader`: where the current leader serves, for TaskManagers and clients
  (Flink's ``LeaderRetrievalService``).
- :class:`LeaderSession` is one leadership term of a JobManager: its fencing token, the fenced stores, the hooks
  (:meth:`job_submitted`, :meth:`checkpoint_completed`, :meth:`job_ended`, :meth:`recover_jobs`); the
  ResourceManager wraps its TaskManager gateways in :func:`~strom.runtime.rpc.fenced_gateway.fenced_gateway`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pickle
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from strom.config import CheckpointingOptions, Configuration, HighAvailabilityOptions
from strom.exceptions import ConfigurationError
from strom.runtime.execution_state import JobStatus
from strom.runtime.highavailability.lease import (
    GrantLeadership,
    LeaderElection,
    LeaderLease,
    LeaseAction,
    RevokeLeadership,
    WriteLease,
    lease_accepts,
)
from strom.runtime.highavailability.lease_store import FileLeaseStore
from strom.runtime.highavailability.stores import (
    CheckpointPointer,
    CompletedCheckpointStore,
    JobGraphStore,
    JobResultEntry,
    JobResultStore,
    LeadershipLostError,
)
from strom.runtime.jobmaster.job_result import APPLICATION_STATUS, JobResult
from strom.runtime.task_group import AsyncTaskGroup

if TYPE_CHECKING:
    from strom.graph.job_graph import JobGraph
    from strom.runtime.checkpoint.metadata import CheckpointMetadata
    from strom.runtime.dispatcher.dispatcher import Dispatcher
    from strom.runtime.jobmaster.jobmaster import JobMaster

__all__ = [
    "HighAvailabilitySettings",
    "LeaderElectionDriver",
    "LeaderSession",
    "ha_settings",
    "now_ms",
    "read_leader",
    "wait_for_leader",
]

log = logging.getLogger(__name__)

_STATUS_OF_APPLICATION = {status: job_status for job_status, status in APPLICATION_STATUS.items()}


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True, slots=True, kw_only=True)
class HighAvailabilitySettings:
    #: ``<storageDir>/<cluster-id>``
    directory: str
    lease_duration_ms: int
    retry_period_s: float
    #: ``job-result-store.delete-on-commit``
    delete_job_results_on_commit: bool = True


def ha_settings(config: Configuration) -> HighAvailabilitySettings | None:
    """The HA settings ``config`` asks for; None with ``high-availability.type: NONE`` (the default)."""
    kind = config.get(HighAvailabilityOptions.TYPE).strip().lower()
    if kind in ("none", ""):
        return None
    if kind != "file":
        raise ConfigurationError(
            f"expected high-availability.type NONE or file; got {kind!r}; hint: strom keeps the HA data in a shared "
            "directory (file); Flink's zookeeper and kubernetes services are not available"
        )
    storage = config.get(HighAvailabilityOptions.STORAGE_DIR).strip()
    if not storage:
        raise ConfigurationError(
            "expected high-availability.storageDir with high-availability.type: file; got none; hint: a directory "
            "every JobManager, TaskManager and client of the cluster reaches, e.g. /shared/strom-ha or s3://b/ha"
        )
    if "://" not in storage:
        storage = os.path.abspath(os.path.expanduser(storage))
    lease = config.get(HighAvailabilityOptions.LEASE_DURATION).total_seconds()
    retry = config.get(HighAvailabilityOptions.RETRY_PERIOD).total_seconds()
    if not 0 < retry < lease:
        raise ConfigurationError(
            f"expected 0 < {HighAvailabilityOptions.RETRY_PERIOD.key} < {HighAvailabilityOptions.LEASE_DURATION.key}; "
            f"got {retry:g} s and {lease:g} s; hint: renew a few times per lease, e.g. 1 s and 5 s"
        )
    cluster_id = config.get(HighAvailabilityOptions.CLUSTER_ID).strip("/") or "default"
    return HighAvailabilitySettings(
        directory=f"{storage.rstrip('/')}/{cluster_id}",
        lease_duration_ms=int(lease * 1000),
        retry_period_s=retry,
        delete_job_results_on_commit=config.get(HighAvailabilityOptions.JOB_RESULT_DELETE_ON_COMMIT),
    )


# -- leader retrieval --------------------------------------------------------------------------------------------
def read_leader(settings: HighAvailabilitySettings) -> LeaderLease | None:
    """The current leader's lease if one holds it and published its addresses (blocking I/O)."""
    lease = FileLeaseStore(settings.directory).read_latest()
    if lease is None or lease.released or lease.expired(now_ms()) or not lease.rpc_address:
        return None
    return lease


async def wait_for_leader(
    settings: HighAvailabilitySettings, timeout: float, *, other_than: str = ""
) -> LeaderLease | None:
    """Poll until a leader (whose session is not ``other_than``) published its addresses; None after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        lease = await asyncio.to_thread(read_leader, settings)
        if lease is not None and lease.session_id != other_than:
            return lease
        if time.monotonic() >= deadline:
            return None
        await asyncio.sleep(min(settings.retry_period_s / 4, 0.25))


def fencing_check(settings: HighAvailabilitySettings) -> Callable[[str], Awaitable[bool]]:
    """For a TaskManager: whether a token is the current leader's, on a freshly read lease (off the loop)."""
    store = FileLeaseStore(settings.directory)

    async def check(token: str) -> bool:
        latest = await asyncio.to_thread(store.read_latest)
        return lease_accepts(latest, token, now_ms())

    return check


# -- the election ------------------------------------------------------------------------------------------------
class LeaderElectionDriver:
    """Drives the election for one JobManager process on its loop (start/close, as every component)."""

    def __init__(
        self,
        settings: HighAvailabilitySettings,
        *,
        contender_id: str,
        on_grant: Callable[[str], None],
        on_revoke: Callable[[str, str], None],
    ) -> None:
        self.settings = settings
        self.store = FileLeaseStore(settings.directory)
        self.election = LeaderElection(
            contender_id=contender_id,
            lease_duration_ms=settings.lease_duration_ms,
            new_session=lambda: secrets.token_hex(16),
        )
        self._on_grant = on_grant
        self._on_revoke = on_revoke
        self._task: asyncio.Task[None] | None = None
        self._tasks = AsyncTaskGroup("leader election")
        self._wake = asyncio.Event()

    def start(self) -> None:
        self._task = self._tasks.create_task(self._run(), name="leader election")

    async def _run(self) -> None:
        while True:
            try:
                latest = await asyncio.to_thread(self.store.read_latest)
                await self._perform(self.election.on_observed(latest, now_ms()))
            except (OSError, ValueError) as exc:
                log.warning("reading the leader lease in %s failed: %s", self.settings.directory, exc)
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.settings.retry_period_s)

    async def _perform(self, actions: list[LeaseAction]) -> None:
        for action in actions:
            if isinstance(action, WriteLease):
                try:
                    won = await asyncio.to_thread(self.store.try_write, action.lease)
                except OSError as exc:
                    log.warning("writing lease generation %d failed: %s", action.lease.generation, exc)
                    await self._perform(self.election.on_write_failed(now_ms()))
                    continue
                await self._perform(self.election.on_write_result(won, now_ms()))
                if won and action.lease.generation % 8 == 0:
                    with contextlib.suppress(OSError):
                        await asyncio.to_thread(self.store.prune, action.lease.generation)
            elif isinstance(action, GrantLeadership):
                log.info("leadership granted (session %s)", action.session_id)
                self._on_grant(action.session_id)
            elif isinstance(action, RevokeLeadership):
                log.warning("leadership of session %s revoked: %s", action.session_id, action.reason)
                self._on_revoke(action.session_id, action.reason)

    def confirm_leadership(self, session_id: str, rpc_address: str, rest_url: str) -> None:
        """The leader serves: publish its addresses with the next renewal, which runs now."""
        if self.election.session_id == session_id:
            self.election.confirm_leadership(rpc_address, rest_url)
            self._wake.set()

    def is_leader(self, session_id: str) -> bool:
        return self.election.session_id == session_id and self.election.is_leader(now_ms())

    async def close(self, *, release: bool = True) -> None:
        self._tasks.close()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if release:
            with contextlib.suppress(OSError, ValueError):
                latest = await asyncio.to_thread(self.store.read_latest)
                actions = self.election.release(latest, now_ms())
                for action in actions:
                    if isinstance(action, WriteLease):
                        await asyncio.to_thread(self.store.try_write, action.lease)


# -- a leadership term -------------------------------------------------------------------------------------------
class LeaderSession:
    """One leadership term of a JobManager: the fencing token and the fenced HA stores."""

    def __init__(self, settings: HighAvailabilitySettings, driver: LeaderElectionDriver, session_id: str) -> None:
        self.settings = settings
        self.driver = driver
        self.session_id = session_id
        self._lease = FileLeaseStore(settings.directory)
        self.job_graphs = JobGraphStore(settings.directory, self.fence)
        self.checkpoints = CompletedCheckpointStore(settings.directory, self.fence)
        self.job_results = JobResultStore(
            settings.directory, self.fence, delete_on_commit=settings.delete_job_results_on_commit
        )
        self._python_files: Any = None

    def fence(self) -> int:
        """Raise :class:`LeadershipLostError` unless this term's session holds the newest, unexpired lease; return
        that lease's generation (blocking I/O: the stores call it off the loop)."""
        latest = self._lease.read_latest()
        if not lease_accepts(latest, self.session_id, now_ms()):
            holder = "nobody" if latest is None else f"session {latest.session_id or '(released)'} of {latest.holder}"
            raise LeadershipLostError(
                f"expected this JobManager's session {self.session_id} to hold the leader lease; got {holder}; "
                "hint: another JobManager took over — this one steps down without writing"
            )
        assert latest is not None
        return latest.generation

    def is_leader_now(self) -> bool:
        """The cheap check on the loop (own clock, no I/O): before a deploy or a checkpoint trigger."""
        return self.driver.is_leader(self.session_id)

    # -- Dispatcher hooks --------------------------------------------------------------------------------
    async def job_submitted(self, job_graph: JobGraph, jm: JobMaster) -> None:
        """Before the JobMaster starts: the graph into the JobGraphStore; checkpoint ids past every existing one."""
        import cloudpickle

        from strom.runtime.python_files import PYTHON_FILES_KEY

        files = job_graph.config.get(PYTHON_FILES_KEY)
        data = pickle.dumps((files if isinstance(files, bytes) else b"", cloudpickle.dumps(job_graph, protocol=5)))
        await asyncio.to_thread(self.job_graphs.put_job_graph, job_graph.job_id, data)
        jm.ha = self
        if jm.checkpoints is not None:
            jm.checkpoints.completed_checkpoint_store = self
            storage = jm.checkpoints.storage
            found = await asyncio.to_thread(storage._checkpoint_dirs)
            if found:  # a leader before this one may have started checkpoints that never completed
                coordinator = jm.checkpoints.coordinator
                coordinator.next_checkpoint_id = max(coordinator.next_checkpoint_id, found[-1][0] + 1)
            await asyncio.to_thread(storage.discover_completed)

    async def checkpoint_completed(self, job_id: str, metadata: CheckpointMetadata) -> None:
        """Before any notify: the pointer into the CompletedCheckpointStore (fenced; raises if superseded)."""
        pointer = CheckpointPointer(
            checkpoint_id=metadata.checkpoint_id,
            external_pointer=metadata.external_pointer,
            session_id=self.session_id,
            timestamp_ms=metadata.timestamp_ms,
        )
        await asyncio.to_thread(self.checkpoints.add_checkpoint, job_id, pointer)

    async def job_result_dirty(self, result: JobResult) -> None:
        """The job is globally terminal: its result into the JobResultStore before any clean-up (fenced; raises if
        superseded — then nothing is cleaned up, and the next leader recovers the job)."""
        entry = JobResultEntry(
            job_id=result.job_id,
            job_name=result.job_name,
            application_status=APPLICATION_STATUS.get(result.status, "UNKNOWN"),
            net_runtime_ms=result.net_runtime_ms,
            failure_text=result.failure_text if result.status is not JobStatus.FINISHED else "",
        )
        await asyncio.to_thread(self.job_results.create_dirty_result, entry)

    async def job_ended(self, job_id: str) -> None:
        """After the job's own clean-up: its HA data goes, then its result entry is marked clean."""
        try:
            await asyncio.to_thread(self.checkpoints.remove_job, job_id)
            await asyncio.to_thread(self.job_graphs.remove_job_graph, job_id)
            await asyncio.to_thread(self.job_results.mark_result_clean, job_id)
        except LeadershipLostError as exc:
            log.warning("job %s ended, but its HA clean-up is left to the next leader: %s", job_id, exc)

    async def recover_jobs(self, dispatcher: Dispatcher) -> list[str]:
        """A new leader: every job in the JobGraphStore, from its latest completed checkpoint (Flink's
        ``JobDispatcherLeaderProcess`` recovering the ``ExecutionPlanStore``) — except a job with an entry in the
        JobResultStore, which ended: its clean-up is finished (a dirty entry) and its result answered, never run."""
        from strom.runtime.python_files import PythonFilesCache

        recovered = []
        results = await asyncio.to_thread(self.job_results.entries)
        for job_id, (entry, dirty) in results.items():  # ended under an earlier leader: never run again
            dispatcher.recovered_results[job_id] = JobResult(
                job_id=job_id,
                job_name=entry.job_name,
                status=_STATUS_OF_APPLICATION.get(entry.application_status, JobStatus.FAILED),
                net_runtime_ms=entry.net_runtime_ms,
                failure_text=entry.failure_text,
            )
            if dirty:
                log.info(
                    "job %s ended %s under an earlier leader: finishing its clean-up", job_id, entry.application_status
                )
                await self.job_ended(job_id)
        for job_id in await asyncio.to_thread(self.job_graphs.job_ids):
            if job_id in dispatcher.job_masters or job_id in results:
                continue
            try:
                data = await asyncio.to_thread(self.job_graphs.get_job_graph, job_id)
                files, graph_bytes = pickle.loads(data)
                if files:
                    if self._python_files is None:
                        self._python_files = PythonFilesCache("jobmanager-ha")
                    await asyncio.to_thread(self._python_files.install, job_id, files)
                graph: JobGraph = await asyncio.to_thread(pickle.loads, graph_bytes)
                pointer = await asyncio.to_thread(self.checkpoints.latest, job_id)
                # from now on a pointer an older leader still writes past this one is ignored
                await asyncio.to_thread(self.checkpoints.record_recovery, job_id, self.session_id, pointer)
                if pointer is not None:
                    graph.job_configuration[CheckpointingOptions.SAVEPOINT_PATH.key] = pointer.external_pointer
                log.info(
                    "recovering job '%s' (%s) from %s",
                    graph.job_name,
                    job_id,
                    pointer.external_pointer if pointer is not None else "its start",
                )
                await dispatcher.submit_job(graph, wait_started=False)  # each waits for its slots on its own
                recovered.append(job_id)
            except LeadershipLostError:
                raise
            except Exception as exc:
                log.error("job %s could not be recovered: %s", job_id, exc)
        return recovered

    def close(self) -> None:
        if self._python_files is not None:
            self._python_files.close()
