"""Window join and interval join against Flink 2.3's results, plus their lateness and state cleanup."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from window_testing import OperatorHarness, TwoInputOperatorHarness, facts, feed, normalized, table, unordered

from strom.api.row import Row
from strom.table.runtime.interval_join import RowTimeIntervalJoin
from strom.table.runtime.window.slice_assigners import TumblingSliceAssigner
from strom.table.runtime.window.table_stream_operator import RowKeySelector
from strom.table.runtime.window.window_join import WindowJoinOperator
from strom.table.runtime.window.window_table_function import WindowTableFunctionOperator

MAX = (1 << 63) - 1


def tvf(source: str) -> list[tuple[Any, int]]:
    harness = OperatorHarness(WindowTableFunctionOperator(TumblingSliceAssigner(10_000))).open()
    feed(harness, table(source), end=False)
    return [(e.value, e.timestamp) for e in harness.extract_output() if hasattr(e, "value")]


def pick(rows: list[Row], columns: list[int]) -> list[Row]:
    return [Row(*(r[i] for i in columns)) for r in rows]


@pytest.mark.parametrize(
    ("join_type", "name", "columns"),
    [
        ("INNER", "window_join_inner", [0, 1, 7, 3, 4]),
        ("LEFT", "window_join_left", [0, 1, 7, 3, 4]),
        ("FULL", "window_join_full", [0, 1, 6, 7, 3, 9]),
    ],
)
def test_window_join_results_are_flinks(join_type: str, name: str, columns: list[int]) -> None:
    op = WindowJoinOperator(
        RowKeySelector([0]),
        RowKeySelector([0]),
        left_window_end_index=4,
        right_window_end_index=4,
        left_arity=6,
        right_arity=6,
        join_type=join_type,
    )
    harness = TwoInputOperatorHarness(op).open()
    for row, t in tvf("bids"):
        harness.process_element1(row, t)
    for row, t in tvf("clicks"):
        harness.process_element2(row, t)
    harness.process_watermark(MAX)
    assert unordered(normalized(pick(harness.records(), columns))) == unordered(facts(name))
    assert not op.keyed_backend.get_namespaced_table("window-join-left")  # type: ignore[union-attr]


def test_window_join_drops_rows_of_fired_windows_per_side() -> None:
    op = WindowJoinOperator(
        RowKeySelector([0]),
        RowKeySelector([0]),
        left_window_end_index=1,
        right_window_end_index=1,
        left_arity=2,
        right_arity=2,
        join_type="RIGHT",
        condition=lambda left, right: True,
    )
    harness = TwoInputOperatorHarness(op).open()
    end = datetime.datetime(1970, 1, 1, 0, 0, 10)
    harness.process_element2(Row("k", end), 5_000)
    harness.process_watermark(9_999)
    assert [list(r) for r in harness.records()] == [[None, None, "k", end]]
    harness.process_element1(Row("k", end), 5_000)
    assert (op.left_num_late_records_dropped, op.num_late_records_dropped) == (1, 1)


def interleaved(harness: TwoInputOperatorHarness, delay: int = 5_000) -> None:
    """Both tables in rowtime order, each side's watermark ``its max rowtime - delay`` after each of its rows."""
    events = [(t, 0, r) for r, t in table("bids")] + [(t, 1, r) for r, t in table("clicks")]
    events.sort(key=lambda e: (e[0], e[1]))
    highs = [-(1 << 63), -(1 << 63)]
    for t, side, row in events:
        if side == 0:
            harness.process_element1(row, t)
        else:
            harness.process_element2(row, t)
        highs[side] = max(highs[side], t)
        (harness.process_watermark1 if side == 0 else harness.process_watermark2)(highs[side] - delay)
    harness.process_watermark(MAX)


@pytest.mark.parametrize(
    ("join_type", "name", "columns"),
    [
        ("INNER", "interval_join_inner", [0, 1, 4, 2, 5]),
        ("LEFT", "interval_join_left", [0, 1, 4, 2, 5]),
        ("FULL", "interval_join_full", [0, 1, 3, 4, 2, 5]),
    ],
)
def test_interval_join_results_are_flinks(join_type: str, name: str, columns: list[int]) -> None:
    op = RowTimeIntervalJoin(
        RowKeySelector([0]),
        RowKeySelector([0]),
        lower_bound=-2_000,
        upper_bound=3_000,
        join_type=join_type,
        left_arity=3,
        right_arity=3,
    )
    harness = TwoInputOperatorHarness(op).open()
    interleaved(harness)
    assert unordered(normalized(pick(harness.records(), columns))) == unordered(facts(name))
    backend = op.keyed_backend
    assert backend is not None
    assert not backend.get_table("IntervalJoinLeftCache") and not backend.get_table("IntervalJoinRightCache")


def test_interval_join_pads_an_outer_row_when_it_expires_and_holds_the_watermark_back() -> None:
    op = RowTimeIntervalJoin(
        RowKeySelector([0]),
        RowKeySelector([0]),
        lower_bound=-2,
        upper_bound=3,
        join_type="LEFT",
        left_arity=1,
        right_arity=1,
    )
    harness = TwoInputOperatorHarness(op).open()
    harness.process_element1(Row("k"), 10)
    harness.process_watermark(12)
    out = harness.extract_output()
    assert [getattr(e, "timestamp", None) for e in out] == [9]  # the watermark, held back by 3
    harness.process_watermark(13)  # the cleanup timer at 10 + 2 + 1: the row expires, never joined
    assert [list(r) for r in harness.records()] == [["k", None]]


@pytest.mark.parametrize(("join_type", "name"), [("SEMI", "window_join_semi"), ("ANTI", "window_join_anti")])
def test_window_semi_and_anti_joins_are_flinks(join_type: str, name: str) -> None:
    op = WindowJoinOperator(
        RowKeySelector([0]),
        RowKeySelector([0]),
        left_window_end_index=4,
        right_window_end_index=4,
        left_arity=6,
        right_arity=6,
        join_type=join_type,
    )
    harness = TwoInputOperatorHarness(op).open()
    for row, t in tvf("bids"):
        harness.process_element1(row, t)
    for row, t in tvf("clicks"):
        harness.process_element2(row, t)
    harness.process_watermark(MAX)
    assert unordered(normalized(pick(harness.records(), [0, 1, 3, 4]))) == unordered(facts(name))
