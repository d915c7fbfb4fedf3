"""Flink's TaskInterrupter in CPython: an interrupt raises TaskCancelledError in a task thread looping in user code."""

from __future__ import annotations

import threading
import time

from strom.exceptions import TaskCancelledError
from strom.runtime.taskexecutor.task import _raise_in_thread


def test_an_interrupt_ends_a_sleeping_loop() -> None:
    raised: list[BaseException] = []

    def loop() -> None:
        try:
            while True:
                time.sleep(0.01)
        except TaskCancelledError as exc:
            raised.append(exc)

    thread = threading.Thread(target=loop)
    thread.start()
    assert _raise_in_thread(thread, TaskCancelledError)
    thread.join(timeout=10)
    assert not thread.is_alive() and len(raised) == 1
    assert not _raise_in_thread(thread, TaskCancelledError)  # gone: nothing to interrupt
