"""SESSION windows (TVF and aggregate) against Flink 2.3's results, and session merging and lateness."""

from __future__ import annotations

from window_testing import CountSum, OperatorHarness, facts, feed, normalized, table, unordered

from strom.api.row import Row
from strom.table.runtime.window.session_window import SessionWindowOperator, merge_sessions
from strom.table.runtime.window.table_stream_operator import RowKeySelector


def test_merge_sessions_merges_every_intersecting_session() -> None:
    assert merge_sessions([], 3, 8) == ((3, 8), [])
    assert merge_sessions([(0, 5), (6, 9)], 5, 6) == ((0, 9), [(0, 5), (6, 9)])
    assert merge_sessions([(10, 15)], 0, 9) == ((0, 9), [])


def test_session_tvf_rows_are_flinks_in_flinks_order() -> None:
    harness = OperatorHarness(SessionWindowOperator(RowKeySelector([0]), 5_000)).open()
    feed(harness, table("bids"))
    assert normalized(harness.records()) == facts("tvf_session")


def test_session_aggregate_results_are_flinks() -> None:
    op = SessionWindowOperator(RowKeySelector([0]), 5_000, aggs=CountSum(1))
    harness = OperatorHarness(op).open()
    feed(harness, table("bids"))
    rows = [Row(*list(r)[-2:], *list(r)[:-2]) for r in harness.records()]
    assert unordered(normalized(rows)) == unordered(facts("agg_session"))
    assert not op.keyed_backend.get_namespaced_table("session-windows")  # type: ignore[union-attr]


def test_a_row_bridging_two_sessions_merges_them_and_late_rows_are_dropped() -> None:
    op = SessionWindowOperator(RowKeySelector([0]), 5, aggs=CountSum(1), window_properties=())
    harness = OperatorHarness(op).open()
    harness.process_element(Row("a", 1), 0)
    harness.process_element(Row("a", 2), 12)
    harness.process_element(Row("a", 4), 6)  # [6, 11) is a session of its own
    harness.process_element(Row("a", 8), 4)  # [4, 9) joins [0, 5) and [6, 11)
    harness.process_watermark(10)
    assert [list(r) for r in harness.records()] == [["a", 3, 13]]
    harness.process_element(Row("a", 100), 3)  # its session [3, 8) fired already
    assert op.num_late_records_dropped == 1
    harness.process_watermark(100)
    assert [list(r) for r in harness.records()] == [["a", 1, 2]]
