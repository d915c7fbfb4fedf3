"""Event-time OVER aggregation (ROWS / RANGE, bounded / unbounded) against Flink 2.3's results, and lateness."""

from __future__ import annotations

from typing import Any

import pytest
from window_testing import OperatorHarness, facts, feed, normalized, table, unordered

from strom.api.row import Row
from strom.table.runtime.over_aggregate import RowTimeOverAggregate
from strom.table.runtime.window.table_stream_operator import RowKeySelector


class SumCountMax:
    """``SUM(col), COUNT(col), MAX(col)`` with retraction (MAX keeps a count per value, as Flink's MaxWithRetract)."""

    def __init__(self, column: int, with_max: bool) -> None:
        self.column, self.with_max = column, with_max

    def create_accumulators(self) -> list[Any]:
        return [0, 0, {}]

    def accumulate(self, accs: list[Any], row: Row) -> None:
        v = row[self.column]
        accs[0] += v
        accs[1] += 1
        accs[2][v] = accs[2].get(v, 0) + 1

    def retract(self, accs: list[Any], row: Row) -> None:
        v = row[self.column]
        accs[0] -= v
        accs[1] -= 1
        accs[2][v] -= 1
        if not accs[2][v]:
            del accs[2][v]

    def merge(self, accs: list[Any], other: list[Any]) -> None:
        raise NotImplementedError

    def get_value(self, accs: list[Any]) -> tuple[Any, ...]:
        values = (accs[0], accs[1])
        return (*values, max(accs[2])) if self.with_max else values

    def record_count_is_zero(self, accs: list[Any]) -> bool:
        return bool(accs[1] == 0)


@pytest.mark.parametrize(
    ("name", "rows", "preceding"),
    [
        ("over_rows_bounded", True, 1),
        ("over_range_bounded", False, 5_000),
        ("over_rows_unbounded", True, None),
        ("over_range_unbounded", False, None),
    ],
)
def test_over_aggregate_results_are_flinks(name: str, rows: bool, preceding: int | None) -> None:
    handle = SumCountMax(1, with_max=name == "over_rows_bounded")
    op = RowTimeOverAggregate(RowKeySelector([0]), handle, rows=rows, preceding=preceding)
    harness = OperatorHarness(op).open()
    feed(harness, table("bids"))
    assert unordered(normalized(harness.records())) == unordered(facts(name))
    backend = op.keyed_backend
    assert backend is not None
    if preceding is None:
        assert not backend.get_table("over-input")


def test_rows_go_out_in_rowtime_order_stamped_with_it_and_late_rows_are_dropped() -> None:
    op = RowTimeOverAggregate(RowKeySelector([0]), SumCountMax(1, False), rows=True, preceding=1)
    harness = OperatorHarness(op).open()
    harness.process_element(Row("a", 1), 30)
    harness.process_element(Row("a", 2), 10)
    harness.process_element(Row("a", 4), 20)
    harness.process_watermark(25)
    assert [(list(r.value), r.timestamp) for r in harness.extract_output()[:-1]] == [
        (["a", 2, 2, 1], 10),
        (["a", 4, 6, 2], 20),
    ]
    harness.process_element(Row("a", 8), 15)  # behind the last rowtime fired for the key
    harness.process_watermark(40)
    assert [list(r) for r in harness.records()] == [["a", 1, 5, 2]]
    assert op.num_late_records_dropped == 1
