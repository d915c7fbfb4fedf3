"""GROUP BY, aggregate calls, HAVING and SELECT DISTINCT → ``Calc`` → ``Aggregate`` → ``Calc`` (Flink's
``AggregateUtil`` shape: the input is projected to keys and arguments, aggregated, then the SELECT list and HAVING
are evaluated over keys and aggregate results)."""

from __future__ import annotations

from sqlglot import exp

from strom.table.errors import ValidationException
from strom.table.functions.aggregate_functions import AGGREGATE_FUNCTIONS, resolve_aggregate
from strom.table.planner.expression_converter import ExpressionConverter
from strom.table.planner.logical import Aggregate, AggregateCall, Calc, RelNode, RowType
from strom.table.planner.rex import RexInputRef, RexNode
from strom.table.planner.scope import Scope
from strom.table.sql.parser import at

__all__ = ["aggregate_name", "convert_aggregate", "distinct"]


def aggregate_name(node: exp.Expr) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.this).upper()
    sql_name = getattr(node, "sql_name", None)
    return str(sql_name() if callable(sql_name) else type(node).__name__).upper()


def _aggregates(items: list[exp.Expr]) -> list[exp.Expr]:
    found: dict[str, exp.Expr] = {}
    for item in items:
        for agg in item.find_all(exp.AggFunc):
            if isinstance(agg.parent, exp.Window):
                continue
            holder = agg.parent if isinstance(agg.parent, exp.Filter) else agg
            found.setdefault(holder.sql(), holder)
    return list(found.values())


def convert_aggregate(
    rel: RelNode, scope: Scope, select: exp.Select, items: list[exp.Expr], having: exp.Having | None
) -> RelNode:
    from strom.table.planner.sql_to_rel import _project, output_names

    converter = ExpressionConverter(scope)
    group = select.args.get("group")
    key_nodes = list(group.expressions) if group is not None else []
    pre: list[RexNode] = []
    pre_names: list[str] = []
    pre_text: dict[str, int] = {}

    def input_of(node: exp.Expr) -> int:
        text = node.sql()
        if text not in pre_text:
            pre_text[text] = len(pre)
            pre.append(converter.convert(node))
            pre_names.append(node.name if isinstance(node, exp.Column) else f"$f{len(pre_names)}")
        return pre_text[text]

    keys = tuple(input_of(k) for k in key_nodes)
    retracting = _is_updating(rel)
    calls: list[AggregateCall] = []
    agg_nodes = _aggregates([*items, *([having.this] if having is not None else [])])
    for node in agg_nodes:
        calls.append(_aggregate_call(node, input_of, pre, retracting))
    pre_rel = _project(rel, tuple(pre), tuple(pre_names))
    key_types = tuple(pre[k].type for k in keys)
    item_names = dict(zip((i.unalias().sql() for i in items), output_names(items), strict=True))
    call_names = tuple(item_names.get(node.sql(), f"EXPR${j}") for j, node in enumerate(agg_nodes))
    names = tuple(_key_name(k, i) for i, k in enumerate(key_nodes)) + call_names
    agg_rel = Aggregate(RowType(names, key_types + tuple(c.result_type for c in calls)), pre_rel, keys, tuple(calls))
    substitutions: dict[str, RexNode] = {}
    for i, node in enumerate(key_nodes):
        substitutions[node.sql()] = RexInputRef(i, key_types[i], names[i])
    for j, node in enumerate(agg_nodes):
        substitutions[node.sql()] = RexInputRef(len(keys) + j, calls[j].result_type)
    post = ExpressionConverter(Scope.of(agg_rel.row_type), substitutions)
    projection = tuple(post.convert(i) for i in items)
    condition = post.convert(having.this) if having is not None else None
    out = _project(agg_rel, projection, output_names(items))
    if condition is None:
        return out
    if isinstance(out, Calc) and out.input is agg_rel:
        return Calc(out.row_type, agg_rel, out.projection, condition)
    identity = tuple(RexInputRef(i, t) for i, t in enumerate(agg_rel.row_type.types))
    return Calc(out.row_type, agg_rel, identity, condition)


def _key_name(node: exp.Expr, i: int) -> str:
    return node.name if isinstance(node, exp.Column) else f"$f{i}"


def _aggregate_call(node: exp.Expr, input_of: object, pre: list[RexNode], retracting: bool) -> AggregateCall:
    filter_arg = None
    if isinstance(node, exp.Filter):
        filter_arg = input_of(node.expression.this)  # type: ignore[operator]
        node = node.this
    name = aggregate_name(node)
    if name not in AGGREGATE_FUNCTIONS:
        raise ValidationException(
            f"SQL validation failed{at(node)}: expected an aggregate function ({', '.join(AGGREGATE_FUNCTIONS)}); "
            f"got {name}"
        )
    arg = node.this if not isinstance(node, exp.Anonymous) else (node.expressions[0] if node.expressions else None)
    distinct = isinstance(arg, exp.Distinct)
    arg_nodes = list(arg.expressions) if isinstance(arg, exp.Distinct) else ([] if arg is None else [arg])
    if len(arg_nodes) == 1 and isinstance(arg_nodes[0], exp.Star):
        arg_nodes = []
    args = tuple(input_of(a) for a in arg_nodes)  # type: ignore[operator]
    try:
        resolved = resolve_aggregate(name, [pre[a].type for a in args], retracting=retracting)
    except ValidationException as err:
        raise ValidationException(f"SQL validation failed{at(node)}: {err}") from None
    return AggregateCall(name, args, distinct, resolved.result_type, filter_arg)


def _is_updating(rel: RelNode) -> bool:
    from strom.table.planner.changelog import is_insert_only

    return not is_insert_only(rel)


def distinct(rel: RelNode) -> RelNode:
    """SELECT DISTINCT: a grouping on every column, no aggregate calls."""
    keys = tuple(range(len(rel.row_type)))
    return Aggregate(rel.row_type, rel, keys, ())
