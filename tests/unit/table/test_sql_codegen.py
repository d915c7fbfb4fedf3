"""The Calc code generator: one closure per Calc, SQL's three-valued logic, lazy CASE, integer wrap-around."""

from __future__ import annotations

from strom.api.row import Row, RowKind
from strom.table import EnvironmentSettings, TableEnvironment
from strom.table.planner.codegen import compile_calc
from strom.table.planner.logical import Calc


def _calc(select: str) -> Calc:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql("CREATE TEMPORARY VIEW t AS SELECT * FROM (VALUES (1, CAST(NULL AS INT), 'x')) AS v(a, b, s)")
    plan = t_env.sql_query(select)._plan
    assert isinstance(plan, Calc)
    return plan


def _run(select: str, *values: object) -> object:
    plan = _calc(select)
    fn = compile_calc(plan.projection, plan.condition)
    out = fn(Row.of_kind(RowKind.UPDATE_AFTER, *values))
    if plan.condition is not None:
        return [(r.get_row_kind(), r._values) for r in out]
    return (out.get_row_kind(), out._values)


def test_three_valued_logic_and_null_tests() -> None:
    select = "SELECT b > 0 OR a > 0, b > 0 AND a > 0, b > 0 AND a < 0, NOT (b > 0), b IS NULL FROM t"
    assert _run(select, 1, None, "x") == (RowKind.UPDATE_AFTER, [True, None, False, None, True])


def test_filter_keeps_the_row_kind_and_drops_unknown() -> None:
    assert _run("SELECT a FROM t WHERE a > 0", 1, None, "x") == [(RowKind.UPDATE_AFTER, [1])]
    assert _run("SELECT a FROM t WHERE b > 0", 1, None, "x") == []


def test_case_evaluates_only_the_branch_it_takes() -> None:
    select = "SELECT CASE WHEN a = 0 THEN 0 ELSE 10 / a END, CASE a WHEN 1 THEN 'one' ELSE 'other' END FROM t"
    assert _run(select, 0, None, "x") == (RowKind.UPDATE_AFTER, [0, "other"])
    assert _run(select, 1, None, "x") == (RowKind.UPDATE_AFTER, [10, "one"])


def test_integer_arithmetic_wraps_as_java() -> None:
    assert _run("SELECT a + 1, a * 2 FROM t", 2147483647, None, "x") == (RowKind.UPDATE_AFTER, [-2147483648, -2])


def test_one_generated_function_per_calc() -> None:
    plan = _calc("SELECT a + 1, UPPER(s) FROM t WHERE a > 0")
    fn = compile_calc(plan.projection, plan.condition)
    assert fn.__doc__ is not None and fn.__doc__.startswith("def calc(row):")
