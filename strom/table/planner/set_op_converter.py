"""``UNION``, ``INTERSECT [ALL]`` and ``EXCEPT [ALL]`` as Flink's planner rewrites them (its changelog follows):

- ``UNION`` (distinct): a grouping on every column over ``UNION ALL`` (Calcite's ``UnionToDistinctRule``);
- ``INTERSECT`` / ``EXCEPT``: a grouping on every column over a LEFT SEMI / ANTI join on all columns, NULLs equal
  (Flink's ``ReplaceIntersectWithSemiJoinRule`` / ``ReplaceMinusWithAntiJoinRule``);
- ``INTERSECT ALL``: ``UNION ALL`` of both inputs with a marker column per side, ``COUNT`` of each marker per row,
  and each row replicated ``min(left, right)`` times (Flink's ``RewriteIntersectAllRule``);
- ``EXCEPT ALL``: markers ``1`` / ``-1``, their ``SUM`` per row, the row replicated that many times when positive
  (Flink's ``RewriteMinusAllRule``). The replication keeps the aggregate's row kinds, so an update of a count
  retracts and re-emits the row's copies as Flink's ``$REPLICATE_ROWS$`` correlate does.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from strom.table.errors import TableException
from strom.table.planner.aggregate_converter import distinct
from strom.table.planner.logical import Aggregate, AggregateCall, Calc, Correlate, Join, RelNode, RowType, Union
from strom.table.planner.rex import RexInputRef, RexLiteral, RexNode
from strom.table.sql.parser import at
from strom.table.types import DataType, parse_type

__all__ = ["ReplicateRows", "convert_set_op"]


class ReplicateRows:
    """Flink's ``$REPLICATE_ROWS$`` after the set operation's counts: the row's ``width`` columns, as many times as
    ``min(counts)`` (INTERSECT ALL) or the one count (EXCEPT ALL) says."""

    def __init__(self, width: int) -> None:
        self.width = width

    def __call__(self, row: Any) -> list[tuple[Any, ...]]:
        values = row._values
        times = min(c or 0 for c in values[self.width :])
        return [tuple(values[: self.width])] * times if times > 0 else []


def convert_set_op(node: exp.SetOperation, left: RelNode, right: RelNode, types: tuple[DataType, ...]) -> RelNode:
    """``left <op> right`` (inputs of the same width; ``types`` their common column types)."""
    row_type = RowType(left.row_type.names, types)
    all_rows = node.args.get("distinct") is False
    kind = type(node).__name__.upper()
    if kind == "UNION":
        return distinct(_union(row_type, left, right))
    if kind not in ("INTERSECT", "EXCEPT"):
        raise TableException(f"Unsupported SQL construct{at(node)}: {kind}; expected UNION, INTERSECT or EXCEPT")
    if not all_rows:
        keys = tuple(range(len(row_type)))
        join = Join(row_type, left, right, "SEMI" if kind == "INTERSECT" else "ANTI", keys, keys, None, True)
        return distinct(join)
    return _set_op_all(row_type, left, right, kind == "INTERSECT")


def _union(row_type: RowType, *members: RelNode) -> Union:
    flat: list[RelNode] = []
    for member in members:
        flat.extend(member.members if isinstance(member, Union) else (member,))
    return Union(row_type, tuple(flat))


def _set_op_all(row_type: RowType, left: RelNode, right: RelNode, intersect: bool) -> RelNode:
    width = len(row_type)
    if intersect:  # COUNT(left marker), COUNT(right marker)
        marker = parse_type("BOOLEAN")
        left_markers: tuple[Any, ...] = (True, None)
        right_markers: tuple[Any, ...] = (None, True)
        calls = tuple(AggregateCall("COUNT", (width + i,), False, parse_type("BIGINT NOT NULL")) for i in range(2))
    else:  # SUM(1 for the left, -1 for the right)
        marker = parse_type("BIGINT NOT NULL")
        left_markers, right_markers = (1,), (-1,)
        calls = (AggregateCall("SUM", (width,), False, parse_type("BIGINT")),)
    marked = RowType(
        (*row_type.names, *(f"vcol_marker{i}" for i in range(len(left_markers)))),
        (*row_type.types, *(marker for _ in left_markers)),
    )
    union = _union(marked, _with_markers(marked, left, left_markers), _with_markers(marked, right, right_markers))
    counts = RowType(
        (*row_type.names, *(f"vcol_count{i}" for i in range(len(calls)))),
        (*row_type.types, *(c.result_type for c in calls)),
    )
    aggregate = Aggregate(counts, union, tuple(range(width)), calls)
    return Correlate(row_type, aggregate, ReplicateRows(width))


def _with_markers(marked: RowType, rel: RelNode, markers: tuple[Any, ...]) -> RelNode:
    width = len(rel.row_type)
    projection: tuple[RexNode, ...] = (
        *(RexInputRef(i, t) for i, t in enumerate(rel.row_type.types)),
        *(RexLiteral(m, marked.types[width + i]) for i, m in enumerate(markers)),
    )
    return Calc(marked, rel, projection, None)
