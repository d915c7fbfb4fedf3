"""FLOAT aggregates and arithmetic in Java ``float`` (Flink's ``FloatSumAggFunction`` & co.): every step of a SUM
rounded to 32 bits, AVG summed in a double, the generated ``accumulate`` the same as the functions', DOUBLE
untouched. Java's values: ``53.1f + 3.1f + 30.2f == 86.399994f``, ``30.2f * 3 == 90.600006f``."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from strom.api.row import Row
from strom.table.functions.aggfunctions import Avg, Extreme, Sum
from strom.table.functions.aggregate_functions import resolve_aggregate
from strom.table.functions.arithmetic import float32, numeric_arithmetic
from strom.table.functions.cast_to_string import format_float
from strom.table.functions.float_aggregate_functions import (
    FloatAvg,
    FloatExtreme,
    FloatExtremeWithRetract,
    FloatSum,
)
from strom.table.runtime.agg_handler_code_generator import generate_accumulate, generate_get_value
from strom.table.runtime.aggs_handle import AggCall
from strom.table.types import parse_type

FLOAT, DOUBLE = parse_type("FLOAT"), parse_type("DOUBLE")


def _fold(function: Any, values: list[float]) -> Any:
    acc = function.create_accumulator()
    for v in values:
        acc = function.accumulate(acc, v)
    return function.get_value(acc)


def _op(op: str, left: Any, right: Any) -> tuple[Any, Any]:
    found = numeric_arithmetic(op, left, right)
    assert found is not None
    return found


def test_float_sum_rounds_every_step_as_java_float() -> None:
    assert format_float(_fold(FloatSum(), [53.1, 3.1, 30.2])) == "86.399994"
    assert format_float(_fold(FloatSum(), [30.2, 16.1])) == "46.300003"
    assert _fold(Sum(0.0), [53.1, 3.1, 30.2]) == 86.4  # DOUBLE: unchanged


def test_float_avg_sums_in_double_and_rounds_the_quotient() -> None:
    """Flink 2.3: AVG of 53.1, 3.1, 30.2 (FLOAT) is 28.8, not (86.399994 / 3 =) 28.799998."""
    assert format_float(_fold(FloatAvg(), [53.1, 3.1, 30.2])) == "28.8"
    assert _fold(Avg(0.0, kind="float"), [1.0, 2.0]) == 1.5


def test_float_sum_retract_and_merge_round_too_and_overflow_to_infinity() -> None:
    f = FloatSum()
    acc = f.retract(f.accumulate(f.accumulate(f.create_accumulator(), 53.1), 3.1), 53.1)
    assert acc == (float32(float32(float32(53.1) + float32(3.1)) - float32(53.1)), 1)
    assert f.merge((3.0e38, 1), (3.0e38, 1)) == (math.inf, 2)
    assert f.get_value(f.create_accumulator()) is None


def test_float_min_max_return_the_java_float() -> None:
    assert FloatExtreme(True).get_value(110.1) == float32(110.1)
    retracting = FloatExtremeWithRetract(False)
    acc = retracting.accumulate(retracting.accumulate(retracting.create_accumulator(), 2.5), 0.7)
    assert retracting.get_value(acc) == float32(0.7)
    assert FloatExtreme(False).get_value(None) is None


def test_the_planner_picks_float_functions_for_float_only() -> None:
    for name, kind in (("SUM", FloatSum), ("SUM0", FloatSum), ("AVG", FloatAvg), ("MIN", FloatExtreme)):
        resolved = resolve_aggregate(name, [FLOAT], retracting=False)
        assert type(resolved.function) is kind and "FLOAT" in str(resolved.result_type)
    assert type(resolve_aggregate("MAX", [FLOAT], retracting=True).function) is FloatExtremeWithRetract
    assert type(resolve_aggregate("SUM", [DOUBLE], retracting=False).function) is Sum
    assert type(resolve_aggregate("MAX", [DOUBLE], retracting=False).function) is Extreme


@given(st.lists(st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False)), max_size=30))
def test_generated_accumulate_and_get_value_equal_the_functions(values: list[float | None]) -> None:
    calls = [AggCall(FloatSum(), (0,)), AggCall(FloatAvg(), (0,))]
    accumulate = generate_accumulate(calls, 2, "+")
    retract = generate_accumulate(calls, 2, "-")
    get_value = generate_get_value(calls)
    assert accumulate is not None and retract is not None
    accs = [c.function.create_accumulator() for c in calls] + [0]
    expected = [c.function.create_accumulator() for c in calls]
    for v in values:
        accumulate(accs, Row(v))
        expected = [c.function.accumulate(a, v) for c, a in zip(calls, expected, strict=True)]
    assert accs[:2] == expected
    assert get_value(accs) == tuple(c.function.get_value(a) for c, a in zip(calls, expected, strict=True))
    if values:
        retract(accs, Row(values[0]))
        expected = [c.function.retract(a, values[0]) for c, a in zip(calls, expected, strict=True)]
        assert accs[:2] == expected


def test_float_operands_are_java_floats_in_arithmetic() -> None:
    result, times = _op("*", FLOAT, parse_type("INT"))
    assert "FLOAT" in str(result) and format_float(times(30.2, 3)) == "90.600006"
    result, minus = _op("-", FLOAT, parse_type("DECIMAL(2, 1)"))
    assert "DOUBLE" in str(result) and minus(110.1, 0.1) == 109.9999984741211  # Flink 2.3's value
    _, double_minus = _op("-", DOUBLE, DOUBLE)
    assert double_minus(110.1, 0.1) == 110.1 - 0.1
