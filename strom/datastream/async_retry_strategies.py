"""PyFlink's ``pyflink.datastream.async_retry_strategies`` module path (re-exports; see
:mod:`strom.api.async_retry_strategies`)."""

from strom.api.async_retry_strategies import (
    NO_RETRY_STRATEGY,
    ExponentialBackoffDelayRetryStrategy,
    FixedDelayRetryStrategy,
    NoRetryStrategy,
    RetryPredicate,
)

__all__ = [
    "NO_RETRY_STRATEGY",
    "ExponentialBackoffDelayRetryStrategy",
    "FixedDelayRetryStrategy",
    "NoRetryStrategy",
    "RetryPredicate",
]
