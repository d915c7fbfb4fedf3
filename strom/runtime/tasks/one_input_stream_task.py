"""``OneInputStreamTask``: a task with one input (Flink's class of that name).

It reads its input gate through a
:class:`~strom.runtime.io.checkpointing.checkpointed_input_gate.CheckpointedInputGate` — barriers aligned for
EXACTLY_ONCE, counted for AT_LEAST_ONCE — and a
:class:`~strom.runtime.io.stream_one_input_processor.StreamOneInputProcessor` that pushes data, watermarks and
statuses into the head operator. In BATCH execution with sorted inputs, a keyed head gets its input through a
:class:`~strom.runtime.io.sorting_data_input.SortingDataInput`: key after key at the end of input.
"""

from __future__ import annotations

from typing import Any

from strom.runtime.io.checkpointing.checkpointed_input_gate import CheckpointedInputGate
from strom.runtime.io.data_output import DataOutput
from strom.runtime.io.sorting_data_input import SortingDataInput
from strom.runtime.io.stream_one_input_processor import StreamOneInputProcessor
from strom.runtime.network.input_gate import InputGate
from strom.runtime.operators.keyed import sorted_input_key
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
        head = chain.head
        self.sorting_input: SortingDataInput | None = None
        output = DataOutput.of_head(head)
        key_of = sorted_input_key(head)
        if key_of is not None and head.runtime_context is not None:
            info = head.runtime_context.info
            self.sorting_input = SortingDataInput(
                head,
                key_of,
                memory_bytes=info.sorted_inputs_memory,
                batch_records=info.batch_size,
                spill_directory=info.tmp_dirs.replace(";", ",").split(",")[0].strip(),
            )
            output = self.sorting_input.data_output()
        self._set_input_processor(StreamOneInputProcessor(checkpointed, output, self.end_data))

    def end_data(self) -> None:
        if self.sorting_input is not None:
            self.sorting_input.drain()  # the keys go before the end of data (if no final watermark came first)
        super().end_data()
