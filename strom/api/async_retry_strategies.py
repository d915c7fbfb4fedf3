"""``AsyncRetryStrategy`` and its ready-made implementations (PyFlink's ``async_retry_strategies``; Flink's
``AsyncRetryStrategy`` and ``AsyncRetryStrategies``): no retry, fixed delay, exponential backoff.

A strategy decides how often and after which delay an
:class:`~strom.api.async_function.AsyncFunction`'s ``async_invoke`` is attempted again for one record, and its
:class:`AsyncRetryPredicate` which results or exceptions call for another attempt. The interface and the
implementations share this module because PyFlink's factories (``AsyncRetryStrategy.fixed_delay(...)``) build
the implementations.

Attempts count from 1 and attempt ``n`` may be followed by another while ``n <= max_attempts`` — PyFlink's
counting, so ``max_attempts`` is the number of *retries* after the first attempt.

    >>> s = ExponentialBackoffDelayRetryStrategy(5, 100, 500, 2.0, None, lambda e: True)
    >>> [s.get_backoff_time_millis(n) for n in range(1, 6)], s.can_retry(5), s.can_retry(6)
    ([100, 200, 400, 500, 500], True, False)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from strom.exceptions import InvalidProgramError

__all__ = [
    "NO_RETRY_STRATEGY",
    "AsyncRetryPredicate",
    "AsyncRetryStrategy",
    "ExponentialBackoffDelayRetryStrategy",
    "FixedDelayRetryStrategy",
    "NoRetryStrategy",
    "RetryPredicate",
]

OUT = TypeVar("OUT")

ResultPredicate = Callable[[list[Any]], bool]
ExceptionPredicate = Callable[[Exception], bool]


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
        return NO_RETRY_STRATEGY

    @staticmethod
    def fixed_delay(
        max_attempts: int,
        backoff_time_millis: int,
        result_predicate: ResultPredicate | None,
        exception_predicate: ExceptionPredicate | None,
    ) -> AsyncRetryStrategy[Any]:
        """Retry up to ``max_attempts`` times, ``backoff_time_millis`` apart."""
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
        return ExponentialBackoffDelayRetryStrategy(
            max_attempts, initial_delay, max_retry_delay, multiplier, result_predicate, exception_predicate
        )


def _positive(name: str, value: float, strategy: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise InvalidProgramError(
            f"{name} of {strategy} must be a number greater than zero; got {value!r}; "
            f"hint: AsyncRetryStrategy.fixed_delay(3, 100, None, has_exception_predicate)"
        )


class RetryPredicate(AsyncRetryPredicate[OUT], Generic[OUT]):
    """The two predicates as given (``None``: that kind of outcome is never retried)."""

    def __init__(self, result_predicate: ResultPredicate | None, exception_predicate: ExceptionPredicate | None):
        self._result_predicate = result_predicate
        self._exception_predicate = exception_predicate

    def result_predicate(self) -> ResultPredicate | None:
        return self._result_predicate

    def exception_predicate(self) -> ExceptionPredicate | None:
        return self._exception_predicate


class NoRetryStrategy(AsyncRetryStrategy[OUT], Generic[OUT]):
    def can_retry(self, current_attempts: int) -> bool:
        return False

    def get_backoff_time_millis(self, current_attempts: int) -> int:
        return -1

    def get_retry_predicate(self) -> AsyncRetryPredicate[OUT]:
        return RetryPredicate(None, None)


class FixedDelayRetryStrategy(AsyncRetryStrategy[OUT], Generic[OUT]):
    def __init__(
        self,
        max_attempts: int,
        backoff_time_millis: int,
        result_predicate: ResultPredicate | None,
        exception_predicate: ExceptionPredicate | None,
    ) -> None:
        _positive("max_attempts", max_attempts, "a fixed-delay retry strategy")
        _positive("backoff_time_millis", backoff_time_millis, "a fixed-delay retry strategy")
        self._max_attempts = max_attempts
        self._backoff_time_millis = backoff_time_millis
        self._predicate: RetryPredicate[OUT] = RetryPredicate(result_predicate, exception_predicate)

    def can_retry(self, current_attempts: int) -> bool:
        return current_attempts <= self._max_attempts

    def get_backoff_time_millis(self, current_attempts: int) -> int:
        return self._backoff_time_millis

    def get_retry_predicate(self) -> AsyncRetryPredicate[OUT]:
        return self._predicate


class ExponentialBackoffDelayRetryStrategy(AsyncRetryStrategy[OUT], Generic[OUT]):
    """The delay after attempt ``n`` is ``initial_delay * multiplier ** (n - 1)``, at most ``max_retry_delay``.

    Unlike PyFlink's, which keeps the last delay in the strategy object (shared by every record in flight),
    the delay is a function of the attempt number alone, so concurrent records do not speed up each other's
    backoff."""

    def __init__(
        self,
        max_attempts: int,
        initial_delay: int,
        max_retry_delay: int,
        multiplier: float,
        result_predicate: ResultPredicate | None,
        exception_predicate: ExceptionPredicate | None,
    ) -> None:
        what = "an exponential-backoff retry strategy"
        for name, value in (
            ("max_attempts", max_attempts),
            ("initial_delay", initial_delay),
            ("max_retry_delay", max_retry_delay),
            ("multiplier", multiplier),
        ):
            _positive(name, value, what)
        self._max_attempts = max_attempts
        self._initial_delay = initial_delay
        self._max_retry_delay = max_retry_delay
        self._multiplier = multiplier
        self._predicate: RetryPredicate[OUT] = RetryPredicate(result_predicate, exception_predicate)

    def can_retry(self, current_attempts: int) -> bool:
        return current_attempts <= self._max_attempts

    def get_backoff_time_millis(self, current_attempts: int) -> int:
        delay: float = self._initial_delay
        for _ in range(max(current_attempts, 1) - 1):
            delay = min(delay * self._multiplier, self._max_retry_delay)
            if delay >= self._max_retry_delay:
                break
        return int(delay)

    def get_retry_predicate(self) -> AsyncRetryPredicate[OUT]:
        return self._predicate


NO_RETRY_STRATEGY: AsyncRetryStrategy[Any] = NoRetryStrategy()
