"""``TwoInputStreamTask``: a task headed by a
:class:`~strom.runtime.operators.two_input.TwoInputStreamOperator` (Flink's class of that name).

One gate carries the channels of both inputs — so barrier alignment, end of data and unaligned channel state
span both, as Flink's checkpointed input gates do — with ``channel_inputs[c]`` (0 or 1) telling which input
channel ``c`` feeds. A :class:`~strom.runtime.io.stream_multiple_input_processor.StreamMultipleInputProcessor`
with two inputs routes each channel's data to ``process_batch1`` / ``process_batch2`` and merges each input's
watermarks in a valve of its own; a task with more inputs would be one more sibling over the same processor.
"""

from __future__ import annotations

from typing import Any

from strom.runtime.io.checkpointing.checkpointed_input_gate import CheckpointedInputGate
from strom.runtime.io.data_output import DataOutput
from strom.runtime.io.stream_multiple_input_processor import StreamMultipleInputProcessor
from strom.runtime.network.input_gate import InputGate
from strom.runtime.tasks.mailbox import TaskMailbox
from strom.runtime.tasks.operator_chain import OperatorChain
from strom.runtime.tasks.stream_task import StreamTask

__all__ = ["TwoInputStreamTask"]


class TwoInputStreamTask(StreamTask):
    def __init__(
        self,
        chain: OperatorChain,
        mailbox: TaskMailbox,
        gate: InputGate,
        channel_inputs: list[int],
        *,
        exactly_once: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(chain, mailbox, **kwargs)
        checkpointed = CheckpointedInputGate.create(
            gate, self, checkpointing=self.subtask_checkpoint is not None, exactly_once=exactly_once
        )
        head = chain.head
        outputs = [DataOutput.of_head_input(head, 1), DataOutput.of_head_input(head, 2)]
        self._set_input_processor(StreamMultipleInputProcessor(checkpointed, outputs, channel_inputs, self.end_data))
