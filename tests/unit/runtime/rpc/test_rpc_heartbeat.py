"""HeartbeatMonitor with a manual clock; HeartbeatSender against fake sends."""

from __future__ import annotations

import asyncio
import time
from collections import Counter

import pytest

from strom.exceptions import ConfigurationError
from strom.runtime.rpc.heartbeat import Clock, HeartbeatMonitor, HeartbeatSender, SystemClock


class ManualClock:
    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now


@pytest.mark.timeout(20)
def test_clocks() -> None:
    clock: Clock = SystemClock()
    before = time.monotonic()
    assert before <= clock.monotonic() <= time.monotonic()
    manual: Clock = ManualClock()
    assert manual.monotonic() == 0.0


@pytest.mark.timeout(20)
def test_monitor_detects_timeouts_reports_once_and_heartbeats_reset() -> None:
    clock = ManualClock()
    monitor = HeartbeatMonitor(timeout=10.0, clock=clock)
    monitor.monitor_target("a")
    monitor.monitor_target("b")
    assert monitor.targets() == ["a", "b"]
    clock.now = 6.0
    monitor.receive_heartbeat("a")
    clock.now = 10.0
    assert monitor.timed_out_targets() == []  # exactly the timeout is not yet over it
    clock.now = 10.5
    assert monitor.timed_out_targets() == ["b"]
    assert monitor.timed_out_targets() == []  # reported once
    assert monitor.targets() == ["a"]
    monitor.receive_heartbeat("b")  # too late: b is no longer monitored
    assert monitor.targets() == ["a"]
    clock.now = 15.0
    monitor.receive_heartbeat("a")
    clock.now = 24.0
    assert monitor.timed_out_targets() == []  # 9 s since the last heartbeat
    assert monitor.last_heartbeat("a") == 15.0
    clock.now = 25.5
    assert monitor.timed_out_targets() == ["a"]
    assert monitor.targets() == []


@pytest.mark.timeout(20)
def test_monitor_unmonitor_and_remonitor() -> None:
    clock = ManualClock()
    monitor = HeartbeatMonitor(timeout=1.0, clock=clock)
    monitor.monitor_target("x")
    monitor.unmonitor_target("x")
    monitor.unmonitor_target("never-monitored")
    clock.now = 5.0
    assert monitor.timed_out_targets() == []
    monitor.monitor_target("x")  # the timeout starts now
    clock.now = 5.9
    assert monitor.timed_out_targets() == []
    clock.now = 6.1
    assert monitor.timed_out_targets() == ["x"]
    with pytest.raises(ConfigurationError, match="positive heartbeat timeout"):
        HeartbeatMonitor(timeout=0, clock=clock)


@pytest.mark.timeout(60)
def test_sender_reports_only_the_silent_targets() -> None:
    async def main() -> None:
        # a timeout far above the interval: "good" stays heard from even when a loaded machine delays the loop
        monitor = HeartbeatMonitor(timeout=2.0, clock=SystemClock())
        for target in ("good", "failing", "hanging"):
            monitor.monitor_target(target)
        sends: Counter[str] = Counter()
        good_beats: asyncio.Queue[None] = asyncio.Queue()
        timed_out: asyncio.Queue[str] = asyncio.Queue()

        async def send(target: str) -> None:
            sends[target] += 1
            if target == "failing":
                raise ConnectionError("unreachable")
            if target == "hanging":
                await asyncio.Event().wait()  # never answers; cancelled by the send timeout
            good_beats.put_nowait(None)

        sender = HeartbeatSender(monitor, interval=0.05, send=send, on_timeout=timed_out.put_nowait)
        sender.start()
        sender.start()  # idempotent
        assert sender.running
        lost = {await asyncio.wait_for(timed_out.get(), 30), await asyncio.wait_for(timed_out.get(), 30)}
        assert lost == {"failing", "hanging"}
        # "good" keeps being heard from after the others were reported
        while not good_beats.empty():
            good_beats.get_nowait()
        for _ in range(3):
            await asyncio.wait_for(good_beats.get(), 5)
        assert monitor.targets() == ["good"]
        assert timed_out.empty()
        assert sends["failing"] >= 2  # retried every interval until timed out
        assert sends["hanging"] <= 2  # one send in flight at a time per target, not one per interval
        await sender.close()
        await sender.close()  # idempotent
        assert not sender.running
        sender.start()  # no effect after close
        assert not sender.running

    asyncio.run(main())


@pytest.mark.timeout(20)
def test_sender_survives_a_failing_on_timeout_callback_and_new_targets_join() -> None:
    async def main() -> None:
        monitor = HeartbeatMonitor(timeout=0.2, clock=SystemClock())
        monitor.monitor_target("first")
        calls: asyncio.Queue[str] = asyncio.Queue()

        async def send(target: str) -> None:
            raise TimeoutError("no answer")

        def on_timeout(target: str) -> None:
            calls.put_nowait(target)
            raise RuntimeError("callback bug")

        sender = HeartbeatSender(monitor, interval=0.05, send=send, on_timeout=on_timeout)
        sender.start()
        assert await asyncio.wait_for(calls.get(), 5) == "first"
        monitor.monitor_target("second")
        assert await asyncio.wait_for(calls.get(), 5) == "second"
        await sender.close()

    asyncio.run(main())
