"""A TaskManager registering with the JobManager over loopback: launch tokens fence stale TaskManagers, and a
TaskManager hosted elsewhere (Spark) forwards its log records to the JobManager."""

from __future__ import annotations

import asyncio
import logging

import pytest

from strom.exceptions import ResourceError
from strom.runtime.dispatcher.dispatcher import Dispatcher
from strom.runtime.rpc.auth import new_secret
from strom.runtime.taskexecutor.runner import TaskManagerSpec, resolve_bind_host, run_task_manager

SECRET = new_secret()


def dispatcher() -> Dispatcher:
    return Dispatcher(secret=SECRET, host="127.0.0.1", heartbeat_interval=0.2, heartbeat_timeout=5.0, slot_timeout=5.0)


def spec(d: Dispatcher, tm_id: str, token: str, **kw: object) -> TaskManagerSpec:
    return TaskManagerSpec(tm_id=tm_id, launch_token=token, jm_address=d.address, **kw)  # type: ignore[arg-type]


async def serve_until_registered(d: Dispatcher, s: TaskManagerSpec) -> asyncio.Task[None]:
    task = asyncio.create_task(run_task_manager(s, SECRET))
    rm = d.resource_manager
    for _ in range(500):
        if s.tm_id in rm.slot_manager.task_managers or task.done():
            break
        await asyncio.sleep(0.01)
    return task


def test_a_task_manager_registers_once_with_its_launch_token_and_stale_ones_are_refused() -> None:
    async def scenario() -> None:
        d = dispatcher()
        await d.start()
        rm = d.resource_manager
        registered: list[str] = []
        rm.registration_listeners.append(lambda reg: registered.append(reg.tm_id))
        try:
            # never announced: refused before it holds any slot
            with pytest.raises(ResourceError, match="stale token"):
                await run_task_manager(spec(d, "tm-9", "whatever"), SECRET)
            rm.expect_task_manager("tm-1", "good")
            with pytest.raises(ResourceError, match="wrong token"):
                await run_task_manager(spec(d, "tm-1", "forged"), SECRET)
            first = await serve_until_registered(d, spec(d, "tm-1", "good"))
            assert registered == ["tm-1"] and not first.done()
            # the same launch again (a retried Spark task): the token was used up
            with pytest.raises(ResourceError, match="stale token"):
                await run_task_manager(spec(d, "tm-1", "good"), SECRET)
            assert list(rm.slot_manager.task_managers) == ["tm-1"]
            rm.expect_task_manager("tm-2", "other")
            rm.forget_task_manager("tm-2")  # its launch was abandoned
            with pytest.raises(ResourceError, match="stale token"):
                await run_task_manager(spec(d, "tm-2", "other"), SECRET)
            await rm.gateways["tm-1"].call("shutdown", timeout=5.0)
            await asyncio.wait_for(first, 10)
        finally:
            await d.close()

    asyncio.run(scenario())


def test_forwarded_log_records_are_relogged_by_the_job_manager(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        d = dispatcher()
        await d.start()
        d.resource_manager.expect_task_manager("tm-1", "t")
        try:
            task = await serve_until_registered(d, spec(d, "tm-1", "t", forward_logs_level=logging.WARNING))
            logging.getLogger("user.function").warning("odd record %d", 42)
            logging.getLogger("user.function").info("below the level")
            for _ in range(300):
                if any("odd record 42" in r.getMessage() for r in caplog.records if r.name == "strom.taskmanager"):
                    break
                await asyncio.sleep(0.01)
            await d.resource_manager.gateways["tm-1"].call("shutdown", timeout=5.0)
            await asyncio.wait_for(task, 10)
        finally:
            await d.close()

    with caplog.at_level(logging.INFO, logger="strom.taskmanager"):
        asyncio.run(scenario())
    forwarded = [r.getMessage() for r in caplog.records if r.name == "strom.taskmanager"]
    assert "[tm-1] user.function: odd record 42" in forwarded
    assert not any("below the level" in m for m in forwarded)
    assert not any(type(h).__name__ == "LogForwarder" for h in logging.getLogger().handlers)


def test_auto_bind_host_resolves_to_an_address_of_this_machine() -> None:
    assert resolve_bind_host("127.0.0.1") == "127.0.0.1"
    host = resolve_bind_host("auto")
    assert host.count(".") == 3 and host != "auto"
