"""``ROW_NUMBER() OVER (PARTITION BY … ORDER BY …)`` (Flink's ``FlinkLogicalRank``): Top-N and deduplication.

The SELECT with the window function becomes ``Calc → Rank → Calc``; a filter ``rn <= N`` / ``rn < N`` / ``rn = 1``
on the rank column above it is pushed into the Rank as its limit (Flink's ``FlinkLogicalRankRule``), and when the
query does not use ``rn`` the Rank emits only which rows enter and leave the top N (no rank-shift updates).
"""

from __future__ import annotations

import dataclasses

from sqlglot import exp

from strom.table.errors import TableException, ValidationException
from strom.table.planner.aggregate_converter import is_aggregate_call
from strom.table.planner.expression_converter import ExpressionConverter
from strom.table.planner.logical import Calc, Rank, RelNode, RowType
from strom.table.planner.over_converter import check_offset_functions, convert_over
from strom.table.planner.project import output_names
from strom.table.planner.rank_functions import check_rank_function
from strom.table.planner.rex import RexCall, RexInputRef, RexLiteral, RexNode, RexSpecial, input_refs
from strom.table.planner.scope import Scope
from strom.table.sql.flink_dialect import FlinkDialect
from strom.table.sql.parser import at
from strom.table.types import parse_type

__all__ = ["convert_rank", "drop_unused_rank", "has_window_function", "push_rank_limit"]

_UNBOUNDED = 2**62


def has_window_function(items: list[exp.Expr]) -> bool:
    return any(i.find(exp.Window) is not None for i in items)


def convert_rank(rel: RelNode, scope: Scope, items: list[exp.Expr], *, streaming: bool = True) -> RelNode:
    windows = [i.find(exp.Window) for i in items]
    found = [w for w in windows if w is not None]
    window = found[0]
    function = window.this
    name = (str(function.this) if isinstance(function, exp.Anonymous) else type(function).__name__).upper()
    if all(is_aggregate_call(w.this) and not isinstance(w.this, exp.Rank | exp.DenseRank) for w in found):
        if not streaming and any(w.this.find(exp.Distinct) is not None for w in found):
            raise ValidationException(
                "Distinct not supported in Windowing function! (a BATCH OVER aggregate, as Flink)"
            )
        check_offset_functions(found, streaming)
        return convert_over(rel, scope, items, windows)
    rank_type = check_rank_function(name, streaming)
    if len(found) > 1 or rank_type is None:
        raise TableException(
            f"Unsupported SQL construct{at(window)}: {window.sql(dialect=FlinkDialect)[:60]}; "
            "expected one ROW_NUMBER() OVER (PARTITION BY … ORDER BY …) or aggregates OVER one window"
        )
    converter = ExpressionConverter(scope)
    pre: list[RexNode] = []
    slots: list[int | None] = []
    for item, w in zip(items, windows, strict=True):
        if w is None:
            slots.append(len(pre))
            pre.append(converter.convert(item))
        else:
            slots.append(None)
    visible = len(pre)

    def column(node: exp.Expr) -> int:
        rex = converter.convert(node)
        for i, existing in enumerate(pre):
            if existing == rex:
                return i
        pre.append(rex)
        return len(pre) - 1

    partition = tuple(column(p) for p in window.args.get("partition_by") or [])
    order_node = window.args.get("order")
    if order_node is None:
        raise TableException(f"Unsupported SQL construct{at(window)}: ROW_NUMBER() OVER without ORDER BY")
    order = tuple((column(o.this), not bool(o.args.get("desc"))) for o in order_node.expressions)
    nulls = tuple(bool(o.args.get("nulls_first")) for o in order_node.expressions)
    pre_type = RowType(tuple(f"$f{i}" for i in range(len(pre))), tuple(p.type for p in pre))
    pre_rel = Calc(pre_type, rel, tuple(pre), None)
    rn_type = parse_type("BIGINT NOT NULL")
    rank_row_type = RowType((*pre_type.names, "$rn"), (*pre_type.types, rn_type))
    rank = Rank(rank_row_type, pre_rel, partition, order, _UNBOUNDED, True, rank_type=rank_type, nulls_first=nulls)
    names = output_names(items)
    projection = tuple(
        RexInputRef(slot, pre[slot].type) if slot is not None else RexInputRef(len(pre), rn_type) for slot in slots
    )
    del visible
    return Calc(RowType(names, tuple(p.type for p in projection)), rank, projection, None)


def fetch(rel: RelNode, offset: int, count: int) -> RelNode:
    """The rows ``offset + 1 .. offset + count`` in arrival order (a Rank over one partition, no sort key)."""
    rn_type = parse_type("BIGINT NOT NULL")
    rank_type = RowType((*rel.row_type.names, "$rn"), (*rel.row_type.types, rn_type))
    rank = Rank(rank_type, rel, (), (), offset + count, False, offset)
    projection = tuple(RexInputRef(i, t) for i, t in enumerate(rel.row_type.types))
    return Calc(rel.row_type, rank, projection, None)


def _rank_below(rel: RelNode) -> tuple[Calc, Rank] | None:
    if isinstance(rel, Calc) and rel.condition is None and isinstance(rel.input, Rank) and rel.projection is not None:
        return rel, rel.input
    return None


def _conjuncts(node: RexNode) -> list[RexNode]:
    if isinstance(node, RexSpecial) and node.kind == "AND":
        return [c for o in node.operands for c in _conjuncts(o)]
    return [node]


def push_rank_limit(rel: RelNode, condition: RexNode) -> tuple[RelNode, RexNode | None]:
    """``rn <= N`` (``<``, ``=`` 1) over a Rank's output → the Rank's limit; the rest of the condition stays."""
    below = _rank_below(rel)
    if below is None:
        return rel, condition
    calc, rank = below
    assert calc.projection is not None
    rn_index = len(rank.row_type) - 1
    rn_columns = {i for i, p in enumerate(calc.projection) if isinstance(p, RexInputRef) and p.index == rn_index}
    limit = None
    rest: list[RexNode] = []
    for conjunct in _conjuncts(condition):
        bound = _rank_bound(conjunct, rn_columns)
        if bound is not None and limit is None:
            limit = bound
        else:
            rest.append(conjunct)
    if limit is None:
        return rel, condition
    new_rank = dataclasses.replace(rank, limit=limit)
    new_calc = dataclasses.replace(calc, input=new_rank)
    remaining: RexNode | None = None
    for c in rest:
        remaining = c if remaining is None else RexSpecial("AND", (remaining, c), c.type)
    return new_calc, remaining


def _rank_bound(node: RexNode, rn_columns: set[int]) -> int | None:
    if not (isinstance(node, RexCall) and len(node.operands) == 2):
        return None
    a, b = node.operands
    if isinstance(a, RexInputRef) and a.index in rn_columns and isinstance(b, RexLiteral) and isinstance(b.value, int):
        if node.name == "<=":
            return b.value
        if node.name == "<":
            return b.value - 1
        if node.name == "=" and b.value == 1:
            return 1
    return None


def drop_unused_rank(rel: RelNode) -> RelNode:
    """The final Calc over a limited Rank that does not read ``rn``: the Rank emits membership changes only."""
    if not (isinstance(rel, Calc) and rel.projection is not None):
        return rel
    below = _rank_below(rel.input)
    if below is None:
        return rel
    calc, rank = below
    assert calc.projection is not None
    rn_index = len(rank.row_type) - 1
    used = input_refs(rel.projection) | (input_refs([rel.condition]) if rel.condition is not None else set())
    reads_rn = any(
        isinstance(calc.projection[i], RexInputRef) and calc.projection[i].index == rn_index  # type: ignore[union-attr]
        for i in used
    )
    if reads_rn or rank.limit >= _UNBOUNDED:
        return rel
    return dataclasses.replace(rel, input=dataclasses.replace(calc, input=dataclasses.replace(rank, output_rank=False)))
