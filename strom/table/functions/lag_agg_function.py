"""Flink's ``LagAggFunction``: ``LAG(x [, n [, default]]) OVER (PARTITION BY … ORDER BY rowtime)``.

An aggregate over the OVER frame whose accumulator keeps the last ``n + 1`` values in order (``n`` is 1 by
default): the value is the oldest of them once ``n + 1`` rows were seen, else the default (NULL without one).
A retraction leaves the accumulator as it is (the value ``n`` rows back does not depend on the frame's start).
The result type is the argument's, nullable.
"""

from __future__ import annotations

from typing import Any

from strom.table.errors import ValidationException
from strom.table.functions.aggfunctions import AggregateFunctionImpl, ResolvedAggregate
from strom.table.types import DataType

__all__ = ["LagAggFunction", "resolve_lag"]


class LagAggFunction(AggregateFunctionImpl):
    """The accumulator is ``(values, offset, default)``; ``values`` the last ``offset + 1`` values, oldest first."""

    name = "LAG"

    def __init__(self, arity: int) -> None:
        self._arity = arity

    def create_accumulator(self) -> tuple[tuple[Any, ...], int, Any]:
        return (), 1, None

    def accumulate(self, acc: tuple[tuple[Any, ...], int, Any], value: Any) -> tuple[tuple[Any, ...], int, Any]:
        if self._arity == 1:
            x, offset, default = value, 1, None
        else:
            x, offset, default = (*value, None)[:3]
        if offset is None or offset < 0:
            raise ValidationException(f"LAG: expected a non-negative offset; got {offset}")
        values = (*acc[0], x)[-(offset + 1) :]
        return values, offset, default

    def retract(self, acc: tuple[tuple[Any, ...], int, Any], value: Any) -> tuple[tuple[Any, ...], int, Any]:
        return acc

    def merge(
        self, acc: tuple[tuple[Any, ...], int, Any], other: tuple[tuple[Any, ...], int, Any]
    ) -> tuple[tuple[Any, ...], int, Any]:
        return (*acc[0], *other[0])[-(other[1] + 1) :], other[1], other[2]

    def get_value(self, acc: tuple[tuple[Any, ...], int, Any]) -> Any:
        values, offset, default = acc
        return values[0] if len(values) == offset + 1 else default


def resolve_lag(arg_types: list[DataType]) -> ResolvedAggregate:
    """``LAG``'s implementation and Flink's result type (the first argument's, nullable)."""
    if not 1 <= len(arg_types) <= 3:
        raise ValidationException(f"LAG expects 1 to 3 arguments (value, offset, default); got {len(arg_types)}")
    return ResolvedAggregate(LagAggFunction(len(arg_types)), arg_types[0].nullable())
