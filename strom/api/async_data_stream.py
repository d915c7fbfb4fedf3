"""``AsyncDataStream`` (PyFlink 2.x): async I/O on a stream — each input's results come from a coroutine.

    results = AsyncDataStream.unordered_wait(stream, Lookup(), Time.seconds(10), capacity=100,
                                             output_type=Types.STRING())

``ordered_wait`` keeps input order; ``unordered_wait`` emits results as they complete, never across a
watermark. The ``*_with_retry`` forms take an :class:`~strom.api.async_function.AsyncRetryStrategy`. See
:mod:`strom.runtime.operators.async_wait` for how it runs and is checkpointed.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from strom.api._time import to_millis
from strom.api.async_function import AsyncFunction, AsyncRetryStrategy
from strom.exceptions import InvalidProgramError
from strom.runtime.operators.async_wait import AsyncWaitOperator

if TYPE_CHECKING:
    from strom.api.datastream import DataStream
    from strom.api.typeinfo import TypeInformation

__all__ = ["AsyncDataStream"]


class AsyncDataStream:
    @staticmethod
    def unordered_wait(
        data_stream: DataStream[Any],
        async_function: AsyncFunction[Any, Any],
        timeout: timedelta | int,
        capacity: int = 100,
        output_type: TypeInformation | None = None,
    ) -> DataStream[Any]:
        return _build(data_stream, async_function, timeout, capacity, output_type, None, ordered=False)

    @staticmethod
    def unordered_wait_with_retry(
        data_stream: DataStream[Any],
        async_function: AsyncFunction[Any, Any],
        timeout: timedelta | int,
        async_retry_strategy: AsyncRetryStrategy[Any],
        capacity: int = 100,
        output_type: TypeInformation | None = None,
    ) -> DataStream[Any]:
        return _build(data_stream, async_function, timeout, capacity, output_type, async_retry_strategy, ordered=False)

    @staticmethod
    def ordered_wait(
        data_stream: DataStream[Any],
        async_function: AsyncFunction[Any, Any],
        timeout: timedelta | int,
        capacity: int = 100,
        output_type: TypeInformation | None = None,
    ) -> DataStream[Any]:
        return _build(data_stream, async_function, timeout, capacity, output_type, None, ordered=True)

    @staticmethod
    def ordered_wait_with_retry(
        data_stream: DataStream[Any],
        async_function: AsyncFunction[Any, Any],
        timeout: timedelta | int,
        async_retry_strategy: AsyncRetryStrategy[Any],
        capacity: int = 100,
        output_type: TypeInformation | None = None,
    ) -> DataStream[Any]:
        return _build(data_stream, async_function, timeout, capacity, output_type, async_retry_strategy, ordered=True)


def _build(
    data_stream: DataStream[Any],
    async_function: AsyncFunction[Any, Any],
    timeout: timedelta | int,
    capacity: int,
    output_type: TypeInformation | None,
    retry: AsyncRetryStrategy[Any] | None,
    *,
    ordered: bool,
) -> DataStream[Any]:
    if not isinstance(async_function, AsyncFunction):
        raise InvalidProgramError(
            f"expected an AsyncFunction; got a {type(async_function).__name__}; hint: subclass AsyncFunction "
            "and implement `async def async_invoke(self, value)` returning a list of results"
        )
    if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
        raise InvalidProgramError(f"expected a positive int capacity; got {capacity!r}; hint: capacity=100")
    if retry is not None and not isinstance(retry, AsyncRetryStrategy):
        raise InvalidProgramError(
            f"expected an AsyncRetryStrategy; got a {type(retry).__name__}; hint: AsyncRetryStrategy.fixed_delay(...)"
        )
    timeout_ms = to_millis(timeout, "the async I/O timeout")
    if timeout_ms <= 0:
        raise InvalidProgramError(f"expected a positive async I/O timeout; got {timeout!r}; hint: Time.seconds(10)")
    operator = AsyncWaitOperator(
        async_function, timeout_ms=timeout_ms, capacity=capacity, ordered=ordered, retry_strategy=retry
    )
    name = "Async Wait (ordered)" if ordered else "Async Wait (unordered)"
    return data_stream._one_input(name, operator, output_type)
