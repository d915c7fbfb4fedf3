"""``AsyncFunction`` and ``AsyncRetryStrategy``: the user side of async I/O (PyFlink 2.x's names).

An :class:`AsyncFunction` turns one record into a coroutine — ``async def async_invoke(value)`` returns the
list of results for that record — and :class:`~strom.api.async_data_stream.AsyncDataStream` runs up to
``capacity`` of those coroutines at a time on one asyncio event loop per subtask. A record whose coroutine
does not finish within the timeout goes to :meth:`AsyncFunction.timeout`, which fails the job by default or
returns results in place of the lost ones. An :class:`AsyncRetryStrategy` re-invokes a record whose result or
exception its predicates match, after a backoff, as long as ``can_retry(attempt)`` holds and the timeout has
not passed.

    >>> import asyncio
    >>> class Lookup(AsyncFunction):
    ...     async def async_invoke(self, value):
    ...         await asyncio.sleep(0)
    ...         return [value * 2]
    >>> asyncio.run(Lookup().async_invoke(21))
    [42]
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from strom.api.functions import RichFunction

__all__ = ["AsyncFunction", "AsyncRetryPredicate", "AsyncRetryStrategy"]

IN = TypeVar("IN")
OUT = TypeVar("OUT")

ResultPredicate = Callable[[list[Any]], bool]
ExceptionPredicate = Callable[[Exception], bool]


class AsyncFunction(RichFunction, Generic[IN, OUT]):
    """Triggers one asynchronous operation per record (Flink's ``AsyncFunction``).

    ``open``/``close`` and ``timeout`` run on the task thread; ``async_invoke`` runs on the subtask's event
    loop, a thread of its own, so it must not block: await I/O instead (``asyncio.to_thread`` for blocking
    calls). An exception raised by ``async_invoke`` that no retry strategy absorbs fails the job."""

    @abstractmethod
    async def async_invoke(self, value: IN) -> list[OUT]:
        """The results for ``value`` (a list, possibly empty)."""

    def timeout(self, value: IN) -> list[OUT]:
        """``async_invoke(value)`` did not finish in time: return results in its place, or raise (the default,
        which fails the job)."""
        raise TimeoutError(f"Async function call has timed out for input: {value}")


class AsyncRetryPredicate(ABC, Generic[OUT]):
    """When a result or an exception calls for another attempt (Flink's ``AsyncRetryPredicate``)."""

    @abstractmethod
    def result_predicate(self) -> ResultPredicate | None:
        """``True`` for a result list that should be retried; ``None``: results are never retried."""

    @abstractmethod
    def exception_predicate(self) -> ExceptionPredicate | None:
        """``True`` for an exception that should be retried; ``None``: exceptions are never retried."""


class AsyncRetryStrategy(ABC, Generic[OUT]):
    """How often and after which delay a record's ``async_invoke`` is attempted again (Flink's
    ``AsyncRetryStrategy``). Attempts count from 1; attempt ``n`` failed is retried when ``can_retry(n)``."""

    @abstractmethod
    def can_retry(self, current_attempts: int) -> bool:
        """Whether another attempt may follow attempt number ``current_attempts``."""

    @abstractmethod
    def get_backoff_time_millis(self, current_attempts: int) -> int:
        """The delay before the attempt after ``current_attempts``, in milliseconds."""

    @abstractmethod
    def get_retry_predicate(self) -> AsyncRetryPredicate[OUT]:
        """The predicates that decide whether a completed attempt is retried."""

    @staticmethod
    def no_restart() -> AsyncRetryStrategy[Any]:
        """Never retry."""
        from strom.api.async_retry_strategies import NO_RETRY_STRATEGY

        return NO_RETRY_STRATEGY

    @staticmethod
    def fixed_delay(
        max_attempts: int,
        backoff_time_millis: int,
        result_predicate: ResultPredicate | None,
        exception_predicate: ExceptionPredicate | None,
    ) -> AsyncRetryStrategy[Any]:
        """Retry up to ``max_attempts`` times, ``backoff_time_millis`` apart."""
        from strom.api.async_retry_strategies import FixedDelayRetryStrategy

        return FixedDelayRetryStrategy(max_attempts, backoff_time_millis, result_predicate, exception_predicate)

    @staticmethod
    def exponential_backoff(
        max_attempts: int,
        initial_delay: int,
        max_retry_delay: int,
        multiplier: float,
        result_predicate: ResultPredicate | None,
        exception_predicate: ExceptionPredicate | None,
    ) -> AsyncRetryStrategy[Any]:
        """Retry up to ``max_attempts`` times, the delay growing from ``initial_delay`` by ``multiplier`` up to
        ``max_retry_delay`` milliseconds."""
        from strom.api.async_retry_strategies import ExponentialBackoffDelayRetryStrategy

        return ExponentialBackoffDelayRetryStrategy(
            max_attempts, initial_delay, max_retry_delay, multiplier, result_predicate, exception_predicate
        )
