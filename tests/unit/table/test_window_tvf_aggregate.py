"""Window TVFs and window aggregation against Flink 2.3's results (``tests/data/flink_window``), and the slicing
rules Flink's operator follows for late rows, shared slices and state cleanup."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from window_testing import (
    CountSum,
    CountSumMax,
    OperatorHarness,
    facts,
    feed,
    normalized,
    table,
    unordered,
)

from strom.api.row import Row
from strom.table.runtime.window.slice_assigners import (
    CumulativeSliceAssigner,
    HoppingSliceAssigner,
    SliceAssigner,
    TumblingSliceAssigner,
)
from strom.table.runtime.window.table_stream_operator import RowKeySelector
from strom.table.runtime.window.window_aggregate import SlicingWindowAggOperator
from strom.table.runtime.window.window_table_function import WindowTableFunctionOperator

TUMBLE = TumblingSliceAssigner(10_000)
HOP = HoppingSliceAssigner(size=10_000, slide=5_000)
CUMULATE = CumulativeSliceAssigner(max_size=15_000, step=5_000)


def tvf_rows(assigner: SliceAssigner, time_zone: str | None = None, source: str = "bids") -> list[Row]:
    harness = OperatorHarness(WindowTableFunctionOperator(assigner, time_zone=time_zone)).open()
    feed(harness, table(source))
    return harness.records()  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("name", "assigner"),
    [
        ("tvf_tumble", TUMBLE),
        ("tvf_hop", HOP),
        ("tvf_cumulate", CUMULATE),
        ("tvf_tumble_offset", TumblingSliceAssigner(10_000, 3_000)),
    ],
)
def test_window_tvf_rows_are_flinks_in_flinks_order(name: str, assigner: SliceAssigner) -> None:
    assert normalized(tvf_rows(assigner)) == facts(name)


def test_window_tvf_rows_carry_window_time_as_their_timestamp() -> None:
    harness = OperatorHarness(WindowTableFunctionOperator(HOP)).open()
    harness.process_element(Row("a", 1, None), 7_000)
    out = harness.extract_output()
    assert [r.timestamp for r in out] == [14_999, 9_999]


def agg_harness(assigner: SliceAssigner, keys: list[int], handle: Any, **kwargs: Any) -> OperatorHarness:
    op = SlicingWindowAggOperator(RowKeySelector(keys), handle, assigner, **kwargs)
    return OperatorHarness(op).open()


def reorder(rows: list[Row]) -> list[Row]:
    """Flink's query selects window_start, window_end first: the operator emits keys, aggregates, properties."""
    out = []
    for r in rows:
        values = list(r)
        out.append(Row(*values[-2:], *values[: len(values) - 2]))
    return out


@pytest.mark.parametrize(("name", "assigner"), [("agg_tumble", TUMBLE), ("agg_hop", HOP), ("agg_cumulate", CUMULATE)])
def test_window_aggregate_results_are_flinks(name: str, assigner: SliceAssigner) -> None:
    harness = agg_harness(assigner, [0], CountSumMax(1))
    feed(harness, table("bids"))
    assert unordered(normalized(reorder(harness.records()))) == unordered(facts(name))


def test_global_window_aggregate_without_keys() -> None:
    harness = agg_harness(TUMBLE, [], CountSum(1))
    feed(harness, table("bids"))
    assert unordered(normalized(reorder(harness.records()))) == unordered(facts("agg_tumble_global"))


def test_windows_fire_when_the_watermark_passes_their_end_and_late_rows_are_dropped() -> None:
    harness = agg_harness(TUMBLE, [0], CountSum(1), window_properties=("window_end",))
    harness.process_element(Row("a", 1), 1_000)
    harness.process_element(Row("a", 2), 9_999)
    harness.process_watermark(9_998)
    assert harness.records() == []
    harness.process_watermark(9_999)
    out = harness.extract_output()
    assert [(list(r.value), r.timestamp) for r in out[:-1]] == [
        (["a", 2, 3, datetime.datetime(1970, 1, 1, 0, 0, 10)], 9_999)
    ]
    harness.process_element(Row("a", 5), 3_000)  # its window fired: late
    harness.process_watermark(30_000)
    assert harness.records() == []
    assert harness.operator.num_late_records_dropped == 1
    assert not harness.operator.keyed_backend.get_namespaced_table("window-aggs")


def test_hop_late_row_joins_the_windows_not_yet_fired() -> None:
    harness = agg_harness(HOP, [0], CountSum(1), window_properties=("window_end",))
    harness.process_element(Row("a", 1), 1_000)
    harness.process_watermark(4_999)  # fires [-5 s, 5 s)
    assert [list(r) for r in harness.records()] == [["a", 1, 1, datetime.datetime(1970, 1, 1, 0, 0, 5)]]
    harness.process_element(Row("a", 10), 2_000)  # slice 5 s fired, window [0, 10 s) not yet
    harness.process_watermark(20_000)
    assert [list(r)[:3] for r in harness.records()] == [["a", 2, 11]]
    assert harness.operator.num_late_records_dropped == 0
    assert not harness.operator.keyed_backend.get_namespaced_table("window-aggs")


def test_cumulate_late_row_goes_into_the_shared_first_slice() -> None:
    harness = agg_harness(CUMULATE, [0], CountSum(1), window_properties=("window_end",))
    harness.process_element(Row("a", 1), 1_000)
    harness.process_watermark(5_000)  # fires [0, 5 s)
    harness.process_element(Row("a", 10), 2_000)
    harness.process_watermark(20_000)
    assert [list(r)[:3] for r in harness.records()] == [["a", 1, 1], ["a", 2, 11], ["a", 2, 11]]
    assert not harness.operator.keyed_backend.get_namespaced_table("window-aggs")


def test_window_aggregate_restores_from_a_snapshot() -> None:
    harness = agg_harness(HOP, [0], CountSum(1))
    rows = table("bids")
    feed(harness, rows[:6], end=False)
    first = harness.records()
    snapshot = harness.snapshot()
    op = SlicingWindowAggOperator(RowKeySelector([0]), CountSum(1), HOP)
    restored = OperatorHarness(op).open(snapshot)
    restored.process_watermark(max(t for _, t in rows[:6]) - 5_000)
    feed(restored, rows[6:])
    whole = agg_harness(HOP, [0], CountSum(1))
    feed(whole, rows)
    assert unordered(normalized(first + restored.records())) == unordered(normalized(whole.records()))


def test_windowed_input_aggregates_by_its_window_end_column() -> None:
    tvf = tvf_rows(TUMBLE)
    harness = agg_harness(TUMBLE, [0], CountSumMax(1), window_end_index=4)
    for row in tvf:
        harness.process_element(row, None)
    harness.process_watermark((1 << 63) - 1)
    assert unordered(normalized(reorder(harness.records()))) == unordered(facts("agg_tumble"))


def kolkata(utc: datetime.datetime) -> str:
    """A TIMESTAMP_LTZ value (naive UTC) as Flink casts it to STRING in the session time zone Asia/Kolkata."""
    return (utc + datetime.timedelta(hours=5, minutes=30)).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def test_ltz_rowtime_windows_are_assigned_in_the_session_time_zone() -> None:
    rows = tvf_rows(TumblingSliceAssigner(3_600_000), time_zone="Asia/Kolkata")
    got = [("+I", [r[0], r[1], kolkata(r[2]), str(r[3]), str(r[4]), kolkata(r[5])]) for r in rows]
    assert got == facts("ltz_tvf_hour")


def test_ltz_day_window_aggregate_ends_at_local_midnight() -> None:
    harness = agg_harness(
        TumblingSliceAssigner(86_400_000),
        [],
        CountSum(1),
        time_zone="Asia/Kolkata",
        window_properties=("window_start", "window_end", "window_time"),
    )
    feed(harness, table("bids"), end=False)
    harness.process_watermark(1704133799998)
    assert harness.records() == []
    harness.process_watermark(1704133799999)  # 2024-01-01 23:59:59.999 in Kolkata
    (row,) = harness.records()
    got = [str(row[2]), str(row[3]), kolkata(row[4]), row[0], row[1]]
    assert [("+I", got)] == facts("ltz_tumble_day")


def window_slices(assigner: SliceAssigner, end: int) -> set[int]:
    """The slices the operator merges for the window ending at ``end``."""
    if isinstance(assigner, HoppingSliceAssigner):
        return set(assigner.slices_of_window(end))
    if isinstance(assigner, CumulativeSliceAssigner):
        start = assigner.window_start(end)
        return set(range(start + assigner.step, end + 1, assigner.step))
    return {end}


@given(
    st.integers(-(10**12), 10**12),
    st.sampled_from(
        [
            TumblingSliceAssigner(7, 3),
            TumblingSliceAssigner(10, -4),
            HoppingSliceAssigner(12, 4, 1),
            HoppingSliceAssigner(10, 5),
            CumulativeSliceAssigner(12, 3, 2),
            CumulativeSliceAssigner(15, 5),
        ]
    ),
)
def test_a_rows_slice_belongs_to_exactly_the_windows_the_tvf_gives_it(t: int, assigner: SliceAssigner) -> None:
    windows = assigner.assign_windows(t)
    slice_end = assigner.assign_slice_end(t)
    assert slice_end - assigner.slice_interval <= t < slice_end
    for start, end in windows:
        assert start <= t < end
        assert assigner.window_start(end) == start
        assert slice_end in window_slices(assigner, end)
    ends = [end for _, end in windows]
    assert max(ends) == assigner.last_window_end(slice_end)
    # the window after the slice's last one no longer contains it
    assert slice_end not in window_slices(assigner, max(ends) + assigner.slice_interval)


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_hop_and_cumulate_aggregates_on_both_state_backends(backend: str) -> None:
    for name, assigner in (("agg_hop", HOP), ("agg_cumulate", CUMULATE)):
        op = SlicingWindowAggOperator(RowKeySelector([0]), CountSumMax(1), assigner)
        harness = OperatorHarness(op, state_backend=backend).open()
        feed(harness, table("bids"), end=False)
        restored = OperatorHarness(
            SlicingWindowAggOperator(RowKeySelector([0]), CountSumMax(1), assigner), state_backend=backend
        ).open(harness.snapshot())
        first = harness.records()
        restored.process_watermark((1 << 63) - 1)
        assert unordered(normalized(reorder(first + restored.records()))) == unordered(facts(name))


def test_hop_tvf_takes_any_slide_and_the_aggregate_refuses_a_size_not_a_multiple_of_it() -> None:
    hop = HoppingSliceAssigner(size=10, slide=3)
    assert hop.assign_windows(7) == [(6, 16), (3, 13), (0, 10)]
    with pytest.raises(ValueError, match="integral multiple"):
        SlicingWindowAggOperator(RowKeySelector([0]), CountSum(1), hop)


def test_tvf_drops_rows_without_rowtime_and_reads_the_rowtime_column_of_untimed_batches() -> None:
    from strom.runtime.streamrecord import with_timestamps

    op = WindowTableFunctionOperator(TUMBLE, rowtime_index=1)
    harness = OperatorHarness(op).open()
    op.process_batch(with_timestamps([Row("a", None)], [None]))
    assert op.num_null_rowtime_records_dropped == 1
    op.process_batch([Row("b", datetime.datetime(1970, 1, 1, 0, 0, 12))])  # no timestamp column: the rowtime column
    (row,) = harness.records()
    assert list(row)[2:4] == [datetime.datetime(1970, 1, 1, 0, 0, 10), datetime.datetime(1970, 1, 1, 0, 0, 20)]


def test_aggregate_refuses_a_null_rowtime_as_flink() -> None:
    from strom.exceptions import InvalidProgramError
    from strom.runtime.streamrecord import with_timestamps

    harness = agg_harness(TUMBLE, [0], CountSum(1))
    with pytest.raises(InvalidProgramError, match="RowTime field should not be null"):
        harness.operator.process_batch(with_timestamps([Row("a", 1)], [None]))
