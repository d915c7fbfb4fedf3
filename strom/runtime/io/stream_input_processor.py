"""``StreamInputProcessor``: what a task with inputs asks for its next unit of input (Flink's interface of that
name; :class:`~strom.runtime.io.stream_one_input_processor.StreamOneInputProcessor` and
:class:`~strom.runtime.io.stream_multiple_input_processor.StreamMultipleInputProcessor` implement it).

:meth:`StreamInputProcessor.process_input` — the task's mailbox default action — takes one data buffer or event
from the :class:`~strom.runtime.io.checkpointing.checkpointed_input_gate.CheckpointedInputGate` (which keeps the
checkpoint barriers to itself) and pushes it into the :class:`~strom.runtime.io.data_output.DataOutput` of the
input its channel feeds: a data buffer as it is, a watermark or watermark status through that input's
:class:`~strom.runtime.io.stream_task_network_input.StreamTaskNetworkInput` (its valve). It returns
:class:`~strom.runtime.operators.source.InputStatus`: more may come, nothing is ready, or the end of input (every
channel delivered ``EndOfPartition``). When every channel has delivered ``EndOfData`` it calls the task's
``end_of_data`` hook once (Flink's ``DataInputStatus.END_OF_DATA``, which the task answers with ``endData``).
"""

from __future__ import annotations

import pickle
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

from strom.runtime.io.checkpointing.checkpointed_input_gate import CheckpointedInputGate
from strom.runtime.io.stream_task_network_input import StreamTaskNetworkInput
from strom.runtime.network.events import EndOfData, EndOfPartitionEvent, WatermarkEvent, WatermarkStatusEvent
from strom.runtime.operators.source import InputStatus

__all__ = ["StreamInputProcessor"]

_MORE_AVAILABLE = InputStatus.MORE_AVAILABLE
_NOTHING_AVAILABLE = InputStatus.NOTHING_AVAILABLE
_END_OF_INPUT = InputStatus.END_OF_INPUT


class StreamInputProcessor(ABC):
    """The inputs of one task over one checkpointed gate; ``channel_inputs[c]`` is the input (0-based) channel
    ``c`` feeds."""

    def __init__(
        self,
        gate: CheckpointedInputGate,
        inputs: Sequence[StreamTaskNetworkInput],
        channel_inputs: Sequence[int],
        end_of_data: Callable[[], None],
    ) -> None:
        n = gate.num_channels
        if len(channel_inputs) != n or set(channel_inputs) - set(range(len(inputs))):
            raise ValueError(
                f"expected an input in 0..{len(inputs) - 1} for each of the {n} channels; got {list(channel_inputs)}"
            )
        self.gate = gate
        self._poll_next = gate.poll_next
        self.inputs = tuple(inputs)
        #: per channel: the input it feeds and its index among that input's channels
        self._channel_input = [inputs[i] for i in channel_inputs]
        counts = [0] * len(inputs)
        self._local_index: list[int] = []
        for i in channel_inputs:
            self._local_index.append(counts[i])
            counts[i] += 1
        self._end_of_data = end_of_data
        self._end_of_data_channels: set[int] = set()
        self._data_ended = False

    @abstractmethod
    def process_input(self) -> InputStatus:
        """Process one data buffer or event; say whether more may come."""

    def is_finished(self) -> bool:
        """Every channel delivered ``EndOfPartition``."""
        return self.gate.is_finished()

    def recover(self, inputs: dict[int, list[bytes]]) -> None:
        """Process the input channel state of the unaligned checkpoint the task restores from (pickled buffers
        per channel), channel by channel, before anything new."""
        for channel in sorted(inputs):
            emit_batch = self._channel_input[channel].output.emit_batch
            for blob in inputs[channel]:
                emit_batch(pickle.loads(blob))

    def _nothing_polled(self) -> InputStatus:
        return _END_OF_INPUT if self.gate.is_finished() else _NOTHING_AVAILABLE

    def _process_event(self, channel: int, event: Any) -> InputStatus:
        if isinstance(event, WatermarkEvent):
            self._channel_input[channel].process_watermark(self._local_index[channel], event.timestamp)
        elif isinstance(event, WatermarkStatusEvent):
            self._channel_input[channel].process_watermark_status(self._local_index[channel], event.idle)
        elif isinstance(event, EndOfData):
            self._end_of_data_channels.add(channel)
            if len(self._end_of_data_channels) == self.gate.num_channels and not self._data_ended:
                self._data_ended = True
                self._end_of_data()
        elif isinstance(event, EndOfPartitionEvent) and self.gate.is_finished():
            return _END_OF_INPUT
        return _MORE_AVAILABLE
