"""Async I/O functions (PyFlink 2.x's ``AsyncFunction`` and retry strategies).

An :class:`AsyncFunction`'s ``async_invoke(value)`` is a coroutine returning the results of one input (a list,
even of one result); the coroutines of a subtask run on one asyncio event loop, at most ``capacity`` at a time
(see :class:`~strom.api.async_data_stream.AsyncDataStream`).

    class Lookup(AsyncFunction):
        async def async_invoke(self, value):
            row = await client.get(value)          # any asyncio client
            return [(value, row)]

        def timeout(self, value):                  # optional: results instead of failing the job
            return [(value, None)]
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Collection
from typing import Any, Generic, TypeVar

from strom.api.functions import RichFunction

__all__ = [
    "AsyncFunction",
    "AsyncRetryPredicate",
    "AsyncRetryStrategy",
    "ExponentialBackoffDelayRetryStrategy",
    "FixedDelayRetryStrategy",
    "NoRetryStrategy",
    "RetryPredicate",
]

IN = TypeVar("IN")
OUT = TypeVar("OUT")

ResultPredicate = Callable[[list[Any]], bool]
ExceptionPredicate = Callable[[BaseException], bool]


class AsyncFunction(RichFunction, Generic[IN, OUT]):
    """Flink's ``AsyncFunction`` in PyFlink 2.x's form: ``async def async_invoke(value) -> list``."""

    @abstractmethod
    async def async_invoke(self, value: IN) -> Collection[OUT]:
        """The results of ``value``; raising fails the job (unless the retry strategy retries it)."""

    def timeout(self, value: IN) -> Collection[OUT]:
        """Called when ``async_invoke(value)`` did not complete within the operator's timeout; the default fails
        the job with a ``TimeoutError``. Return results to go on instead."""
        raise TimeoutError(f"async_invoke timed out for input {value!r:.80}")


class AsyncRetryPredicate(ABC, Generic[OUT]):
    """When a result or an exception of ``async_invoke`` asks for another attempt."""

    @abstractmethod
    def result_predicate(self) -> ResultPredicate | None: ...

    @abstractmethod
    def exception_predicate(self) -> ExceptionPredicate | None: ...


class RetryPredicate(AsyncRetryPredicate[OUT]):
    def __init__(self, result_predicate: ResultPredicate | None, exception_predicate: ExceptionPredicate | None):
        self._result = result_predicate
        self._exception = exception_predicate

    def result_predicate(self) -> ResultPredicate | None:
        return self._result

    def exception_predicate(self) -> ExceptionPredicate | None:
        return self._exception


class AsyncRetryStrategy(ABC, Generic[OUT]):
    """Flink's ``AsyncRetryStrategy``: whether attempt ``current_attempts + 1`` may happen, and after how long."""

    @abstractmethod
    def can_retry(self, current_attempts: int) -> bool: ...

    @abstractmethod
    def get_backoff_time_millis(self, current_attempts: int) -> int: ...

    @abstractmethod
    def get_retry_predicate(self) -> AsyncRetryPredicate[OUT]: ...

    @staticmethod
    def no_restart() -> AsyncRetryStrategy[Any]:
        return NoRetryStrategy()

    @staticmethod
    def fixed_delay(
        max_attempts: int,
        backoff_time_millis: int,
        result_predicate: ResultPredicate | None = None,
        exception_predicate: ExceptionPredicate | None = None,
    ) -> AsyncRetryStrategy[Any]:
        return FixedDelayRetryStrategy(max_attempts, backoff_time_millis, result_predicate, exception_predicate)

    @staticmethod
    def exponential_backoff(
        max_attempts: int,
        initial_delay: int,
        max_retry_delay: int,
        multiplier: float,
        result_predicate: ResultPredicate | None = None,
        exception_predicate: ExceptionPredicate | None = None,
    ) -> AsyncRetryStrategy[Any]:
        return ExponentialBackoffDelayRetryStrategy(
            max_attempts, initial_delay, max_retry_delay, multiplier, result_predicate, exception_predicate
        )


class NoRetryStrategy(AsyncRetryStrategy[Any]):
    def can_retry(self, current_attempts: int) -> bool:
        return False

    def get_backoff_time_millis(self, current_attempts: int) -> int:
        return -1

    def get_retry_predicate(self) -> AsyncRetryPredicate[Any]:
        return RetryPredicate(None, None)


def _positive(value: object, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f"expected {what} greater than zero; got {value!r}")


class FixedDelayRetryStrategy(AsyncRetryStrategy[Any]):
    """Up to ``max_attempts`` retries, ``backoff_time_millis`` apart (Flink's ``FixedDelayRetryStrategy``)."""

    def __init__(
        self,
        max_attempts: int,
        backoff_time_millis: int,
        result_predicate: ResultPredicate | None,
        exception_predicate: ExceptionPredicate | None,
    ) -> None:
        _positive(max_attempts, "max_attempts")
        _positive(backoff_time_millis, "backoff_time_millis")
        self.max_attempts = max_attempts
        self.backoff_time_millis = backoff_time_millis
        self._predicate: RetryPredicate[Any] = RetryPredicate(result_predicate, exception_predicate)

    def can_retry(self, current_attempts: int) -> bool:
        return current_attempts <= self.max_attempts

    def get_backoff_time_millis(self, current_attempts: int) -> int:
        return self.backoff_time_millis

    def get_retry_predicate(self) -> AsyncRetryPredicate[Any]:
        return self._predicate


class ExponentialBackoffDelayRetryStrategy(AsyncRetryStrategy[Any]):
    """Up to ``max_attempts`` retries, the delay growing by ``multiplier`` from ``initial_delay`` up to
    ``max_retry_delay`` milliseconds (Flink's ``ExponentialBackoffDelayRetryStrategy``)."""

    def __init__(
        self,
        max_attempts: int,
        initial_delay: int,
        max_retry_delay: int,
        multiplier: float,
        result_predicate: ResultPredicate | None,
        exception_predicate: ExceptionPredicate | None,
    ) -> None:
        for value, what in (
            (max_attempts, "max_attempts"),
            (initial_delay, "initial_delay"),
            (max_retry_delay, "max_retry_delay"),
            (multiplier, "multiplier"),
        ):
            _positive(value, what)
        self.max_attempts = max_attempts
        self.initial_delay = initial_delay
        self.max_retry_delay = max_retry_delay
        self.multiplier = multiplier
        self._predicate: RetryPredicate[Any] = RetryPredicate(result_predicate, exception_predicate)

    def can_retry(self, current_attempts: int) -> bool:
        return current_attempts <= self.max_attempts

    def get_backoff_time_millis(self, current_attempts: int) -> int:
        """The delay before retry ``current_attempts`` (1 for the first): a pure function of the attempt, so one
        strategy serves every element in flight."""
        delay = self.initial_delay * self.multiplier ** max(0, current_attempts - 1)
        return int(min(delay, self.max_retry_delay))

    def get_retry_predicate(self) -> AsyncRetryPredicate[Any]:
        return self._predicate
