"""Heartbeats: who was heard from when, and the asyncio driver that keeps asking.

:class:`HeartbeatMonitor` is pure bookkeeping over an injectable :class:`Clock` — no I/O, no tasks —
so timeout logic is tested with a manual clock. :class:`HeartbeatSender` drives it: every
``interval`` seconds it calls the user's ``send(target_id)`` for each monitored target (a successful
send counts as a heartbeat; a failing or slow one does not) and reports targets that stayed silent
for longer than the monitor's timeout to ``on_timeout(target_id)`` — once each.

A slow target never delays the others: each target has at most one send in flight, and the timeout
check runs every interval regardless of how long sends take.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from strom.exceptions import ConfigurationError
from strom.runtime.task_group import AsyncTaskGroup

__all__ = ["Clock", "HeartbeatMonitor", "HeartbeatSender", "SystemClock"]

log = logging.getLogger(__name__)


class Clock(Protocol):
    """A monotonic time source in seconds."""

    def monotonic(self) -> float: ...


class SystemClock:
    """:func:`time.monotonic`."""

    def monotonic(self) -> float:
        return time.monotonic()


def _positive(what: str, value: float) -> float:
    if not value > 0:
        raise ConfigurationError(f"expected a positive heartbeat {what} in seconds; got {value!r}")
    return value


class HeartbeatMonitor:
    """Last-seen times of monitored targets; reports each silent target once."""

    def __init__(self, *, timeout: float, clock: Clock) -> None:
        self.timeout = _positive("timeout", timeout)
        self.clock = clock
        self._last: dict[str, float] = {}

    def monitor_target(self, target_id: str) -> None:
        """Start watching ``target_id``; its timeout starts now (re-monitoring restarts it)."""
        self._last[target_id] = self.clock.monotonic()

    def unmonitor_target(self, target_id: str) -> None:
        self._last.pop(target_id, None)

    def receive_heartbeat(self, target_id: str) -> None:
        """Record a sign of life; ignored for targets not (or no longer) monitored."""
        if target_id in self._last:
            self._last[target_id] = self.clock.monotonic()

    def last_heartbeat(self, target_id: str) -> float | None:
        return self._last.get(target_id)

    def timed_out_targets(self) -> list[str]:
        """Targets silent for longer than the timeout; each is reported once and then unmonitored."""
        now = self.clock.monotonic()
        gone = [t for t, last in self._last.items() if now - last > self.timeout]
        for t in gone:
            del self._last[t]
        return gone

    def targets(self) -> list[str]:
        return list(self._last)


class HeartbeatSender:
    """Asks every monitored target for a heartbeat each ``interval`` and reports timeouts.

    ``send(target_id)`` should complete when the target answered; it is cancelled after
    ``send_timeout`` seconds (default: the monitor's timeout). ``on_timeout`` runs on the event loop
    and must not block. The sender owns one asyncio task plus one task per send in flight.
    """

    def __init__(
        self,
        monitor: HeartbeatMonitor,
        *,
        interval: float,
        send: Callable[[str], Awaitable[None]],
        on_timeout: Callable[[str], None],
        send_timeout: float | None = None,
    ) -> None:
        self.monitor = monitor
        self.interval = _positive("interval", interval)
        self.send_timeout = _positive("send timeout", send_timeout) if send_timeout is not None else monitor.timeout
        self._send = send
        self._on_timeout = on_timeout
        self._task: asyncio.Task[None] | None = None
        self._in_flight: dict[str, asyncio.Task[None]] = {}
        self._tasks = AsyncTaskGroup("heartbeat sender")
        self._closed = False

    def start(self) -> None:
        """Start beating (idempotent; no effect after :meth:`close`). Needs a running event loop."""
        if self._task is None and not self._closed:
            self._task = self._tasks.create_task(self._run(), name="heartbeat-sender")

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def _beat(self, target_id: str) -> None:
        try:
            async with asyncio.timeout(self.send_timeout):
                await self._send(target_id)
        except Exception as exc:  # includes TimeoutError; CancelledError propagates
            log.debug("heartbeat to %s failed: %r", target_id, exc)
            return
        self.monitor.receive_heartbeat(target_id)

    def _beat_done(self, target_id: str, task: asyncio.Task[None]) -> None:
        if self._in_flight.get(target_id) is task:
            del self._in_flight[target_id]

    def _tick(self) -> None:
        for target_id in self.monitor.timed_out_targets():
            beat = self._in_flight.get(target_id)
            if beat is not None:
                beat.cancel()  # its done callback forgets it
            log.debug("no heartbeat from %s for %g s", target_id, self.monitor.timeout)
            try:
                self._on_timeout(target_id)
            except Exception:
                log.exception("heartbeat on_timeout callback for %s failed", target_id)
        for target_id in self.monitor.targets():
            if target_id not in self._in_flight:
                beat = self._tasks.create_task(self._beat(target_id), name=f"heartbeat:{target_id}")
                self._in_flight[target_id] = beat
                beat.add_done_callback(functools.partial(self._beat_done, target_id))

    async def _run(self) -> None:
        while True:
            self._tick()
            await asyncio.sleep(self.interval)  # the heartbeat period itself, not a synchronisation

    async def close(self, *, timeout: float = 5.0) -> None:
        """Stop the driver and cancel sends in flight (idempotent)."""
        self._closed = True
        self._tasks.close()
        current = asyncio.current_task()
        tasks = [t for t in (self._task, *self._in_flight.values()) if t is not None and t is not current]
        self._task = None
        self._in_flight.clear()
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)
