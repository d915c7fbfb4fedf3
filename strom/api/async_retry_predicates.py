"""PyFlink's ``async_retry_predicates``: ready-made predicates for ``AsyncRetryStrategy``.

AsyncRetryStrategy.fixed_delay(3, 100, result_predicate=async_retry_predicates.empty_result_predicate,
                               exception_predicate=functools.partial(
                                   async_retry_predicates.exception_type_predicate,
                                   expected_error_type=TimeoutError))
"""

from __future__ import annotations

from typing import Any

__all__ = ["empty_result_predicate", "exception_type_predicate", "has_exception_predicate"]


def empty_result_predicate(result: Any) -> bool:
    """Retry when ``async_invoke`` returned no result."""
    return result is None or len(result) == 0


def has_exception_predicate(error: BaseException | None) -> bool:
    """Retry on any exception."""
    return error is not None


def exception_type_predicate(error: BaseException | None, expected_error_type: type[BaseException]) -> bool:
    """Retry on exceptions of ``expected_error_type`` (and its subclasses)."""
    return isinstance(error, expected_error_type)
