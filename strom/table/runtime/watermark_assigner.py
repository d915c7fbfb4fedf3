"""Flink's ``WatermarkAssignerOperator`` for ``WATERMARK FOR ts AS expr``: record timestamps from the rowtime column,
watermarks from the largest value of the watermark expression seen so far (emitted periodically)."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from strom.api.eventtime import (
    TimestampAssigner,
    Watermark,
    WatermarkGenerator,
    WatermarkGeneratorSupplierContext,
    WatermarkOutput,
    WatermarkStrategy,
)

__all__ = ["RowtimeWatermarkStrategy", "to_epoch_millis"]

_EPOCH = datetime.datetime(1970, 1, 1)


def to_epoch_millis(value: Any) -> int:
    """A TIMESTAMP / TIMESTAMP_LTZ value (naive, UTC) as epoch milliseconds (strom's record timestamps)."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.UTC).replace(tzinfo=None)
        delta: datetime.timedelta = value - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000
    millis: int = int(value)
    return millis


class _RowtimeAssigner(TimestampAssigner[Any]):
    def __init__(self, index: int) -> None:
        self.index = index

    def extract_timestamp(self, element: Any, record_timestamp: int) -> int:
        value = element._values[self.index]
        return record_timestamp if value is None else to_epoch_millis(value)


class _ExpressionWatermarks(WatermarkGenerator[Any]):
    def __init__(self, expression: Callable[[Any], Any]) -> None:
        self.expression = expression
        self.current: int | None = None
        self.emitted: int | None = None

    def on_event(self, event: Any, event_timestamp: int, output: WatermarkOutput) -> None:
        value = self.expression(event)
        if value is not None:
            millis = to_epoch_millis(value)
            if self.current is None or millis > self.current:
                self.current = millis

    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        if self.current is not None and (self.emitted is None or self.current > self.emitted):
            self.emitted = self.current
            output.emit_watermark(Watermark(self.current))


class RowtimeWatermarkStrategy(WatermarkStrategy[Any]):
    """Timestamps from column ``rowtime_index``; watermarks from ``expression(row)`` (a compiled closure)."""

    def __init__(self, rowtime_index: int, expression: Callable[[Any], Any]) -> None:
        self.rowtime_index = rowtime_index
        self.expression = expression

    def create_watermark_generator(
        self, context: WatermarkGeneratorSupplierContext | None = None
    ) -> WatermarkGenerator[Any]:
        return _ExpressionWatermarks(self.expression)

    def create_timestamp_assigner(self, context: Any = None) -> TimestampAssigner[Any]:
        return _RowtimeAssigner(self.rowtime_index)
