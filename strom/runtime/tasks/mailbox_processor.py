"""``MailboxProcessor``: the single-threaded loop of a StreamTask (Flink's ``MailboxProcessor``).

The loop alternates between the mail of the task's :class:`~strom.runtime.tasks.mailbox.TaskMailbox` and one
unit of its default action (the task's ``process_input``), and waits on the mailbox when the action finds
nothing. After the end of input, :meth:`MailboxProcessor.run_mail_until` serves mail alone while the task waits
for its final checkpoint.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from strom.runtime.metrics.timer_gauge import TimerGauge
from strom.runtime.operators.source import InputStatus
from strom.runtime.tasks.mailbox import TaskMailbox
from strom.runtime.tasks.processing_time_service import ProcessingTimeService

__all__ = ["MailboxProcessor"]

_IDLE_WAIT = 1.0  # the longest wait for mail or input when nothing else bounds it
_END_OF_INPUT = InputStatus.END_OF_INPUT
_NOTHING_AVAILABLE = InputStatus.NOTHING_AVAILABLE


class MailboxProcessor:
    """Runs the task's loop (Flink's ``MailboxProcessor``): mail first, then due processing-time callbacks, then
    one unit of the default action, until the action reports the end of input or the loop is stopped.

    Two hooks stand in for Flink's timer thread and ``OutputFlusher``: the :class:`ProcessingTimeService`'s due
    callbacks run between two units, and ``flush`` runs every ``flush_interval`` seconds (the buffer timeout;
    ``0`` = never, the writers flush themselves). When the action finds nothing, the loop waits on the mailbox
    for at most ``idle_wait()`` seconds, less if a flush or a callback is due sooner; ``idle`` times the waits.
    """

    def __init__(
        self,
        mailbox: TaskMailbox,
        default_action: Callable[[], InputStatus] | None = None,
        *,
        timers: ProcessingTimeService | None = None,
        flush: Callable[[], None] | None = None,
        flush_interval: float = 0.0,
        idle: TimerGauge | None = None,
        idle_wait: Callable[[], float] | None = None,
    ) -> None:
        self.mailbox = mailbox
        self.running = True
        #: the unit of work between two looks at the mailbox (Flink's ``MailboxDefaultAction``)
        self.default_action = default_action
        self.timers = timers if timers is not None else ProcessingTimeService()
        self.flush = flush if flush is not None else _no_flush
        self.flush_interval = flush_interval if flush is not None else 0.0
        self.idle = idle if idle is not None else TimerGauge()
        self.idle_wait = idle_wait if idle_wait is not None else _idle_wait
        self._last_flush = time.monotonic()

    def run_mail(self) -> None:
        take = self.mailbox.try_take
        while self.mailbox.has_mail():
            mail = take()
            if mail is None:
                return
            mail.run()

    def stop(self) -> None:
        self.running = False
        self.mailbox.signal_input_available()

    def run_mailbox_loop(self) -> None:
        """Until the end of input (return) or :meth:`stop` (return with ``running`` false)."""
        action = self.default_action
        if action is None:
            raise ValueError("expected a default action to run the mailbox loop; got none; hint: set default_action")
        mailbox = self.mailbox
        has_mail = mailbox.has_mail
        timers = self.timers
        due = timers.queue
        flush = self.flush
        interval = self.flush_interval
        monotonic = time.monotonic
        while self.running:
            if has_mail():
                self.run_mail()
                if not self.running:
                    break
            if due:
                timers.fire_due()
            status = action()
            if status is _END_OF_INPUT:
                return
            now = monotonic()
            if interval > 0 and now - self._last_flush >= interval:
                flush()
                self._last_flush = now
            if status is _NOTHING_AVAILABLE:
                self._wait_for_input(now)

    def _wait_for_input(self, now: float) -> None:
        wait = self.idle_wait()
        interval = self.flush_interval
        if interval > 0:
            wait = min(wait, interval - (now - self._last_flush))
        wait = self.timers.seconds_until_next(wait)
        self.idle.mark_start()
        self.mailbox.wait(max(wait, 0.0005))
        self.idle.mark_end()

    def run_mail_until(self, done: Callable[[], bool], check_running: Callable[[], None]) -> None:
        """Serve mail only, the default action suspended, until ``done()`` (the wait for the final checkpoint
        of FLIP-147). ``check_running`` raises once the task is cancelled; it runs before every step and last."""
        mailbox = self.mailbox
        while not done():
            check_running()
            if mailbox.has_mail():
                self.run_mail()
            else:
                self.idle.mark_start()
                mailbox.wait(_IDLE_WAIT)
                self.idle.mark_end()
        check_running()


def _idle_wait() -> float:
    return _IDLE_WAIT


def _no_flush() -> None:
    """A task without output writers has nothing to flush (its ``flush_interval`` is 0: never called)."""
