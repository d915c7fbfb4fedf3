"""Pandas scalar functions in a Calc called once per batch with a Series per argument over the whole batch
(Flink's ``PythonCalcSplitRule`` + ``ArrowPythonScalarFunctionOperator``), the rest of the Calc per row."""

from __future__ import annotations

from typing import Any

import pytest

from strom.api.row import Row
from strom.table import DataTypes, EnvironmentSettings, TableEnvironment
from strom.table.expressions import col
from strom.table.planner.rex import RexCall, RexInputRef, RexLiteral
from strom.table.runtime.pandas_calc import split_pandas_calc
from strom.table.udf import udf


@udf(result_type=DataTypes.DOUBLE(), func_type="pandas")
def scaled(v: Any, w: Any) -> Any:
    return v * 2 + w


@udf(result_type=DataTypes.STRING(), func_type="pandas")
def seen(v: Any) -> Any:
    """What the function was called with (it runs in a TaskManager process): the Series' length and dtype."""
    return v.map(lambda _: f"{len(v)} {v.dtype}")


@udf(result_type=DataTypes.BIGINT(), func_type="pandas")
def wrong_length(v: Any) -> Any:
    return v.iloc[:1]


def _env() -> TableEnvironment:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    return t_env


def _rows(n: int) -> list[tuple[Any, ...]]:
    return [(i, None if i == 3 else i * 0.5) for i in range(n)]


def test_a_pandas_function_is_called_once_per_batch_with_whole_series() -> None:
    t_env = _env()
    t_env.create_temporary_function("scaled", scaled)
    t_env.create_temporary_function("seen", seen)
    table = t_env.from_elements(
        _rows(50), DataTypes.ROW([DataTypes.FIELD("k", DataTypes.INT()), DataTypes.FIELD("v", DataTypes.FLOAT())])
    )
    t_env.create_temporary_view("t", table)
    rows = list(t_env.execute_sql("SELECT k, scaled(v, k) + 1 AS s, seen(v) FROM t WHERE scaled(v, 1) > 3").collect())
    expected = [(k, v * 2 + k + 1) for k, v in _rows(50) if v is not None and v * 2 + 1 > 3]
    assert sorted((r[0], r[1]) for r in rows) == sorted(expected)
    # one call per strom batch over all its rows (before the filter, as Flink's split Calc), not one per row;
    # FLOAT arrives as float32 (Arrow's)
    lengths = {int(r[2].split()[0]) for r in rows}
    assert min(lengths) > 1 and sum(lengths) <= 50 and {r[2].split()[1] for r in rows} == {"float32"}


def test_table_api_select_and_a_series_of_the_wrong_length() -> None:
    t_env = _env()
    table = t_env.from_elements([(1, 1.5), (2, 2.5)], ["k", "v"])
    rows = list(table.select(col("k"), scaled(col("v"), col("k")), seen(col("v"))).execute().collect())
    assert [tuple(r) for r in rows] == [(1, 4.0, "2 float64"), (2, 7.0, "2 float64")]
    with pytest.raises(Exception, match=r"expected a pandas\.Series as long as its input"):
        list(table.select(wrong_length(col("k"))).execute().collect())


def test_split_replaces_the_calls_by_appended_columns_and_keeps_nested_calls_per_row() -> None:
    double = DataTypes.DOUBLE()
    ref = RexInputRef(0, double)
    call = RexCall("scaled", scaled.func, (ref, ref), double)
    plus = RexCall("+", lambda a, b: a + b, (call, RexLiteral(1.0, double)), double)
    split = split_pandas_calc((ref, plus), None, 1)
    assert split is not None
    calls, projection, condition = split
    assert calls == [call] and condition is None and projection is not None
    assert projection[1] == RexCall("+", plus.function, (RexInputRef(1, double), RexLiteral(1.0, double)), double)
    nested = RexCall("scaled", scaled.func, (call, ref), double)
    assert split_pandas_calc((nested,), None, 1) is None
    assert split_pandas_calc((ref,), None, 1) is None
    assert Row(1)[0] == 1
