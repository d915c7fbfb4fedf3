"""``StdoutForwarder``: a Spark-hosted TaskManager's standard output, written to the driver's.

A TaskManager of the MiniCluster or of a standalone cluster on the user's terminal shares the client's standard output,
so ``print()`` sinks and the user functions' own ``print`` calls land where ``strom run ... > out`` captures them. A
Spark Python worker's standard output goes to the executor's log (in local mode: the driver's *standard error*,
between Spark's own lines). While a TaskManager runs in a Spark task, this stream replaces the worker's
``sys.stdout``: text is buffered and sent to the JobManager in the driver (``Dispatcher.stdout_from_task_manager``),
which writes it to the driver's standard output.

``flush()`` — which the print sink calls after each batch — waits until the driver has written the text, so a
task's output is out before the task reports FINISHED, and a slow reader of the driver's output holds the sinks back
as a full pipe holds back a MiniCluster's TaskManager. Text without a flush goes out when a line ends and
:data:`_SEND_INTERVAL` has passed since the last send, or the buffer holds :data:`_MAX_BUFFERED` characters.
"""

from __future__ import annotations

import asyncio
import io
import logging
import sys
import threading
import time
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from strom.runtime.taskexecutor.task_executor import TaskExecutor

__all__ = ["StdoutForwarder"]

log = logging.getLogger(__name__)

_SEND_INTERVAL = 0.1  # seconds
_MAX_BUFFERED = 64 * 1024  # characters
_SEND_TIMEOUT = 30.0  # seconds a flush waits for the driver


class StdoutForwarder(io.TextIOBase):
    """Replaces ``sys.stdout`` between :meth:`install` and :meth:`close` (see the module documentation)."""

    def __init__(self) -> None:
        super().__init__()
        self._buffer: list[str] = []
        self._buffered = 0
        self._lock = threading.Lock()  # the buffer
        self._send_lock = threading.Lock()  # one send at a time keeps the text in order
        self._last_send = time.monotonic()
        self._executor: TaskExecutor | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._saved: TextIO | None = None

    def install(self) -> None:
        self._saved = sys.stdout
        sys.stdout = self  # a TextIOBase the print functions write to

    def connect(self, executor: TaskExecutor) -> None:
        """The TaskManager registered (called on its event loop): text can go to its JobManager from now on."""
        self._executor = executor
        self._loop = asyncio.get_running_loop()

    def close(self) -> None:
        """Send what is left and give the worker its own ``sys.stdout`` back."""
        if self._saved is not None:
            if sys.stdout is self:
                sys.stdout = self._saved
            self._saved = None
        self.flush()
        self._executor = self._loop = None
        super().close()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._lock:
            self._buffer.append(text)
            self._buffered += len(text)
            due = self._buffered >= _MAX_BUFFERED or (
                "\n" in text and time.monotonic() - self._last_send >= _SEND_INTERVAL
            )
        if due:
            self.flush()
        return len(text)

    def flush(self) -> None:
        loop, executor = self._loop, self._executor
        if loop is None or executor is None or executor.jm is None:
            return  # not connected (yet): kept until the next flush
        on_loop = _running_loop() is loop
        with self._send_lock:
            with self._lock:
                text = "".join(self._buffer)
                self._buffer.clear()
                self._buffered = 0
                self._last_send = time.monotonic()
            if not text:
                return
            call = executor.jm.call("stdout_from_task_manager", executor.tm_id, text, timeout=_SEND_TIMEOUT)
            try:
                future = asyncio.run_coroutine_threadsafe(call, loop)
            except RuntimeError as exc:  # the TaskManager's loop has ended
                call.close()
                self._fall_back(text, exc)
                return
            if on_loop:
                return  # a print on the event loop itself: it cannot wait for its own loop
            try:
                future.result(timeout=_SEND_TIMEOUT + 1)
            except Exception as exc:  # the driver is gone or slow
                self._fall_back(text, exc)

    def _fall_back(self, text: str, exc: BaseException) -> None:
        """The text goes to the worker's own output (the executor's log) rather than nowhere."""
        log.debug("standard output not forwarded to the driver: %s", exc)
        if self._saved is not None:
            self._saved.write(text)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
