"""PyFlink's ``pyflink.table.expressions``: ``col``, ``lit``, ``call`` and friends."""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from strom.table.expression import Expression, to_sql_expression

__all__ = [
    "CURRENT_RANGE",
    "CURRENT_ROW",
    "UNBOUNDED_RANGE",
    "UNBOUNDED_ROW",
    "and_",
    "call",
    "coalesce",
    "col",
    "concat",
    "if_then_else",
    "json",
    "lit",
    "null_of",
    "or_",
    "row_interval",
]

# the bounds of an OVER window (``Over....preceding(UNBOUNDED_ROW).following(CURRENT_ROW)``), as PyFlink's
UNBOUNDED_ROW = Expression(exp.Var(this="UNBOUNDED_ROW"))
UNBOUNDED_RANGE = Expression(exp.Var(this="UNBOUNDED_RANGE"))
CURRENT_ROW = Expression(exp.Var(this="CURRENT_ROW"))
CURRENT_RANGE = Expression(exp.Var(this="CURRENT_RANGE"))


def col(name: str) -> Expression:
    """The column ``name`` of the input table."""
    return Expression(exp.column(name, quoted=True))


def lit(value: Any, data_type: Any = None) -> Expression:
    """A literal (optionally of ``data_type``)."""
    expression = Expression(to_sql_expression(value))
    return expression.cast(data_type) if data_type is not None else expression


def call(f: Any, *args: Any) -> Expression:
    """A call of the built-in function named ``f`` (or of a registered function)."""
    name = f if isinstance(f, str) else getattr(f, "_name", None) or type(f).__name__
    return Expression(exp.Anonymous(this=str(name).upper(), expressions=[to_sql_expression(a) for a in args]))


def concat(first: Any, *others: Any) -> Expression:
    return call("CONCAT", first, *others)


def coalesce(*args: Any) -> Expression:
    nodes = [to_sql_expression(a) for a in args]
    return Expression(exp.Coalesce(this=nodes[0], expressions=nodes[1:]))


def if_then_else(condition: Any, if_true: Any, if_false: Any) -> Expression:
    ifs = [exp.If(this=to_sql_expression(condition), true=to_sql_expression(if_true))]
    return Expression(exp.Case(ifs=ifs, default=to_sql_expression(if_false)))


def and_(predicate0: Any, predicate1: Any, *predicates: Any) -> Expression:
    result = to_sql_expression(predicate0)
    for p in (predicate1, *predicates):
        result = exp.And(this=result, expression=to_sql_expression(p))
    return Expression(result)


def or_(predicate0: Any, predicate1: Any, *predicates: Any) -> Expression:
    result = to_sql_expression(predicate0)
    for p in (predicate1, *predicates):
        result = exp.Or(this=result, expression=to_sql_expression(p))
    return Expression(result)


def null_of(data_type: Any) -> Expression:
    return lit(None, data_type)


def row_interval(rows: int) -> Expression:
    return Expression(exp.Literal.number(rows))


def json(value: Any) -> Expression:
    """``JSON(value)``: a JSON string passed raw into ``json_object``/``json_array`` (PyFlink's ``json``; exported
    by ``from pyflink.table.expressions import *`` as in PyFlink, where it shadows the ``json`` module)."""
    return call("JSON", value)
