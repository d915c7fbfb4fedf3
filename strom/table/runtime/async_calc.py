"""A Calc with async scalar functions called concurrently (Flink's ``AsyncCalcSplitRule`` and its
``AsyncFunctionRunner`` under an ordered ``AsyncWaitOperator``; PyFlink 2.3's async ``OrderedStreamElementQueue``).

:func:`split_async_calc` takes the calls of ``async def`` / ``AsyncScalarFunction`` functions out of a Calc's
projection and condition (each becomes a reference to a column appended to the input row, as the split rule does).
:class:`AsyncCalcOperator` evaluates their arguments per row, runs the calls of a whole strom batch on the subtask's
event loop with at most ``table.exec.async-scalar.max-concurrent-operations`` (Flink's key, default 10) in flight,
and emits the rows in input order with their own results; then the rest of the Calc runs per row. A call nested in
another async call's arguments keeps the per-row path (awaited one at a time).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from strom.table.planner.rex import RexCall, RexNode
from strom.table.runtime.batch_call_calc import BatchCallCalcOperator, split_calls

if TYPE_CHECKING:
    from strom.api.datastream import DataStream

__all__ = [
    "MAX_CONCURRENT_OPERATIONS",
    "AsyncCalcOperator",
    "async_calc",
    "max_concurrent_operations",
    "split_async_calc",
]

MAX_CONCURRENT_OPERATIONS = "table.exec.async-scalar.max-concurrent-operations"
DEFAULT_MAX_CONCURRENT_OPERATIONS = 10


def max_concurrent_operations(env: Any) -> int:
    """``table.exec.async-scalar.max-concurrent-operations`` of the job (the TableEnvironment passes it on)."""
    value = env.get_configuration().get_integer(MAX_CONCURRENT_OPERATIONS, DEFAULT_MAX_CONCURRENT_OPERATIONS)
    if value < 1:
        from strom.table.errors import ValidationException

        raise ValidationException(f"'{MAX_CONCURRENT_OPERATIONS}': expected a positive number; got {value}")
    return int(value)


def split_async_calc(
    projection: Sequence[RexNode] | None, condition: RexNode | None, arity: int
) -> tuple[list[RexCall], tuple[RexNode, ...] | None, RexNode | None] | None:
    """``(async calls, projection, condition)`` with each call replaced by the input column ``arity + i``; ``None``
    when the Calc has no async call or one is nested in another's arguments."""
    from strom.table.udf import is_async_call

    return split_calls(projection, condition, arity, lambda call: is_async_call(call.function))


class AsyncCalcOperator(BatchCallCalcOperator):
    """The async calls of a batch, concurrently up to a capacity, results in input order; then the Calc per row."""

    def __init__(
        self,
        calls: Sequence[RexCall],
        projection: Sequence[RexNode] | None,
        condition: RexNode | None,
        max_concurrent: int,
    ) -> None:
        super().__init__(calls, projection, condition)
        self.name = "AsyncCalc"
        self.max_concurrent = max_concurrent

    async def _all(self, batch: list[Any]) -> list[list[Any]]:
        from strom.table.udf import coroutine_function

        limit = asyncio.Semaphore(self.max_concurrent)
        functions = [coroutine_function(f) for f in self.functions]

        async def one(function: Any, args: list[Any]) -> Any:
            async with limit:
                return await function(*args)

        columns = []
        for function, arguments in zip(functions, self.arguments, strict=True):
            columns.append([one(function, arguments(row)) for row in batch])
        flat = await asyncio.gather(*[c for column in columns for c in column])
        n = len(batch)
        return [list(flat[i * n : (i + 1) * n]) for i in range(len(columns))]

    def call_results(self, batch: list[Any]) -> list[list[Any]]:
        from strom.table.udf import event_loop

        return event_loop().run_until_complete(self._all(batch))


def async_calc(
    stream: DataStream[Any],
    calls: Sequence[RexCall],
    projection: Sequence[RexNode] | None,
    condition: RexNode | None,
    name: str,
    max_concurrent: int,
) -> DataStream[Any]:
    """The Calc of :func:`split_async_calc`'s parts over ``stream``: its async calls concurrently per batch."""
    return stream._one_input(name, AsyncCalcOperator(calls, projection, condition, max_concurrent))
