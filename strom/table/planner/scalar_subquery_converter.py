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
from dataclasses import dataclass

from sqlglot import exp

from strom.table.errors import TableException
from strom.table.planner.expression_converter import ExpressionConverter
from strom.table.planner.logical import Join, RelNode, RowType
from strom.table.planner.rex import RexInputRef
from strom.table.planner.scope import Scope, ScopeField
from strom.table.planner.single_value import single_value
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
            decorrelated = _decorrelate(sub)
            right = convert(decorrelated[0] if decorrelated else sub.this)
            outer = decorrelated[1] if decorrelated else []
            if not outer:
                _one_column(right, sub, "a scalar subquery")
                right = single_value(right, at(sub))
            converter = ExpressionConverter(scope)
            left_keys = tuple(_column_index(converter, column) for column in outer)
            name = f"{SCALAR}{len(scope.fields)}"
            names = (*(f"{name}_key{i}" for i in range(len(outer))), name)
            types = tuple(t.nullable() for t in right.row_type.types)
            row_type = RowType((*rel.row_type.names, *names), (*rel.row_type.types, *types))
            rel = Join(row_type, rel, right, "LEFT", left_keys, tuple(range(len(outer))), None)
            scope = scope.join(Scope([ScopeField(SCALAR, n, t) for n, t in zip(names, types, strict=True)]))
            value: exp.Expr = exp.column(name, SCALAR, quoted=True)
            if decorrelated and decorrelated[2]:  # COUNT of no rows is 0, not NULL (Calcite's count-bug fix)
                value = exp.Coalesce(this=value, expressions=[exp.Literal.number(0)])
            sub.replace(value)
    return rel, scope


def _column_index(converter: ExpressionConverter, column: exp.Expr) -> int:
    ref = converter.convert(column)
    if not isinstance(ref, RexInputRef):
        raise TableException(f"Unsupported SQL construct{at(column)}: a correlated expression; expected a column")
    return ref.index


def _decorrelate(sub: exp.Subquery) -> tuple[exp.Select, list[exp.Expr], bool] | None:
    """A correlated ``(SELECT agg(…) FROM … WHERE inner.c = outer.c AND …)`` as Flink decorrelates it: the inner
    query grouped by its correlated columns (``SELECT c…, agg(…) … GROUP BY c…``), the outer columns to join it on,
    and whether the aggregate is a COUNT; None when the subquery is not correlated."""
    select = sub.this
    if not isinstance(select, exp.Select):
        return None
    correlation = split_correlation(select)
    if not correlation.outer_columns:
        return None
    items = select.expressions
    item = items[0].this if len(items) == 1 and isinstance(items[0], exp.Alias) else (items[0] if items else None)
    if len(items) != 1 or not isinstance(item, exp.AggFunc) or select.args.get("group") is not None:
        raise TableException(
            f"Unsupported SQL construct{at(sub)}: a correlated scalar subquery; expected "
            "(SELECT agg(…) FROM … WHERE inner.col = outer.col [AND …]) without GROUP BY"
        )
    inner = correlation.inner_query(select)
    keys = [c.copy() for c in correlation.inner_columns]
    inner.set("expressions", [*keys, item.copy()])
    inner.set("group", exp.Group(expressions=[k.copy() for k in keys]))
    return inner, correlation.outer_columns, isinstance(item, exp.Count)


@dataclass(frozen=True)
class Correlation:
    """A subquery's WHERE split into its correlations ``inner.c = outer.c`` and the conjuncts left (``kept``)."""

    inner_columns: list[exp.Expr]
    outer_columns: list[exp.Expr]
    kept: list[exp.Expr]

    def inner_query(self, select: exp.Select) -> exp.Select:
        """A copy of ``select`` whose WHERE keeps only the uncorrelated conjuncts."""
        inner = select.copy()
        remaining: exp.Expr | None = None
        for c in self.kept:
            remaining = c.copy() if remaining is None else exp.And(this=remaining, expression=c.copy())
        inner.set("where", exp.Where(this=remaining) if remaining is not None else None)
        return inner


def split_correlation(select: exp.Select) -> Correlation:
    """The correlations of a subquery's WHERE (Calcite's decorrelation of ``inner.c = outer.c`` conjuncts)."""
    inner_names = {t.alias_or_name for t in select.find_all(exp.Table)}
    where = select.args.get("where")
    conjuncts = (list(where.this.flatten()) if isinstance(where.this, exp.And) else [where.this]) if where else []
    correlation = Correlation([], [], [])
    for conjunct in conjuncts:
        pair = _correlation(conjunct, inner_names)
        if pair is None:
            correlation.kept.append(conjunct)
        else:
            correlation.inner_columns.append(pair[0])
            correlation.outer_columns.append(pair[1])
    return correlation


def _correlation(conjunct: exp.Expr, inner_names: set[str]) -> tuple[exp.Expr, exp.Expr] | None:
    """``inner.col = outer.col`` (either order): (inner column, outer column), else None."""
    if not isinstance(conjunct, exp.EQ):
        return None
    a, b = conjunct.this, conjunct.expression
    if not (isinstance(a, exp.Column) and isinstance(b, exp.Column)):
        return None
    a_outer = bool(a.table) and a.table not in inner_names
    b_outer = bool(b.table) and b.table not in inner_names
    if a_outer == b_outer:
        return None
    return (b, a) if a_outer else (a, b)


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
