"""MailboxProcessor: the task loop — mail first, then due processing-time callbacks, then one unit of the default
action; flushes on the buffer timeout; waits on the mailbox when the action finds nothing; serves mail alone while
a task waits for its final checkpoint."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest

from strom.runtime.operators.source import InputStatus
from strom.runtime.tasks.mailbox import TaskMailbox
from strom.runtime.tasks.mailbox_processor import MailboxProcessor
from strom.runtime.tasks.processing_time_service import ProcessingTimeService

pytestmark = pytest.mark.timeout(30)

MORE, NOTHING, END = InputStatus.MORE_AVAILABLE, InputStatus.NOTHING_AVAILABLE, InputStatus.END_OF_INPUT


def _action(statuses: list[InputStatus], log: list[object]) -> Callable[[], InputStatus]:
    it: Iterator[InputStatus] = iter(statuses)

    def action() -> InputStatus:
        status = next(it)
        log.append(status)
        return status

    return action


def test_mail_and_due_timers_run_before_each_unit_until_the_end_of_input() -> None:
    log: list[object] = []
    now = [100]
    timers = ProcessingTimeService(clock=lambda: now[0])
    mailbox = TaskMailbox()
    processor = MailboxProcessor(mailbox, _action([MORE, MORE, END], log), timers=timers)
    mailbox.put(lambda: log.append("mail"), "m")
    timers.register_timer(100, lambda t: log.append(("timer", t)))
    timers.register_timer(500, lambda t: log.append(("timer", t)))
    processor.run_mailbox_loop()
    assert log == ["mail", ("timer", 100), MORE, MORE, END]  # the timer at 500 is not due
    assert processor.running


def test_stop_from_mail_ends_the_loop_before_the_next_unit() -> None:
    log: list[object] = []
    mailbox = TaskMailbox()
    processor = MailboxProcessor(mailbox, _action([MORE] * 10, log))
    mailbox.put(processor.stop, "stop")
    processor.run_mailbox_loop()
    assert log == [] and not processor.running


def test_the_loop_flushes_once_the_buffer_timeout_passed() -> None:
    flushes: list[float] = []

    def slow() -> InputStatus:
        time.sleep(0.02)
        return MORE if len(flushes) < 2 else END

    processor = MailboxProcessor(TaskMailbox(), slow, flush=lambda: flushes.append(1.0), flush_interval=0.01)
    processor.run_mailbox_loop()
    assert len(flushes) == 2


def test_no_flush_with_a_zero_buffer_timeout() -> None:
    flushes: list[int] = []
    processor = MailboxProcessor(TaskMailbox(), _action([MORE, END], []), flush=lambda: flushes.append(1))
    processor.run_mailbox_loop()
    assert flushes == []


def test_nothing_available_waits_on_the_mailbox_until_input_is_signalled() -> None:
    log: list[object] = []
    mailbox = TaskMailbox()
    processor = MailboxProcessor(mailbox, _action([NOTHING, END], log), idle_wait=lambda: 20.0)
    threading.Timer(0.05, mailbox.signal_input_available).start()
    t0 = time.monotonic()
    processor.run_mailbox_loop()
    assert log == [NOTHING, END]
    assert time.monotonic() - t0 < 10.0
    assert processor.idle.total_seconds() > 0.0 and not processor.idle.is_measuring  # the wait counts as idle


def test_the_idle_wait_ends_when_a_timer_is_due() -> None:
    fired: list[int] = []
    timers = ProcessingTimeService()

    def action() -> InputStatus:
        return END if fired else NOTHING

    processor = MailboxProcessor(TaskMailbox(), action, timers=timers, idle_wait=lambda: 20.0)
    timers.register_timer(timers.get_current_processing_time() + 30, fired.append)
    t0 = time.monotonic()
    processor.run_mailbox_loop()
    assert len(fired) == 1
    assert time.monotonic() - t0 < 10.0  # not the 20 s idle wait


def test_run_mail_until_serves_mail_alone_and_checks_for_cancellation() -> None:
    mailbox = TaskMailbox()
    processor = MailboxProcessor(mailbox)
    done = [False]
    checks: list[int] = []
    mailbox.put(lambda: done.__setitem__(0, True), "final checkpoint complete")
    processor.run_mail_until(lambda: done[0], lambda: checks.append(1))
    assert done[0] and len(checks) == 2  # before the step, and last

    class Cancelled(Exception):
        pass

    def check() -> None:
        raise Cancelled

    with pytest.raises(Cancelled):
        processor.run_mail_until(lambda: False, check)


def test_the_loop_needs_a_default_action() -> None:
    with pytest.raises(ValueError, match="expected a default action"):
        MailboxProcessor(TaskMailbox()).run_mailbox_loop()
