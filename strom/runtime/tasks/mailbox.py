"""``TaskMailbox``: the mail queue of a StreamTask's single-threaded loop (Flink's ``TaskMailbox``).

Other threads never touch a task's operators: they put *mail* (a callable) into its mailbox; the task
thread runs mail between units of its default action (the task's ``process_input``: one input buffer or event
from its input processor, or one poll of its source). ``signal_input_available`` wakes the loop when an input
gate gets data. The loop itself is :class:`~strom.runtime.tasks.mailbox_processor.MailboxProcessor`.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "MAX_PRIORITY",
    "MIN_PRIORITY",
    "MailboxClosedError",
    "MailboxExecutor",
    "TaskMailbox",
]

MIN_PRIORITY = 0
MAX_PRIORITY = 1


class MailboxClosedError(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Mail:
    run: Callable[[], None]
    description: str
    priority: int


class TaskMailbox:
    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._urgent: deque[Mail] = deque()
        self._normal: deque[Mail] = deque()
        self._input_signal = False
        self._closed = False

    def put(self, run: Callable[[], None], description: str, priority: int = MIN_PRIORITY) -> None:
        with self._cond:
            if self._closed:
                raise MailboxClosedError(f"mailbox closed; dropped mail '{description}'")
            (self._urgent if priority >= MAX_PRIORITY else self._normal).append(Mail(run, description, priority))
            self._cond.notify()

    def try_take(self) -> Mail | None:
        with self._cond:
            if self._urgent:
                return self._urgent.popleft()
            if self._normal:
                return self._normal.popleft()
            return None

    def has_mail(self) -> bool:
        return bool(self._urgent or self._normal)

    def signal_input_available(self) -> None:
        with self._cond:
            self._input_signal = True
            self._cond.notify()

    def wait(self, timeout: float) -> None:
        """Block until mail arrives, input is signalled, the mailbox closes, or ``timeout`` passes."""
        with self._cond:
            if not (self._urgent or self._normal or self._input_signal or self._closed):
                self._cond.wait(timeout)
            self._input_signal = False

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    @property
    def closed(self) -> bool:
        return self._closed


class MailboxExecutor:
    """An operator's handle on its task's mailbox (Flink's ``MailboxExecutor``): ``execute`` hands work from any
    thread to the task thread, where it runs between two units of input."""

    __slots__ = ("_mailbox",)

    def __init__(self, mailbox: TaskMailbox) -> None:
        self._mailbox = mailbox

    def execute(self, run: Callable[[], None], description: str) -> bool:
        """Any thread: run ``run`` on the task thread; ``False`` when the task takes no more mail (it ended)."""
        try:
            self._mailbox.put(run, description)
        except MailboxClosedError:
            return False
        return True

    @property
    def closed(self) -> bool:
        """The task ended or is being cancelled: no mail runs any more."""
        return self._mailbox.closed
