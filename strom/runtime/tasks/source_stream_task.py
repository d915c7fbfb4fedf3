"""``SourceStreamTask``: a task headed by a :class:`~strom.runtime.operators.source.SourceOperator` (Flink's
``SourceOperatorStreamTask``).

Its default action polls the source reader once. A reader that has nothing makes the task wait on its mailbox —
an operator event (new splits) wakes it — for a time that doubles from ``_SOURCE_BACKOFF_MIN`` up to
``_SOURCE_BACKOFF_MAX`` while it stays idle and starts over with the next data. At the end of its input the task
sends ``MAX_WATERMARK`` (Flink's ``advanceToEndOfEventTime``), so every event-time window and timer downstream
fires before the end of data.
"""

from __future__ import annotations

from typing import Any

from strom.runtime.operators.source import InputStatus, SourceOperator
from strom.runtime.tasks.mailbox import TaskMailbox
from strom.runtime.tasks.operator_chain import OperatorChain
from strom.runtime.tasks.stream_task import StreamTask

__all__ = ["SourceStreamTask"]

_SOURCE_BACKOFF_MIN = 0.001
_SOURCE_BACKOFF_MAX = 0.05


class SourceStreamTask(StreamTask):
    def __init__(self, chain: OperatorChain, mailbox: TaskMailbox, **kwargs: Any) -> None:
        super().__init__(chain, mailbox, **kwargs)
        head = chain.head
        if not isinstance(head, SourceOperator):
            raise TypeError(f"expected a source operator at the head of a source task; got '{type(head).__name__}'")
        self.source_operator: SourceOperator = head
        self._backoff = 0.0  # the next idle wait; 0: the last poll had data

    def process_input(self) -> InputStatus:
        status = self.source_operator.emit_next()
        if status is InputStatus.END_OF_INPUT:
            self.source_operator.emit_max_watermark()
        elif status is InputStatus.NOTHING_AVAILABLE:
            # no wake-up signal from the reader: poll again after a wait that grows while it stays idle
            # (events from the enumerator are mail and end the wait at once)
            self._backoff = min(max(self._backoff * 2, _SOURCE_BACKOFF_MIN), _SOURCE_BACKOFF_MAX)
        else:
            self._backoff = 0.0
        return status

    def idle_wait(self) -> float:
        return self._backoff
