"""``LogForwarder``: a TaskManager's log records, sent to the JobManager over the control connection.

A TaskManager hosted in a Spark executor has no terminal of its own: its standard error goes to the
executor's log, far from the user. With forwarding on, every record (strom's and the user functions') at or above
the TaskManager's log level is also queued here (from any thread) and sent in batches from the
TaskManager's event loop; the JobManager re-logs them under ``strom.taskmanager``. The queue is bounded:
when the JobManager cannot keep up, the oldest lines are dropped and the next batch says how many.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable

__all__ = ["LogForwarder"]

#: (level, logger name, message)
LogLine = tuple[int, str, str]

_SEND_INTERVAL = 0.25
_MAX_QUEUED = 2000
_MAX_BATCH = 500


class LogForwarder(logging.Handler):
    def __init__(self, send: Callable[[list[LogLine]], Awaitable[None]], level: int) -> None:
        super().__init__(level)
        self._send = send
        self._queue: collections.deque[LogLine] = collections.deque(maxlen=_MAX_QUEUED)
        self._dropped = 0
        self._queue_lock = threading.Lock()
        self._task: asyncio.Task[None] | None = None
        self._logger = logging.getLogger()  # the root: strom's records and the user functions' own
        self._saved_level = self._logger.level

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
            if record.exc_info:
                message += "\n" + logging.Formatter().formatException(record.exc_info)
        except Exception:
            self.handleError(record)
            return
        with self._queue_lock:
            if len(self._queue) == _MAX_QUEUED:
                self._dropped += 1
            self._queue.append((record.levelno, record.name, message))

    # -- lifecycle, on the TaskManager's loop --------------------------------------------------------
    def start(self) -> None:
        self._logger.addHandler(self)
        if self._logger.getEffectiveLevel() > self.level:
            self._logger.setLevel(self.level)
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        """Detach from the root logger (no handler outlives its TaskManager) and send what is left."""
        self._logger.removeHandler(self)
        self._logger.setLevel(self._saved_level)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        with contextlib.suppress(Exception):
            await self._flush()

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(_SEND_INTERVAL)
            try:
                await self._flush()
            except Exception:  # the JobManager is gone: that batch is lost, the next ones may get through
                continue

    async def _flush(self) -> None:
        while True:
            with self._queue_lock:
                if not self._queue and not self._dropped:
                    return
                batch = [self._queue.popleft() for _ in range(min(_MAX_BATCH, len(self._queue)))]
                if self._dropped:
                    batch.insert(0, (logging.WARNING, "strom.taskmanager", f"{self._dropped} log lines dropped"))
                    self._dropped = 0
            await self._send(batch)
