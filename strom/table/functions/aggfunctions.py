"""Flink's built-in aggregate functions (``org.apache.flink.table.planner.functions.aggfunctions``): ``COUNT``,
``SUM``, ``AVG``, ``MIN``, ``MAX`` with retraction, and the driver of a user-defined ``@udaf``.

Each is an :class:`AggregateFunctionImpl`: ``create_accumulator()`` gives a plain picklable value and
``accumulate`` / ``retract`` / ``merge`` return the new accumulator (so accumulators of ints and tuples need no
mutation). :mod:`strom.table.functions.aggregate_functions` binds a call to one of them with Flink's result type; the
FLOAT variants and ``SINGLE_VALUE`` build on these in their own modules.
"""

from __future__ import annotations

import decimal
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from strom.table.types import DataType

__all__ = [
    "AggregateFunctionImpl",
    "Avg",
    "Count",
    "CountStar",
    "Extreme",
    "ExtremeWithRetract",
    "PythonAggregate",
    "ResolvedAggregate",
    "Sum",
    "UserAggregateName",
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
