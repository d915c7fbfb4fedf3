"""``AsyncTaskGroup``: the owner of a component's asyncio tasks (trio's nursery, dask/distributed's
``AsyncTaskGroup``, closed when its component closes).

Every asyncio task in the control plane is started through the group of the component it belongs to — a
JobMaster, its checkpoint driver, the Dispatcher, the ResourceManager, a TaskExecutor, an RPC endpoint — never with a
bare ``loop.create_task``: the group keeps a strong reference until the task ends, logs a failure nobody awaited
(instead of asyncio's "exception was never retrieved" at garbage collection), and :meth:`stop` lets what runs finish
for a grace period, then cancels the rest and awaits it. A closed group starts nothing: a coroutine handed to it
after :meth:`close` is cancelled before its first step. No component sweeps ``asyncio.all_tasks()``.

    >>> async def main() -> list[int]:
    ...     group = AsyncTaskGroup("example")
    ...     task = group.create_task(asyncio.sleep(0, result=1))
    ...     await group.stop(grace=1.0)
    ...     return [task.result(), len(group)]
    >>> asyncio.run(main())
    [1, 0]
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["AsyncTaskGroup"]

log = logging.getLogger(__name__)

T = TypeVar("T")


class AsyncTaskGroup:
    """The tasks one component started on its event loop; ``name`` appears in the log."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._tasks: set[asyncio.Task[Any]] = set()
        self._timers: set[asyncio.TimerHandle] = set()
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def __len__(self) -> int:
        return len(self._tasks)

    def create_task(
        self, coro: Coroutine[Any, Any, T], *, name: str | None = None, awaited: bool = False
    ) -> asyncio.Task[T]:
        """Run ``coro`` as a task of this group (on the running loop). After :meth:`close` the task is cancelled
        before it starts. ``awaited``: the caller reads the task's outcome itself, so the group does not log its
        failure."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        if self._closed:
            task.cancel()
        self._tasks.add(task)
        task.add_done_callback(self._awaited_task_done if awaited else self._task_done)
        return task

    def call_later(self, delay: float, start: Callable[[], Coroutine[Any, Any, Any]]) -> None:
        """Start ``start()`` as a task of this group after ``delay`` seconds (unless the group closed first)."""

        def fire() -> None:
            self._timers.discard(handle)
            if not self._closed:
                self.create_task(start())

        handle = asyncio.get_running_loop().call_later(delay, fire)
        self._timers.add(handle)

    def _awaited_task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            log.error("task %r of %s failed", task.get_name(), self.name, exc_info=exc)

    def close(self) -> None:
        """Start nothing more: timers are cancelled, later tasks are cancelled before they start (idempotent)."""
        self._closed = True
        for handle in self._timers:
            handle.cancel()
        self._timers.clear()

    def cancel(self) -> None:
        """Cancel every task of the group but the caller's own (they end at their next await)."""
        current = asyncio.current_task()
        for task in list(self._tasks):
            if task is not current:
                task.cancel()

    async def stop(self, grace: float = 0.0) -> None:
        """Let the group's tasks — also those they start meanwhile — finish for up to ``grace`` seconds, then
        close the group, cancel what still runs and await it. Never swallows the caller's own cancellation."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        current = asyncio.current_task()
        while (running := [t for t in self._tasks if t is not current]) and (left := deadline - loop.time()) > 0:
            await asyncio.wait(running, timeout=left)
        self.close()
        running = [t for t in self._tasks if t is not current]
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running, timeout=1.0)  # a task that ignores its cancellation is not waited for

    async def __aenter__(self) -> AsyncTaskGroup:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()
