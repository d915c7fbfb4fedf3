"""``SUM``/``AVG``/``MIN``/``MAX`` of a ``FLOAT`` argument in Java ``float`` arithmetic (Flink's
``FloatSumAggFunction``, ``FloatAvgAggFunction``, ``FloatMinAggFunction``, ``FloatMaxAggFunction``).

Flink keeps a FLOAT aggregate's accumulator in a Java ``float``: every ``+``/``-`` (accumulate, retract, merge) is
rounded to 32 bits, so ``SUM`` of ``53.1, 3.1, 30.2`` is ``86.399994``, not the 64-bit ``86.4`` (``AVG`` sums the
floats in a ``double`` and rounds the quotient). These subclasses
of the DOUBLE functions round each step to 32 bits (``ctypes.c_float``, :func:`float32`: about 0.1 µs a call,
overflow to ``±Infinity`` as Java); DOUBLE aggregates stay as they are. The planner picks them for FLOAT arguments
(:func:`strom.table.functions.aggregate_functions.resolve_aggregate`), the generated ``accumulate`` inlines
:class:`FloatSum`/:class:`FloatAvg` (``agg_handler_code_generator``).
"""

from __future__ import annotations

import ctypes
from typing import Any

from strom.table.functions.aggfunctions import (
    AggregateFunctionImpl,
    Avg,
    Extreme,
    ExtremeWithRetract,
    ResolvedAggregate,
    Sum,
)
from strom.table.functions.arithmetic import float32
from strom.table.types import DataType

__all__ = [
    "FloatAvg",
    "FloatExtreme",
    "FloatExtremeWithRetract",
    "FloatSum",
    "float32",
    "resolve_float_aggregate",
]

_c_float = ctypes.c_float


class FloatSum(Sum):
    """``SUM`` of FLOAT: ``(sum, non-null count)`` with the sum a 32-bit float after every step."""

    def __init__(self) -> None:
        super().__init__(0.0)

    def accumulate(self, acc: tuple[Any, int], value: Any) -> tuple[Any, int]:
        return acc if value is None else (_c_float(acc[0] + _c_float(value).value).value, acc[1] + 1)

    def retract(self, acc: tuple[Any, int], value: Any) -> tuple[Any, int]:
        return acc if value is None else (_c_float(acc[0] - _c_float(value).value).value, acc[1] - 1)

    def merge(self, acc: tuple[Any, int], other: tuple[Any, int]) -> tuple[Any, int]:
        return (_c_float(acc[0] + other[0]).value, acc[1] + other[1])


class FloatAvg(Avg):
    """``AVG`` of FLOAT: the Java floats summed in a ``double`` (Flink's ``FloatAvgAggFunction`` sums in DOUBLE), the
    quotient rounded to a 32-bit float."""

    def __init__(self) -> None:
        super().__init__(0.0, kind="float")

    def accumulate(self, acc: tuple[Any, int], value: Any) -> tuple[Any, int]:
        return acc if value is None else (acc[0] + _c_float(value).value, acc[1] + 1)

    def retract(self, acc: tuple[Any, int], value: Any) -> tuple[Any, int]:
        return acc if value is None else (acc[0] - _c_float(value).value, acc[1] - 1)

    def get_value(self, acc: tuple[Any, int]) -> Any:
        total, count = acc
        return None if count <= 0 else _c_float(total / count).value


class FloatExtreme(Extreme):
    """``MIN``/``MAX`` of FLOAT over an insert-only input: the extreme as a 32-bit float."""

    def get_value(self, acc: Any) -> Any:
        return None if acc is None else _c_float(acc).value


class FloatExtremeWithRetract(ExtremeWithRetract):
    """``MIN``/``MAX`` of FLOAT over an updating input: the extreme as a 32-bit float."""

    def get_value(self, acc: tuple[Any, dict[Any, int]]) -> Any:
        value = super().get_value(acc)
        return None if value is None else _c_float(value).value


def resolve_float_aggregate(upper: str, arg: DataType, *, retracting: bool) -> ResolvedAggregate:
    """``SUM``/``SUM0``/``AVG``/``MIN``/``MAX`` of a FLOAT argument: a FLOAT result, as Flink's."""
    function: AggregateFunctionImpl
    if upper in ("MIN", "MAX"):
        is_max = upper == "MAX"
        function = FloatExtremeWithRetract(is_max) if retracting else FloatExtreme(is_max)
    else:
        function = FloatAvg() if upper == "AVG" else FloatSum()
    return ResolvedAggregate(function, arg.nullable())
