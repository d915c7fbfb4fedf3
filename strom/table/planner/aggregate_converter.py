"""GROUP BY, aggregate calls, HAVING and SELECT DISTINCT → ``Calc`` → ``Aggregate`` → ``Calc`` (Flink's
``AggregateUtil`` shape: the input is projected to keys and arguments, aggregated, then the SELECT list and HAVING
are evaluated over keys and aggregate results)."""

from __future__ import annotations

from sqlglot import exp

from strom.table.errors import TableException, ValidationException
from strom.table.functions.aggfunctions import UserAggregateName
from strom.table.functions.aggregate_functions import AGGREGATE_FUNCTIONS, resolve_aggregate
from strom.table.functions.builtin_agg_functions import BUILTIN_AGGREGATES
from strom.table.planner.changelog import is_insert_only
from strom.table.planner.expression_converter import ExpressionConverter
from strom.table.planner.grouping_sets import (
    expand_aggregate,
    expand_window_aggregate,
    grouping_call,
    grouping_sets,
    is_grouping_call,
)
from strom.table.planner.logical import Aggregate, AggregateCall, Calc, RelNode, RowType
from strom.table.planner.project import output_names, project
from strom.table.planner.rex import RexInputRef, RexNode, input_refs
from strom.table.planner.scope import Scope
from strom.table.planner.window_converter import WINDOW_COLUMNS, WindowAggregate, WindowTableFunction
from strom.table.sql.flink_dialect import FlinkDialect
from strom.table.sql.parser import at

__all__ = ["aggregate_name", "convert_aggregate", "distinct", "is_aggregate_call"]


def is_aggregate_call(node: exp.Expr) -> bool:
    """A built-in aggregate call or a call of a ``@udaf`` (parsed as an anonymous function)."""
    from strom.table.udf import aggregate_function  # the Table API imports the planner

    if isinstance(node, exp.Anonymous):
        return aggregate_function(str(node.this)) is not None or str(node.this).upper() in BUILTIN_AGGREGATES
    return isinstance(node, exp.AggFunc)


def aggregate_name(node: exp.Expr) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.this).upper()
    if isinstance(node, exp.JSONObjectAgg):
        return "JSON_OBJECTAGG"
    sql_name = getattr(node, "sql_name", None)
    return str(sql_name() if callable(sql_name) else type(node).__name__).upper()


def _aggregates(items: list[exp.Expr]) -> list[exp.Expr]:
    found: dict[str, exp.Expr] = {}
    for item in items:
        for agg in item.find_all(exp.AggFunc, exp.Anonymous):
            if isinstance(agg.parent, exp.Window) or not is_aggregate_call(agg) or is_grouping_call(agg):
                continue
            holder = agg.parent if isinstance(agg.parent, exp.Filter) else agg
            found.setdefault(holder.sql(dialect=FlinkDialect), holder)
    return list(found.values())


def convert_aggregate(
    rel: RelNode, scope: Scope, select: exp.Select, items: list[exp.Expr], having: exp.Having | None
) -> RelNode:
    converter = ExpressionConverter(scope)
    group = select.args.get("group")
    grouping_nodes = _grouping_calls([*items, *([having.this] if having is not None else [])])
    found = grouping_sets(group, grouping_nodes)  # GROUPING SETS / ROLLUP / CUBE: Expand → Aggregate
    key_nodes = list(found.keys if found is not None else group.expressions if group is not None else [])
    sets = found if found is not None and (len(found.sets) > 1 or found.repeats or grouping_nodes) else None
    pre: list[RexNode] = []
    pre_names: list[str] = []
    pre_text: dict[str, int] = {}

    def input_of(node: exp.Expr) -> int:
        text = node.sql(dialect=FlinkDialect)
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
    item_names = dict(zip((i.unalias().sql(dialect=FlinkDialect) for i in items), output_names(items), strict=True))
    call_names = tuple(item_names.get(node.sql(dialect=FlinkDialect), f"EXPR${j}") for j, node in enumerate(agg_nodes))
    key_names = tuple(_key_name(k, i) for i, k in enumerate(key_nodes))
    substitutions: dict[str, RexNode] = {}
    windowed = window_aggregate(rel, pre, keys, calls, key_names, call_names)
    if windowed is not None and sets is not None:  # Expand → WindowAggregate on (keys, $e)
        window_node, window_positions, sets = expand_window_aggregate(*windowed, sets)
        windowed = (window_node, window_positions)
    if windowed is not None:
        agg_rel: RelNode = windowed[0]
        for node, position in zip(key_nodes, windowed[1], strict=True):
            substitutions[node.sql(dialect=FlinkDialect)] = RexInputRef(position, agg_rel.row_type.types[position])
        first_call = len(keys) - len(windowed[0].window_properties)
        if sets is not None:
            expand_id = RexInputRef(len(sets.keys), agg_rel.row_type.types[len(sets.keys)], "$e")
            for node in grouping_nodes:
                substitutions[node.sql(dialect=FlinkDialect)] = grouping_call(node, sets, expand_id)
            first_call += 1
    elif sets is not None:
        pre_rel = project(rel, tuple(pre), tuple(pre_names))
        agg_rel = expand_aggregate(pre_rel, sets, keys, tuple(calls), (key_names, call_names))
        for i, node in enumerate(key_nodes):
            substitutions[node.sql(dialect=FlinkDialect)] = RexInputRef(i, agg_rel.row_type.types[i])
        expand_id = RexInputRef(len(keys), agg_rel.row_type.types[len(keys)], "$e")
        for node in grouping_nodes:
            substitutions[node.sql(dialect=FlinkDialect)] = grouping_call(node, sets, expand_id)
        first_call = len(keys) + 1
    else:
        pre_rel = project(rel, tuple(pre), tuple(pre_names))
        key_types = tuple(pre[k].type for k in keys)
        names = key_names + call_names
        agg_rel = Aggregate(
            RowType(names, key_types + tuple(c.result_type for c in calls)), pre_rel, keys, tuple(calls)
        )
        for i, node in enumerate(key_nodes):
            substitutions[node.sql(dialect=FlinkDialect)] = RexInputRef(i, key_types[i], names[i])
        first_call = len(keys)
    for j, node in enumerate(agg_nodes):
        substitutions[node.sql(dialect=FlinkDialect)] = RexInputRef(first_call + j, calls[j].result_type)
    post = ExpressionConverter(Scope.of(agg_rel.row_type), substitutions)
    projection = tuple(post.convert(i) for i in items)
    condition = post.convert(having.this) if having is not None else None
    out = project(agg_rel, projection, output_names(items))
    if condition is None:
        return out
    if isinstance(out, Calc) and out.input is agg_rel:
        return Calc(out.row_type, agg_rel, out.projection, condition)
    identity = tuple(RexInputRef(i, t) for i, t in enumerate(agg_rel.row_type.types))
    return Calc(out.row_type, agg_rel, identity, condition)


def window_aggregate(
    rel: RelNode,
    pre: list[RexNode],
    keys: tuple[int, ...],
    calls: list[AggregateCall],
    key_names: tuple[str, ...],
    call_names: tuple[str, ...],
) -> tuple[WindowAggregate, list[int]] | None:
    """A GROUP BY with window_start and window_end over a window TVF → a WindowAggregate (and each group key's
    position in its output), else None."""
    condition = None
    base = rel
    if isinstance(base, Calc) and base.projection is None:
        condition, base = base.condition, base.input
    if not isinstance(base, WindowTableFunction):
        return None
    width = len(base.input.row_type)
    window_of = {
        k: WINDOW_COLUMNS[pre[k].index - width]  # type: ignore[union-attr]
        for k in keys
        if isinstance(pre[k], RexInputRef) and pre[k].index >= width  # type: ignore[union-attr]
    }
    if not {"window_start", "window_end"} <= set(window_of.values()):
        return None
    plain_keys = [k for k in keys if k not in window_of]
    used = input_refs([pre[k] for k in plain_keys]) | input_refs([pre[a] for c in calls for a in c.args])
    if condition is not None:
        used |= input_refs([condition])
    if any(i >= width for i in used):
        raise TableException(
            "Unsupported: a window aggregation whose WHERE, keys or aggregate arguments read window_start, "
            "window_end or window_time; expected them only in GROUP BY"
        )
    arguments = sorted({a for c in calls for a in c.args} | {c.filter_arg for c in calls if c.filter_arg is not None})
    columns = [*plain_keys, *[a for a in arguments if a not in plain_keys]]
    position = {old: new for new, old in enumerate(columns)}
    projection = tuple(pre[c] for c in columns)
    source: RelNode = base.input
    if condition is not None:
        source = Calc(source.row_type, source, None, condition)
    projected = project(source, projection, tuple(f"$f{i}" for i in range(len(projection))))
    remapped = tuple(
        AggregateCall(
            c.name,
            tuple(position[a] for a in c.args),
            c.distinct,
            c.result_type,
            position[c.filter_arg] if c.filter_arg is not None else None,
        )
        for c in calls
    )
    properties = tuple(window_of[k] for k in keys if k in window_of)
    names = (
        *(key_names[keys.index(k)] for k in plain_keys),
        *call_names,
        *(key_names[keys.index(k)] for k in keys if k in window_of),
    )
    window_types = {"window_start": base.row_type.types[width], "window_end": base.row_type.types[width + 1]}
    window_types["window_time"] = base.row_type.types[width + 2]
    types = (
        *(pre[k].type for k in plain_keys),
        *(c.result_type for c in calls),
        *(window_types[p] for p in properties),
    )
    node = WindowAggregate(
        RowType(tuple(names), tuple(types)), projected, base, tuple(range(len(plain_keys))), remapped, properties
    )
    offset = len(plain_keys) + len(calls)
    positions = [plain_keys.index(k) if k not in window_of else offset + properties.index(window_of[k]) for k in keys]
    return node, positions


def _grouping_calls(items: list[exp.Expr]) -> list[exp.Expr]:
    found: dict[str, exp.Expr] = {}
    for item in items:
        for node in item.find_all(exp.Grouping, exp.GroupingId):
            found.setdefault(node.sql(dialect=FlinkDialect), node)
    return list(found.values())


def _key_name(node: exp.Expr, i: int) -> str:
    return node.name if isinstance(node, exp.Column) else f"$f{i}"


def _aggregate_call(node: exp.Expr, input_of: object, pre: list[RexNode], retracting: bool) -> AggregateCall:
    filter_arg = None
    if isinstance(node, exp.Filter):
        filter_arg = input_of(node.expression.this)  # type: ignore[operator]
        node = node.this
    from strom.table.udf import aggregate_function

    name = aggregate_name(node)
    user = aggregate_function(name) if isinstance(node, exp.Anonymous) else None
    if user is not None:
        args = tuple(input_of(a) for a in node.expressions)  # type: ignore[operator]
        call_name = UserAggregateName(name, user.bound_to([pre[a].type for a in args]), user.result_type)
        return AggregateCall(call_name, args, False, user.result_type, filter_arg)
    if name not in AGGREGATE_FUNCTIONS and name != "LAG":  # Flink runs LAG without OVER as a group aggregate
        raise ValidationException(
            f"SQL validation failed{at(node)}: expected an aggregate function ({', '.join(AGGREGATE_FUNCTIONS)}); "
            f"got {name}"
        )
    arg = node.this if not isinstance(node, exp.Anonymous) else (node.expressions[0] if node.expressions else None)
    distinct = isinstance(arg, exp.Distinct)
    arg_nodes = list(arg.expressions) if isinstance(arg, exp.Distinct) else ([] if arg is None else [arg])
    if isinstance(node, exp.Anonymous) and len(node.expressions) > 1:  # LISTAGG(x, sep)
        arg_nodes += list(node.expressions[1:])
    if isinstance(node, exp.JSONObjectAgg):  # JSON_OBJECTAGG(KEY k VALUE v)
        arg_nodes = [node.expressions[0].this, node.expressions[0].expression]
    if isinstance(node, exp.Lag):  # LAG(x [, n [, default]])
        arg_nodes += [node.args[k] for k in ("offset", "default") if node.args.get(k)]
    if len(arg_nodes) == 1 and isinstance(arg_nodes[0], exp.Star):
        arg_nodes = []
    args = tuple(input_of(a) for a in arg_nodes)  # type: ignore[operator]
    try:
        resolved = resolve_aggregate(name, [pre[a].type for a in args], retracting=retracting)
    except ValidationException as err:
        raise ValidationException(f"SQL validation failed{at(node)}: {err}") from None
    return AggregateCall(name, args, distinct, resolved.result_type, filter_arg)


def _is_updating(rel: RelNode) -> bool:
    return not is_insert_only(rel)


def distinct(rel: RelNode) -> RelNode:
    """SELECT DISTINCT: a grouping on every column, no aggregate calls."""
    keys = tuple(range(len(rel.row_type)))
    return Aggregate(rel.row_type, rel, keys, ())
