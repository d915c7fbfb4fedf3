"""Flink's IntervalJoinUtil bounds as strom's planner extracts them from a join condition."""

from __future__ import annotations

import pytest

from strom.table.planner.expression_converter import ExpressionConverter
from strom.table.planner.interval_join_util import WindowBounds, extract_window_bounds
from strom.table.planner.join_converter import _conjuncts
from strom.table.planner.scope import Scope, ScopeField
from strom.table.sql.parser import parse_expression
from strom.table.types import parse_type

ROWTIME = parse_type("TIMESTAMP(3) *ROWTIME*")
FIELDS = [
    ScopeField("l", "k", parse_type("STRING")),
    ScopeField("l", "ts", ROWTIME),
    ScopeField("r", "k", parse_type("STRING")),
    ScopeField("r", "ts", ROWTIME),
    ScopeField("r", "plain", parse_type("TIMESTAMP(3)")),
]


def _bounds(condition: str) -> WindowBounds | None:
    rex = ExpressionConverter(Scope(FIELDS)).convert(parse_expression(condition))
    return extract_window_bounds(_conjuncts(rex), 2)


@pytest.mark.parametrize(
    ("condition", "lower", "upper"),
    [
        ("l.ts BETWEEN r.ts - INTERVAL '2' SECOND AND r.ts + INTERVAL '3' SECOND", -2000, 3000),
        ("l.ts >= r.ts - INTERVAL '2' SECOND AND l.ts < r.ts + INTERVAL '3' SECOND", -2000, 2999),
        ("r.ts < l.ts AND r.ts + INTERVAL '1' MINUTE >= l.ts", 1, 60000),
        ("l.ts + INTERVAL '1' SECOND > r.ts AND l.ts <= r.ts", -999, 0),
    ],
)
def test_both_bounds_of_the_left_rowtime_relative_to_the_right(condition: str, lower: int, upper: int) -> None:
    bounds = _bounds(condition)
    assert bounds is not None
    assert (bounds.lower_bound, bounds.upper_bound, bounds.left_time, bounds.right_time) == (lower, upper, 1, 3)
    assert bounds.rest == ()


def test_other_conjuncts_stay_the_residual_condition() -> None:
    bounds = _bounds("l.ts BETWEEN r.ts AND r.ts + INTERVAL '1' SECOND AND l.k <> 'x'")
    assert bounds is not None and len(bounds.rest) == 1


@pytest.mark.parametrize(
    "condition",
    [
        "l.ts >= r.ts - INTERVAL '2' SECOND",  # one bound: a regular join
        "l.ts BETWEEN r.plain AND r.plain + INTERVAL '1' SECOND",  # not a time attribute
        "l.k = r.k",
    ],
)
def test_no_interval_join_without_both_bounds_on_time_attributes(condition: str) -> None:
    assert _bounds(condition) is None
