"""More of Flink's built-in aggregate functions: ``STDDEV_POP``/``STDDEV_SAMP``/``VAR_POP``/``VAR_SAMP`` (Flink
rewrites them to ``SUM``/``COUNT`` arithmetic in the argument's type — ``AggregateReduceFunctionsRule`` — so an
``INT`` argument gives an ``INT``, divided as Java divides), ``FIRST_VALUE``/``LAST_VALUE`` (the first / last
non-NULL value), ``LISTAGG(x [, sep])`` (``ListAggFunction``, ``,`` by default) and ``JSON_ARRAYAGG`` /
``JSON_OBJECTAGG`` (``JsonArrayAggFunction`` / ``JsonObjectAggFunction``: ``ABSENT ON NULL`` and ``NULL ON NULL``,
Flink's defaults; a duplicate key fails the job as Flink's does).

Each keeps a plain accumulator; over an updating input the value-keeping ones keep every value in arrival order, so
a retraction takes its value back (the ``…WithRetract`` variants).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from strom.table.errors import TableRuntimeException, ValidationException
from strom.table.functions.aggfunctions import AggregateFunctionImpl, ResolvedAggregate
from strom.table.types import DataType, parse_type

__all__ = ["BUILTIN_AGGREGATES", "resolve_builtin_aggregate"]

_INTEGRAL = ("TINYINT", "SMALLINT", "INT", "BIGINT")
_STATISTICS = ("STDDEV_POP", "STDDEV_SAMP", "STDDEV", "VAR_POP", "VARIANCE_POP", "VAR_SAMP", "VARIANCE")
BUILTIN_AGGREGATES = (
    *_STATISTICS,
    "FIRST_VALUE",
    "LAST_VALUE",
    "LISTAGG",
    "JSON_ARRAYAGG",
    "JSON_OBJECTAGG",
    "COLLECT",
)


def _java_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


class Statistic(AggregateFunctionImpl):
    """``(sum, sum of squares, count)``; the result as Flink's reduced expression computes it."""

    def __init__(self, name: str, integral: bool) -> None:
        self.name = name
        self._integral = integral
        self._sample = name in ("STDDEV_SAMP", "STDDEV", "VAR_SAMP", "VARIANCE")
        self._root = name.startswith("STDDEV")

    def create_accumulator(self) -> tuple[Any, Any, int]:
        return (0, 0, 0) if self._integral else (0.0, 0.0, 0)

    def accumulate(self, acc: tuple[Any, Any, int], value: Any) -> tuple[Any, Any, int]:
        return acc if value is None else (acc[0] + value, acc[1] + value * value, acc[2] + 1)

    def retract(self, acc: tuple[Any, Any, int], value: Any) -> tuple[Any, Any, int]:
        return acc if value is None else (acc[0] - value, acc[1] - value * value, acc[2] - 1)

    def merge(self, acc: tuple[Any, Any, int], other: tuple[Any, Any, int]) -> tuple[Any, Any, int]:
        return (acc[0] + other[0], acc[1] + other[1], acc[2] + other[2])

    def get_value(self, acc: tuple[Any, Any, int]) -> Any:
        total, squares, count = acc
        if count <= 0 or (self._sample and count == 1):
            return None
        divisor = count - 1 if self._sample else count
        if self._integral:
            variance: Any = _java_div(squares - _java_div(total * total, count), divisor)
        else:
            variance = (squares - total * total / count) / divisor
        if not self._root:
            return variance
        root = math.sqrt(variance) if variance >= 0 else math.nan
        return int(root) if self._integral else root


class FirstLastValue(AggregateFunctionImpl):
    """``FIRST_VALUE``/``LAST_VALUE``: the values in arrival order (NULLs skipped), so retraction works."""

    def __init__(self, last: bool) -> None:
        self.name = "LAST_VALUE" if last else "FIRST_VALUE"
        self._last = last

    def create_accumulator(self) -> tuple[Any, ...]:
        return ()

    def accumulate(self, acc: tuple[Any, ...], value: Any) -> tuple[Any, ...]:
        return acc if value is None else (*acc, value)

    def retract(self, acc: tuple[Any, ...], value: Any) -> tuple[Any, ...]:
        if value is None or value not in acc:
            return acc
        i = acc.index(value)
        return acc[:i] + acc[i + 1 :]

    def merge(self, acc: tuple[Any, ...], other: tuple[Any, ...]) -> tuple[Any, ...]:
        return acc + other

    def get_value(self, acc: tuple[Any, ...]) -> Any:
        if not acc:
            return None
        return acc[-1] if self._last else acc[0]


class ListAgg(FirstLastValue):
    """``LISTAGG(x [, sep])``: the non-NULL values joined by the separator (``,`` by default); each value is kept
    with its separator."""

    def __init__(self, with_separator: bool) -> None:
        super().__init__(last=False)
        self.name = "LISTAGG"
        self._with_separator = with_separator

    def accumulate(self, acc: tuple[Any, ...], value: Any) -> tuple[Any, ...]:
        pair = tuple(value) if self._with_separator else (value, ",")
        return acc if pair[0] is None else (*acc, pair)

    def retract(self, acc: tuple[Any, ...], value: Any) -> tuple[Any, ...]:
        pair = tuple(value) if self._with_separator else (value, ",")
        return super().retract(acc, pair)

    def get_value(self, acc: tuple[Any, ...]) -> Any:
        return acc[-1][1].join(str(v) for v, _ in acc) if acc else None


class JsonArrayAgg(FirstLastValue):
    """``JSON_ARRAYAGG(x)``: a JSON array of the non-NULL values (``ABSENT ON NULL``)."""

    def __init__(self) -> None:
        super().__init__(last=False)
        self.name = "JSON_ARRAYAGG"

    def get_value(self, acc: tuple[Any, ...]) -> Any:
        return "[" + ",".join(_json(v) for v in acc) + "]"


class JsonObjectAgg(FirstLastValue):
    """``JSON_OBJECTAGG(KEY k VALUE v)``: a JSON object (``NULL ON NULL``), its keys in sorted order as Flink's
    ``MapView``-backed accumulator gives them; a repeated key fails the job."""

    def __init__(self) -> None:
        super().__init__(last=False)
        self.name = "JSON_OBJECTAGG"

    def accumulate(self, acc: tuple[Any, ...], value: Any) -> tuple[Any, ...]:
        key = value[0]
        if key is None:
            raise TableRuntimeException("JSON_OBJECTAGG: expected a non-NULL key; got NULL")
        if any(k == key for k, _ in acc):
            raise TableRuntimeException(
                f"Key '{key}' is already present. Duplicate keys are not allowed in JSON_OBJECTAGG. "
                "Please ensure that keys are unique."
            )
        return (*acc, tuple(value))

    def retract(self, acc: tuple[Any, ...], value: Any) -> tuple[Any, ...]:
        return tuple(kv for kv in acc if kv[0] != value[0])

    def get_value(self, acc: tuple[Any, ...]) -> Any:
        return "{" + ",".join(f"{json.dumps(str(k))}:{_json(v)}" for k, v in sorted(acc)) + "}"


def _json(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    return json.dumps(str(value), ensure_ascii=False)


def _root(data_type: DataType) -> str:
    return str(data_type).split("(")[0].split(" ")[0].split("<")[0]


def resolve_builtin_aggregate(name: str, arg_types: Sequence[DataType]) -> ResolvedAggregate:
    """The implementation and Flink's result type of one of :data:`BUILTIN_AGGREGATES`."""
    arity = {"LISTAGG": (1, 2), "JSON_OBJECTAGG": (2,)}.get(name, (1,))
    if len(arg_types) not in arity:
        raise ValidationException(
            f"aggregate function {name} expects {' or '.join(map(str, arity))} arguments; got {len(arg_types)}"
        )
    if name in _STATISTICS:
        root = _root(arg_types[0])
        if root not in (*_INTEGRAL, "FLOAT", "DOUBLE"):
            raise ValidationException(
                f"aggregate function {name} expects an integer, FLOAT or DOUBLE argument; got {arg_types[0]}; "
                "hint: CAST the argument to DOUBLE (a DECIMAL argument is not supported yet)"
            )
        return ResolvedAggregate(Statistic(name, root in _INTEGRAL), arg_types[0].nullable())
    if name in ("FIRST_VALUE", "LAST_VALUE"):
        return ResolvedAggregate(FirstLastValue(name == "LAST_VALUE"), arg_types[0].nullable())
    if name == "LISTAGG":
        return ResolvedAggregate(ListAgg(len(arg_types) == 2), parse_type("STRING"))
    if name == "COLLECT":
        from strom.table.functions.collect_agg_function import CollectAggFunction
        from strom.table.logical_constructed_types import MultisetType

        return ResolvedAggregate(CollectAggFunction(), MultisetType(arg_types[0].nullable(), False))
    if name == "JSON_ARRAYAGG":
        return ResolvedAggregate(JsonArrayAgg(), parse_type("STRING NOT NULL"))
    return ResolvedAggregate(JsonObjectAgg(), parse_type("STRING NOT NULL"))
