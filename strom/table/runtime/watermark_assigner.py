"""Flink's ``WatermarkAssignerOperator`` for ``WATERMARK FOR ts AS expr``: record timestamps from the rowtime column,
watermarks from the largest value of the watermark expression seen so far (emitted periodically)."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from typing import Any

from strom.api._time import LONG_MIN
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


_MILLISECOND = datetime.timedelta(milliseconds=1)
_DATETIME = datetime.datetime


def to_epoch_millis(value: Any) -> int:
    """A TIMESTAMP / TIMESTAMP_LTZ value (naive, UTC) as epoch milliseconds (strom's record timestamps)."""
    if type(value) is _DATETIME and value.tzinfo is None:  # per record: one subtraction, one floor division
        millis: int = (value - _EPOCH) // _MILLISECOND
        return millis
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.UTC).replace(tzinfo=None)
        delta: datetime.timedelta = value - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000
    return int(value)


class _RowtimeAssigner(TimestampAssigner[Any]):
    def __init__(self, index: int, nulls: list[int]) -> None:
        self.index = index
        self.nulls = nulls  # NULL rowtimes seen, shared with the watermark generators of the same operator

    def extract_timestamp(self, element: Any, record_timestamp: int) -> int:
        value = element._values[self.index]
        if type(value) is _DATETIME and value.tzinfo is None:  # per row: to_epoch_millis's fast path, inline
            millis: int = (value - _EPOCH) // _MILLISECOND
            return millis
        if value is None:
            self.nulls[0] += 1
            return record_timestamp
        return to_epoch_millis(value)


class _ExpressionWatermarks(WatermarkGenerator[Any]):
    """Emits only periodically (``periodic_only``: the operator shows it whole batches, after they left). With
    ``offset_ms`` — the expression is ``rowtime - INTERVAL …`` — a batch's largest value is its largest record
    timestamp minus the offset: no expression per record."""

    periodic_only = True

    def __init__(self, expression: Callable[[Any], Any], offset_ms: int | None, nulls: list[int]) -> None:
        self.expression = expression
        self.offset_ms = offset_ms
        self.nulls = nulls
        self.nulls_seen = 0
        self.current: int | None = None
        self.emitted: int | None = None

    def on_events(self, events: Sequence[Any], timestamps: Sequence[int], output: WatermarkOutput) -> None:
        if self.offset_ms is None or not timestamps or self.nulls[0] != self.nulls_seen:
            # a NULL rowtime's record timestamp is not the expression's value: each row's expression, as Flink
            self.nulls_seen = self.nulls[0]
            for event in events:
                self.on_event(event, 0, output)
            return
        largest = max(timestamps)
        if largest == LONG_MIN:
            return
        millis = largest - self.offset_ms
        if self.current is None or millis > self.current:
            self.current = millis

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

    def __init__(self, rowtime_index: int, expression: Callable[[Any], Any], offset_ms: int | None = None) -> None:
        self.rowtime_index = rowtime_index
        self.expression = expression
        self.offset_ms = offset_ms  # the expression is ``rowtime - offset_ms``, when known
        self._nulls = [0]

    def create_watermark_generator(
        self, context: WatermarkGeneratorSupplierContext | None = None
    ) -> WatermarkGenerator[Any]:
        return _ExpressionWatermarks(self.expression, self.offset_ms, self._nulls)

    def create_timestamp_assigner(self, context: Any = None) -> TimestampAssigner[Any]:
        return _RowtimeAssigner(self.rowtime_index, self._nulls)
