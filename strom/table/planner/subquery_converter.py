"""Subqueries in WHERE (Flink's ``SubQueryRemoveRule`` / ``FlinkSemiAntiJoin`` rules): ``x IN (SELECT y …)`` and
``[NOT] EXISTS (SELECT … WHERE inner = outer …)`` become LEFT SEMI / ANTI joins on the correlated equalities."""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from strom.table.errors import TableException
from strom.table.planner.expression_converter import ExpressionConverter
from strom.table.planner.logical import Join, RelNode
from strom.table.planner.rex import RexInputRef
from strom.table.planner.scalar_subquery_converter import exists_on_true, not_in, split_correlation
from strom.table.planner.scope import Scope
from strom.table.sql.parser import at

__all__ = ["remove_subqueries"]

Converter = Callable[[exp.Expr], RelNode]


def remove_subqueries(
    rel: RelNode, scope: Scope, condition: exp.Expr, convert: Converter
) -> tuple[RelNode, exp.Expr | None]:
    """``rel`` joined with each top-level subquery conjunct of ``condition``, and the rest of the condition."""
    conjuncts = list(condition.flatten()) if isinstance(condition, exp.And) else [condition]
    rest: list[exp.Expr] = []
    for conjunct in conjuncts:
        negated = isinstance(conjunct, exp.Not) and isinstance(conjunct.this, exp.Exists)
        exists = conjunct.this if negated else conjunct
        if isinstance(exists, exp.Exists):
            rel = _exists(rel, scope, exists, convert, "ANTI" if negated else "SEMI")
            continue
        if isinstance(conjunct, exp.Not) and isinstance(conjunct.this, exp.In) and conjunct.this.args.get("query"):
            rel = not_in(rel, scope, conjunct.this, convert)
            continue
        query = conjunct.args.get("query") if isinstance(conjunct, exp.In) else None
        if query is None:
            rest.append(conjunct)
            continue
        left_key = ExpressionConverter(scope).convert(conjunct.this)
        right = convert(query.this if isinstance(query, exp.Subquery) else query)
        if not isinstance(left_key, RexInputRef) or len(right.row_type) != 1:
            raise TableException(
                f"Unsupported SQL construct{at(conjunct)}: IN (subquery) expects a column IN (a one-column query)"
            )
        rel = Join(rel.row_type, rel, right, "SEMI", (left_key.index,), (0,), None)
    remaining: exp.Expr | None = None
    for c in rest:
        remaining = c if remaining is None else exp.And(this=remaining, expression=c)
    return rel, remaining


def _exists(rel: RelNode, scope: Scope, node: exp.Exists, convert: Converter, kind: str) -> RelNode:
    select = node.this
    if not isinstance(select, exp.Select):
        raise TableException(f"Unsupported SQL construct{at(node)}: EXISTS expects a SELECT")
    correlation = split_correlation(select)
    if not correlation.outer_columns:
        return exists_on_true(rel, select, convert, kind)
    inner = correlation.inner_query(select)
    inner.set("expressions", [c.copy() for c in correlation.inner_columns])
    right = convert(inner)
    converter = ExpressionConverter(scope)
    left_keys = []
    for column in correlation.outer_columns:
        ref = converter.convert(column)
        if not isinstance(ref, RexInputRef):
            raise TableException(f"Unsupported SQL construct{at(column)}: a correlated expression; expected a column")
        left_keys.append(ref.index)
    return Join(rel.row_type, rel, right, kind, tuple(left_keys), tuple(range(len(left_keys))), None)
