"""Every SQL time operator snapshotted mid-stream and restored into a fresh instance, on the heap and the RocksDB
backend: the restored run's output plus what was emitted before equals Flink's results."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from window_testing import (
    CountSum,
    OperatorHarness,
    Record,
    TwoInputOperatorHarness,
    facts,
    feed,
    normalized,
    table,
    unordered,
)

from strom.api.row import Row
from strom.table.runtime.interval_join import RowTimeIntervalJoin
from strom.table.runtime.over_aggregate import RowTimeOverAggregate
from strom.table.runtime.window.session_window import SessionWindowOperator
from strom.table.runtime.window.slice_assigners import TumblingSliceAssigner
from strom.table.runtime.window.table_stream_operator import RowKeySelector
from strom.table.runtime.window.window_join import WindowJoinOperator
from strom.table.runtime.window.window_rank import WindowDeduplicateOperator, WindowRankOperator, sort_key
from strom.table.runtime.window.window_table_function import WindowTableFunctionOperator

MAX = (1 << 63) - 1
BACKENDS = ["hashmap", "rocksdb"]


def one_input_restored(make: Callable[[], Any], backend: str) -> list[Row]:
    rows = table("bids")
    first = OperatorHarness(make(), state_backend=backend).open()
    high = -(1 << 63)
    out: list[Row] = []
    for i, (row, t) in enumerate(rows):
        if i == len(rows) // 2:
            out += first.records()
            first = OperatorHarness(make(), state_backend=backend).open(first.snapshot())
            first.process_watermark(high - 5_000)  # restored operators start from the last watermark
            out += first.records()
        first.process_element(row, t)
        high = max(high, t)
        first.process_watermark(high - 5_000)
    first.process_watermark(MAX)
    return out + first.records()


@pytest.mark.parametrize("backend", BACKENDS)
def test_session_aggregate_restored(backend: str) -> None:
    got = one_input_restored(lambda: SessionWindowOperator(RowKeySelector([0]), 5_000, aggs=CountSum(1)), backend)
    rows = [Row(*list(r)[-2:], *list(r)[:-2]) for r in got]
    assert unordered(normalized(rows)) == unordered(facts("agg_session"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_session_tvf_restored(backend: str) -> None:
    got = one_input_restored(lambda: SessionWindowOperator(RowKeySelector([0]), 5_000), backend)
    assert unordered(normalized(got)) == unordered(facts("tvf_session"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_over_aggregate_restored(backend: str) -> None:
    got = one_input_restored(
        lambda: RowTimeOverAggregate(RowKeySelector([0]), CountSum(1), rows=False, preceding=5_000), backend
    )
    assert unordered(normalized([Row(r[0], r[1], r[2], r[4], r[3]) for r in got])) == unordered(
        facts("over_range_bounded")
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_interval_join_restored(backend: str) -> None:
    def make() -> RowTimeIntervalJoin:
        return RowTimeIntervalJoin(
            RowKeySelector([0]),
            RowKeySelector([0]),
            lower_bound=-2_000,
            upper_bound=3_000,
            join_type="FULL",
            left_arity=3,
            right_arity=3,
        )

    events = [(t, 0, r) for r, t in table("bids")] + [(t, 1, r) for r, t in table("clicks")]
    events.sort(key=lambda e: (e[0], e[1]))
    harness = TwoInputOperatorHarness(make(), state_backend=backend).open()
    out: list[Row] = []
    highs = [-(1 << 63), -(1 << 63)]
    for i, (t, side, row) in enumerate(events):
        if i == len(events) // 2:
            out += harness.records()
            harness = TwoInputOperatorHarness(make(), state_backend=backend).open(harness.snapshot())
            harness.process_watermark1(highs[0] - 5_000)
            harness.process_watermark2(highs[1] - 5_000)
        (harness.process_element1 if side == 0 else harness.process_element2)(row, t)
        highs[side] = max(highs[side], t)
        (harness.process_watermark1 if side == 0 else harness.process_watermark2)(highs[side] - 5_000)
    harness.process_watermark(MAX)
    got = [Row(r[0], r[1], r[3], r[4], r[2], r[5]) for r in out + harness.records()]
    assert unordered(normalized(got)) == unordered(facts("interval_join_full"))


def tvf_events(source: str) -> list[Any]:
    """What the TUMBLE(10 s) TVF emits for ``source``: records and watermarks, in order."""
    harness = OperatorHarness(WindowTableFunctionOperator(TumblingSliceAssigner(10_000))).open()
    feed(harness, table(source))
    return harness.extract_output()  # type: ignore[no-any-return]


def replay_restored(make: Callable[[], Any], events: list[Any], backend: str) -> list[Row]:
    """``events`` into the operator, snapshotted and restored half way."""
    harness = OperatorHarness(make(), state_backend=backend).open()
    out: list[Row] = []
    watermark = None
    for i, event in enumerate(events):
        if i == len(events) // 2:
            out += harness.records()
            harness = OperatorHarness(make(), state_backend=backend).open(harness.snapshot())
            if watermark is not None:
                harness.process_watermark(watermark)
        if isinstance(event, Record):
            harness.process_element(event.value, event.timestamp)
        else:
            watermark = event.timestamp
            harness.process_watermark(watermark)
    return out + harness.records()


@pytest.mark.parametrize("backend", BACKENDS)
def test_window_top_n_and_deduplication_restored(backend: str) -> None:
    events = tvf_events("bids")
    top = replay_restored(
        lambda: WindowRankOperator(RowKeySelector([]), window_end_index=4, sort_keys=[sort_key(1, False)], rank_end=2),
        events,
        backend,
    )
    assert normalized([Row(*list(r)[:5], r[6]) for r in top]) == facts("topn_tvf")
    last = replay_restored(
        lambda: WindowDeduplicateOperator(RowKeySelector([0]), window_end_index=4, order_index=2, keep_last_row=True),
        events,
        backend,
    )
    assert unordered(normalized([Row(*list(r)[:5], 1) for r in last])) == unordered(facts("dedup_last"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_window_join_restored(backend: str) -> None:
    def make() -> WindowJoinOperator:
        return WindowJoinOperator(
            RowKeySelector([0]),
            RowKeySelector([0]),
            left_window_end_index=4,
            right_window_end_index=4,
            left_arity=6,
            right_arity=6,
            join_type="FULL",
        )

    lefts = [e for e in tvf_events("bids") if isinstance(e, Record)]
    rights = [e for e in tvf_events("clicks") if isinstance(e, Record)]
    harness = TwoInputOperatorHarness(make(), state_backend=backend).open()
    for e in lefts:
        harness.process_element1(e.value, e.timestamp)
    harness = TwoInputOperatorHarness(make(), state_backend=backend).open(harness.snapshot())
    for e in rights:
        harness.process_element2(e.value, e.timestamp)
    harness.process_watermark(MAX)
    got = [Row(r[0], r[1], r[6], r[7], r[3], r[9]) for r in harness.records()]
    assert unordered(normalized(got)) == unordered(facts("window_join_full"))
