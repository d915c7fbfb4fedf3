"""``LogForwarder``: a TaskManager's log records, sent to the JobManager over the control connection.

A TaskManager hosted in a Spark executor has no terminal of its own: its standard error goes to the
executor's log, far from the user. With forwarding on, every record (strom's and the user functions') at or above
the TaskManager's log level is also queued here (from any thread) and sent in batches from the
TaskManager's event loop; the JobManager re-logs them under ``strom.taskmanager``. The queue is bounded:
when the JobManager cannot keep up, the oldest lines are dropped and the next batch says how many.

A record logged on a task thread (the TaskExecutor registers each task's thread with :meth:`LogForwarder.track`)
carries that task's job id: the JobManager keeps those per job for ``strom run``'s attached client
(``GET /jobs/:jobid/log-records``). Other threads of a task (a source's reader thread, ...) are not tracked.
With ``jobs_only`` (a standalone TaskManager, which has its own log file) only such records are sent.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import threading
import weakref
from collections.abc import Awaitable, Callable

from strom.runtime.task_group import AsyncTaskGroup

__all__ = ["LogForwarder"]

#: (level, logger name, message, job id or "", creation time in seconds)
LogLine = tuple[int, str, str, str, float]

_SEND_INTERVAL = 0.25
_MAX_QUEUED = 2000
_MAX_BATCH = 500


class LogForwarder(logging.Handler):
    def __init__(
        self, send: Callable[[list[LogLine]], Awaitable[None]], level: int, *, jobs_only: bool = False
    ) -> None:
        super().__init__(level)
        self._send = send
        self._jobs_only = jobs_only
        #: task thread -> its job id (a thread's entry goes with the thread object)
        self._thread_jobs: weakref.WeakKeyDictionary[threading.Thread, str] = weakref.WeakKeyDictionary()
        self._queue: collections.deque[LogLine] = collections.deque(maxlen=_MAX_QUEUED)
        self._dropped = 0
        self._queue_lock = threading.Lock()
        self._task: asyncio.Task[None] | None = None
        self._tasks = AsyncTaskGroup("log forwarder")  # the owner of the sending task
        self._logger = logging.getLogger()  # the root: strom's records and the user functions' own
        self._saved_level = self._logger.level

    def track(self, thread: threading.Thread, job_id: str) -> None:
        """Records logged on ``thread`` belong to job ``job_id``."""
        self._thread_jobs[thread] = job_id

    def emit(self, record: logging.LogRecord) -> None:
        job_id = self._thread_jobs.get(threading.current_thread(), "")
        if self._jobs_only and not job_id:
            return
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
            self._queue.append((record.levelno, record.name, message, job_id, record.created))

    # -- lifecycle, on the TaskManager's loop --------------------------------------------------------
    def start(self) -> None:
        self._logger.addHandler(self)
        if self._logger.getEffectiveLevel() > self.level:
            self._logger.setLevel(self.level)
        self._task = self._tasks.create_task(self._run(), name="log forwarding")

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

    async def send_now(self) -> None:
        """Send what is queued now (before a task reports its final state: its job's last lines arrive first)."""
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
                    dropped = f"{self._dropped} log lines dropped"
                    batch.insert(0, (logging.WARNING, "strom.taskmanager", dropped, "", 0.0))
                    self._dropped = 0
            await self._send(batch)
