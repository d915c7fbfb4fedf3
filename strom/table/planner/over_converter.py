"""OVER aggregation in a SELECT list (Flink's ``FlinkLogicalOverAggregate``) onto sqlwindow's ``over_aggregate``.

``SELECT …, agg(x) OVER (PARTITION BY k ORDER BY rowtime ROWS BETWEEN n PRECEDING AND CURRENT ROW) …`` (or
``RANGE BETWEEN INTERVAL … PRECEDING``, or ``UNBOUNDED PRECEDING``) becomes ``Calc → OverAggregate → Calc``: the
input row with every aggregate value appended. All OVER calls of a query share one window, as Flink requires.
"""

from __future__ import annotations

import datetime

from sqlglot import exp

from strom.table.errors import TableException, ValidationException
from strom.table.functions.aggfunctions import UserAggregateName
from strom.table.functions.aggregate_functions import resolve_aggregate
from strom.table.planner.aggregate_converter import aggregate_name
from strom.table.planner.expression_converter import ExpressionConverter
from strom.table.planner.logical import AggregateCall, Calc, OverAggregate, RelNode, RowType
from strom.table.planner.project import output_names
from strom.table.planner.rex import RexInputRef, RexLiteral, RexNode
from strom.table.planner.scope import Scope
from strom.table.sql.flink_dialect import FlinkDialect
from strom.table.sql.parser import at

__all__ = ["check_offset_functions", "convert_over"]


def _frame(window: exp.Window) -> tuple[bool, int | None]:
    spec = window.args.get("spec")
    if spec is None:  # ORDER BY without a frame: RANGE UNBOUNDED PRECEDING
        return False, None
    rows = str(spec.args.get("kind", "")).upper() == "ROWS"
    end = str(spec.args.get("end", "")).upper()
    if end != "CURRENT ROW":
        raise TableException(f"Unsupported SQL construct{at(window)}: OVER frames end at CURRENT ROW in streaming")
    start = spec.args.get("start")
    if isinstance(start, str) and start.upper() == "UNBOUNDED":
        return rows, None
    if isinstance(start, exp.Expr) and str(start.name).upper() == "UNBOUNDED":
        return rows, None
    value = ExpressionConverter(Scope([])).convert(start) if isinstance(start, exp.Expr) else None
    if rows and isinstance(value, RexLiteral) and isinstance(value.value, int):
        return True, value.value
    if not rows and isinstance(value, RexLiteral) and isinstance(value.value, datetime.timedelta):
        return False, int(value.value / datetime.timedelta(milliseconds=1))
    raise ValidationException(
        f"SQL validation failed{at(window)}: expected n PRECEDING, INTERVAL … PRECEDING or UNBOUNDED"
    )


def _named_window(window: exp.Window) -> exp.Window:
    """``OVER w`` of ``WINDOW w AS (…)``: the window with the named definition's clauses."""
    name = window.args.get("alias")
    if name is None or any(window.args.get(k) for k in ("partition_by", "order", "spec")):
        return window
    select = window.find_ancestor(exp.Select)
    for named in (select.args.get("windows") or []) if select is not None else []:
        if named.this.name == name.name:
            for key in ("partition_by", "order", "spec"):
                window.set(key, named.args.get(key))
            return window
    raise ValidationException(f"SQL validation failed{at(window)}: Window '{name.name}' not found")


def check_offset_functions(found: list[exp.Window], streaming: bool) -> None:
    """Flink's refusals of ``LAG``/``LEAD``: ``LEAD`` in STREAMING (it would wait for later rows), either with
    an explicit ROWS/RANGE frame (Calcite's validator), and ``LEAD`` in BATCH, which strom does not run yet."""
    for window in found:
        if not isinstance(window.this, exp.Lag | exp.Lead):
            continue
        if window.args.get("spec") is not None:
            raise ValidationException(
                f"SQL validation failed{at(window)}: ROW/RANGE not allowed with RANK, DENSE_RANK or ROW_NUMBER "
                "functions"
            )
        if isinstance(window.this, exp.Lead):
            if streaming:
                raise TableException("LEAD Function is not supported in stream mode.")
            raise TableException(
                f"Unsupported SQL construct{at(window)}: LEAD in a BATCH OVER; expected LAG (LEAD is missing here)"
            )


def convert_over(rel: RelNode, scope: Scope, items: list[exp.Expr], windows: list[exp.Window | None]) -> RelNode:
    found = [_named_window(w) for w in windows if w is not None]
    first = found[0]
    specs = {
        (
            tuple(p.sql(dialect=FlinkDialect) for p in w.args.get("partition_by") or []),
            w.args["order"].sql(dialect=FlinkDialect) if w.args.get("order") else "",
            str(w.args.get("spec")),
        )
        for w in found
    }
    if len(specs) != 1:
        raise TableException(
            f"Unsupported SQL construct{at(first)}: OVER windows that differ in one query; Over Agg: Unsupported use "
            "of OVER windows. All aggregates must be computed on the same window. please re-check the over window "
            "statement."
        )
    converter = ExpressionConverter(scope)
    width = len(scope.fields)
    pre: list[RexNode] = [RexInputRef(i, f.type, f.name) for i, f in enumerate(scope.fields)]

    def column(node: exp.Expr) -> int:
        rex = converter.convert(node)
        for i, existing in enumerate(pre):
            if existing == rex:
                return i
        pre.append(rex)
        return len(pre) - 1

    order = first.args.get("order")
    if order is None or len(order.expressions) != 1 or order.expressions[0].args.get("desc"):
        raise TableException(f"Unsupported SQL construct{at(first)}: OVER expects ORDER BY one time attribute ASC")
    rowtime_index = column(order.expressions[0].this)
    if "ROWTIME" not in str(pre[rowtime_index].type):
        raise TableException(
            f"Unsupported SQL construct{at(first)}: OVER windows are ordered by an event-time attribute "
            f"(a column with a WATERMARK); got {pre[rowtime_index].type}"
        )
    partition = tuple(column(p) for p in first.args.get("partition_by") or [])
    rows, preceding = _frame(first)
    from strom.table.udf import aggregate_function  # the Table API imports the planner

    calls: list[AggregateCall] = []
    for w in found:
        function = w.this
        name = aggregate_name(function)
        arg = function.this if not isinstance(function, exp.Anonymous) else None
        distinct = isinstance(arg, exp.Distinct)
        nodes = list(arg.expressions) if isinstance(arg, exp.Distinct) else ([] if arg is None else [arg])
        nodes = [] if len(nodes) == 1 and isinstance(nodes[0], exp.Star) else nodes
        if isinstance(function, exp.Lag | exp.Lead):  # LAG(x [, n [, default]])
            nodes = [function.this, *(function.args[k] for k in ("offset", "default") if function.args.get(k))]
        user = aggregate_function(name) if isinstance(function, exp.Anonymous) else None
        if user is not None:  # a @udaf (general or pandas) over the window
            nodes = list(function.expressions)
        args = tuple(column(n) for n in nodes)
        if user is not None:
            call_name = UserAggregateName(name, user.bound_to([pre[a].type for a in args]), user.result_type)
            calls.append(AggregateCall(call_name, args, False, user.result_type))
            continue
        resolved = resolve_aggregate(name, [pre[a].type for a in args], retracting=True)
        calls.append(AggregateCall(name, args, distinct, resolved.result_type))
    pre_type = RowType(tuple(f"$f{i}" for i in range(len(pre))), tuple(p.type for p in pre))
    pre_rel: RelNode = rel if len(pre) == width else Calc(pre_type, rel, tuple(pre), None)
    over_type = RowType(
        (*pre_type.names, *(f"$w{j}" for j in range(len(calls)))), (*pre_type.types, *(c.result_type for c in calls))
    )
    over = OverAggregate(over_type, pre_rel, partition, tuple(calls), rows, preceding, rowtime_index)
    projection: list[RexNode] = []
    call_index = 0
    for item, over_window in zip(items, windows, strict=True):
        if over_window is None:
            projection.append(converter.convert(item))
        else:
            position = len(pre) + call_index
            projection.append(RexInputRef(position, over_type.types[position]))
            call_index += 1
    return Calc(RowType(output_names(items), tuple(p.type for p in projection)), over, tuple(projection), None)
