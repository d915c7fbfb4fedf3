"""``StreamMultipleInputProcessor``: the input processor of a task with N inputs (Flink's class of that name,
which since Flink 1.13 also serves two-input tasks — N = 2 here is the
:class:`~strom.runtime.tasks.two_input_stream_task.TwoInputStreamTask`).

All inputs share one checkpointed gate, each channel tagged with the input it feeds; a data buffer goes to its
input's ``emit_batch`` (looked up per channel, once), watermarks and statuses to its input's valve. Flink picks
the next input with an ``InputSelection``; strom reads the channels of all inputs in arrival order, as one gate
does, so no input starves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from strom.runtime.io.checkpointing.checkpointed_input_gate import CheckpointedInputGate
from strom.runtime.io.data_output import DataOutput
from strom.runtime.io.stream_input_processor import StreamInputProcessor
from strom.runtime.io.stream_task_network_input import StreamTaskNetworkInput
from strom.runtime.operators.source import InputStatus

__all__ = ["StreamMultipleInputProcessor"]

_MORE_AVAILABLE = InputStatus.MORE_AVAILABLE


class StreamMultipleInputProcessor(StreamInputProcessor):
    """``outputs[i]`` receives input ``i``; ``channel_inputs[c]`` is the input channel ``c`` feeds."""

    def __init__(
        self,
        gate: CheckpointedInputGate,
        outputs: Sequence[DataOutput],
        channel_inputs: Sequence[int],
        end_of_data: Callable[[], None],
    ) -> None:
        counts = [sum(1 for i in channel_inputs if i == index) for index in range(len(outputs))]
        inputs = [StreamTaskNetworkInput(out, counts[i], i) for i, out in enumerate(outputs)]
        super().__init__(gate, inputs, channel_inputs, end_of_data)
        self._channel_emit_batch = [outputs[i].emit_batch for i in channel_inputs]

    def process_input(self) -> InputStatus:
        polled = self._poll_next()
        if polled is None:
            return self._nothing_polled()
        channel, buf = polled
        if isinstance(buf, list):
            self._channel_emit_batch[channel](buf)
            return _MORE_AVAILABLE
        return self._process_event(channel, buf)
