"""``StreamOneInputProcessor``: the input processor of a one-input task (Flink's class of that name).

All channels of the gate feed the one input; a data buffer goes straight to the head operator's
``process_batch`` — the per-buffer path is ``poll_next`` → ``isinstance(buf, list)`` → ``emit_batch``.
"""

from __future__ import annotations

from collections.abc import Callable

from strom.runtime.io.checkpointing.checkpointed_input_gate import CheckpointedInputGate
from strom.runtime.io.data_output import DataOutput
from strom.runtime.io.stream_input_processor import StreamInputProcessor
from strom.runtime.io.stream_task_network_input import StreamTaskNetworkInput
from strom.runtime.operators.source import InputStatus

__all__ = ["StreamOneInputProcessor"]

_MORE_AVAILABLE = InputStatus.MORE_AVAILABLE


class StreamOneInputProcessor(StreamInputProcessor):
    def __init__(self, gate: CheckpointedInputGate, output: DataOutput, end_of_data: Callable[[], None]) -> None:
        n = gate.num_channels
        super().__init__(gate, [StreamTaskNetworkInput(output, n)], [0] * n, end_of_data)
        self._emit_batch = output.emit_batch

    def process_input(self) -> InputStatus:
        polled = self._poll_next()
        if polled is None:
            return self._nothing_polled()
        buf = polled[1]
        if isinstance(buf, list):
            self._emit_batch(buf)
            return _MORE_AVAILABLE
        return self._process_event(polled[0], buf)
