"""Flink's ``PushWatermarkIntoTableSourceScanRule`` (and its ``…AcrossCalcRule``): a table's ``WATERMARK`` made
inside a source that supports it (:class:`~strom.table.connectors.abilities.SupportsWatermarkPushDown`), so that
the Kafka source generates watermarks per partition, as Flink's does. A Calc of computed columns between the scan
and the watermark runs inside the source too (on each row before its timestamp is taken)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from strom.table.connectors.abilities import SupportsWatermarkPushDown
from strom.table.planner.codegen import compile_calc, compile_projection
from strom.table.planner.logical import Calc, TableScan, WatermarkAssigner
from strom.table.runtime.watermark_assigner import RowtimeWatermarkStrategy

if TYPE_CHECKING:
    from strom.api.datastream import DataStream
    from strom.api.environment import StreamExecutionEnvironment

__all__ = ["push_watermark_into_scan"]


class _FirstValue:
    def __init__(self, values: Any) -> None:
        self.values = values

    def __call__(self, row: Any) -> Any:
        return self.values(row)[0]


def push_watermark_into_scan(env: StreamExecutionEnvironment, rel: WatermarkAssigner) -> DataStream[Any] | None:
    """The source stream with the watermark generated inside the source, or None when the source cannot."""
    scan = rel.input
    calc = None
    if isinstance(scan, Calc) and scan.condition is None:
        calc, scan = scan, scan.input
    if not isinstance(scan, TableScan) or not isinstance(scan.source, SupportsWatermarkPushDown):
        return None
    strategy = RowtimeWatermarkStrategy(rel.rowtime_index, _FirstValue(compile_projection([rel.expression])))
    source: Any = scan.source
    source.apply_watermark(strategy, compile_calc(calc.projection, None) if calc is not None else None)
    stream: DataStream[Any] = source.create_stream(env, scan.row_type)
    return stream
