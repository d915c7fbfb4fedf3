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
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from strom.runtime.streamrecord import timestamps_of, with_timestamps
from strom.table.planner.codegen import compile_calc, compile_projection
from strom.table.planner.rex import RexCall, RexInputRef, RexNode, RexSpecial
from strom.table.runtime.window.table_stream_operator import TableStreamOperator, make_row

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


class _Nested(Exception):
    """An async call inside another one's arguments: the Calc keeps its per-row path."""


def _has_async(node: RexNode) -> bool:
    from strom.table.udf import is_async_call

    if isinstance(node, RexCall) and is_async_call(node.function):
        return True
    return any(_has_async(o) for o in getattr(node, "operands", ()))


def split_async_calc(
    projection: Sequence[RexNode] | None, condition: RexNode | None, arity: int
) -> tuple[list[RexCall], tuple[RexNode, ...] | None, RexNode | None] | None:
    """``(async calls, projection, condition)`` with each call replaced by the input column ``arity + i``; ``None``
    when the Calc has no async call or one is nested in another's arguments."""
    from strom.table.udf import is_async_call

    calls: list[RexCall] = []

    def rewrite(node: RexNode) -> RexNode:
        if isinstance(node, RexCall):
            if is_async_call(node.function):
                if any(_has_async(o) for o in node.operands):
                    raise _Nested
                calls.append(node)
                return RexInputRef(arity + len(calls) - 1, node.type)
            return replace(node, operands=tuple(rewrite(o) for o in node.operands))
        if isinstance(node, RexSpecial):
            return replace(node, operands=tuple(rewrite(o) for o in node.operands))
        return node

    try:
        new_projection = None if projection is None else tuple(rewrite(p) for p in projection)
        new_condition = None if condition is None else rewrite(condition)
    except _Nested:
        return None
    return (calls, new_projection, new_condition) if calls else None


class AsyncCalcOperator(TableStreamOperator):
    """The async calls of a batch, concurrently up to a capacity, results in input order; then the Calc per row."""

    def __init__(
        self,
        calls: Sequence[RexCall],
        projection: Sequence[RexNode] | None,
        condition: RexNode | None,
        max_concurrent: int,
    ) -> None:
        super().__init__()
        self.name = "AsyncCalc"
        self.functions = [c.function for c in calls]
        self.arguments = [compile_projection(c.operands) for c in calls]
        self.max_concurrent = max_concurrent
        self.filtered = condition is not None
        self.calc: Callable[[Any], Any] = compile_calc(projection, condition)

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

    def process_batch(self, batch: list[Any]) -> None:
        from strom.table.udf import event_loop

        self._records_in += len(batch)
        if not batch:
            return
        results = event_loop().run_until_complete(self._all(batch))
        stamps = timestamps_of(batch)
        calc, out = self.calc, []
        out_stamps: list[Any] = []
        for i, row in enumerate(batch):
            extended = make_row([*row._values, *(r[i] for r in results)], None, row._row_kind)
            if self.filtered:
                for value in calc(extended):
                    out.append(value)
                    out_stamps.append(None if stamps is None else stamps[i])
            else:
                out.append(calc(extended))
        if not self.filtered:
            out_stamps = list(stamps) if stamps is not None else []
        if out:
            self.output.emit(with_timestamps(out, out_stamps if stamps is not None else None))


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
