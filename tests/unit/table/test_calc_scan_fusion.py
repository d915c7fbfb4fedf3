"""The scan's computed columns, watermark and the query's Calc in one generated step (``calc_scan_fusion``): in a
datagen source or over any scan's rows, the same rows, rowtimes and watermarks as the Calc → WatermarkAssigner →
Calc operators."""

from __future__ import annotations

from typing import Any

import pytest

from strom.api._time import LONG_MIN
from strom.table import EnvironmentSettings, TableEnvironment
from strom.table.connectors.datagen import _RowGenerator
from strom.table.planner.calc_scan_fusion import _match, generate_produce
from strom.table.planner.codegen import compile_calc, compile_projection, rowtime_offset_millis
from strom.table.planner.logical import Calc
from strom.table.runtime.calc_scan import ScanWatermarks, ScanWatermarkStrategy
from strom.table.runtime.watermark_assigner import RowtimeWatermarkStrategy

DDL = (
    "CREATE TABLE events (i BIGINT, s STRING, user_id AS MOD(i * 7919, 10), {ts}, "
    "WATERMARK FOR ts AS ts - INTERVAL '0.2' SECOND) WITH ('connector' = 'datagen', {fields} "
    "'fields.i.kind' = 'sequence', 'fields.i.start' = '-5', 'fields.i.end' = '200')"
)
LTZ = "ts AS TO_TIMESTAMP_LTZ(1700000000000 + i * 37, 3)"
NULLS = "ts AS CASE WHEN MOD(i, 4) = 0 THEN NULL ELSE TO_TIMESTAMP_LTZ(i * 1000 + 7, 3) END"
SEQUENCE_S = "'fields.s.kind' = 'sequence', 'fields.s.start' = '1', 'fields.s.end' = '300',"
RANDOM_S = "'fields.s.length' = '3',"
QUERIES = [
    "SELECT user_id FROM events",
    "SELECT user_id, i * 3 + 1 AS v FROM events WHERE MOD(i, 3) <> 0 AND user_id < 7",
    "SELECT user_id, ts, s FROM events WHERE i > 10",
    "SELECT ts, user_id, i FROM events WHERE ts IS NOT NULL OR i < 0",
]


class _Output:
    def __init__(self) -> None:
        self.watermarks: list[int] = []

    def emit_watermark(self, watermark: Any) -> None:
        self.watermarks.append(watermark.timestamp)


def _unfused(rel: Calc, lo: int, end: int) -> tuple[list[Any], list[int], list[int]]:
    """The rows, rowtimes and watermark of the operators one by one (the translator's path without fusion)."""
    wa = rel.input
    below = wa.input
    scan = below.input if isinstance(below, Calc) else below
    row_of = _RowGenerator(scan.source.generators, 0)
    computed = compile_calc(below.projection, None) if isinstance(below, Calc) else (lambda r: r)
    offset = rowtime_offset_millis(wa.expression, wa.rowtime_index)
    strategy = RowtimeWatermarkStrategy(wa.rowtime_index, lambda r: compile_projection([wa.expression])(r)[0], offset)
    assigner, generator = strategy.create_timestamp_assigner(), strategy.create_watermark_generator()
    rows = [computed(row_of(i)) for i in range(lo, end)]
    stamps = [assigner.extract_timestamp(r, LONG_MIN) for r in rows]
    out = _Output()
    generator.on_events(rows, stamps, out)  # type: ignore[attr-defined]
    generator.on_periodic_emit(out)
    top = compile_calc(rel.projection, rel.condition)
    kept, kept_stamps = [], []
    for r, t in zip(rows, stamps, strict=True):
        got = top(r)
        for o in got if rel.condition is not None else (got,):
            kept.append(o)
            kept_stamps.append(t)
    return kept, kept_stamps, out.watermarks


@pytest.mark.parametrize("fields", [SEQUENCE_S, RANDOM_S])
@pytest.mark.parametrize("ts", [LTZ, NULLS])
@pytest.mark.parametrize("query", QUERIES)
def test_fused_scan_equals_the_operators(query: str, ts: str, fields: str) -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql(DDL.format(ts=ts, fields=fields))
    rel = t_env.sql_query(query)._plan
    assert isinstance(rel, Calc)
    matched = _match(rel)
    assert matched is not None
    wa, computed, scan, offset = matched
    produce = generate_produce(
        _RowGenerator(scan.source.generators, 0),
        len(scan.row_type),
        computed.projection if computed is not None else None,
        wa.rowtime_index,
        rel.projection,
        rel.condition,
    )
    over_rows = generate_produce(
        None,
        len(scan.row_type),
        computed.projection if computed is not None else None,
        wa.rowtime_index,
        rel.projection,
        rel.condition,
    )
    row_of = _RowGenerator(scan.source.generators, 0)
    for lo, end in ((0, 206), (3, 4), (7, 7)):
        rows, stamps, watermarks = _unfused(rel, lo, end)
        scanned = [row_of(i) for i in range(lo, end)]
        by_rows = over_rows(scanned, [None] * len(scanned))
        assert [(r.get_row_kind(), list(r)) for r in by_rows] == [(r.get_row_kind(), list(r)) for r in rows]
        assert by_rows.timestamps == stamps and by_rows.largest == produce(lo, end).largest
        batch = produce(lo, end)
        assert [(r.get_row_kind(), list(r)) for r in batch] == [(r.get_row_kind(), list(r)) for r in rows]
        assert batch.timestamps == stamps
        out = _Output()
        generator = ScanWatermarkStrategy(offset).create_watermark_generator()
        generator.on_events(batch, batch.timestamps, out)  # type: ignore[attr-defined]
        generator.on_periodic_emit(out)
        assert out.watermarks == watermarks


def test_the_watermark_sees_the_rows_the_calc_drops() -> None:
    generator = ScanWatermarks(200)
    out = _Output()
    generator.on_events(_batch_with_largest([], 5_000), [], out)
    generator.on_periodic_emit(out)
    generator.on_events([], [], out)  # a plain empty batch: nothing new
    generator.on_periodic_emit(out)
    generator.on_event(None, 9_000, out)
    generator.on_event(None, LONG_MIN, out)
    generator.on_periodic_emit(out)
    assert out.watermarks == [4_800, 8_800]


def _batch_with_largest(rows: list[Any], largest: int) -> Any:
    from strom.table.runtime.calc_scan import CalcScanBatch

    return CalcScanBatch(rows, [], largest)


def test_no_fusion_for_an_expression_watermark_or_another_connector() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql(
        "CREATE TABLE a (i BIGINT, ts AS TO_TIMESTAMP_LTZ(i, 3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
        "WITH ('connector' = 'datagen', 'fields.i.kind' = 'sequence', 'fields.i.start' = '0', 'fields.i.end' = '9')"
    )
    t_env.execute_sql(
        "CREATE TABLE b (i BIGINT, ts AS TO_TIMESTAMP_LTZ(i, 3), WATERMARK FOR ts AS TO_TIMESTAMP_LTZ(i - 5, 3)) "
        "WITH ('connector' = 'datagen', 'fields.i.kind' = 'sequence', 'fields.i.start' = '0', 'fields.i.end' = '9')"
    )
    assert _match(t_env.sql_query("SELECT i FROM a")._plan) is not None
    assert _match(t_env.sql_query("SELECT i FROM b")._plan) is None


def test_a_null_rowtime_keeps_the_rows_own_timestamp() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql(DDL.format(ts=NULLS, fields=SEQUENCE_S))
    rel = t_env.sql_query("SELECT i FROM events")._plan
    matched = _match(rel)
    assert matched is not None
    wa, computed, scan, _ = matched
    assert computed is not None
    calc_batch = generate_produce(None, 2, computed.projection, wa.rowtime_index, rel.projection, None)
    row_of = _RowGenerator(scan.source.generators, 0)
    batch = calc_batch([row_of(k) for k in (1, 5, 6)], [123, None, 9])  # i = -4, 0 (ts NULL), 1
    assert [list(r) for r in batch] == [[-4], [0], [1]] and batch.timestamps == [123, LONG_MIN, 1007]
    assert batch.largest == 1007  # the NULL rowtimes' own timestamps make no watermark
