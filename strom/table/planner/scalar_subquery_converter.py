"""Uncorrelated subqueries Flink's ``SubQueryRemoveRule`` turns into joins: scalar subqueries, ``NOT IN`` and
``[NOT] EXISTS`` without a correlation.

- a scalar subquery ``(SELECT MAX(x) FROM t)`` in SELECT or WHERE: a LEFT join on TRUE with the one-row query (its
  one column NULL until the row arrives); the expression reads the joined column ``$scalar<i>``;
- ``x NOT IN (SELECT y …)``: a LEFT ANTI join on ``x = y OR x IS NULL OR y IS NULL`` (SQL's three-valued NOT IN:
  one NULL ``y`` removes every row, a NULL ``x`` is removed by any ``y``);
- an uncorrelated ``[NOT] EXISTS (SELECT …)``: a LEFT SEMI / ANTI join on TRUE.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from strom.table.errors import TableException
from strom.table.planner.expression_converter import ExpressionConverter
from strom.table.planner.logical import Join, RelNode, RowType
from strom.table.planner.scope import Scope, ScopeField
from strom.table.sql.parser import at

__all__ = ["SCALAR", "exists_on_true", "not_in", "remove_scalar_subqueries"]

Converter = Callable[[exp.Expr], RelNode]
SCALAR = "$scalar"  # the qualifier of the joined scalar columns (never expanded by SELECT *)
_NOT_IN = "$not_in"


def _one_column(right: RelNode, node: exp.Expr, what: str) -> None:
    if len(right.row_type) != 1:
        raise TableException(
            f"Unsupported SQL construct{at(node)}: {what} expects a one-column query; got {len(right.row_type)} columns"
        )


def remove_scalar_subqueries(
    rel: RelNode, scope: Scope, nodes: list[exp.Expr], convert: Converter
) -> tuple[RelNode, Scope]:
    """Each scalar subquery inside ``nodes`` joined to ``rel`` and replaced (in place) by a column of the join."""
    for node in nodes:
        for sub in list(node.find_all(exp.Subquery)):
            if isinstance(sub.parent, exp.In | exp.Exists) or sub.find_ancestor(exp.Subquery) is not None:
                continue
            right = convert(sub.this)
            _one_column(right, sub, "a scalar subquery")
            name = f"{SCALAR}{len(scope.fields)}"
            value_type = right.row_type.types[0].nullable()
            row_type = RowType((*rel.row_type.names, name), (*rel.row_type.types, value_type))
            rel = Join(row_type, rel, right, "LEFT", (), (), None)
            scope = scope.join(Scope([ScopeField(SCALAR, name, value_type)]))
            sub.replace(exp.column(name, SCALAR, quoted=True))
    return rel, scope


def not_in(rel: RelNode, scope: Scope, node: exp.In, convert: Converter) -> RelNode:
    """``x NOT IN (SELECT y …)`` as Flink's null-aware LEFT ANTI join."""
    query = node.args["query"]
    right = convert(query.this if isinstance(query, exp.Subquery) else query)
    _one_column(right, node, "NOT IN (subquery)")
    value = exp.column(f"{_NOT_IN}0", _NOT_IN, quoted=True)
    condition = exp.or_(
        exp.EQ(this=node.this.copy(), expression=value.copy()),
        exp.Is(this=node.this.copy(), expression=exp.Null()),
        exp.Is(this=value.copy(), expression=exp.Null()),
    )
    joined = scope.join(Scope([ScopeField(_NOT_IN, f"{_NOT_IN}0", right.row_type.types[0])]))
    rex = ExpressionConverter(joined).convert(condition)
    return Join(rel.row_type, rel, right, "ANTI", (), (), rex)


def exists_on_true(rel: RelNode, query: exp.Expr, convert: Converter, kind: str) -> RelNode:
    """An uncorrelated ``EXISTS`` (SEMI) / ``NOT EXISTS`` (ANTI): every row while the query has (no) rows."""
    return Join(rel.row_type, rel, convert(query), kind, (), (), None)
