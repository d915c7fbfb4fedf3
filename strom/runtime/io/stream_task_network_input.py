"""``StreamTaskNetworkInput``: one logical input of a task — its channels' status-watermark valve and the
:class:`~strom.runtime.io.data_output.DataOutput` it pushes into (Flink's ``StreamTaskNetworkInput``).

Flink gives each input a gate of its own and lets the network input poll it; strom's inputs share one
:class:`~strom.runtime.io.checkpointing.checkpointed_input_gate.CheckpointedInputGate` (so alignment spans all
of them, see ``docs/design.md``), the input processor polls it, and the network input takes the watermarks and
statuses of its channels — numbered within the input — and forwards what the valve lets through.
"""

from __future__ import annotations

from strom.api.eventtime import Watermark
from strom.runtime.io.data_output import DataOutput
from strom.runtime.watermark.status_watermark_valve import StatusWatermarkValve, ValveOutput, WatermarkStatus

__all__ = ["StreamTaskNetworkInput"]


class StreamTaskNetworkInput:
    __slots__ = ("input_index", "num_channels", "output", "valve")

    def __init__(self, output: DataOutput, num_channels: int, input_index: int = 0) -> None:
        self.output = output
        self.input_index = input_index  # 0-based among the task's inputs
        self.num_channels = num_channels
        self.valve = StatusWatermarkValve(max(num_channels, 1))

    def process_watermark(self, channel_index: int, timestamp: int) -> None:
        """Channel ``channel_index`` (within this input) delivered a watermark."""
        self._forward(self.valve.input_watermark(Watermark(timestamp), channel_index))

    def process_watermark_status(self, channel_index: int, idle: bool) -> None:
        """Channel ``channel_index`` (within this input) turned IDLE or ACTIVE."""
        status = WatermarkStatus.IDLE if idle else WatermarkStatus.ACTIVE
        self._forward(self.valve.input_watermark_status(status, channel_index))

    def _forward(self, outputs: list[ValveOutput]) -> None:
        output = self.output
        for out in outputs:
            if isinstance(out, Watermark):
                output.emit_watermark(out.timestamp)
            else:
                output.emit_watermark_status(out.is_idle())
