"""Flink's built-in aggregate functions (``COUNT``, ``SUM``, ``AVG``, ``MIN``, ``MAX``) with retraction.

Each is an :class:`AggregateFunctionImpl`: ``create_accumulator()`` gives a plain picklable value and
``accumulate`` / ``retract`` / ``merge`` return the new accumulator (so accumulators of ints and tuples need no
mutation). Result types are Flink's (``FlinkReturnTypes``/``AggFunctionFactory``): ``COUNT`` is ``BIGINT NOT NULL``;
``SUM`` keeps an integer type (``SUM`` of ``INT`` is ``INT``) and widens ``DECIMAL(p, s)`` to ``DECIMAL(38, s)``;
``AVG`` keeps the argument's type (``AVG`` of ``INT`` is ``INT``, truncated toward zero as Java's division) and makes
``DECIMAL(38, max(s, 6))`` of a decimal; ``MIN``/``MAX`` keep the argument's type, nullable.

:func:`resolve_aggregate` picks the implementation: over an insert-only input ``MIN``/``MAX`` keep only the
extreme, over an updating input they keep a ``{value: count}`` map (Flink's ``MaxWithRetractAggFunction``). A
user-defined aggregate (``@udaf``) is named by a :class:`UserAggregateName`, which carries the function to the
subtasks; :class:`PythonAggregate` drives it (its accumulator is mutated in place, as PyFlink's).
"""

from __future__ import annotations

import decimal
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from strom.table.errors import ValidationException
from strom.table.types import DataType, parse_type

__all__ = [
    "AGGREGATE_FUNCTIONS",
    "AggregateFunctionImpl",
    "PythonAggregate",
    "ResolvedAggregate",
    "UserAggregateName",
    "resolve_aggregate",
]


class AggregateFunctionImpl(ABC):
    """One aggregate function over plain accumulators."""

    name = ""

    @abstractmethod
    def create_accumulator(self) -> Any:
        """The empty accumulator."""

    @abstractmethod
    def accumulate(self, acc: Any, value: Any) -> Any:
        """``acc`` with ``value`` added (returns the new accumulator)."""

    @abstractmethod
    def retract(self, acc: Any, value: Any) -> Any:
        """``acc`` with ``value`` taken back (retraction input)."""

    @abstractmethod
    def merge(self, acc: Any, other: Any) -> Any:
        """``other`` merged into ``acc`` (session windows, two-phase plans)."""

    @abstractmethod
    def get_value(self, acc: Any) -> Any:
        """The aggregate's result for ``acc``."""


class CountStar(AggregateFunctionImpl):
    name = "COUNT"

    def create_accumulator(self) -> int:
        return 0

    def accumulate(self, acc: int, value: Any) -> int:
        return acc + 1

    def retract(self, acc: int, value: Any) -> int:
        return acc - 1

    def merge(self, acc: int, other: int) -> int:
        return acc + other

    def get_value(self, acc: int) -> int:
        return acc


class Count(CountStar):
    """``COUNT(x)``: rows whose argument is not NULL (all arguments, for ``COUNT(DISTINCT a, b)``)."""

    def accumulate(self, acc: int, value: Any) -> int:
        return acc if _is_null(value) else acc + 1

    def retract(self, acc: int, value: Any) -> int:
        return acc if _is_null(value) else acc - 1


def _is_null(value: Any) -> bool:
    return value is None or (isinstance(value, tuple) and any(v is None for v in value))


class Sum(AggregateFunctionImpl):
    """``SUM``: ``(sum, non-null count)``; NULL when no non-null value is left (Flink's ``SumWithRetract``)."""

    name = "SUM"

    def __init__(self, zero: Any = 0) -> None:
        self._zero = zero

    def create_accumulator(self) -> tuple[Any, int]:
        return (self._zero, 0)

    def accumulate(self, acc: tuple[Any, int], value: Any) -> tuple[Any, int]:
        return acc if value is None else (acc[0] + value, acc[1] + 1)

    def retract(self, acc: tuple[Any, int], value: Any) -> tuple[Any, int]:
        return acc if value is None else (acc[0] - value, acc[1] - 1)

    def merge(self, acc: tuple[Any, int], other: tuple[Any, int]) -> tuple[Any, int]:
        return (acc[0] + other[0], acc[1] + other[1])

    def get_value(self, acc: tuple[Any, int]) -> Any:
        return acc[0] if acc[1] > 0 else None


class Avg(Sum):
    """``AVG``: ``sum / count`` in the argument's type (integers truncate toward zero, as Java's ``/``)."""

    name = "AVG"

    def __init__(self, zero: Any = 0, *, kind: str = "int", scale: int = 0) -> None:
        super().__init__(zero)
        self._kind = kind
        self._quantum = decimal.Decimal(1).scaleb(-scale)

    def get_value(self, acc: tuple[Any, int]) -> Any:
        total, count = acc
        if count <= 0:
            return None
        if self._kind == "int":
            quotient = abs(total) // count
            return quotient if total >= 0 else -quotient
        if self._kind == "decimal":
            with decimal.localcontext() as ctx:
                ctx.prec = 38
                return (decimal.Decimal(total) / count).quantize(self._quantum, rounding=decimal.ROUND_HALF_UP)
        return total / count


class Extreme(AggregateFunctionImpl):
    """``MIN``/``MAX`` over an insert-only input: the extreme seen so far."""

    def __init__(self, is_max: bool) -> None:
        self._is_max = is_max
        self.name = "MAX" if is_max else "MIN"

    def create_accumulator(self) -> Any:
        return None

    def accumulate(self, acc: Any, value: Any) -> Any:
        if value is None:
            return acc
        if acc is None:
            return value
        return (value if value > acc else acc) if self._is_max else (value if value < acc else acc)

    def retract(self, acc: Any, value: Any) -> Any:
        raise TypeError(f"{self.name} over an insert-only input was asked to retract {value!r}")

    def merge(self, acc: Any, other: Any) -> Any:
        return self.accumulate(acc, other)

    def get_value(self, acc: Any) -> Any:
        return acc


class ExtremeWithRetract(AggregateFunctionImpl):
    """``MIN``/``MAX`` over an updating input: ``[extreme, {value: count}]`` (Flink's ``MaxWithRetractAggFunction``)."""

    def __init__(self, is_max: bool) -> None:
        self._is_max = is_max
        self.name = "MAX" if is_max else "MIN"

    def create_accumulator(self) -> tuple[Any, dict[Any, int]]:
        return (None, {})

    def accumulate(self, acc: tuple[Any, dict[Any, int]], value: Any) -> tuple[Any, dict[Any, int]]:
        if value is None:
            return acc
        current, counts = acc
        counts[value] = counts.get(value, 0) + 1
        if current is None or (value > current if self._is_max else value < current):
            current = value
        return (current, counts)

    def retract(self, acc: tuple[Any, dict[Any, int]], value: Any) -> tuple[Any, dict[Any, int]]:
        if value is None:
            return acc
        current, counts = acc
        left = counts.get(value, 0) - 1
        if left > 0:
            counts[value] = left
        else:
            counts.pop(value, None)
            if value == current:
                current = (max if self._is_max else min)(counts) if counts else None
        return (current, counts)

    def merge(self, acc: tuple[Any, dict[Any, int]], other: tuple[Any, dict[Any, int]]) -> tuple[Any, dict[Any, int]]:
        for value, n in other[1].items():
            for _ in range(n):
                acc = self.accumulate(acc, value)
        return acc

    def get_value(self, acc: tuple[Any, dict[Any, int]]) -> Any:
        return acc[0]


class UserAggregateName(str):
    """The name of a user-defined aggregate call that carries the function and its result type (pickled along)."""

    function: Any
    result_type: DataType

    def __new__(cls, name: str, function: Any, result_type: DataType) -> UserAggregateName:
        made = super().__new__(cls, name)
        made.function = function
        made.result_type = result_type
        return made

    def __getnewargs__(self) -> tuple[str, Any, DataType]:  # type: ignore[override]
        return (str(self), self.function, self.result_type)


class PythonAggregate(AggregateFunctionImpl):
    """A PyFlink ``AggregateFunction``: ``accumulate(acc, *args)`` updates ``acc`` in place."""

    def __init__(self, function: Any, arity: int) -> None:
        self._function = function
        self._arity = arity
        self.name = type(function).__name__

    def create_accumulator(self) -> Any:
        return self._function.create_accumulator()

    def accumulate(self, acc: Any, value: Any) -> Any:
        if self._arity == 1:
            self._function.accumulate(acc, value)
        else:
            self._function.accumulate(acc, *(value if self._arity else ()))
        return acc

    def retract(self, acc: Any, value: Any) -> Any:
        if self._arity == 1:
            self._function.retract(acc, value)
        else:
            self._function.retract(acc, *(value if self._arity else ()))
        return acc

    def merge(self, acc: Any, other: Any) -> Any:
        self._function.merge(acc, [other])
        return acc

    def get_value(self, acc: Any) -> Any:
        return self._function.get_value(acc)


@dataclass(frozen=True, slots=True)
class ResolvedAggregate:
    """An aggregate call bound to its argument types: the implementation and Flink's result type."""

    function: AggregateFunctionImpl
    result_type: DataType


AGGREGATE_FUNCTIONS = ("COUNT", "SUM", "AVG", "MIN", "MAX", "SUM0")

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
    if upper == "COUNT":
        function: AggregateFunctionImpl = Count() if arg_types else CountStar()
        return ResolvedAggregate(function, parse_type("BIGINT NOT NULL"))
    if upper == "SINGLE_VALUE" and len(arg_types) == 1:  # a scalar subquery's value (planner-made, never parsed)
        from strom.table.functions.single_value_agg_function import SingleValueAggFunction

        return ResolvedAggregate(SingleValueAggFunction(getattr(name, "position", "")), arg_types[0].nullable())
    if len(arg_types) != 1:
        raise ValidationException(
            f"aggregate function {upper} expects 1 argument; got {len(arg_types)}; hint: {upper}(column)"
        )
    arg = arg_types[0]
    root = type_root(arg)
    if root == "FLOAT" and upper in ("SUM", "SUM0", "AVG", "MIN", "MAX"):  # in Java float arithmetic
        from strom.table.functions.float_aggregate_functions import resolve_float_aggregate

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
