"""The sliding group-window aggregation of any size and slide (Flink's legacy ``AggregateWindowOperator`` with
panes): windows, late rows, pane cleanup, pane merge order, checkpoints, and how the planner chooses it."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from window_testing import CountSum, OperatorHarness

from strom.api.row import Row
from strom.table.functions.float_aggregate_functions import FloatSum
from strom.table.runtime.aggs_handle import AggCall, GeneratedAggsHandle
from strom.table.runtime.window.group_window_aggregate import STATE_NAME, AggregateWindowOperator
from strom.table.runtime.window.slice_assigners import HoppingSliceAssigner
from strom.table.runtime.window.table_stream_operator import RowKeySelector


def _harness(size: int = 5_000, slide: int = 2_000, aggs: Any = None, backend: str = "hashmap") -> Any:
    op = AggregateWindowOperator(
        RowKeySelector([0]),
        aggs if aggs is not None else CountSum(1),
        HoppingSliceAssigner(size, slide),
        window_properties=("window_start", "window_end"),
    )
    return OperatorHarness(op, state_backend=backend)


def _s(ms: int) -> datetime.datetime:
    return datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=ms)


def test_windows_of_5_s_every_2_s_fire_in_order_with_their_rows() -> None:
    harness = _harness().open()
    for value, t in (("a", 1_000), ("a", 4_000), ("b", 3_000)):
        harness.process_element(Row(value, 1), t)
    harness.process_watermark((1 << 63) - 1)
    got = [(list(r.value), r.timestamp) for r in harness.extract_output()[:-1]]
    assert got == [
        (["a", 1, 1, _s(-2_000), _s(3_000)], 2_999),
        (["a", 2, 2, _s(0), _s(5_000)], 4_999),
        (["b", 1, 1, _s(0), _s(5_000)], 4_999),
        (["a", 1, 1, _s(2_000), _s(7_000)], 6_999),
        (["b", 1, 1, _s(2_000), _s(7_000)], 6_999),
        (["a", 1, 1, _s(4_000), _s(9_000)], 8_999),
    ]
    assert not harness.operator.keyed_backend.get_namespaced_table(STATE_NAME)


def test_a_slide_larger_than_the_size_leaves_gaps() -> None:
    harness = _harness(size=2_000, slide=5_000).open()
    harness.process_element(Row("a", 1), 1_000)
    harness.process_element(Row("a", 1), 3_000)  # in no window: [0, 2 s), [5 s, 7 s), …
    harness.process_watermark((1 << 63) - 1)
    assert [list(r) for r in harness.records()] == [["a", 1, 1, _s(0), _s(2_000)]]


def test_a_row_joins_its_windows_not_fired_yet_and_a_row_with_none_is_dropped() -> None:
    harness = _harness().open()
    harness.process_element(Row("a", 1), 4_000)
    harness.process_watermark(4_999)  # fires [0, 5 s) ([-2 s, 3 s) has no row)
    assert [list(r)[:3] for r in harness.records()] == [["a", 1, 1]]
    harness.process_element(Row("a", 10), 2_500)  # [0, 5 s) fired, [2 s, 7 s) not: into that one only
    harness.process_element(Row("a", 100), 100)  # its pane's last window [-2 s, 3 s)… [0, 5 s) fired: late
    harness.process_watermark((1 << 63) - 1)
    assert [list(r)[:3] for r in harness.records()] == [["a", 2, 11], ["a", 1, 1]]
    assert harness.operator.num_late_records_dropped == 1
    assert not harness.operator.keyed_backend.get_namespaced_table(STATE_NAME)


def test_panes_are_merged_oldest_first_as_flinks_so_float_sums_round_as_flinks() -> None:
    """Flink's ``SUM`` of FLOAT over 53.1 (pane [2 s, 3 s)), 3.1 ([3 s, 4 s)) and 30.2 ([4 s, 5 s)), arrived as
    30.2, 53.1, 3.1: ``(53.1 + 3.1) + 30.2`` in Java float is ``86.399994`` (PyFlink's sliding_window.py)."""
    harness = _harness(aggs=GeneratedAggsHandle([AggCall(FloatSum(), (1,))])).open()
    for value, t in ((30.2, 4_000), (53.1, 2_000), (3.1, 3_000)):
        harness.process_element(Row("Bob", value), t)
    harness.process_watermark((1 << 63) - 1)
    sums = {r[3]: r[1] for r in harness.records()}
    assert sums[_s(5_000)] == pytest.approx(86.399994, abs=1e-6) and sums[_s(5_000)] == 86.39999389648438
    assert sums[_s(7_000)] == 86.39999389648438


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_panes_survive_a_snapshot_and_restore_on_both_state_backends(backend: str) -> None:
    harness = _harness(backend=backend).open()
    harness.process_element(Row("a", 1), 1_000)
    harness.process_element(Row("a", 2), 4_000)
    harness.process_watermark(3_000)
    harness.process_element(Row("a", 4), 4_500)  # into a pane stored already
    first = [list(r)[:3] for r in harness.records()]
    restored = _harness(backend=backend).open(harness.snapshot())
    restored.process_watermark((1 << 63) - 1)
    assert first + [list(r)[:3] for r in restored.records()] == [["a", 1, 1], ["a", 3, 7], ["a", 2, 6], ["a", 2, 6]]
    assert not restored.operator.keyed_backend.get_namespaced_table(STATE_NAME)


def test_the_planner_runs_legacy_hops_of_any_size_and_refuses_the_tvf_aggregation() -> None:
    from strom.table import EnvironmentSettings, TableEnvironment
    from strom.table.planner.logical import WindowAggregate

    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql(
        "CREATE TABLE t (k STRING, v FLOAT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen')"
    )

    def window(query: str) -> Any:
        rel = t_env.sql_query(query)._plan
        while not isinstance(rel, WindowAggregate):
            rel = rel.input
        return rel.window

    legacy = window("SELECT k, SUM(v) FROM t GROUP BY HOP(ts, INTERVAL '2' SECOND, INTERVAL '5' SECOND), k")
    assert legacy.kind == "HOP" and legacy.group_window and legacy.params == (2_000, 5_000, 0)
    tvf = window(
        "SELECT window_start, SUM(v) FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '5' SECOND))"
        " GROUP BY window_start, window_end"
    )
    assert not tvf.group_window
    from strom.table.expressions import col, lit
    from strom.table.window import Slide

    table = t_env.from_path("t").window(Slide.over(lit(5).seconds).every(lit(2).seconds).on(col("ts")).alias("w"))
    slid = table.group_by(col("w"), col("k")).select(col("k"), col("v").sum)._plan
    while not isinstance(slid, WindowAggregate):
        slid = slid.input
    assert slid.window.group_window
