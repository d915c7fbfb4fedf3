"""NULL join keys (SQL's ``=`` vs INTERSECT / EXCEPT's NULL-equal keys), joins without an equality (a join keyed on
the empty tuple), ``SINGLE_VALUE`` for a scalar subquery of possibly many rows, and ``explain()`` of the temporal
nodes: planning and the runtime pieces on their own."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from strom.api.row import Row, RowKind, _create_row
from strom.runtime.operators.co.co_process import KeyedCoProcessOperator
from strom.table import EnvironmentSettings, TableEnvironment
from strom.table.errors import TableRuntimeException
from strom.table.functions.aggregate_functions import resolve_aggregate
from strom.table.functions.single_value_agg_function import SingleValueAggFunction, SingleValueName
from strom.table.planner import logical
from strom.table.planner.logical import Aggregate, Calc, Join, RelNode, RowType
from strom.table.planner.single_value import at_most_one_row
from strom.table.planner.temporal_logical import LookupJoin, MatchRecognize, TemporalJoin
from strom.table.runtime.group_agg import KeyByIndices
from strom.table.runtime.join_condition_with_null_filters import JoinConditionWithNullFilters, join_null_filter
from strom.table.runtime.match.match_operator import MatchSpec
from strom.table.runtime.match.nfa import AfterMatchSkip
from strom.table.runtime.match.pattern import PatternElement
from strom.table.runtime.streaming_join import StreamingJoinFunction
from strom.table.types import parse_type

_spec = importlib.util.spec_from_file_location(
    "operator_harness", Path(__file__).parents[1] / "operators" / "operator_harness.py"
)
assert _spec is not None and _spec.loader is not None
_harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_harness)

L = "CREATE TEMPORARY VIEW l AS SELECT * FROM (VALUES (1, CAST(NULL AS INT)), (2, 5)) AS t(id, k)"
R = "CREATE TEMPORARY VIEW r AS SELECT * FROM (VALUES (CAST(NULL AS INT), 'y'), (5, 'z')) AS t(k, w)"


def _plan(query: str) -> RelNode:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql(L)
    t_env.execute_sql(R)
    plan: RelNode = t_env.sql_query(query)._plan
    return plan


def _nodes(rel: RelNode) -> list[RelNode]:
    return [rel, *(n for child in rel.inputs for n in _nodes(child))]


def _joins(query: str) -> list[Join]:
    return [n for n in _nodes(_plan(query)) if isinstance(n, Join)]


@pytest.mark.parametrize(
    "query",
    [
        "SELECT id FROM l JOIN r ON l.k = r.k",
        "SELECT id FROM l WHERE k IN (SELECT k FROM r)",
        "SELECT id FROM l WHERE EXISTS (SELECT * FROM r WHERE r.k = l.k)",
        "SELECT id, (SELECT COUNT(*) FROM r WHERE r.k = l.k) FROM l",
    ],
)
def test_equality_keys_filter_nulls(query: str) -> None:
    (join,) = _joins(query)
    assert not join.null_safe
    assert join_null_filter(join) == (join.left_keys, join.right_keys)


@pytest.mark.parametrize("op", ["INTERSECT", "EXCEPT"])
def test_set_operations_compare_nulls_equal(op: str) -> None:
    (join,) = _joins(f"SELECT k FROM l {op} SELECT k FROM r")
    assert join.null_safe and join_null_filter(join) == ((), ())


def test_a_not_null_key_needs_no_check() -> None:
    (join,) = _joins("SELECT l.id FROM l JOIN l AS m ON l.id = m.id")
    assert join_null_filter(join) == ((), ())


@pytest.mark.parametrize(
    "query",
    [
        "SELECT id, w FROM l CROSS JOIN r",
        "SELECT id, w FROM l, r",
        "SELECT id, w FROM l JOIN r ON l.id < r.k",
        "SELECT id, w FROM l FULL JOIN r ON l.id < r.k",
    ],
)
def test_a_join_without_an_equality_is_keyed_on_the_empty_tuple(query: str) -> None:
    (join,) = _joins(query)
    assert join.left_keys == () and join.right_keys == ()
    assert (join.condition is None) == ("<" not in query)


def _join_harness(kind: str, null_filter: tuple[tuple[int, ...], tuple[int, ...]]) -> Any:
    function = StreamingJoinFunction(kind, 2, 2, None, null_filter)
    operator = KeyedCoProcessOperator(function, KeyByIndices((1,)), KeyByIndices((0,)))
    return _harness.TwoInputOperatorHarness(operator).open()


def _out(h: Any) -> list[tuple[str, list[Any]]]:
    return [(r.get_row_kind().short_string(), list(r._values)) for r in h.records()]


def test_a_null_key_matches_nothing_and_an_outer_row_stays_padded() -> None:
    h = _join_harness("LEFT", ((1,), (0,)))
    h.process_element2(_create_row(None, [None, "y"]))
    h.process_element1(_create_row(None, [1, None]))
    h.process_element2(_create_row(None, [None, "u"]))
    h.process_element1(_create_row(None, [1, None], RowKind.DELETE))
    assert _out(h) == [("+I", [1, None, None, None]), ("-D", [1, None, None, None])]


def test_null_safe_keys_match_null() -> None:
    h = _join_harness("SEMI", ((), ()))
    h.process_element2(_create_row(None, [None, "y"]))
    h.process_element1(_create_row(None, [1, None]))
    assert _out(h) == [("+I", [1, None])]


def test_the_interval_and_window_joins_condition_refuses_null_keys() -> None:
    condition = JoinConditionWithNullFilters(None, (1,))
    assert not condition(Row(1, None), Row(None, "y"))
    assert condition(Row(1, 5), Row(5, "z"))
    residual = JoinConditionWithNullFilters(lambda left, right: left[0] > 1, (1,))
    assert not residual(Row(1, 5), Row(5, "z"))


def test_a_scalar_subquery_of_many_rows_is_a_single_value_aggregate() -> None:
    plan = _plan("SELECT id, (SELECT w FROM r) AS w FROM l")
    aggregates = [n for n in _nodes(plan) if isinstance(n, Aggregate)]
    assert [(a.group_keys, [c.name for c in a.calls]) for a in aggregates] == [((), ["SINGLE_VALUE"])]
    position = aggregates[0].calls[0].name.position  # type: ignore[attr-defined]
    assert position == " at line 1, column 20"  # the subquery's first identifier, as every planner error


@pytest.mark.parametrize(
    "sub", ["SELECT MAX(w) FROM r", "SELECT COUNT(*) + 1 FROM r", "SELECT w FROM r LIMIT 1", "SELECT 'a'"]
)
def test_a_subquery_of_at_most_one_row_is_not_wrapped(sub: str) -> None:
    plan = _plan(f"SELECT id, ({sub}) AS w FROM l")
    calls = [c.name for n in _nodes(plan) if isinstance(n, Aggregate) for c in n.calls]
    assert "SINGLE_VALUE" not in calls


def test_single_value_fails_on_a_second_row_with_the_position() -> None:
    resolved = resolve_aggregate(SingleValueName(" at line 1, column 12"), [parse_type("STRING")], retracting=True)
    function = resolved.function
    assert isinstance(function, SingleValueAggFunction) and resolved.result_type.is_nullable
    acc = function.accumulate(function.create_accumulator(), "x")
    assert function.get_value(acc) == "x"
    with pytest.raises(TableRuntimeException) as info:
        function.accumulate(acc, "y")
    assert str(info.value).startswith(
        "SingleValueAggFunction received more than one element. A scalar subquery at line 1, column 12 expected "
        "at most one row; got a second row (value 'y'); hint:"
    )
    acc = function.retract(acc, "x")
    assert function.get_value(acc) is None and function.get_value(function.accumulate(acc, "y")) == "y"


def test_at_most_one_row() -> None:
    values = logical.Values(RowType(("a",), (parse_type("INT"),)), ((1,),))
    assert at_most_one_row(values) and at_most_one_row(Calc(values.row_type, values, None))


def test_explain_prints_the_temporal_nodes_details() -> None:
    int_t, ts = parse_type("INT"), parse_type("TIMESTAMP(3)")
    left = logical.Values(RowType(("id", "cur", "ts"), (int_t, int_t, ts)), ())
    right = logical.Values(RowType(("cur", "rate", "rts"), (int_t, int_t, ts)), ())
    both = RowType((*left.row_type.names, *right.row_type.names), (*left.row_type.types, *right.row_type.types))
    temporal = TemporalJoin(both, left, right, "LEFT", (1,), (0,), 2, 2)
    assert logical.explain(temporal).splitlines()[0] == (
        "TemporalJoin(joinType=[LEFT], on=[cur=cur], leftTimeAttribute=[ts], rightTimeAttribute=[rts])"
    )
    lookup = LookupJoin(both, left, "rates", None, right.row_type, "INNER", (1,), (0,))
    assert logical.explain(lookup).splitlines()[0] == "LookupJoin(table=[[rates]], joinType=[INNER], lookup=[cur=cur])"
    elements = (PatternElement("A"), PatternElement("B", 1, None), PatternElement("C", 0, 1, greedy=False))
    spec = MatchSpec(elements, (None, None, None), (), AfterMatchSkip("TO_FIRST", 1), 5000, (1,), 2)
    out = RowType(("cur", "first_id"), (int_t, int_t))
    match = MatchRecognize(out, left, (1,), 2, spec)
    assert logical.explain(match).splitlines()[0] == (
        "MatchRecognize(partitionBy=[cur], orderBy=[ts ASC], measures=[first_id], rowsPerMatch=[ONE ROW PER MATCH], "
        "after=[SKIP TO FIRST B], pattern=[A B+ C??], within=[5000ms])"
    )


@pytest.mark.parametrize("filter_null_keys", [True, False])
def test_the_interval_join_skips_null_keys_when_told(filter_null_keys: bool) -> None:
    from strom.table.runtime.interval_join import RowTimeIntervalJoin
    from strom.table.runtime.window.table_stream_operator import RowKeySelector

    op = RowTimeIntervalJoin(
        RowKeySelector([0]),
        RowKeySelector([0]),
        lower_bound=-1_000,
        upper_bound=1_000,
        join_type="LEFT",
        left_arity=2,
        right_arity=2,
        filter_null_keys=filter_null_keys,
    )
    h = _harness.TwoInputOperatorHarness(op).open()
    h.process_element2(Row(None, "y"), 1_000)
    h.process_element1(Row(None, 1), 1_000)
    h.process_element1(Row(5, 2), 1_000)
    h.process_element2(Row(5, "z"), 1_000)
    h.process_watermark1(10_000)
    h.process_watermark2(10_000)
    rows = sorted((list(r) for r in h.records()), key=repr)
    matched = [None, 1, None, "y"] if not filter_null_keys else [None, 1, None, None]
    assert rows == sorted([matched, [5, 2, 5, "z"]], key=repr)


def test_on_true_is_a_join_without_condition_and_using_is_refused() -> None:
    (join,) = _joins("SELECT id, w FROM l LEFT JOIN r ON TRUE")
    assert join.kind == "LEFT" and join.left_keys == () and join.condition is None
    with pytest.raises(Exception, match="JOIN … USING"):
        _plan("SELECT id FROM l JOIN r USING (k)")


def test_a_comma_joins_where_becomes_its_keys_and_filters() -> None:
    plan = _plan("SELECT id, w FROM l, r WHERE l.k = r.k AND r.w <> 'q' AND l.id + r.k > 1")
    (join,) = [n for n in _nodes(plan) if isinstance(n, Join)]
    assert (join.left_keys, join.right_keys) == ((1,), (0,))
    assert join.condition is not None  # l.id + r.k > 1 reads both sides
    assert isinstance(join.right, Calc) and join.right.condition is not None  # r.w <> 'q' filters r
