"""Flink's ``SqlToRelConverter`` (after Calcite's validation): a SELECT statement → a logical plan.

FROM (tables, views, subqueries, VALUES, CTEs, joins), WHERE, GROUP BY with aggregates and HAVING, SELECT DISTINCT,
UNION ALL and ROW_NUMBER Top-N/deduplication become the nodes of :mod:`strom.table.planner.logical`; every name
is resolved and every expression typed here, so errors carry the query position.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sqlglot import exp

from strom.table.catalog.catalog_manager import CatalogManager, CatalogTable, CatalogView
from strom.table.errors import TableException, ValidationException
from strom.table.planner.aggregate_converter import convert_aggregate, distinct, is_aggregate_call
from strom.table.planner.correlate_converter import convert_lateral, convert_unnest
from strom.table.planner.expression_converter import ExpressionConverter
from strom.table.planner.filter_join_rule import push_filter_into_join
from strom.table.planner.group_window_converter import convert_group_window, has_group_window
from strom.table.planner.join_converter import convert_join
from strom.table.planner.logical import Calc, RelNode, RowType, Union, Values
from strom.table.planner.match_converter import convert_match_recognize
from strom.table.planner.project import output_names, project, rename
from strom.table.planner.rank_converter import (
    convert_rank,
    drop_unused_rank,
    fetch,
    has_window_function,
    push_rank_limit,
)
from strom.table.planner.rex import RexLiteral, RexNode, input_refs
from strom.table.planner.scalar_subquery_converter import SCALAR, remove_scalar_subqueries
from strom.table.planner.scope import Scope
from strom.table.planner.set_op_converter import convert_set_op
from strom.table.planner.sort_converter import convert_order_by, hide_order_items, without_sort
from strom.table.planner.subquery_converter import remove_subqueries
from strom.table.planner.temporal_join_converter import convert_temporal_join, is_temporal_join
from strom.table.planner.type_rules import common_type
from strom.table.planner.window_converter import convert_window_tvf, is_window_tvf, refuse_session_in_batch
from strom.table.sql.flink_dialect import FlinkDialect
from strom.table.sql.parser import at

__all__ = ["SqlToRel"]

ScanFactory = Callable[[str, CatalogTable], RelNode]


class SqlToRel:
    """Converts queries against one catalog; ``scan_factory`` plans a catalog table's scan."""

    def __init__(self, catalog: CatalogManager, scan_factory: ScanFactory, *, streaming: bool = True) -> None:
        self.catalog = catalog
        self.scan_factory = scan_factory
        self.streaming = streaming

    def convert_query(self, node: exp.Expr, ctes: Mapping[str, RelNode] | None = None) -> RelNode:
        ctes = dict(ctes or {})
        with_ = node.args.get("with_") or node.args.get("with")
        if with_ is not None:
            for cte in with_.expressions:
                ctes[cte.alias] = self.convert_query(cte.this, ctes)
        if isinstance(node, exp.SetOperation):
            return limit_of(self.union(node, ctes), node, self.streaming)
        if isinstance(node, exp.Subquery | exp.Paren):
            return self.convert_query(node.this, ctes)
        if isinstance(node, exp.Values):
            return self.values(node)
        if isinstance(node, exp.Select):
            if not self.streaming:
                refuse_session_in_batch(node)
            return self.select(node, ctes)
        raise TableException(f"Unsupported SQL construct{at(node)}: {type(node).__name__}; expected a query")

    # -- FROM ------------------------------------------------------------------------------------------
    def from_item(self, node: exp.Expr, ctes: Mapping[str, RelNode]) -> tuple[RelNode, Scope]:
        alias = node.alias_or_name if isinstance(node, exp.Table) else node.alias
        if is_window_tvf(node):
            assert isinstance(node, exp.Table)
            window = convert_window_tvf(node, lambda table: self.table(table, ctes))
            return window, Scope.of(window.row_type, node.alias or None)
        if isinstance(node, exp.Table) and not isinstance(node.this, exp.Func):
            rel = self.table(node, ctes)
            return rel, Scope.of(rel.row_type, alias or node.name)
        if isinstance(node, exp.Subquery):
            rel = self.convert_query(without_sort(node.this), ctes)
        elif isinstance(node, exp.Values):
            rel = self.values(node)
        else:
            raise TableException(
                f"Unsupported SQL construct{at(node)}: {node.sql(dialect=FlinkDialect)[:60]} in FROM; "
                "expected a table, view, subquery or VALUES (window TVFs come with the windowing planner)"
            )
        columns = _alias_columns(node)
        if columns:
            if len(columns) != len(rel.row_type):
                raise ValidationException(
                    f"SQL validation failed{at(node)}: expected {len(rel.row_type)} column aliases; got {len(columns)}"
                )
            rel = rename(rel, columns)
        return rel, Scope.of(rel.row_type, alias or None)

    def table(self, node: exp.Table, ctes: Mapping[str, RelNode]) -> RelNode:
        parts = [p.name for p in node.parts]
        if len(parts) == 1 and parts[0] in ctes:
            return ctes[parts[0]]
        ident = self.catalog.qualify(parts)
        found = self.catalog.get_table(ident)
        if found is None:
            raise ValidationException(
                f"SQL validation failed{at(node)}: Object '{node.name}' not found; "
                f"expected one of: {', '.join(self.catalog.list_tables()) or '(no tables)'}"
            )
        if isinstance(found, CatalogView):
            plan: RelNode = found.plan
            return plan
        return self.scan_factory(str(ident), found)

    def from_clause(self, select: exp.Select, ctes: Mapping[str, RelNode]) -> tuple[RelNode, Scope]:
        from_ = select.args.get("from_") or select.args.get("from")
        if from_ is None:  # SELECT 1: one empty row
            return Values(RowType((), ()), ((),)), Scope([])
        rel, scope = self.from_item(from_.this, ctes)
        if select.args.get("match") is not None:
            rel, scope = convert_match_recognize(rel, scope, select.args["match"])
        for join in select.args.get("joins") or []:
            if isinstance(join.this, exp.Lateral | exp.Unnest):
                convert = convert_lateral if isinstance(join.this, exp.Lateral) else convert_unnest
                rel, scope = convert(rel, scope, join)
                continue
            if is_temporal_join(join):
                rel, scope = convert_temporal_join(self, rel, scope, join, ctes)
                continue
            right, right_scope = self.from_item(join.this, ctes)
            rel, scope = convert_join(rel, scope, right, right_scope, join)
        return rel, scope

    # -- SELECT ----------------------------------------------------------------------------------------
    def select(self, select: exp.Select, ctes: Mapping[str, RelNode]) -> RelNode:
        rel, scope = self.from_clause(select, ctes)
        where = select.args.get("where")
        rel, scope = remove_scalar_subqueries(
            rel, scope, [*select.expressions, *([where.this] if where is not None else [])], self._subquery(ctes)
        )
        if where is not None:
            rel, remaining = remove_subqueries(rel, scope, where.this, lambda q: self.convert_query(q, ctes))
            where = exp.Where(this=remaining) if remaining is not None else None
        if where is not None:
            condition: RexNode | None = ExpressionConverter(scope).convert(where.this)
            assert condition is not None
            if condition.type.type_root.name not in ("BOOLEAN", "NULL"):
                raise ValidationException(
                    f"SQL validation failed{at(where.this)}: WHERE expects a BOOLEAN condition; got {condition.type}"
                )
            rel, condition = push_filter_into_join(rel, condition)  # comma joins: WHERE equalities as keys
            if condition is not None:
                rel, condition = push_rank_limit(rel, condition)
            if condition is not None:
                rel = Calc(rel.row_type, rel, None, condition)
        items = self.expand_stars(select.expressions, scope)
        having = select.args.get("having")
        if has_group_window(select, items, having):
            rel, scope, select, items, having = convert_group_window(rel, scope, select, items, having)
        aggregated = select.args.get("group") is not None or any(
            _has_aggregate(i) for i in [*items, *([having.this] if having is not None else [])]
        )
        if aggregated:
            rel = convert_aggregate(rel, scope, select, items, having)
        elif has_window_function(items):
            rel = convert_rank(rel, scope, items, streaming=self.streaming)
        else:
            if having is not None:
                raise ValidationException(f"SQL validation failed{at(having)}: HAVING without GROUP BY or aggregates")
            converter = ExpressionConverter(scope)
            hidden = hide_order_items(select, output_names(items))
            projection = tuple(converter.convert(i) for i in [*items, *hidden])
            names = (*output_names(items), *(f"$order{i}" for i in range(len(hidden))))
            rel = drop_unused_rank(project(rel, projection, names))
        if select.args.get("distinct") is not None:
            rel = distinct(rel)
        return limit_of(rel, select, self.streaming)

    def _subquery(self, ctes: Mapping[str, RelNode]) -> Callable[[exp.Expr], RelNode]:
        return lambda query: self.convert_query(query, ctes)

    def expand_stars(self, items: list[exp.Expr], scope: Scope) -> list[exp.Expr]:
        expanded: list[exp.Expr] = []
        for item in items:
            star_table = item.table if isinstance(item, exp.Column) and isinstance(item.this, exp.Star) else None
            if isinstance(item, exp.Star) or star_table:
                for i in scope.indices(star_table or None):
                    field = scope.fields[i]
                    if field.qualifier == SCALAR:
                        continue
                    column = exp.column(field.name, field.qualifier, quoted=True)
                    expanded.append(column)
            else:
                expanded.append(item)
        return expanded

    # -- set operations and VALUES ---------------------------------------------------------------------
    def union(self, node: exp.SetOperation, ctes: Mapping[str, RelNode]) -> RelNode:
        left = self.convert_query(node.this, ctes)
        right = self.convert_query(node.expression, ctes)
        if len(left.row_type) != len(right.row_type):
            raise ValidationException(
                f"SQL validation failed{at(node)}: UNION ALL expects inputs with the same number of columns; "
                f"got {len(left.row_type)} and {len(right.row_type)}"
            )
        types = tuple(common_type([a, b], node) for a, b in zip(left.row_type.types, right.row_type.types, strict=True))
        if node.args.get("distinct") is not False or type(node) is not exp.Union:
            return convert_set_op(node, left, right, types)
        members = []
        for member in (left, right):
            for sub in member.members if isinstance(member, Union) else (member,):
                members.append(sub)
        return Union(RowType(left.row_type.names, types), tuple(members))

    def values(self, node: exp.Values) -> RelNode:
        converter = ExpressionConverter(Scope([]))
        rows: list[tuple[RexNode, ...]] = []
        for tup in node.expressions:
            row = tuple(converter.convert(e) for e in (tup.expressions if isinstance(tup, exp.Tuple) else [tup]))
            rows.append(tuple(_constant(value, source) for value, source in zip(row, tup.expressions, strict=False)))
        width = len(rows[0])
        types = tuple(common_type([r[i].type for r in rows], node) for i in range(width))
        names = tuple(_alias_columns(node) or [f"EXPR${i}" for i in range(width)])
        literal_rows = tuple(tuple(_literal_value(v) for v in r) for r in rows)
        return Values(RowType(names, types), literal_rows)


def limit_of(rel: RelNode, select: exp.Query, streaming: bool = True) -> RelNode:
    """``ORDER BY`` (:mod:`~strom.table.planner.sort_converter`) and ``LIMIT n [OFFSET m]``; without ORDER BY (Flink's
    streaming FETCH) the first rows in arrival order, as a Rank over one partition that keeps rows ``m + 1 .. m + n``
    and emits them once."""
    limit, offset = select.args.get("limit"), select.args.get("offset")
    order = select.args.get("order")
    count_node = limit.args.get("count" if isinstance(limit, exp.Fetch) else "expression") if limit else None
    count = _int_literal(count_node, select)  # LIMIT n or FETCH FIRST/NEXT n ROWS ONLY
    skip = _int_literal(offset.expression if offset is not None else None, select) or 0
    if order is not None:
        return convert_order_by(rel, order, skip, count, streaming=streaming)
    if limit is None and offset is None:
        return rel
    if count is None:
        raise TableException(f"Unsupported SQL construct{at(offset)}: OFFSET without LIMIT in a streaming query")
    return fetch(rel, skip, count)


def _int_literal(node: exp.Expr | None, where: exp.Expr) -> int | None:
    if node is None:
        return None
    if not (isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit()):
        raise TableException(f"Unsupported SQL construct{at(where)}: LIMIT/OFFSET expect integer literals")
    return int(node.this)


def _alias_columns(node: exp.Expr) -> list[str]:
    alias = node.args.get("alias")
    if isinstance(alias, exp.TableAlias):
        return [c.name for c in alias.columns]
    return []


def _has_aggregate(node: exp.Expr) -> bool:
    found = node.find_all(exp.AggFunc, exp.Anonymous)
    return any(not isinstance(a.parent, exp.Window) and is_aggregate_call(a) for a in found)


def _constant(node: RexNode, source: exp.Expr) -> RexNode:
    """A VALUES cell folded to a literal (``CAST(NULL AS INT)``, ``-1``, ``'a' || 'b'``)."""
    if isinstance(node, RexLiteral):
        return node
    if input_refs([node]):
        raise TableException(f"Unsupported SQL construct{at(source)}: VALUES expects constant expressions")
    from strom.api.row import Row
    from strom.table.planner.codegen import compile_projection

    return RexLiteral(compile_projection([node])(Row())[0], node.type)


def _literal_value(node: RexNode) -> Any:
    assert isinstance(node, RexLiteral)
    return node.value
