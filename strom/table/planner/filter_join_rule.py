"""Flink's ``FlinkFilterJoinRule`` for comma joins: ``FROM a, b WHERE a.x = b.y AND …`` moves the WHERE conjuncts
that read both inputs into the join (equalities become its keys), conjuncts of one input into that input, so a
comma join with an equality is a keyed join — and with rowtime bounds an interval join — instead of a join keyed on
the empty tuple. Only INNER joins without keys (CROSS JOIN, comma joins) are rewritten; the rest of the WHERE
stays above the join.
"""

from __future__ import annotations

from strom.table.planner.join_converter import _conjuncts, _equi_pair, physical_join
from strom.table.planner.logical import Calc, Join, RelNode
from strom.table.planner.rex import RexNode, RexSpecial, input_refs, shift

__all__ = ["push_filter_into_join"]


def _and(nodes: list[RexNode]) -> RexNode | None:
    out: RexNode | None = None
    for node in nodes:
        out = node if out is None else RexSpecial("AND", (out, node), node.type)
    return out


def _keyless_inner(rel: RelNode) -> bool:
    return isinstance(rel, Join) and rel.kind == "INNER" and not rel.left_keys


def _filtered(rel: RelNode, parts: list[RexNode]) -> RelNode:
    """``rel`` under the conjuncts ``parts`` (pushed further into a comma join below it)."""
    condition = _and(parts)
    if condition is None:
        return rel
    pushed, rest = push_filter_into_join(rel, condition)
    return pushed if rest is None else Calc(pushed.row_type, pushed, None, rest)


def push_filter_into_join(rel: RelNode, condition: RexNode) -> tuple[RelNode, RexNode | None]:
    """``rel`` with the WHERE ``condition`` pushed into it where ``rel`` is a join without keys; the rest."""
    if not isinstance(rel, Join) or not _keyless_inner(rel):
        return rel, condition
    n_left = len(rel.left.row_type)
    left_parts: list[RexNode] = []
    right_parts: list[RexNode] = []
    both: list[RexNode] = []
    rest: list[RexNode] = []
    for conjunct in _conjuncts(condition):
        refs = input_refs([conjunct])
        if refs and max(refs) < n_left:
            left_parts.append(conjunct)
        elif refs and min(refs) >= n_left:
            right_parts.append(shift(conjunct, lambda i: i - n_left))
        elif refs:
            both.append(conjunct)
        else:
            rest.append(conjunct)
    if not (left_parts or right_parts or both):
        return rel, condition
    left_keys, right_keys, residual = list(rel.left_keys), list(rel.right_keys), []
    for conjunct in both:
        pair = _equi_pair(conjunct, n_left)
        if pair is None:
            residual.append(conjunct)
        else:
            left_keys.append(pair[0])
            right_keys.append(pair[1] - n_left)
    join_condition = _and([*([rel.condition] if rel.condition is not None else []), *residual])
    left, right = _filtered(rel.left, left_parts), _filtered(rel.right, right_parts)
    join = Join(rel.row_type, left, right, "INNER", tuple(left_keys), tuple(right_keys), join_condition)
    return physical_join(join), _and(rest)
