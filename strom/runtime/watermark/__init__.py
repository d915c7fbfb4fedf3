"""Event time in the runtime: how a task combines the watermarks of its input channels.

``status_watermark_valve`` is Flink's ``org.apache.flink.streaming.runtime.watermarkstatus`` package
(``StatusWatermarkValve``, ``WatermarkStatus``): a pure state machine the task's input processor drives.
"""

from strom.runtime.watermark.status_watermark_valve import (
    InputChannelStatus,
    StatusWatermarkValve,
    ValveOutput,
    WatermarkStatus,
)

__all__ = ["InputChannelStatus", "StatusWatermarkValve", "ValveOutput", "WatermarkStatus"]
