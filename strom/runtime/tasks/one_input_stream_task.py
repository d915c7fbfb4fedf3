"""``OneInputStreamTask``: a task with one input (Flink's class of that name).

It reads its input gate through a
:class:`~strom.runtime.io.checkpointing.checkpointed_input_gate.CheckpointedInputGate` — barriers aligned for
EXACTLY_ONCE, counted for AT_LEAST_ONCE — and a
:class:`~strom.runtime.io.stream_one_input_processor.StreamOneInputProcessor` that pushes data, watermarks and
statuses into the head operator.
"""

from __future__ import annotations

from typing import Any

from strom.runtime.io.checkpointing.checkpointed_input_gate import CheckpointedInputGate
from strom.runtime.io.data_output import DataOutput
from strom.runtime.io.stream_one_input_processor import StreamOneInputProcessor
from strom.runtime.network.input_gate import InputGate
from strom.runtime.tasks.mailbox import TaskMailbox
from strom.runtime.tasks.operator_chain import OperatorChain
from strom.runtime.tasks.stream_task import StreamTask

__all__ = ["OneInputStreamTask"]


class OneInputStreamTask(StreamTask):
    def __init__(
        self, chain: OperatorChain, mailbox: TaskMailbox, gate: InputGate, *, exactly_once: bool = True, **kwargs: Any
    ) -> None:
        super().__init__(chain, mailbox, **kwargs)
        checkpointed = CheckpointedInputGate.create(
            gate, self, checkpointing=self.subtask_checkpoint is not None, exactly_once=exactly_once
        )
        self._set_input_processor(StreamOneInputProcessor(checkpointed, DataOutput.of_head(chain.head), self.end_data))
