"""The generated fast paths of the SQL operators against the generic ones: integer ``/`` and ``%`` by a literal and
``TO_TIMESTAMP_LTZ`` inlined in a Calc, the generated ``accumulate``/``retract`` (Flink's AggsHandlerCodeGenerator),
GroupAggregate's loop over a batch (the GroupAggFunction changelog), and the watermark of ``ts - INTERVAL``."""

from __future__ import annotations

import datetime
import random
from typing import Any

from strom.api.row import Row, RowKind, _create_row
from strom.table import EnvironmentSettings, TableEnvironment
from strom.table.functions.aggregate_functions import resolve_aggregate
from strom.table.planner.codegen import compile_calc, rowtime_offset_millis
from strom.table.planner.logical import Calc
from strom.table.planner.rex import RexCall, RexInputRef, RexLiteral
from strom.table.runtime.aggs_handle import AggCall, GeneratedAggsHandle
from strom.table.runtime.watermark_assigner import RowtimeWatermarkStrategy, to_epoch_millis
from strom.table.types import parse_type


def _calc(select: str) -> Calc:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql("CREATE TEMPORARY VIEW t AS SELECT * FROM (VALUES (CAST(1 AS BIGINT), 2)) AS v(a, b)")
    plan = t_env.sql_query(select)._plan
    assert isinstance(plan, Calc)
    return plan


def test_integer_division_and_remainder_truncate_as_java() -> None:
    plan = _calc("SELECT a / 7, MOD(a, 7), a % 3, a / b FROM t")
    fn = compile_calc(plan.projection, plan.condition)
    assert fn.__doc__ is not None and "// 7" in fn.__doc__ and "% 7" in fn.__doc__
    for a, b in [(20, 3), (-20, 3), (-21, 7), (0, 5), (None, 1), (-(2**63), 7)]:
        got = fn(Row(a, b))._values
        if a is None:
            assert got == [None, None, None, None]
            continue
        q = abs(a) // 7 * (1 if a >= 0 else -1)
        assert got[:3] == [q, a - 7 * q, a - 3 * (abs(a) // 3 * (1 if a >= 0 else -1))]
        assert got[3] == abs(a) // b * (1 if a >= 0 else -1)  # a column divisor: the bound function


def test_to_timestamp_ltz_of_an_integer_is_inlined() -> None:
    plan = _calc("SELECT TO_TIMESTAMP_LTZ(a, 3), TO_TIMESTAMP_LTZ(b, 0), TO_TIMESTAMP_LTZ(a) FROM t")
    fn = compile_calc(plan.projection, plan.condition)
    assert fn.__doc__ is not None and "_c" in fn.__doc__
    epoch = datetime.datetime(1970, 1, 1)
    assert fn(Row(1_700_000_000_123, 1_700_000_000))._values == [
        epoch + datetime.timedelta(milliseconds=1_700_000_000_123),
        epoch + datetime.timedelta(seconds=1_700_000_000),
        epoch + datetime.timedelta(milliseconds=1_700_000_000_123),
    ]
    assert fn(Row(None, None))._values == [None, None, None]


def _call(name: str, arg_type: str | None, args: tuple[int, ...], **kw: Any) -> AggCall:
    types = [parse_type(arg_type)] if arg_type else []
    return AggCall(resolve_aggregate(name, types, retracting=True).function, args, **kw)


def test_generated_accumulate_and_retract_equal_the_generic_loop() -> None:
    calls = [
        _call("COUNT", None, ()),
        _call("COUNT", "INT", (0,)),
        _call("SUM", "INT", (0,)),
        _call("AVG", "BIGINT", (1,)),
        _call("MAX", "INT", (0,)),
        _call("MIN", "BIGINT", (1,)),
    ]
    handle = GeneratedAggsHandle(calls)
    assert handle.accumulate.__doc__ is not None and "accs[0] += 1" in handle.accumulate.__doc__
    rng = random.Random(7)
    fast, slow = handle.create_accumulators(), handle.create_accumulators()
    for _ in range(300):
        row = Row(rng.choice([None, *range(-5, 6)]), rng.randrange(-100, 100))
        retract = rng.random() < 0.3
        (handle.retract if retract else handle.accumulate)(fast, row)
        (handle._retract if retract else handle._accumulate)(slow, row)
        assert fast == slow
        assert handle.get_value(fast) == handle.get_value(slow)


def test_distinct_and_filter_keep_the_generic_loop() -> None:
    handle = GeneratedAggsHandle([_call("COUNT", "INT", (0,), distinct=True), _call("SUM", "INT", (0,))])
    assert handle.accumulate == handle._accumulate
    filtered = GeneratedAggsHandle([_call("SUM", "INT", (0,), filter_arg=1)])
    assert filtered.retract == filtered._retract


def test_row_construction_copies_values_and_keeps_kind() -> None:
    values = [1, "a"]
    row = _create_row(["x", "y"], values, RowKind.DELETE)
    values.append(3)
    assert row._values == [1, "a"] and row.x == 1 and row.get_row_kind() is RowKind.DELETE
    assert _create_row(None, (1,)).get_row_kind() is RowKind.INSERT


class _Output:
    def __init__(self) -> None:
        self.watermarks: list[int] = []

    def emit_watermark(self, watermark: Any) -> None:
        self.watermarks.append(watermark.timestamp)

    def mark_idle(self) -> None: ...

    def mark_active(self) -> None: ...


def test_watermark_of_rowtime_minus_interval_from_a_batch() -> None:
    ts_type, interval_type = parse_type("TIMESTAMP(3)"), parse_type("INTERVAL SECOND(3) NOT NULL")
    interval = RexLiteral(datetime.timedelta(seconds=0.2), interval_type)
    minus = RexCall("-", lambda a, b: a - b, (RexInputRef(0, ts_type), interval), ts_type)
    assert rowtime_offset_millis(minus, 0) == 200
    assert rowtime_offset_millis(minus, 1) is None
    assert rowtime_offset_millis(RexInputRef(0, ts_type), 0) == 0
    epoch = datetime.datetime(1970, 1, 1)
    rows = [Row(epoch + datetime.timedelta(milliseconds=m)) for m in (1000, 3000, 2000)]
    for offset in (200, None):  # the batch's largest timestamp, or each row's expression
        strategy = RowtimeWatermarkStrategy(0, lambda r: r[0] - datetime.timedelta(seconds=0.2), offset)
        assigner, generator = strategy.create_timestamp_assigner(), strategy.create_watermark_generator()
        timestamps = [assigner.extract_timestamp(r, -(2**63)) for r in rows]
        out = _Output()
        generator.on_events(rows, timestamps, out)  # type: ignore[attr-defined]
        generator.on_periodic_emit(out)
        assert out.watermarks == [2800]
    strategy = RowtimeWatermarkStrategy(0, lambda r: None if r[0] is None else r[0], 0)
    assigner, generator = strategy.create_timestamp_assigner(), strategy.create_watermark_generator()
    batch = [Row(None), Row(epoch)]
    stamps = [assigner.extract_timestamp(r, 5000) for r in batch]  # a NULL rowtime keeps its record timestamp
    out = _Output()
    generator.on_events(batch, stamps, out)  # type: ignore[attr-defined]
    generator.on_periodic_emit(out)
    assert out.watermarks == [0]  # the expression's value, not the NULL row's record timestamp 5000
    assert to_epoch_millis(epoch - datetime.timedelta(microseconds=500)) == -1
