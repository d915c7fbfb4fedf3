"""Flink's legacy SQL group window functions (Calcite's ``SqlGroupAuxiliaryFunction`` / Flink's
``StreamLogicalWindowAggregateRule``): ``GROUP BY TUMBLE(ts, size)``, ``HOP(ts, slide, size)`` or
``SESSION(ts, gap)`` with ``TUMBLE_START`` / ``_END`` / ``_ROWTIME`` (and ``HOP_*``, ``SESSION_*``) in SELECT and
HAVING.

Planned as the Table API's group windows are: the window table function (:class:`WindowTableFunction`, a SESSION
partitioned by the other group keys) over the FROM/WHERE input, the group window replaced by its
``window_start``/``window_end`` in GROUP BY, ``*_START`` → ``window_start``, ``*_END`` → ``window_end``,
``*_ROWTIME`` → ``window_time`` (a rowtime attribute a following window can use); the aggregation then becomes
a window aggregation. Event time only: a processing-time group window is refused.
"""

from __future__ import annotations

import datetime

from sqlglot import exp

from strom.table.errors import TableException, ValidationException
from strom.table.planner.expression_converter import ExpressionConverter
from strom.table.planner.logical import RelNode, RowType, WindowTableFunction
from strom.table.planner.rex import RexLiteral
from strom.table.planner.scope import Scope, ScopeField
from strom.table.sql.flink_dialect import FlinkDialect
from strom.table.sql.parser import at
from strom.table.types import parse_type

__all__ = ["convert_group_window", "has_group_window"]

GROUP_WINDOWS = ("TUMBLE", "HOP", "SESSION")
_PROPERTIES = {"START": "window_start", "END": "window_end", "ROWTIME": "window_time", "PROCTIME": "proctime"}
# the columns the window function adds, under names no query can write unquoted
_HIDDEN = {"window_start": "$window_start", "window_end": "$window_end", "window_time": "$window_time"}


def _window_call(node: exp.Expr) -> bool:
    return isinstance(node, exp.Anonymous) and str(node.this).upper() in GROUP_WINDOWS


def _auxiliary(node: exp.Expr) -> tuple[str, str] | None:
    """``TUMBLE_START(...)`` → ("TUMBLE", "START"), else None."""
    if not isinstance(node, exp.Anonymous):
        return None
    window, _, prop = str(node.this).upper().partition("_")
    return (window, prop) if window in GROUP_WINDOWS and prop in _PROPERTIES else None


def has_group_window(select: exp.Select, items: list[exp.Expr], having: exp.Having | None) -> bool:
    """A GROUP BY group window, or an auxiliary function (refused later without its window)."""
    group = select.args.get("group")
    if group is not None and any(_window_call(k) for k in group.expressions):
        return True
    nodes = [*items, *([having.this] if having is not None else [])]
    return any(_auxiliary(n) is not None for item in nodes for n in item.find_all(exp.Anonymous))


def _text(nodes: list[exp.Expr]) -> str:
    return ", ".join(n.sql(dialect=FlinkDialect) for n in nodes)


def convert_group_window(
    rel: RelNode, scope: Scope, select: exp.Select, items: list[exp.Expr], having: exp.Having | None
) -> tuple[RelNode, Scope, exp.Select, list[exp.Expr], exp.Having | None]:
    """The window table function over ``rel``, and the SELECT rewritten onto its window columns."""
    group = select.args.get("group")
    windows = [k for k in group.expressions if _window_call(k)] if group is not None else []
    if not windows:
        node = next(
            n for i in [*items, *([having] if having else [])] for n in i.find_all(exp.Anonymous) if _auxiliary(n)
        )
        raise ValidationException(_unmatched(node, group.expressions if group is not None else []))
    if len(windows) > 1:
        raise TableException(f"Unsupported SQL construct{at(windows[1])}: a second group window; expected one")
    call = windows[0]
    assert group is not None
    keys = [k for k in group.expressions if k is not call]
    window = _window_table_function(rel, scope, call, keys)
    width = len(rel.row_type)
    fields = [ScopeField(None, _HIDDEN[name], window.row_type.types[width + i]) for i, name in enumerate(_HIDDEN)]
    window_scope = Scope([*scope.fields, *fields])
    used: set[str] = set()
    new_items = [_rewrite(item, call, used, i) for i, item in enumerate(items)]
    new_having = exp.Having(this=_rewrite(having.this, call, used)) if having is not None else None
    properties = ["window_start", "window_end", *(["window_time"] if "window_time" in used else [])]
    new_group = exp.Group(expressions=[*keys, *(_hidden(p) for p in properties)])
    new_select = select.copy()
    new_select.set("group", new_group)
    return window, window_scope, new_select, new_items, new_having


def _unmatched(node: exp.Anonymous, group: list[exp.Expr]) -> str:
    """Flink's (Calcite's) message for an auxiliary function without its group window."""
    name = str(node.this).upper()
    window = name.partition("_")[0]
    return (
        f"SQL validation failed{at(node)}: Call to auxiliary group function '{name}' must have matching call to "
        f"group function '{window}' in GROUP BY clause; expected GROUP BY {window}({_text(node.expressions)}); "
        f"got GROUP BY {_text(group) or '(none)'}"
    )


def _hidden(prop: str) -> exp.Column:
    return exp.column(_HIDDEN[prop], quoted=True)


def _rewrite(node: exp.Expr, call: exp.Anonymous, used: set[str], position: int | None = None) -> exp.Expr:
    """Each auxiliary function of ``call`` → its window column; an unaliased SELECT item keeps Flink's
    ``EXPR$<position>`` name."""
    window = str(call.this).upper()

    def replace(sub: exp.Expr) -> exp.Expr:
        aux = _auxiliary(sub)
        if aux is None:
            return sub
        assert isinstance(sub, exp.Anonymous)
        if aux[0] != window or _text(sub.expressions) != _text(call.expressions):
            raise ValidationException(_unmatched(sub, [call]))
        if aux[1] == "PROCTIME":
            raise TableException(
                f"Unsupported SQL construct{at(sub)}: {window}_PROCTIME; expected {window}_START, {window}_END or "
                f"{window}_ROWTIME (event-time group windows only)"
            )
        prop = _PROPERTIES[aux[1]]
        used.add(prop)
        return _hidden(prop)

    rewritten = node.copy().transform(replace)
    if position is not None and not isinstance(node, exp.Alias | exp.Column) and isinstance(rewritten, exp.Column):
        return exp.alias_(rewritten, f"EXPR${position}", quoted=True)
    return rewritten


def _window_table_function(
    rel: RelNode, scope: Scope, call: exp.Anonymous, keys: list[exp.Expr]
) -> WindowTableFunction:
    name = str(call.this).upper()
    args = list(call.expressions)
    expected = 2 if name == "HOP" else 1
    if len(args) != expected + 1 or not isinstance(args[0], exp.Column):
        shape = {"TUMBLE": "TUMBLE(time_attr, size)", "HOP": "HOP(time_attr, slide, size)"}
        raise TableException(
            f"Unsupported SQL construct{at(call)}: {call.sql(dialect=FlinkDialect)[:80]}; "
            f"expected {shape.get(name, 'SESSION(time_attr, gap)')} (no alignment offset)"
        )
    time = scope.resolve(args[0])
    if "ROWTIME" not in str(time.type):
        hint = (
            "processing-time group windows are not supported"
            if "PROCTIME" in str(time.type)
            else (f"declare WATERMARK FOR {args[0].name} AS … on the table")
        )
        raise TableException(
            f"Unsupported SQL construct{at(args[0])}: {name} over {args[0].name} of type {time.type}; "
            f"expected an event-time attribute (a rowtime column); hint: {hint}"
        )
    sizes = [_millis(a) for a in args[1:]]
    params = tuple(sizes) if name == "SESSION" else (*sizes, 0)
    partition: tuple[int, ...] = ()
    if name == "SESSION":
        plain = [k for k in keys if isinstance(k, exp.Column)]
        if len(plain) != len(keys):
            other = next(k for k in keys if not isinstance(k, exp.Column))
            raise TableException(
                f"Unsupported SQL construct{at(other)}: a SESSION group window grouped by an expression; "
                "expected plain columns as the other GROUP BY keys (the sessions are per key)"
            )
        partition = tuple(scope.resolve(k).index for k in plain)
    window_type = parse_type("TIMESTAMP(3) NOT NULL")
    row_type = RowType(
        (*rel.row_type.names, *_HIDDEN.values()),
        (*rel.row_type.types, window_type, window_type, time.type.not_null()),
    )
    return WindowTableFunction(row_type, rel, name, params, time.index, partition, group_window=True)


def _millis(node: exp.Expr) -> int:
    value = ExpressionConverter(Scope([])).convert(node)
    if not isinstance(value, RexLiteral) or not isinstance(value.value, datetime.timedelta):
        raise ValidationException(
            f"SQL validation failed{at(node)}: expected an INTERVAL literal; got {node.sql(dialect=FlinkDialect)}"
        )
    return int(value.value / datetime.timedelta(milliseconds=1))
