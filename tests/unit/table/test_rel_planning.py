"""Planning and changelog of the relational constructs (ORDER BY, set operations, subqueries, UNNEST / LATERAL
TABLE, RANK / DENSE_RANK) and their runtime functions on the operator harness."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from window_testing import OperatorHarness

from strom.api.eventtime import LONG_MAX
from strom.api.row import Row, RowKind
from strom.runtime.operators.keyed import KeyedProcessOperator
from strom.table import EnvironmentSettings, TableEnvironment
from strom.table.errors import TableException
from strom.table.planner import logical
from strom.table.planner.changelog import is_insert_only
from strom.table.planner.logical import Aggregate, Calc, Correlate, Join, Rank, RelNode, SingleRel, Sort, Union
from strom.table.planner.set_op_converter import ReplicateRows
from strom.table.runtime.batch_rank import BatchRankFunction
from strom.table.runtime.sort import RowTimeSortFunction, SortFunction

ORDERS = (
    "CREATE TEMPORARY VIEW orders AS SELECT * FROM (VALUES (1, 'alice', 12), (2, 'bob', 30), (3, 'carol', 5)) "
    "AS t(id, customer, amount)"
)
CLICKS = (
    "CREATE TABLE clicks (u STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
    "WITH ('connector' = 'filesystem', 'path' = '/nonexistent/clicks.csv', 'format' = 'csv')"
)


def _plan(query: str, batch: bool = False) -> RelNode:
    settings = EnvironmentSettings.in_batch_mode() if batch else EnvironmentSettings.in_streaming_mode()
    t_env = TableEnvironment.create(settings)
    t_env.execute_sql(ORDERS)
    t_env.execute_sql(CLICKS)
    t_env.execute_sql("CREATE TEMPORARY VIEW nums AS SELECT * FROM (VALUES (5), (CAST(NULL AS INT))) AS t(n)")
    plan: RelNode = t_env.sql_query(query)._plan
    return plan


def _nodes(rel: RelNode) -> list[RelNode]:
    return [rel, *(n for child in rel.inputs for n in _nodes(child))]


def test_every_single_input_node_is_a_single_rel_whose_inputs_are_its_input() -> None:
    names = [n for n in logical.__all__ if isinstance(getattr(logical, n), type)]
    single = [getattr(logical, n) for n in names if issubclass(getattr(logical, n), SingleRel) and n != "SingleRel"]
    assert {c.__name__ for c in single} >= {"Calc", "Aggregate", "Rank", "Sort", "Correlate", "WatermarkAssigner"}
    for cls in single:
        assert "input" in {f.name for f in dataclasses.fields(cls)}
    calc = _plan("SELECT id FROM orders WHERE amount > 6")
    assert isinstance(calc, Calc) and calc.inputs == (calc.input,)


def test_batch_order_by_is_a_sort_of_the_whole_input_with_hidden_keys_projected_away() -> None:
    plan = _plan("SELECT id FROM orders ORDER BY amount DESC LIMIT 2 OFFSET 1", batch=True)
    assert isinstance(plan, Calc) and plan.row_type.names == ("id",)
    sort = plan.input
    assert isinstance(sort, Sort)
    assert (sort.order_keys, sort.offset, sort.fetch, sort.rowtime) == (((1, False),), 1, 2, False)
    assert is_insert_only(sort)
    assert "+- Sort(orderBy=[$order0 DESC], offset=1, fetch=2)" in logical.explain(plan)


def test_streaming_order_by_limit_is_a_top_n_without_partition() -> None:
    plan = _plan("SELECT id, amount FROM orders ORDER BY amount DESC, 1 LIMIT 2")
    rank = next(n for n in _nodes(plan) if isinstance(n, Rank))
    assert (rank.partition_keys, rank.order_keys, rank.limit, rank.output_rank) == (
        (),
        ((1, False), (0, True)),
        2,
        False,
    )
    assert not is_insert_only(plan)


def test_streaming_order_by_an_ascending_rowtime_first_is_the_temporal_sort() -> None:
    plan = _plan("SELECT u, ts FROM clicks ORDER BY ts, u DESC")
    sort = next(n for n in _nodes(plan) if isinstance(n, Sort))
    assert sort.rowtime and sort.order_keys == ((0, False),)
    assert is_insert_only(plan)


@pytest.mark.parametrize(
    "query", ["SELECT id FROM orders ORDER BY amount", "SELECT u, ts FROM clicks ORDER BY ts DESC"]
)
def test_other_streaming_orders_are_refused_with_flinks_reason(query: str) -> None:
    with pytest.raises(TableException) as info:
        _plan(query)
    message = str(info.value)
    assert message.startswith("Unsupported SQL construct at line 1, column ") and ": ORDER BY " in message
    assert "Sort on a non-time-attribute field is not supported." in message


def test_set_operations_plan_as_flinks_rewrites() -> None:
    union = _plan("SELECT customer FROM orders UNION SELECT customer FROM orders")
    assert isinstance(union, Aggregate) and isinstance(union.input, Union) and union.calls == ()
    intersect = _plan("SELECT id FROM orders INTERSECT SELECT id FROM orders")
    assert isinstance(intersect, Aggregate) and isinstance(intersect.input, Join) and intersect.input.kind == "SEMI"
    except_ = _plan("SELECT id FROM orders EXCEPT SELECT id FROM orders")
    assert isinstance(except_, Aggregate) and isinstance(except_.input, Join) and except_.input.kind == "ANTI"
    for query, call in [("INTERSECT ALL", "COUNT"), ("EXCEPT ALL", "SUM")]:
        plan = _plan(f"SELECT id FROM orders {query} SELECT id FROM orders")
        assert isinstance(plan, Correlate) and isinstance(plan.input, Aggregate)
        assert {c.name for c in plan.input.calls} == {call}
        assert isinstance(plan.input.input, Union) and plan.row_type.names == ("id",)


def test_replicate_rows_repeats_a_row_by_its_smallest_count_and_none_when_not_positive() -> None:
    replicate = ReplicateRows(1)
    assert replicate(Row("a", 2, 3)) == [("a",), ("a",)]
    assert replicate(Row("a", 0, 3)) == []
    assert replicate(Row("a", -1)) == []


def test_not_in_is_a_null_aware_anti_join_and_uncorrelated_subqueries_join_on_true() -> None:
    not_in = _plan("SELECT id FROM orders WHERE amount NOT IN (SELECT n FROM nums)")
    join = next(n for n in _nodes(not_in) if isinstance(n, Join))
    assert (join.kind, join.left_keys, join.right_keys) == ("ANTI", (), ()) and join.condition is not None
    exists = _plan("SELECT id FROM orders WHERE EXISTS (SELECT * FROM nums)")
    assert next(n for n in _nodes(exists) if isinstance(n, Join)).kind == "SEMI"
    scalar = _plan("SELECT id, (SELECT MAX(n) FROM nums) AS hi FROM orders")
    join = next(n for n in _nodes(scalar) if isinstance(n, Join))
    assert (join.kind, join.left_keys) == ("LEFT", ())
    assert scalar.row_type.names == ("id", "hi") and scalar.row_type.types[1].is_nullable
    star = _plan("SELECT * FROM orders WHERE amount > (SELECT MAX(n) FROM nums)")
    assert star.row_type.names == ("id", "customer", "amount")  # the joined scalar column is not in *


def test_unnest_is_a_correlate_appending_the_elements() -> None:
    plan = _plan("SELECT id, x FROM (VALUES (1, ARRAY[1, 2])) AS t(id, xs) CROSS JOIN UNNEST(xs) AS u(x)")
    correlate = next(n for n in _nodes(plan) if isinstance(n, Correlate))
    assert correlate.row_type.names == ("id", "xs", "x")
    assert correlate.function(Row(1, [1, 2])) == [(1, [1, 2], 1), (1, [1, 2], 2)]
    left = _plan("SELECT id, x FROM (VALUES (1, ARRAY[1])) AS t(id, xs) LEFT JOIN UNNEST(xs) AS u(x) ON TRUE")
    correlate = next(n for n in _nodes(left) if isinstance(n, Correlate))
    assert correlate.function(Row(1, None)) == [(1, None, None)]
    with pytest.raises(TableException, match="expected ON TRUE"):
        _plan("SELECT id FROM (VALUES (1, ARRAY[1])) AS t(id, xs) LEFT JOIN UNNEST(xs) AS u(x) ON id = x")


def test_rank_and_dense_rank_are_batch_only() -> None:
    with pytest.raises(TableException, match=r"^DENSE_RANK\(\) on streaming table is not supported currently$"):
        _plan("SELECT id, DENSE_RANK() OVER (ORDER BY amount) AS r FROM orders")
    plan = _plan("SELECT * FROM (SELECT id, RANK() OVER (ORDER BY amount) AS r FROM orders) WHERE r <= 2", batch=True)
    rank = next(n for n in _nodes(plan) if isinstance(n, Rank))
    assert (rank.rank_type, rank.limit, rank.output_rank) == ("RANK", 2, True)


def _harness(function: Any) -> Any:
    return OperatorHarness(KeyedProcessOperator(function, lambda row: ())).open()


def _values(harness: Any) -> list[tuple[str, list[Any]]]:
    return [(str(r.get_row_kind()), list(r)) for r in harness.records()]


def test_sort_function_emits_the_final_rows_sorted_at_the_end_of_input() -> None:
    harness = _harness(SortFunction(((0, False), (1, True)), offset=1, fetch=2))
    for row in [Row(1, "a"), Row(3, "b"), Row(None, "c"), Row(3, "a"), Row(2, "x")]:
        harness.process_element(row)
    harness.process_element(Row.of_kind(RowKind.DELETE, 2, "x"))
    assert _values(harness) == []
    harness.process_watermark(LONG_MAX)
    assert _values(harness) == [("+I", [3, "b"]), ("+I", [1, "a"])]  # 3a, [3b, 1a], None (NULLS LAST for DESC)


def test_rowtime_sort_emits_each_timestamp_sorted_on_the_watermark_and_drops_late_rows() -> None:
    harness = _harness(RowTimeSortFunction(((1, False),)))
    harness.process_element(Row("t2", 1), 20)
    harness.process_element(Row("t1", 1), 10)
    harness.process_element(Row("t1", 2), 10)
    harness.process_watermark(15)
    harness.process_element(Row("late", 9), 12)
    harness.process_watermark(30)
    assert [r[0] + str(r[1]) for r in harness.records()] == ["t12", "t11", "t21"]


@pytest.mark.parametrize(("rank_type", "expected"), [("RANK", [1, 1, 3]), ("DENSE_RANK", [1, 1, 2, 3])])
def test_batch_rank_numbers_ties_alike(rank_type: str, expected: list[int]) -> None:
    harness = _harness(BatchRankFunction(rank_type, ((0, True),), limit=3, output_rank=True))
    for value in [5, 7, 5, 9, 11]:
        harness.process_element(Row(value))
    harness.process_watermark(LONG_MAX)
    assert [r[1] for r in harness.records()] == expected


def test_a_correlated_scalar_subquery_is_a_left_join_with_the_inner_query_grouped_by_its_correlated_columns() -> None:
    plan = _plan(
        "SELECT id, (SELECT COUNT(*) FROM orders o2 WHERE o2.customer = o.customer AND o2.amount > 6) AS n "
        "FROM orders o"
    )
    join = next(n for n in _nodes(plan) if isinstance(n, Join))
    assert (join.kind, join.left_keys, join.right_keys) == ("LEFT", (1,), (0,))
    aggregate = next(n for n in _nodes(join.right) if isinstance(n, Aggregate))
    assert aggregate.group_keys == (0,) and [c.name for c in aggregate.calls] == ["COUNT"]
    assert plan.row_type.names == ("id", "n")
    with pytest.raises(TableException, match="a correlated scalar subquery; expected"):
        _plan("SELECT id, (SELECT o2.id FROM orders o2 WHERE o2.customer = o.customer) AS n FROM orders o")


def test_a_sort_without_limit_in_a_from_subquery_is_dropped_as_calcite_does() -> None:
    plan = _plan("SELECT id FROM (SELECT id, amount FROM orders ORDER BY amount) AS t")
    assert not any(isinstance(n, Sort | Rank) for n in _nodes(plan))
    limited = _plan("SELECT id FROM (SELECT id, amount FROM orders ORDER BY amount LIMIT 1) AS t")
    assert any(isinstance(n, Rank) for n in _nodes(limited))


def test_explicit_nulls_first_or_last_order_the_batch_sort() -> None:
    plan = _plan("SELECT id, amount FROM orders ORDER BY amount NULLS LAST, id DESC NULLS FIRST", batch=True)
    assert isinstance(plan, Sort) and plan.nulls_first == (False, True)
    harness = _harness(SortFunction(((0, True),), nulls_first=(False,)))
    for value in [None, 2, 1]:
        harness.process_element(Row(value))
    harness.process_watermark(LONG_MAX)
    assert [r[0] for r in harness.records()] == [1, 2, None]
    # a streaming Top-N takes them too, as Flink's (facts2 order_limit_offset, overagg topn_nulls_first)
    top_n = [
        n for n in _nodes(_plan("SELECT id FROM orders ORDER BY amount NULLS LAST LIMIT 1")) if isinstance(n, Rank)
    ]
    assert [n.nulls_first for n in top_n] == [(False,)]


def test_fetch_first_rows_only_is_a_limit() -> None:
    plan = _plan("SELECT id, amount FROM orders ORDER BY amount OFFSET 1 ROWS FETCH NEXT 2 ROWS ONLY", batch=True)
    assert isinstance(plan, Sort) and (plan.offset, plan.fetch) == (1, 2)


def test_lateral_table_arguments_may_be_expressions_computed_before_the_call() -> None:
    from strom.table import DataTypes
    from strom.table.udf import udtf

    @udtf(result_types=[DataTypes.STRING()])
    def split(s: str, sep: str) -> Any:
        yield from s.split(sep)

    settings = EnvironmentSettings.in_streaming_mode()
    t_env = TableEnvironment.create(settings)
    t_env.create_temporary_function("split", split)
    t_env.execute_sql(ORDERS)
    plan = t_env.sql_query("SELECT id, w FROM orders, LATERAL TABLE(split(UPPER(customer), 'L')) AS t(w)")._plan
    correlate = next(n for n in _nodes(plan) if isinstance(n, Correlate))
    assert isinstance(correlate.input, Calc) and correlate.input.row_type.names[-2:] == ("$arg0", "$arg1")
    assert correlate.function(Row(1, "alice", 12, "ALICE", "L")) == [
        (1, "alice", 12, "ALICE", "L", "A"),
        (1, "alice", 12, "ALICE", "L", "ICE"),
    ]


def test_sort_function_keeps_a_multiset_of_rows_on_rocksdb() -> None:
    harness = OperatorHarness(
        KeyedProcessOperator(SortFunction(((0, True),)), lambda row: ()), state_backend="rocksdb"
    ).open()
    for row in [Row(2, "b"), Row(1, "a"), Row(2, "b"), Row(None, "n")]:
        harness.process_element(row)
    harness.process_element(Row.of_kind(RowKind.UPDATE_BEFORE, 2, "b"))
    harness.process_watermark(LONG_MAX)
    assert [tuple(r) for r in harness.records()] == [(None, "n"), (1, "a"), (2, "b")]
