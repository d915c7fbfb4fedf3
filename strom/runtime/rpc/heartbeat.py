"""Heartbeats: a pure :class:`HeartbeatMonitor` (who was heard from when) and the asyncio
:class:`HeartbeatSender` that asks each target every interval and reports those gone silent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

__all__ = ["Clock", "HeartbeatMonitor", "HeartbeatSender", "SystemClock"]

log = logging.getLogger(__name__)


class Clock(Protocol):
    def monotonic(self) -> float: ...


class SystemClock:
    def monotonic(self) -> float:
        return time.monotonic()


class HeartbeatMonitor:
    def __init__(self, *, timeout: float, clock: Clock) -> None:
        self.timeout = timeout
        self.clock = clock
        self._last: dict[str, float] = {}

    def monitor_target(self, target_id: str) -> None:
        self._last[target_id] = self.clock.monotonic()

    def unmonitor_target(self, target_id: str) -> None:
        self._last.pop(target_id, None)

    def receive_heartbeat(self, target_id: str) -> None:
        if target_id in self._last:
            self._last[target_id] = self.clock.monotonic()

    def timed_out_targets(self) -> list[str]:
        """Targets silent for longer than the timeout; each is reported once, then forgotten."""
        now = self.clock.monotonic()
        gone = [t for t, last in self._last.items() if now - last > self.timeout]
        for t in gone:
            del self._last[t]
        return gone

    def targets(self) -> list[str]:
        return list(self._last)


class HeartbeatSender:
    def __init__(
        self,
        monitor: HeartbeatMonitor,
        *,
        interval: float,
        send: Callable[[str], Awaitable[None]],
        on_timeout: Callable[[str], None],
    ) -> None:
        self.monitor = monitor
        self.interval = interval
        self._send = send
        self._on_timeout = on_timeout
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _beat(self, target: str) -> None:
        try:
            await asyncio.wait_for(self._send(target), self.monitor.timeout)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.debug("heartbeat to %s failed: %s", target, exc)
            return
        self.monitor.receive_heartbeat(target)

    async def _run(self) -> None:
        while True:
            targets = self.monitor.targets()
            if targets:
                await asyncio.gather(*(self._beat(t) for t in targets))
            for target in self.monitor.timed_out_targets():
                self._on_timeout(target)
            await asyncio.sleep(self.interval)

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
