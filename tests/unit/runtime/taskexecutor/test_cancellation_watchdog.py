"""The task cancellation watchdog (Flink's ``task.cancellation.timeout``): 0 disables it."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from strom.runtime.rpc.auth import new_secret
from strom.runtime.taskexecutor.task_executor import TaskExecutor


async def _cancel_a_stuck_task(cancellation_timeout: float) -> list[str]:
    """Cancel a task whose thread never stops; the attempts the watchdog checked (it stops the process if the
    thread is still alive, so the check itself is recorded instead of run)."""
    te = TaskExecutor(
        tm_id="tm-1",
        secret=new_secret(),
        host="127.0.0.1",
        num_slots=1,
        jm_address=("127.0.0.1", 1),
        heartbeat_interval=1.0,
        heartbeat_timeout=10.0,
        cancellation_timeout=cancellation_timeout,
        max_frame_bytes=1 << 20,
        launch_token="t",
    )
    te.loop = asyncio.get_running_loop()
    checked: list[str] = []
    te._check_cancelled = checked.append  # type: ignore[method-assign]
    stuck = SimpleNamespace(
        cancel_execution=lambda: None,
        thread=SimpleNamespace(is_alive=lambda: True),
        tdd=SimpleNamespace(config={"task_cancellation_interval_s": 0.0}),  # no interrupts: the watchdog alone
    )
    te.tasks["a-1"] = stuck  # type: ignore[assignment]
    te.cancel_task("a-1")
    for _ in range(500):  # a 0 s or 1 ms watchdog fires within a few loop iterations
        if checked:
            break
        await asyncio.sleep(0.01 if cancellation_timeout else 0)
    return checked


@pytest.mark.parametrize(("timeout", "checked"), [(0.0, []), (0.001, ["a-1"])])
def test_a_cancellation_timeout_of_0_arms_no_watchdog(timeout: float, checked: list[str]) -> None:
    assert asyncio.run(_cancel_a_stuck_task(timeout)) == checked
