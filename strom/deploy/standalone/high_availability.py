"""A standalone cluster with ``high-availability.type: file``: standby JobManagers and TaskManagers that follow the
leader (:mod:`strom.runtime.highavailability`).

``strom jobmanager`` contends for the leader lease. Elected, it starts a JobManager term — the Dispatcher, its
RPC endpoint and the REST API, every TaskManager call fenced with the term's session id — publishes its addresses
in the lease, and recovers every job of the JobGraphStore from its latest completed checkpoint. Its leadership
revoked (its lease expired or another took it: the process was paused), it suspends the term — no cancel, no
clean-up, no write — and contends again as a standby. SIGTERM hands the jobs over: the term is suspended and the
lease released, so a standby takes over at once (the jobs keep running; Flink does the same).

``strom taskmanager`` reads the leader from the lease, joins it, and when it loses it (the connection closes, its
heartbeats stop, or the lease names another session) closes its TaskExecutor — its tasks belong to the old term —
and joins the next leader instead of exiting.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from strom.config import ClusterOptions, Configuration
from strom.deploy.standalone.cluster_dir import JobManagerAddresses, parse_host_port
from strom.exceptions import ClusterError, RpcError
from strom.runtime.dispatcher.dispatcher import Dispatcher
from strom.runtime.highavailability.lease import LeaderLease
from strom.runtime.highavailability.services import (
    HighAvailabilitySettings,
    LeaderElectionDriver,
    LeaderSession,
    fencing_check,
    wait_for_leader,
)
from strom.runtime.task_group import AsyncTaskGroup
from strom.runtime.taskexecutor.task_executor import TaskExecutor

__all__ = ["run_task_manager_with_high_availability", "serve_with_high_availability"]

log = logging.getLogger(__name__)


class LeaderTerm(Protocol):
    """The JobManager one leadership term serves (a :class:`~strom.deploy.standalone.jobmanager.StandaloneJobManager`
    fenced by that term's :class:`LeaderSession`)."""

    dispatcher: Dispatcher | None

    async def start(self) -> JobManagerAddresses: ...

    async def suspend(self) -> None: ...


async def serve_with_high_availability(
    settings: HighAvailabilitySettings,
    stop: asyncio.Event,
    job_manager: Callable[[LeaderSession], LeaderTerm],
) -> None:
    """Contend for leadership until ``stop``; serve a JobManager term while elected: ``job_manager(session)``
    builds the term's JobManager (the standalone one passes its configuration, secret, directory and log files)."""
    events: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
    contender = f"{socket.gethostname()}:{os.getpid()}"
    driver = LeaderElectionDriver(
        settings,
        contender_id=contender,
        on_grant=lambda session: events.put_nowait(("grant", session)),
        on_revoke=lambda session, reason: events.put_nowait(("revoke", session)),
    )
    print(f"strom jobmanager (pid {os.getpid()}): standby, HA directory {settings.directory}", flush=True)
    term: tuple[str, LeaderTerm, LeaderSession] | None = None

    async def end_term() -> None:
        nonlocal term
        if term is not None:
            _, jm, session = term
            term = None
            await jm.suspend()
            session.close()

    driver.start()
    tasks = AsyncTaskGroup("JobManager leadership")
    stopping = tasks.create_task(stop.wait())
    try:
        while not stop.is_set():
            getting = tasks.create_task(events.get())
            done, _ = await asyncio.wait({getting, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if getting not in done:
                getting.cancel()
                break
            kind, session_id = getting.result()
            if kind == "revoke":
                if term is not None and term[0] == session_id:
                    log.warning("JobManager %s steps down (session %s)", contender, session_id)
                    print(f"strom jobmanager (pid {os.getpid()}): leadership lost; standby", flush=True)
                    await end_term()
                continue
            await end_term()
            session = LeaderSession(settings, driver, session_id)
            jm = job_manager(session)
            term = (session_id, jm, session)
            try:
                addresses = await jm.start()
            except ClusterError as exc:
                log.error("the elected JobManager could not start: %s", exc)
                await end_term()
                continue
            assert jm.dispatcher is not None
            driver.confirm_leadership(session_id, f"{addresses.rpc_host}:{addresses.rpc_port}", addresses.rest_url)
            print(
                f"strom jobmanager (pid {addresses.pid}): leader (session {session_id}): RPC {addresses.rpc_host}:"
                f"{addresses.rpc_port}, REST {addresses.rest_url}",
                flush=True,
            )
            try:
                recovered = await session.recover_jobs(jm.dispatcher)
            except ClusterError as exc:  # lost the lease while recovering: the revoke follows
                log.warning("job recovery stopped: %s", exc)
                continue
            finally:
                jm.dispatcher.recovering = False
            if recovered:
                log.info("recovered %d job(s): %s", len(recovered), ", ".join(recovered))
    finally:
        await tasks.stop()
        await end_term()
        await driver.close(release=True)


async def run_task_manager_with_high_availability(
    config: Configuration,
    settings: HighAvailabilitySettings,
    proposed_id: str,
    run_once: Callable[[tuple[str, int], str, Callable[[TaskExecutor], None]], Awaitable[bool]],
) -> bool:
    """Join the current leader and, whenever it is lost, the next one; True once told to stop (SIGTERM/SIGINT).
    ``run_once(address, proposed id, configure)`` joins one leader and serves until its TaskExecutor ends (True:
    told to stop)."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    timeout = config.get(ClusterOptions.REGISTRATION_TIMEOUT).total_seconds()
    check = fencing_check(settings)
    tm_id = proposed_id
    last_session = ""
    while True:
        for sig in (signal.SIGTERM, signal.SIGINT):  # while no TaskExecutor runs (one installs its own)
            loop.add_signal_handler(sig, stop.set)
        lease = await _wait_for_leader_or_stop(settings, timeout, last_session, stop)
        if stop.is_set():  # SIGTERM while no leader serves (strom cluster stop after the leader): stop now
            return True
        if lease is None:
            raise ClusterError(
                f"expected a leading JobManager in {settings.directory} within {timeout:.0f} s; got none; hint: start "
                "strom jobmanager with the same high-availability.storageDir"
            )
        address = parse_host_port(lease.rpc_address, "the leader's RPC address")
        session = lease.session_id
        last_session = session
        current: list[TaskExecutor] = []

        def configure(executor: TaskExecutor, session: str = session, current: list[TaskExecutor] = current) -> None:
            executor.fencing_token = session
            executor.leader_check = check
            current.append(executor)

        watcher = AsyncTaskGroup("leader lease watcher")
        watcher.create_task(_follow_lease(settings, session, current), name="follow the leader lease")
        started = time.monotonic()
        try:
            if await run_once(address, tm_id, configure):
                return True
        except (ClusterError, RpcError) as exc:
            log.warning("TaskManager %s: joining the leader at %s failed: %s", tm_id, lease.rpc_address, exc)
        finally:
            await watcher.stop()
        if current:
            tm_id = current[0].tm_id  # the next leader is asked for the same id
        print(
            f"strom taskmanager {tm_id}: left the leader at {lease.rpc_address} after "
            f"{time.monotonic() - started:.1f} s; looking for the next one",
            flush=True,
        )


async def _wait_for_leader_or_stop(
    settings: HighAvailabilitySettings, timeout: float, other_than: str, stop: asyncio.Event
) -> LeaderLease | None:
    """:func:`wait_for_leader`, given up as soon as ``stop`` is set."""
    tasks = AsyncTaskGroup("waiting for a leader")
    waiting = tasks.create_task(wait_for_leader(settings, timeout, other_than=other_than), awaited=True)
    stopping = tasks.create_task(stop.wait())
    try:
        await asyncio.wait({waiting, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        if not waiting.done():
            waiting.cancel()
    return waiting.result() if waiting.done() and not waiting.cancelled() else None


async def _follow_lease(settings: HighAvailabilitySettings, session: str, current: list[TaskExecutor]) -> None:
    """Leader retrieval: once the lease names another session (or ran out and was taken), leave this leader."""
    from strom.runtime.highavailability.lease_store import FileLeaseStore

    store = FileLeaseStore(settings.directory)
    while True:
        await asyncio.sleep(settings.retry_period_s)
        try:
            latest = await asyncio.to_thread(store.read_latest)
        except (OSError, ValueError):
            continue
        if latest is not None and latest.session_id != session:
            log.warning("the leader lease names session %s now; leaving the leader of %s", latest.session_id, session)
            for executor in list(current):
                await executor.close()
            return
