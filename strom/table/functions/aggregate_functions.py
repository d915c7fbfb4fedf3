"""Binding an aggregate call to Flink's built-in aggregate functions (:mod:`strom.table.functions.aggfunctions`)
with Flink's result types (``FlinkReturnTypes``/``AggFunctionFactory``): ``COUNT`` is ``BIGINT NOT NULL``; ``SUM``
keeps an integer type (``SUM`` of ``INT`` is ``INT``) and widens ``DECIMAL(p, s)`` to ``DECIMAL(38, s)``; ``AVG``
keeps the argument's type (``AVG`` of ``INT`` is ``INT``, truncated toward zero as Java's division) and makes
``DECIMAL(38, max(s, 6))`` of a decimal; ``MIN``/``MAX`` keep the argument's type, nullable; FLOAT arguments
accumulate in Java's ``float`` (:mod:`strom.table.functions.float_aggregate_functions`).

:func:`resolve_aggregate` picks the implementation: over an insert-only input ``MIN``/``MAX`` keep only the
extreme, over an updating input they keep a ``{value: count}`` map (Flink's ``MaxWithRetractAggFunction``). A
user-defined aggregate (``@udaf``) is named by a ``UserAggregateName``, which carries the function to the
subtasks; ``PythonAggregate`` drives it (its accumulator is mutated in place, as PyFlink's).
"""

from __future__ import annotations

import decimal
from collections.abc import Sequence

from strom.table.errors import TableException, ValidationException
from strom.table.functions.aggfunctions import (
    AggregateFunctionImpl,
    Avg,
    Count,
    CountStar,
    Extreme,
    ExtremeWithRetract,
    PythonAggregate,
    ResolvedAggregate,
    Sum,
    UserAggregateName,
)
from strom.table.functions.builtin_agg_functions import BUILTIN_AGGREGATES, resolve_builtin_aggregate
from strom.table.functions.float_aggregate_functions import resolve_float_aggregate
from strom.table.functions.lag_agg_function import resolve_lag
from strom.table.functions.single_value_agg_function import SingleValueAggFunction
from strom.table.types import DataType, parse_type

__all__ = ["AGGREGATE_FUNCTIONS", "resolve_aggregate", "type_root"]


AGGREGATE_FUNCTIONS = ("COUNT", "SUM", "AVG", "MIN", "MAX", "SUM0", *BUILTIN_AGGREGATES)

_INTEGRAL = ("TINYINT", "SMALLINT", "INT", "BIGINT")
_NUMERIC = (*_INTEGRAL, "FLOAT", "DOUBLE", "DECIMAL")


def type_root(data_type: DataType) -> str:
    """``DECIMAL`` of ``DECIMAL(10, 2) NOT NULL``: the root of a type's summary string."""
    text = str(data_type)
    for stop in ("(", "<", " "):
        text = text.split(stop)[0]
    return text


def resolve_aggregate(name: str, arg_types: Sequence[DataType], *, retracting: bool) -> ResolvedAggregate:
    """The implementation and result type of ``name(args)``; ``retracting`` when the input is updating."""
    if isinstance(name, UserAggregateName):
        return ResolvedAggregate(PythonAggregate(name.function, len(arg_types)), name.result_type)
    upper = name.upper()
    if upper == "COUNT" and len(arg_types) > 1:
        raise TableException("We now only support the count of one field.")
    if upper == "COUNT":
        function: AggregateFunctionImpl = Count() if arg_types else CountStar()
        return ResolvedAggregate(function, parse_type("BIGINT NOT NULL"))
    if upper == "SINGLE_VALUE" and len(arg_types) == 1:  # a scalar subquery's value (planner-made, never parsed)
        return ResolvedAggregate(SingleValueAggFunction(getattr(name, "position", "")), arg_types[0].nullable())
    if upper == "LAG":
        return resolve_lag(list(arg_types))
    if upper in BUILTIN_AGGREGATES:
        return resolve_builtin_aggregate(upper, arg_types)
    if len(arg_types) != 1:
        raise ValidationException(
            f"aggregate function {upper} expects 1 argument; got {len(arg_types)}; hint: {upper}(column)"
        )
    arg = arg_types[0]
    root = type_root(arg)
    if root == "FLOAT" and upper in ("SUM", "SUM0", "AVG", "MIN", "MAX"):  # in Java float arithmetic
        return resolve_float_aggregate(upper, arg, retracting=retracting)
    if upper in ("MIN", "MAX"):
        function = ExtremeWithRetract(upper == "MAX") if retracting else Extreme(upper == "MAX")
        return ResolvedAggregate(function, arg.nullable())
    if root not in _NUMERIC:
        raise ValidationException(
            f"aggregate function {upper} expects a numeric argument; got {arg}; hint: CAST the argument to a number"
        )
    if upper in ("SUM", "SUM0"):
        if root == "DECIMAL":
            result = parse_type(f"DECIMAL(38, {_scale(arg)})")
            return ResolvedAggregate(Sum(decimal.Decimal(0)), result)
        return ResolvedAggregate(Sum(0.0 if root in ("FLOAT", "DOUBLE") else 0), arg.nullable())
    if upper == "AVG":
        if root == "DECIMAL":
            scale = max(_scale(arg), 6)
            result = parse_type(f"DECIMAL(38, {scale})")
            return ResolvedAggregate(Avg(decimal.Decimal(0), kind="decimal", scale=scale), result)
        kind = "int" if root in _INTEGRAL else "float"
        return ResolvedAggregate(Avg(0.0 if kind == "float" else 0, kind=kind), arg.nullable())
    raise ValidationException(f"expected an aggregate function ({', '.join(AGGREGATE_FUNCTIONS)}); got {name}")


def _scale(data_type: DataType) -> int:
    text = str(data_type)
    inside = text[text.index("(") + 1 : text.index(")")] if "(" in text else "10, 0"
    parts = [p.strip() for p in inside.split(",")]
    return int(parts[1]) if len(parts) > 1 else 0
