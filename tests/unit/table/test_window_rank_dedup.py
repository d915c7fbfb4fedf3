"""Window Top-N and window deduplication against Flink 2.3's results, and the rank buffer's order rules."""

from __future__ import annotations

import datetime
from typing import Any

from window_testing import CountSumMax, OperatorHarness, facts, feed, normalized, table

from strom.api.row import Row
from strom.table.runtime.window.slice_assigners import TumblingSliceAssigner
from strom.table.runtime.window.table_stream_operator import RowKeySelector
from strom.table.runtime.window.window_aggregate import SlicingWindowAggOperator
from strom.table.runtime.window.window_rank import (
    WindowDeduplicateOperator,
    WindowRankOperator,
    sort_key,
    sorted_rows,
)
from strom.table.runtime.window.window_table_function import WindowTableFunctionOperator

TUMBLE = TumblingSliceAssigner(10_000)


def run(upstream: Any, downstream: Any, rows: list[tuple[Row, int]]) -> list[Row]:
    """``rows`` through ``upstream`` then ``downstream`` (timestamps and watermarks passed on)."""
    first = OperatorHarness(upstream).open()
    feed(first, rows)
    second = OperatorHarness(downstream).open()
    for event in first.extract_output():
        if hasattr(event, "value"):
            second.process_element(event.value, event.timestamp)
        else:
            second.process_watermark(event.timestamp)
    return second.records()  # type: ignore[no-any-return]


def test_sorted_rows_orders_nulls_as_flink_and_keeps_ties_in_arrival_order() -> None:
    rows = [Row("a", None), Row("b", 2), Row("c", 1), Row("d", 2)]
    assert [r[0] for r in sorted_rows(rows, [sort_key(1)])] == ["a", "c", "b", "d"]
    assert [r[0] for r in sorted_rows(rows, [sort_key(1, ascending=False)])] == ["b", "d", "c", "a"]
    assert [r[0] for r in sorted_rows(rows, [sort_key(1, False, True), sort_key(0, False)])] == ["a", "d", "b", "c"]


def test_window_top_n_over_a_window_aggregate_is_flinks() -> None:
    agg = SlicingWindowAggOperator(RowKeySelector([0]), CountSumMax(1), TUMBLE)
    rank = WindowRankOperator(RowKeySelector([]), window_end_index=5, sort_keys=[sort_key(2, False)], rank_end=2)
    got = [Row(*list(r)[4:6], *list(r)[:4], r[6]) for r in run(agg, rank, table("bids"))]
    assert normalized(got) == facts("topn_agg")


def test_window_top_n_over_window_tvf_rows_is_flinks() -> None:
    tvf = WindowTableFunctionOperator(TUMBLE)
    rank = WindowRankOperator(RowKeySelector([]), window_end_index=4, sort_keys=[sort_key(1, False)], rank_end=2)
    got = [Row(*list(r)[:5], r[6]) for r in run(tvf, rank, table("bids"))]
    assert normalized(got) == facts("topn_tvf")


def test_rank_range_and_late_rows() -> None:
    rank = WindowRankOperator(RowKeySelector([]), window_end_index=1, sort_keys=[sort_key(0)], rank_start=2, rank_end=3)
    harness = OperatorHarness(rank).open()
    end = datetime.datetime(1970, 1, 1, 0, 0, 10)
    for v in [5, 1, 4, 2, 3, 9, 8, 7]:
        harness.process_element(Row(v, end), 1_000)
    harness.process_watermark(9_999)
    assert [(r[0], r[2]) for r in harness.records()] == [(2, 2), (3, 3)]
    harness.process_element(Row(0, end), 1_000)
    assert rank.num_late_records_dropped == 1


def test_window_deduplication_keeps_flinks_first_and_last_rows() -> None:
    for keep_last, name in ((False, "dedup_first"), (True, "dedup_last")):
        tvf = WindowTableFunctionOperator(TUMBLE)
        dedup = WindowDeduplicateOperator(
            RowKeySelector([0]), window_end_index=4, order_index=2, keep_last_row=keep_last
        )
        got = [Row(*list(r)[:5], 1) for r in run(tvf, dedup, table("bids"))]
        assert normalized(got) == facts(name), name
