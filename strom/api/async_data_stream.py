"""``AsyncDataStream``: applies an :class:`~strom.api.async_function.AsyncFunction` to a stream (PyFlink 2.x's
``AsyncDataStream``, same names and argument order).

    >>> import asyncio
    >>> from datetime import timedelta
    >>> class Enrich(AsyncFunction):
    ...     async def async_invoke(self, value):
    ...         await asyncio.sleep(0.01)  # a lookup in a remote service
    ...         return [(value, value * value)]
    >>> env = StreamExecutionEnvironment.get_execution_environment()          # doctest: +SKIP
    >>> stream = env.from_collection(range(100))                                # doctest: +SKIP
    >>> AsyncDataStream.ordered_wait(stream, Enrich(), timedelta(seconds=5), capacity=20).print()  # doctest: +SKIP

``ordered_wait`` emits each record's results in input order; ``unordered_wait`` as they complete (never across a
watermark). At most ``capacity`` records are in flight per subtask; the task stops reading input while that many
wait. ``timeout`` — a ``timedelta`` (PyFlink's ``Time``/``Duration`` included) or an int of milliseconds, ``0``
for none — bounds each record, retries included. In-flight records are part of checkpoints.
"""

from __future__ import annotations

import inspect
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from strom.api._time import to_millis
from strom.api.async_function import AsyncFunction
from strom.api.async_retry_strategies import NO_RETRY_STRATEGY, AsyncRetryStrategy
from strom.exceptions import InvalidProgramError
from strom.runtime.operators.async_wait import AsyncWaitOperator

if TYPE_CHECKING:
    from strom.api.datastream import DataStream
    from strom.api.typeinfo import TypeInformation

__all__ = ["AsyncDataStream"]

OPERATOR_NAME = "async wait operator"  # PyFlink's name of the transformation


class AsyncDataStream:
    """Helpers that apply an :class:`AsyncFunction` to a :class:`DataStream`."""

    @staticmethod
    def unordered_wait(
        data_stream: DataStream[Any],
        async_function: AsyncFunction[Any, Any],
        timeout: timedelta | int,
        capacity: int = 100,
        output_type: TypeInformation | None = None,
    ) -> DataStream[Any]:
        """Results as they complete; a watermark still follows every record before it."""
        return AsyncDataStream.unordered_wait_with_retry(
            data_stream, async_function, timeout, NO_RETRY_STRATEGY, capacity, output_type
        )

    @staticmethod
    def unordered_wait_with_retry(
        data_stream: DataStream[Any],
        async_function: AsyncFunction[Any, Any],
        timeout: timedelta | int,
        async_retry_strategy: AsyncRetryStrategy[Any],
        capacity: int = 100,
        output_type: TypeInformation | None = None,
    ) -> DataStream[Any]:
        """:meth:`unordered_wait`, retrying by ``async_retry_strategy``."""
        return _apply(data_stream, async_function, timeout, async_retry_strategy, capacity, output_type, False)

    @staticmethod
    def ordered_wait(
        data_stream: DataStream[Any],
        async_function: AsyncFunction[Any, Any],
        timeout: timedelta | int,
        capacity: int = 100,
        output_type: TypeInformation | None = None,
    ) -> DataStream[Any]:
        """Results in the order of their input records."""
        return AsyncDataStream.ordered_wait_with_retry(
            data_stream, async_function, timeout, NO_RETRY_STRATEGY, capacity, output_type
        )

    @staticmethod
    def ordered_wait_with_retry(
        data_stream: DataStream[Any],
        async_function: AsyncFunction[Any, Any],
        timeout: timedelta | int,
        async_retry_strategy: AsyncRetryStrategy[Any],
        capacity: int = 100,
        output_type: TypeInformation | None = None,
    ) -> DataStream[Any]:
        """:meth:`ordered_wait`, retrying by ``async_retry_strategy``."""
        return _apply(data_stream, async_function, timeout, async_retry_strategy, capacity, output_type, True)


def _apply(
    data_stream: DataStream[Any],
    function: AsyncFunction[Any, Any],
    timeout: timedelta | int,
    strategy: AsyncRetryStrategy[Any],
    capacity: int,
    output_type: TypeInformation | None,
    ordered: bool,
) -> DataStream[Any]:
    timeout_ms = _validate(function, timeout, strategy, capacity)
    operator = AsyncWaitOperator(
        function, timeout_ms=timeout_ms, capacity=capacity, ordered=ordered, retry_strategy=strategy
    )
    return data_stream._one_input(OPERATOR_NAME, operator, output_type)


def _validate(function: object, timeout: object, strategy: object, capacity: object) -> int:
    invoke = getattr(function, "async_invoke", None)
    if isinstance(function, type) or not inspect.iscoroutinefunction(invoke):
        got = f"the class {function.__name__}" if isinstance(function, type) else f"a {type(function).__name__}"
        raise InvalidProgramError(
            f"expected an AsyncFunction instance whose async_invoke is declared 'async def'; got {got}; "
            "hint: class Lookup(AsyncFunction): async def async_invoke(self, value): return [...]"
        )
    try:
        timeout_ms = to_millis(timeout, "the timeout of an async wait operator")
    except InvalidProgramError:
        millis = getattr(timeout, "to_milliseconds", None)  # PyFlink's Time
        if not callable(millis):
            raise
        timeout_ms = int(millis())
    if timeout_ms < 0:
        raise InvalidProgramError(
            f"expected a timeout of zero (none) or more for the async wait operator; got {timeout_ms} ms; "
            "hint: timedelta(seconds=10)"
        )
    if not isinstance(strategy, AsyncRetryStrategy):
        raise InvalidProgramError(
            f"expected an AsyncRetryStrategy; got {strategy!r:.60}; hint: AsyncRetryStrategy.fixed_delay(3, 100, "
            "None, has_exception_predicate), or unordered_wait/ordered_wait without retries"
        )
    if strategy is not NO_RETRY_STRATEGY and timeout_ms <= 0:
        raise InvalidProgramError(
            "expected a timeout above zero for async I/O with retries; got none; hint: the timeout bounds every "
            "attempt of a record together, e.g. timedelta(seconds=10)"
        )
    if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
        raise InvalidProgramError(
            f"expected a capacity of at least 1 record in flight; got {capacity!r}; hint: capacity=100"
        )
    return timeout_ms
