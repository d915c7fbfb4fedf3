"""Calcite's ``SINGLE_VALUE`` wrapping of a scalar subquery (``SqlToRelConverter`` / Flink's ``SubQueryRemoveRule``):
a subquery the planner cannot prove to return at most one row becomes ``SELECT SINGLE_VALUE(col) FROM (subquery)``,
a global aggregation whose second row fails the job (Flink 2.3: ``SingleValueAggFunction received more than one
element.``). A global aggregate, ``LIMIT 1`` / ``ORDER BY … LIMIT 1`` and one-row ``VALUES`` need no wrapping.
"""

from __future__ import annotations

from strom.table.functions.single_value_agg_function import SingleValueName
from strom.table.planner.logical import Aggregate, AggregateCall, Calc, Rank, RelNode, RowType, Sort, Values

__all__ = ["at_most_one_row", "single_value"]


def at_most_one_row(rel: RelNode) -> bool:
    """Whether ``rel`` returns at most one row by its shape (Calcite's ``RelMdMaxRowCount`` ≤ 1)."""
    if isinstance(rel, Aggregate):
        return not rel.group_keys
    if isinstance(rel, Calc):
        return at_most_one_row(rel.input)
    if isinstance(rel, Values):
        return len(rel.rows) <= 1
    if isinstance(rel, Sort):
        return rel.fetch is not None and rel.fetch <= 1
    if isinstance(rel, Rank):
        return not rel.partition_keys and rel.limit - rel.offset <= 1
    return False


def single_value(rel: RelNode, position: str) -> RelNode:
    """``rel`` (one column) as ``SINGLE_VALUE(col)`` unless it returns at most one row; ``position`` is the scalar
    subquery's `` at line L, column C`` for the runtime error."""
    if at_most_one_row(rel):
        return rel
    column_type = rel.row_type.types[0].nullable()
    call = AggregateCall(SingleValueName(position), (0,), False, column_type)
    return Aggregate(RowType(rel.row_type.names, (column_type,)), rel, (), (call,))
