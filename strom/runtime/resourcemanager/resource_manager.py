"""``ResourceManager``: TaskManager registration, slot requests and TaskManager liveness.

TaskManagers register here; JobMasters request slots (waiting, up to a timeout, for TaskManagers still
starting). A TaskManager is declared lost when its RPC connection drops or its heartbeats stop; the
listeners (the Dispatcher, which tells each JobMaster) then fail whatever ran there.

Launch tokens fence stale TaskManagers. Whoever starts a TaskManager (the MiniCluster's processes, a
Spark job) first announces it with :meth:`expect_task_manager` and hands the process the same fresh
token; a registration is accepted once per token, and a lost TaskManager's token is never accepted
again. So a TaskManager that comes back after it was declared lost — a retried Spark task, a cancelled
worker that lived on for seconds — is refused and shuts down instead of running a second copy.

A standalone cluster's ResourceManager (``accepts_standalone_task_managers``) also takes TaskManagers it did not
start: one started by ``strom taskmanager`` — already authenticated with the cluster secret by the RPC handshake —
asks :meth:`accept_task_manager` for an id and a fresh launch token, then registers with them like any other, so
the same fencing holds for it.

Whoever starts TaskManagers learns here when a job waits for slots (``slot_request_listeners``: start the missing
ones) and may fail what waits for slots now (:meth:`fail_slot_requests`: TaskManagers keep ending before they
register).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import secrets
import ssl
from collections.abc import Callable, Sequence

from strom.exceptions import ResourceError, RpcError, TaskManagerStartError
from strom.runtime.resourcemanager.slot_manager import (
    MINICLUSTER_HINT,
    STANDALONE_HINT,
    SlotManager,
    SlotOffer,
    TaskManagerRegistration,
)
from strom.runtime.rpc import HeartbeatMonitor, HeartbeatSender, RpcClient, SystemClock
from strom.runtime.rpc.fenced_gateway import fenced_gateway
from strom.runtime.task_group import AsyncTaskGroup

__all__ = ["ResourceManager", "task_manager_lost_message"]

log = logging.getLogger(__name__)


def task_manager_lost_message(tm_id: str, pid: int, cause: str) -> str:
    """How a lost TaskManager is named as a job's failure, whichever signal told of it first."""
    return f"TaskManager {tm_id} (pid {pid}) was lost: {cause}"


class ResourceManager:
    def __init__(
        self,
        *,
        secret: bytes,
        heartbeat_interval: float,
        heartbeat_timeout: float,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.secret = secret
        self.ssl_context = ssl_context  # internal TLS: the client context its TaskManager connections use
        self.slot_manager = SlotManager()
        self.gateways: dict[str, RpcClient] = {}
        self.listeners: list[Callable[[str, str], None]] = []
        #: called with each accepted registration (tm id, pid)
        self.registration_listeners: list[Callable[[TaskManagerRegistration], None]] = []
        #: called when a slot request (or a wait for TaskManagers) has to wait for TaskManagers to register
        self.slot_request_listeners: list[Callable[[], None]] = []
        self._waiting_requests = 0
        #: the errors of fail_slot_requests, in order: a wait that began at epoch n fails with the (n+1)-th — the
        #: first after it began, not a later one that came before it woke up
        self._failures: list[str] = []
        self._launch_tokens: dict[str, str] = {}  # tm id -> token of a TaskManager started, not yet registered
        self._changed = asyncio.Condition()
        self.shutting_down = False  # TaskManagers leaving now are expected, not lost
        #: a standalone cluster's: TaskManagers that start themselves may ask for a launch token
        self.accepts_standalone_task_managers = False
        self._standalone_count = 0
        #: HA: the leader's fencing token, carried by every call to a TaskManager (``""``: no HA, calls unfenced)
        self.fencing_token = ""
        self._monitor = HeartbeatMonitor(timeout=heartbeat_timeout, clock=SystemClock())
        #: the owner of the ResourceManager's own tasks (closing lost TaskManagers' gateways, waking slot requests)
        self._tasks = AsyncTaskGroup("ResourceManager")
        self._heartbeats = HeartbeatSender(
            self._monitor,
            interval=heartbeat_interval,
            send=self._send_heartbeat,
            on_timeout=self._heartbeat_timeout,
        )

    def start(self) -> None:
        self._heartbeats.start()

    async def close(self) -> None:
        await self._heartbeats.close()
        for gw in list(self.gateways.values()):
            await gw.close()
        self.gateways.clear()
        await self._tasks.stop(grace=1.0)

    # -- registration ------------------------------------------------------------------------------
    def expect_task_manager(self, tm_id: str, launch_token: str) -> None:
        """A TaskManager ``tm_id`` is being started with ``launch_token``; accept its registration once."""
        self._launch_tokens[tm_id] = launch_token

    def accept_task_manager(self, proposed_id: str = "") -> tuple[str, str]:
        """A TaskManager this ResourceManager did not start wants to join: its id (``proposed_id`` unless taken,
        else ``tm-<n>``) and a fresh launch token it registers with once."""
        if not self.accepts_standalone_task_managers:
            raise ResourceError(
                "expected a TaskManager started by this cluster; got one that started itself; hint: only a "
                "standalone cluster (strom jobmanager) accepts TaskManagers started with strom taskmanager"
            )
        taken = set(self.slot_manager.task_managers) | set(self._launch_tokens)
        tm_id = proposed_id
        while not tm_id or tm_id in taken:
            self._standalone_count += 1
            tm_id = f"tm-{self._standalone_count}"
        token = secrets.token_hex(16)
        self.expect_task_manager(tm_id, token)
        return tm_id, token

    def forget_task_manager(self, tm_id: str) -> None:
        """The launch of ``tm_id`` failed or was abandoned: never accept its registration."""
        self._launch_tokens.pop(tm_id, None)

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
        expected = self._launch_tokens.get(tm_id)
        if expected is None or not hmac.compare_digest(expected.encode(), launch_token.encode()):
            raise ResourceError(
                f"expected a TaskManager started by this JobManager with a fresh launch token; got {tm_id} "
                f"(pid {pid}) with {'a stale' if expected is None else 'a wrong'} token; "
                "hint: it was declared lost or replaced already, so it must stop"
            )
        del self._launch_tokens[tm_id]
        gateway = await RpcClient.connect(
            *rpc_address, secret=self.secret, name=f"jm->{tm_id}", ssl_context=self.ssl_context
        )
        gateway.on_disconnect = lambda: self.task_manager_lost(tm_id, "its RPC connection closed")
        if self.fencing_token:
            gateway = fenced_gateway(gateway, self.fencing_token)
        self.gateways[tm_id] = gateway
        self.slot_manager.register_task_manager(
            TaskManagerRegistration(
                tm_id=tm_id,
                rpc_address=rpc_address,
                data_address=data_address,
                num_slots=num_slots,
                pid=pid,
                resource_id=resource_id or tm_id,
            )
        )
        self._monitor.monitor_target(tm_id)
        log.debug("TaskManager %s registered (pid %d, %d slots)", tm_id, pid, num_slots)
        for listener in list(self.registration_listeners):
            listener(self.slot_manager.task_managers[tm_id])
        async with self._changed:
            self._changed.notify_all()

    def heartbeat_from_task_manager(self, tm_id: str) -> None:
        self._monitor.receive_heartbeat(tm_id)

    async def _send_heartbeat(self, tm_id: str) -> None:
        gw = self.gateways.get(tm_id)
        if gw is None:
            raise RpcError(f"no gateway to {tm_id}")
        await gw.call("heartbeat_from_job_manager", timeout=5.0)

    def _heartbeat_timeout(self, tm_id: str) -> None:
        self.task_manager_lost(tm_id, "it sent no heartbeat within the heartbeat timeout")

    def task_manager_lost(self, tm_id: str, cause: str) -> None:
        reg = self.slot_manager.unregister_task_manager(tm_id)
        if reg is None:
            return
        self._monitor.unmonitor_target(tm_id)
        gw = self.gateways.pop(tm_id, None)
        if gw is not None:
            self._tasks.create_task(gw.close(), name=f"close gateway to {tm_id}")
        message = task_manager_lost_message(tm_id, reg.pid, cause)
        if self.shutting_down:
            log.debug(message)
            return
        log.warning(message)
        for listener in list(self.listeners):
            listener(tm_id, message)

    @property
    def slots_wanted(self) -> bool:
        """Whether a slot request (or a wait for TaskManagers) waits for TaskManagers now."""
        return self._waiting_requests > 0

    def fail_slot_requests(self, error: TaskManagerStartError) -> None:
        """Fail the slot requests and waits for TaskManagers under way now (those that still lack what they wait
        for) with ``error``: the TaskManagers they wait for keep ending before they register."""
        self._failures.append(str(error))

        async def wake() -> None:
            async with self._changed:
                self._changed.notify_all()

        if self._waiting_requests:
            self._tasks.create_task(wake(), name="wake slot requests")

    async def _wait_until(self, enough: Callable[[], bool], timeout: float) -> None:
        """Until ``enough()``: :class:`TimeoutError` after ``timeout``, :class:`TaskManagerStartError` if
        :meth:`fail_slot_requests` comes first."""
        if enough():
            return
        epoch = len(self._failures)

        async def wait() -> None:
            async with self._changed:
                await self._changed.wait_for(lambda: enough() or len(self._failures) != epoch)

        self._waiting_requests += 1
        try:
            for listener in list(self.slot_request_listeners):
                listener()
            await asyncio.wait_for(wait(), timeout)
        finally:
            self._waiting_requests -= 1
        if len(self._failures) != epoch and not enough():
            raise TaskManagerStartError(self._failures[epoch])

    async def wait_for_task_managers(self, count: int, timeout: float) -> None:
        try:
            await self._wait_until(lambda: len(self.slot_manager.task_managers) >= count, timeout)
        except TimeoutError:
            raise ResourceError(
                f"expected {count} TaskManagers to register within {timeout:.0f} s; got "
                f"{len(self.slot_manager.task_managers)}; hint: check the TaskManager logs above"
            ) from None

    # -- slots -------------------------------------------------------------------------------------
    async def request_slots(
        self, job_id: str, count: int, timeout: float, preferred: Sequence[str] = ()
    ) -> list[SlotOffer]:
        """``count`` slots for ``job_id``; ``preferred[i]``: the resource id offer ``i`` should come from, if it can
        (local recovery's previous locations)."""
        with contextlib.suppress(TimeoutError):  # allocate() raises the ResourceError with the numbers
            await self._wait_until(lambda: self.slot_manager.num_free_slots() >= count, timeout)
        hint = STANDALONE_HINT if self.accepts_standalone_task_managers else MINICLUSTER_HINT
        offers = self.slot_manager.allocate(job_id, count, preferred, more_task_managers=hint)
        await asyncio.gather(
            *(
                self.gateways[o.tm_id].call("request_slot", o.slot_index, job_id, o.allocation_id, timeout=10.0)
                for o in offers
            )
        )
        return offers

    async def release_job(self, job_id: str, *, job_ended: bool = False) -> None:
        """Free the job's slots; ``job_ended``: it reached its end (the TaskManagers drop its local state too)."""
        touched = self.slot_manager.free_job(job_id)
        if job_ended:  # every TaskManager may hold local copies of the job's state, not only those with its slots
            touched = list(self.gateways)
        calls = [
            self.gateways[t].call("release_job", job_id, job_ended, timeout=10.0) for t in touched if t in self.gateways
        ]
        for result in await asyncio.gather(*calls, return_exceptions=True):
            if isinstance(result, BaseException):
                log.debug("release_job %s: %s", job_id, result)
        async with self._changed:
            self._changed.notify_all()

    def gateway(self, tm_id: str) -> RpcClient:
        gw = self.gateways.get(tm_id)
        if gw is None:
            raise RpcError(f"expected a registered TaskManager {tm_id}; it is gone")
        return gw
