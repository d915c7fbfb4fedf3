"""Flink's ``WatermarkOutputMultiplexer``: one watermark output per source split, combined into the stream's.

A source reader that reads several splits (Kafka partitions) gets a watermark generator per split
(``SourceReaderContext.create_output_for_split``, as Flink's ``ReaderOutput.createOutputForSplit``); each
generator writes to its split's output here. The combined watermark is the minimum over the splits that are not
idle; when every split is idle the stream is idle, after the highest watermark of any split went out (nothing
holds it back any more). A released split (finished) no longer holds the watermark
back. Pure: events in, calls on the underlying :class:`~strom.api.eventtime.WatermarkOutput` out.

    >>> class Out:
    ...     def emit_watermark(self, w): print("wm", w.timestamp)
    ...     def mark_idle(self): print("idle")
    ...     def mark_active(self): print("active")
    >>> m = WatermarkOutputMultiplexer(Out())
    >>> a, b = m.register_new_output("a"), m.register_new_output("b")
    >>> a.emit_watermark(Watermark(10)); b.emit_watermark(Watermark(5))
    wm 5
    >>> b.mark_idle()
    wm 10
"""

from __future__ import annotations

from typing import Any

from strom.api.eventtime import LONG_MIN, Watermark, WatermarkOutput

__all__ = ["SplitWatermarkOutput", "WatermarkOutputMultiplexer"]


class SplitWatermarkOutput:
    """The :class:`WatermarkOutput` of one split: its highest watermark and whether it is idle."""

    __slots__ = ("idle", "multiplexer", "watermark")

    def __init__(self, multiplexer: WatermarkOutputMultiplexer) -> None:
        self.multiplexer = multiplexer
        self.watermark = LONG_MIN
        self.idle = False

    def emit_watermark(self, watermark: Watermark) -> None:
        ts = watermark.timestamp
        if ts > self.watermark or self.idle:
            self.watermark = max(ts, self.watermark)
            self.idle = False
            self.multiplexer.update_combined_watermark()

    def mark_idle(self) -> None:
        if not self.idle:
            self.idle = True
            self.multiplexer.update_combined_watermark()

    def mark_active(self) -> None:
        if self.idle:
            self.idle = False
            self.multiplexer.update_combined_watermark()


class WatermarkOutputMultiplexer:
    """The split outputs of one source subtask, combined into ``underlying``."""

    def __init__(self, underlying: WatermarkOutput) -> None:
        self.underlying = underlying
        self.outputs: dict[Any, SplitWatermarkOutput] = {}
        self.combined = LONG_MIN

    def register_new_output(self, split_id: Any) -> SplitWatermarkOutput:
        output = self.outputs.get(split_id)
        if output is None:
            output = self.outputs[split_id] = SplitWatermarkOutput(self)
        return output

    def unregister_output(self, split_id: Any) -> None:
        if self.outputs.pop(split_id, None) is not None and self.outputs:
            self.update_combined_watermark()

    def update_combined_watermark(self) -> None:
        """The minimum over the active splits, when it rises; idle when every split is idle."""
        active = [o.watermark for o in self.outputs.values() if not o.idle]
        if not active:
            # every split idle: none holds the others back any more, so the highest goes out first (the flush of
            # Flink's StatusWatermarkValve when all its channels turn idle)
            highest = max((o.watermark for o in self.outputs.values()), default=LONG_MIN)
            if highest > self.combined:
                self.combined = highest
                self.underlying.emit_watermark(Watermark(highest))
            self.underlying.mark_idle()
            return
        lowest = min(active)
        if lowest > self.combined:
            self.combined = lowest
            self.underlying.emit_watermark(Watermark(lowest))
        self.underlying.mark_active()
