"""A TaskExecutor closed while it starts (Flink runs an endpoint's start and stop one after the other): the close
waits for the start under way, so nothing the start opens — its JobManager connection — outlives the close."""

from __future__ import annotations

import asyncio

import pytest

from strom.exceptions import ClusterError
from strom.runtime.rpc.auth import new_secret
from strom.runtime.rpc.rpc_service import RpcServer, rpc_method
from strom.runtime.taskexecutor.task_executor import TaskExecutor


class _SlowJobManager:
    """A JobManager endpoint whose registration waits until the test releases it."""

    def __init__(self) -> None:
        self.registering = asyncio.Event()
        self.release = asyncio.Event()

    @rpc_method
    async def register_task_executor(self, *args: object) -> None:
        self.registering.set()
        await self.release.wait()


def _task_executor(secret: bytes, jm_address: tuple[str, int]) -> TaskExecutor:
    return TaskExecutor(
        tm_id="tm-1",
        secret=secret,
        host="127.0.0.1",
        num_slots=1,
        jm_address=jm_address,
        heartbeat_interval=1.0,
        heartbeat_timeout=30.0,
        cancellation_timeout=5.0,
        max_frame_bytes=1 << 20,
        launch_token="t",
    )


async def _close_while_registering() -> tuple[TaskExecutor, bool]:
    secret = new_secret()
    jm = _SlowJobManager()
    server = RpcServer(jm, secret=secret, name="jobmanager")
    await server.start()
    try:
        te = _task_executor(secret, server.address)
        start = asyncio.create_task(te.start())
        await jm.registering.wait()
        close = asyncio.create_task(te.close())
        await asyncio.sleep(0)  # the close begins while the registration is under way
        closed_before_start_ended = close.done()
        jm.release.set()
        await start
        await close
        return te, closed_before_start_ended
    finally:
        await server.close()


def test_a_close_during_start_waits_for_it_and_closes_the_job_manager_connection() -> None:
    te, closed_early = asyncio.run(asyncio.wait_for(_close_while_registering(), 60))
    assert not closed_early
    assert te.jm is not None and te.jm.closed
    assert te.terminated.is_set()


def test_a_start_after_close_is_refused() -> None:
    async def run() -> None:
        te = _task_executor(new_secret(), ("127.0.0.1", 1))
        await te.close()
        await te.start()

    with pytest.raises(ClusterError, match="closed"):
        asyncio.run(asyncio.wait_for(run(), 60))
