"""Flink's ``IntervalJoinUtil.extractWindowBoundsFromPredicate``: the time bounds of an event-time interval join.

A join whose condition bounds a left rowtime by a right rowtime from both sides — ``l.ts BETWEEN r.ts - INTERVAL
'2' SECOND AND r.ts + INTERVAL '3' SECOND`` or ``l.ts >= r.ts - … AND l.ts < r.ts + …`` (either side first) — is an
interval join: ``lower_bound <= l.ts - r.ts <= upper_bound`` in milliseconds (a strict ``<`` / ``>`` moves its bound
by 1 ms, as Flink does). The other conjuncts stay as the join's residual condition.
"""

from __future__ import annotations

import dataclasses
import datetime

from strom.table.planner.rex import RexCall, RexInputRef, RexLiteral, RexNode
from strom.table.types import DataType

__all__ = ["WindowBounds", "extract_window_bounds"]

_FLIP = {">=": "<=", ">": "<", "<=": ">=", "<": ">"}


@dataclasses.dataclass(frozen=True, slots=True)
class WindowBounds:
    """``lower_bound <= left rowtime - right rowtime <= upper_bound`` (ms) and the conjuncts that remain."""

    lower_bound: int
    upper_bound: int
    left_time: int
    right_time: int  # index in the joined row (left ++ right)
    rest: tuple[RexNode, ...]


def _is_rowtime(t: DataType) -> bool:
    return "ROWTIME" in str(t)


def _time_term(node: RexNode) -> tuple[int, int] | None:
    """``ts`` / ``ts + INTERVAL`` / ``ts - INTERVAL`` over a rowtime column → (column, offset ms)."""
    if isinstance(node, RexInputRef):
        return (node.index, 0) if _is_rowtime(node.type) else None
    if isinstance(node, RexCall) and node.name in ("+", "-") and len(node.operands) == 2:
        a, b = node.operands
        if isinstance(b, RexLiteral) and isinstance(b.value, datetime.timedelta):
            inner = _time_term(a)
            if inner is not None:
                ms = int(b.value / datetime.timedelta(milliseconds=1))
                return inner[0], inner[1] + (ms if node.name == "+" else -ms)
    return None


def _comparisons(node: RexNode) -> list[tuple[str, RexNode, RexNode]] | None:
    if isinstance(node, RexCall) and node.name == "BETWEEN" and len(node.operands) == 3:
        value, low, high = node.operands
        return [(">=", value, low), ("<=", value, high)]
    if isinstance(node, RexCall) and node.name in _FLIP and len(node.operands) == 2:
        return [(node.name, node.operands[0], node.operands[1])]
    return None


def _bound(op: str, a: RexNode, b: RexNode, n_left: int) -> tuple[str, int, int, int] | None:
    """``a op b`` between a left and a right rowtime → ("lower" | "upper", ms, left column, right column)."""
    ta, tb = _time_term(a), _time_term(b)
    if ta is None or tb is None:
        return None
    if ta[0] >= n_left > tb[0]:
        ta, tb, op = tb, ta, _FLIP[op]
    if not ta[0] < n_left <= tb[0]:
        return None
    # left + oa op right + ob  ⇔  left - right op ob - oa
    value = tb[1] - ta[1]
    if op in (">=", ">"):
        return "lower", value + (1 if op == ">" else 0), ta[0], tb[0]
    return "upper", value - (1 if op == "<" else 0), ta[0], tb[0]


def extract_window_bounds(conjuncts: list[RexNode], n_left: int) -> WindowBounds | None:
    """Both time bounds between one left and one right rowtime column, or None (a regular join)."""
    lower: int | None = None
    upper: int | None = None
    columns: tuple[int, int] | None = None
    rest: list[RexNode] = []
    for conjunct in conjuncts:
        comparisons = _comparisons(conjunct)
        bounds = [_bound(op, a, b, n_left) for op, a, b in comparisons] if comparisons else [None]
        if any(b is None for b in bounds) or any(columns not in (None, (b[2], b[3])) for b in bounds if b):
            rest.append(conjunct)
            continue
        for side, value, left, right in (b for b in bounds if b is not None):
            columns = (left, right)
            if side == "lower":
                lower = value if lower is None else max(lower, value)
            else:
                upper = value if upper is None else min(upper, value)
    if lower is None or upper is None or columns is None:
        return None
    return WindowBounds(lower, upper, columns[0], columns[1], tuple(rest))
