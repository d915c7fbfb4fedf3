"""``StreamTask``: runs an operator chain in the task thread (Flink's ``StreamTask`` and its
``SourceStreamTask`` / ``OneInputStreamTask`` variants).

``restore()`` opens the chain; ``invoke()`` runs the mailbox loop, whose default action processes one
input buffer (or polls the source once), until the end of input; then the chain finishes — operators
emit what they buffered, record writers flush and send EndOfPartition downstream.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from typing import Any

from strom.exceptions import TaskCancelledError
from strom.runtime.metrics.timer_gauge import TimerGauge
from strom.runtime.network.input_gate import InputGate
from strom.runtime.operators.source import InputStatus, SourceOperator
from strom.runtime.tasks.mailbox import MailboxProcessor, TaskMailbox
from strom.runtime.tasks.operator_chain import OperatorChain

__all__ = ["OneInputStreamTask", "SourceStreamTask", "StreamTask"]

_IDLE_WAIT = 1.0


class StreamTask(ABC):
    def __init__(
        self,
        chain: OperatorChain,
        mailbox: TaskMailbox,
        *,
        buffer_timeout_ms: int,
        idle: TimerGauge | None = None,
    ) -> None:
        self.chain = chain
        self.mailbox = mailbox
        self.processor = MailboxProcessor(mailbox)
        self.canceled = False
        self.flush_interval = buffer_timeout_ms / 1000.0
        self._last_flush = time.monotonic()
        self.idle = idle or TimerGauge()

    # -- lifecycle (task thread) -------------------------------------------------------------------
    def restore(self) -> None:
        self.chain.open()

    def invoke(self) -> None:
        self.run_mailbox_loop()
        if self.canceled:
            raise TaskCancelledError("task cancelled")
        self.chain.finish()

    def cleanup(self) -> BaseException | None:
        return self.chain.close()

    def cancel(self) -> None:
        """Any thread: stop the loop at the next opportunity."""
        self.canceled = True
        self.processor.stop()

    # -- the loop ----------------------------------------------------------------------------------
    @abstractmethod
    def process_input(self) -> InputStatus:
        """The default action: process one unit of input and say whether more may come."""

    def run_mailbox_loop(self) -> None:
        processor = self.processor
        mailbox = self.mailbox
        interval = self.flush_interval
        process_input = self.process_input
        monotonic = time.monotonic
        idle = self.idle
        while processor.running:
            if mailbox.has_mail():
                processor.run_mail()
                if not processor.running:
                    break
            status = process_input()
            if status is InputStatus.END_OF_INPUT:
                return
            now = monotonic()
            if interval > 0 and now - self._last_flush >= interval:
                self.chain.flush()
                self._last_flush = now
            if status is InputStatus.NOTHING_AVAILABLE:
                wait = interval - (now - self._last_flush) if interval > 0 else _IDLE_WAIT
                idle.mark_start()
                mailbox.wait(max(wait, 0.0005))
                idle.mark_end()


class SourceStreamTask(StreamTask):
    def __init__(
        self, chain: OperatorChain, mailbox: TaskMailbox, *, buffer_timeout_ms: int, idle: TimerGauge | None = None
    ) -> None:
        super().__init__(chain, mailbox, buffer_timeout_ms=buffer_timeout_ms, idle=idle)
        head = chain.head
        assert isinstance(head, SourceOperator)
        self.source_operator: SourceOperator = head

    def process_input(self) -> InputStatus:
        status = self.source_operator.emit_next()
        if status is InputStatus.NOTHING_AVAILABLE:
            # a source without data now: poll again soon (sources with a wake-up signal come later)
            self.idle.mark_start()
            self.mailbox.wait(0.001)
            self.idle.mark_end()
            return InputStatus.MORE_AVAILABLE
        return status


class OneInputStreamTask(StreamTask):
    def __init__(
        self,
        chain: OperatorChain,
        mailbox: TaskMailbox,
        gate: InputGate,
        *,
        buffer_timeout_ms: int,
        idle: TimerGauge | None = None,
    ) -> None:
        super().__init__(chain, mailbox, buffer_timeout_ms=buffer_timeout_ms, idle=idle)
        self.gate = gate
        self._process_batch = chain.head.process_batch

    def process_input(self) -> InputStatus:
        polled: Any = self.gate.poll_next()
        if polled is None:
            return InputStatus.END_OF_INPUT if self.gate.is_finished() else InputStatus.NOTHING_AVAILABLE
        buf = polled[1]
        if type(buf) is list:
            self._process_batch(buf)
        elif self.gate.is_finished():
            return InputStatus.END_OF_INPUT
        return InputStatus.MORE_AVAILABLE
