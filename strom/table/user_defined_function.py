"""Flink's ``UserDefinedFunction`` hierarchy with PyFlink's names and abstract methods: ``ScalarFunction``,
``AsyncScalarFunction``, ``TableFunction``, ``AggregateFunction`` and ``TableAggregateFunction`` (users import them
from :mod:`strom.table.udf`, PyFlink's module; adapters such as :mod:`strom.table.pandas_udf` subclass them here)."""

from __future__ import annotations

import abc
from typing import Any

from strom.table.errors import TableException

__all__ = [
    "AggregateFunction",
    "AsyncScalarFunction",
    "ImperativeAggregateFunction",
    "ScalarFunction",
    "TableAggregateFunction",
    "TableFunction",
    "UserDefinedFunction",
]


class UserDefinedFunction(abc.ABC):  # noqa: B024 -- PyFlink's base: open/close/is_deterministic, no abstract method
    """PyFlink's base of every user-defined function: ``open``/``close`` around the working methods."""

    def open(self, function_context: Any) -> None:
        """Called once before the first call of the working methods (PyFlink's ``FunctionContext`` argument)."""

    def close(self) -> None:
        """Called once after the last call of the working methods."""

    def is_deterministic(self) -> bool:
        return True


class ScalarFunction(UserDefinedFunction):
    """A scalar function class (``eval`` maps values to a value), as PyFlink's."""

    @abc.abstractmethod
    def eval(self, *args: Any) -> Any:
        """The function's value for one row's arguments."""


class AsyncScalarFunction(UserDefinedFunction):
    """An async scalar function class (``async def eval``), as PyFlink 2.3's: strom awaits each call in the Calc."""

    @abc.abstractmethod
    async def eval(self, *args: Any) -> Any:
        """The function's value for one row's arguments (a coroutine)."""


class TableFunction(UserDefinedFunction):
    """A table function class (``eval`` yields rows), as PyFlink's."""

    @abc.abstractmethod
    def eval(self, *args: Any) -> Any:
        """The rows (an iterable) for one row's arguments."""


class ImperativeAggregateFunction(UserDefinedFunction):
    """PyFlink's base of aggregate and table aggregate functions: a mutable accumulator updated in place."""

    @abc.abstractmethod
    def create_accumulator(self) -> Any:
        """A new, empty accumulator (picklable: it lives in keyed state)."""

    @abc.abstractmethod
    def accumulate(self, accumulator: Any, *args: Any) -> None:
        """Adds one row's arguments to ``accumulator`` in place."""

    def retract(self, accumulator: Any, *args: Any) -> None:
        raise TableException(
            f"{type(self).__name__}.retract: expected it implemented; got PyFlink's default; "
            "hint: an aggregate over an updating input (after a GROUP BY, an outer join, OVER) must retract"
        )

    def merge(self, accumulator: Any, accumulators: Any) -> None:
        raise TableException(
            f"{type(self).__name__}.merge: expected it implemented; got PyFlink's default; "
            "hint: session windows and two-phase plans merge accumulators"
        )

    def get_result_type(self) -> Any:
        """The result's ``DataType`` (or type string); None: ``udaf(..., result_type=...)`` declares it."""
        return None

    def get_accumulator_type(self) -> Any:
        return None


class AggregateFunction(ImperativeAggregateFunction):
    """An aggregate function class, as PyFlink's: ``get_value(accumulator)`` is the group's value."""

    @abc.abstractmethod
    def get_value(self, accumulator: Any) -> Any:
        """The aggregate's (early or final) value of ``accumulator``."""


class TableAggregateFunction(ImperativeAggregateFunction):
    """A table aggregate function class, as PyFlink's: ``emit_value(accumulator)`` yields the group's rows."""

    @abc.abstractmethod
    def emit_value(self, accumulator: Any) -> Any:
        """The group's rows (an iterable of ``Row``, tuples or scalars) for ``accumulator``."""
