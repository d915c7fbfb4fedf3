"""Flink's ``SingleValueAggFunction`` (``SINGLE_VALUE``): the value of a scalar subquery that may return more than
one row. Calcite wraps such a subquery in ``SINGLE_VALUE(col)``; a second row fails the job with
``SingleValueAggFunction received more than one element.`` — strom's message adds what was expected, the scalar
subquery's position in the query and a hint.
"""

from __future__ import annotations

from typing import Any

from strom.table.errors import TableRuntimeException
from strom.table.functions.aggfunctions import AggregateFunctionImpl

__all__ = ["SINGLE_VALUE", "SingleValueAggFunction", "SingleValueName"]

SINGLE_VALUE = "SINGLE_VALUE"


class SingleValueName(str):
    """The aggregate call's name ``SINGLE_VALUE``, carrying the scalar subquery's position (pickled along)."""

    position: str

    def __new__(cls, position: str) -> SingleValueName:
        made = super().__new__(cls, SINGLE_VALUE)
        made.position = position
        return made

    def __getnewargs__(self) -> tuple[str]:
        return (self.position,)


class SingleValueAggFunction(AggregateFunctionImpl):
    """Accumulator ``[value, count]``: the value while exactly one row is present; a second row raises."""

    name = SINGLE_VALUE

    def __init__(self, position: str = "") -> None:
        self.position = position

    def create_accumulator(self) -> Any:
        return [None, 0]

    def accumulate(self, acc: Any, value: Any) -> Any:
        if acc[1] >= 1:
            raise TableRuntimeException(
                f"SingleValueAggFunction received more than one element. A scalar subquery{self.position} expected "
                f"at most one row; got a second row (value {value!r}); hint: aggregate it (MAX(…)), add a WHERE "
                "that selects one row, or LIMIT 1"
            )
        return [value, acc[1] + 1]

    def retract(self, acc: Any, value: Any) -> Any:
        count = acc[1] - 1
        return [None if count == 0 else acc[0], count]

    def merge(self, acc: Any, other: Any) -> Any:
        merged = acc
        if other[1]:
            merged = self.accumulate(acc, other[0])
        return merged

    def get_value(self, acc: Any) -> Any:
        return acc[0]
