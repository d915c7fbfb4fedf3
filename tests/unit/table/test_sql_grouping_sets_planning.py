"""Grouping sets as Calcite orders them, Flink's expand ids, GROUPING values, the Expand plan and its runtime."""

from __future__ import annotations

import pickle

import sqlglot
from sqlglot import exp

from strom.api.row import RowKind, _create_row
from strom.table import EnvironmentSettings, TableEnvironment
from strom.table.planner.grouping_sets import grouping_sets
from strom.table.runtime.expand import ExpandFunction, ExpandIdLookup
from strom.table.sql.flink_dialect import FlinkDialect


def _sets(group_by: str) -> tuple[list[str], list[set[str]], list[list[set[str]]]]:
    select = sqlglot.parse_one(f"SELECT 1 FROM t GROUP BY {group_by}", dialect=FlinkDialect)
    found = grouping_sets(select.args.get("group"), [])
    assert found is not None
    keys = [k.sql() for k in found.keys]
    named = [{keys[i] for i in s} for s in found.sets]
    repeats = [[{keys[i] for i in s} for s in r] for r in found.repeats]
    return keys, named, repeats


def test_rollup_is_each_prefix_longest_first() -> None:
    assert _sets("ROLLUP (a, b)") == (["a", "b"], [{"a", "b"}, {"a"}, set()], [])


def test_cube_is_every_subset_enclosing_first_then_by_lowest_key() -> None:
    assert _sets("CUBE (a, b)")[1] == [{"a", "b"}, {"a"}, {"b"}, set()]


def test_sets_ordered_by_key_first_appearance_not_as_written() -> None:
    assert _sets("GROUPING SETS ((b), (a), (a, b))") == (["b", "a"], [{"a", "b"}, {"b"}, {"a"}], [])


def test_plain_column_beside_rollup_is_in_every_set() -> None:
    assert _sets("a, ROLLUP (b, c)")[1] == [{"a", "b", "c"}, {"a", "b"}, {"a"}]


def test_repeated_set_is_a_further_aggregate() -> None:
    assert _sets("GROUPING SETS ((a), (a), ())")[1:] == ([{"a"}, set()], [[{"a"}]])


def test_plain_group_by_without_grouping_calls_is_not_grouping_sets() -> None:
    select = sqlglot.parse_one("SELECT a FROM t GROUP BY a", dialect=FlinkDialect)
    assert grouping_sets(select.args.get("group"), []) is None
    assert isinstance(select.args.get("group"), exp.Group)


def test_expand_emits_each_set_in_order_with_nulls_and_keeps_the_row_kind() -> None:
    expand = pickle.loads(
        pickle.dumps(ExpandFunction((0, 1), (frozenset({0, 1}), frozenset({0}), frozenset()), ((0,), (1,), (3,))))
    )
    rows = expand(_create_row(None, ["x", "p", 10], RowKind.DELETE))
    assert [r._values for r in rows] == [
        ["x", "p", 10, "x", "p", 0],
        ["x", "p", 10, "x", None, 1],
        ["x", "p", 10, None, None, 3],
    ]
    assert {r._row_kind for r in rows} == {RowKind.DELETE}
    assert pickle.loads(pickle.dumps(ExpandIdLookup({0: 0, 3: 1})))(3) == 1


def test_plan_is_expand_then_aggregate_on_keys_and_expand_id() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql("CREATE TEMPORARY VIEW g AS SELECT * FROM (VALUES ('x', 'p', 1)) AS g(a, b, v)")
    plan = t_env.explain_sql("SELECT a, SUM(v) AS s, GROUPING(a) AS ga FROM g GROUP BY ROLLUP (a, b)")
    assert "Aggregate(groupBy=[a, b, $e]" in plan
    assert plan.index("Aggregate(") < plan.index("Expand(")
    assert "Expand(projects=[{a, b, 0 AS $e}, {a, null AS b, 1 AS $e}, {null AS a, null AS b, 3 AS $e}])" in plan
