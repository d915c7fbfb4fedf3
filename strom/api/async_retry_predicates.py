"""Predicates for :class:`~strom.api.async_retry_strategies.AsyncRetryStrategy` (PyFlink's ``async_retry_predicates``).

>>> empty_result_predicate([]), has_exception_predicate(None)
(True, False)
>>> retry_io = lambda e: exception_type_predicate(e, OSError)
>>> retry_io(ConnectionResetError()), retry_io(ValueError())
(True, False)
"""

from __future__ import annotations

from typing import Any

__all__ = ["empty_result_predicate", "exception_type_predicate", "has_exception_predicate"]


def empty_result_predicate(result: list[Any] | None) -> bool:
    """Retry a result that is ``None`` or empty."""
    return result is None or len(result) == 0


def has_exception_predicate(error: BaseException | None) -> bool:
    """Retry on any exception."""
    return error is not None


def exception_type_predicate(error: BaseException | None, expected_error_type: type | tuple[type, ...]) -> bool:
    """Retry an exception of ``expected_error_type`` (a class or a tuple of classes; subclasses match)."""
    return isinstance(error, expected_error_type)
