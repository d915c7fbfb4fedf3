"""A table scan with its computed columns, its ``WATERMARK`` and the query's Calc pushed into it — what Flink's
``PushWatermarkIntoTableSourceScanAcrossCalcRule``, ``FlinkCalcMergeRule`` and ``PushProjectIntoTableSourceScanRule``
leave of ``Calc → WatermarkAssigner → Calc(computed columns) → TableScan``: the source emits the query's rows with
their rowtimes as record timestamps and makes the watermark itself.

The reader runs one generated function per batch (``produce(lo, end)``, :mod:`strom.table.planner.calc_scan_fusion`):
a loop over the indices that evaluates the needed columns as locals, the rowtime as epoch milliseconds, the
condition and the projection — no Python call per row and no intermediate rows. The batch carries the largest
rowtime of all its rows (the filtered-out ones too: Flink's watermark is generated in the scan, before the Calc),
from which :class:`ScanWatermarks` makes ``largest - offset`` as the ``WATERMARK FOR ts AS ts - INTERVAL …``
generator does.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from itertools import repeat
from typing import Any

from strom.api._time import LONG_MIN
from strom.api.eventtime import (
    Watermark,
    WatermarkGenerator,
    WatermarkGeneratorSupplierContext,
    WatermarkOutput,
    WatermarkStrategy,
)
from strom.api.source import SourceReader, SourceReaderContext
from strom.connectors.datagen import DataGeneratorSource, _GeneratorReader
from strom.runtime.operators.timestamps_and_watermarks import TimestampsAndWatermarksOperator
from strom.runtime.streamrecord import TimestampedBatch, timestamps_of

__all__ = ["CalcScanBatch", "CalcScanSource", "CalcWatermarkOperator", "ScanWatermarkStrategy", "ScanWatermarks"]

#: ``produce(lo, end)``: the batch of the rows of indices ``[lo, end)`` that pass the Calc
Produce = Callable[[int, int], "CalcScanBatch"]
#: ``calc_batch(rows, stamps)``: the batch of the Calc's rows of a scan's rows (``stamps``: their own timestamps)
CalcBatch = Callable[[list[Any], Iterable[Any]], "CalcScanBatch"]


class CalcScanBatch(TimestampedBatch):
    """The rows the Calc kept, their rowtimes, and ``largest``: the largest rowtime of all the batch's rows."""

    __slots__ = ("largest",)

    def __init__(self, values: Iterable[Any], timestamps: list[int | None], largest: int) -> None:
        super().__init__(values, timestamps)
        self.largest = largest


class ScanWatermarks(WatermarkGenerator[Any]):
    """``WATERMARK FOR ts AS ts - INTERVAL offset``: the largest rowtime seen minus ``offset_ms``, emitted
    periodically (the batches show it after they left, as SQL's watermark assigner)."""

    periodic_only = True

    def __init__(self, offset_ms: int) -> None:
        self.offset_ms = offset_ms
        self.current: int | None = None
        self.emitted: int | None = None

    def on_events(self, events: Sequence[Any], timestamps: Sequence[int], output: WatermarkOutput) -> None:
        largest = getattr(events, "largest", None)
        if largest is None:
            largest = max(timestamps, default=LONG_MIN)
        if largest != LONG_MIN and (self.current is None or largest - self.offset_ms > self.current):
            self.current = largest - self.offset_ms

    def on_event(self, event: Any, event_timestamp: int, output: WatermarkOutput) -> None:
        if event_timestamp != LONG_MIN and (self.current is None or event_timestamp - self.offset_ms > self.current):
            self.current = event_timestamp - self.offset_ms

    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        if self.current is not None and (self.emitted is None or self.current > self.emitted):
            self.emitted = self.current
            output.emit_watermark(Watermark(self.current))


class ScanWatermarkStrategy(WatermarkStrategy[Any]):
    """The records keep the rowtimes the scan gave them; watermarks from :class:`ScanWatermarks`."""

    def __init__(self, offset_ms: int) -> None:
        self.offset_ms = offset_ms

    def create_watermark_generator(
        self, context: WatermarkGeneratorSupplierContext | None = None
    ) -> WatermarkGenerator[Any]:
        return ScanWatermarks(self.offset_ms)


class _BatchReader(_GeneratorReader):
    def __init__(
        self,
        row_of: Callable[[int], Any],
        produce: Produce,
        context: SourceReaderContext,
        rate: float | None,
        clock: Any,
    ) -> None:
        super().__init__(row_of, context, rate, clock)
        self._produce = produce

    def produce(self, lo: int, end: int) -> list[Any]:
        return self._produce(lo, end)


class CalcScanSource(DataGeneratorSource[Any]):
    """The ``datagen`` table's generator source (``row_of(i)``: the table's row of index ``i``) with its reader
    running ``produce`` over each batch of indices instead."""

    def __init__(
        self, row_of: Callable[[int], Any], produce: Produce, count: int, records_per_second: float | None
    ) -> None:
        super().__init__(row_of, count, records_per_second=records_per_second)
        self.produce = produce

    def create_reader(self, context: SourceReaderContext) -> SourceReader[Any]:
        rate = None if self.records_per_second is None else self.records_per_second / max(context.parallelism, 1)
        return _BatchReader(
            self.generator_function,
            self.produce,
            context,
            rate,
            self.clock if self.clock is not None else time.monotonic,
        )


class CalcWatermarkOperator(TimestampsAndWatermarksOperator):
    """The same pushed into the first operator after any other scan: its computed columns, rowtime, watermark and
    the query's Calc over each batch of the scan's rows in one generated function (``calc_batch``)."""

    def __init__(self, strategy: ScanWatermarkStrategy, calc_batch: CalcBatch) -> None:
        super().__init__(strategy)
        self.calc_batch = calc_batch

    def process_batch(self, batch: list[Any]) -> None:
        stamps = timestamps_of(batch)
        try:
            out = self.calc_batch(batch, repeat(None) if stamps is None else stamps)
        except Exception as exc:
            raise self.user_error(exc, batch, None) from exc
        self._records_in += len(batch)
        self._emit_and_feed(out, out.timestamps)
