"""PyFlink's ``pyflink.datastream.async_retry_predicates`` module path (re-exports; see
:mod:`strom.api.async_retry_predicates`)."""

from strom.api.async_retry_predicates import empty_result_predicate, exception_type_predicate, has_exception_predicate

__all__ = ["empty_result_predicate", "exception_type_predicate", "has_exception_predicate"]
