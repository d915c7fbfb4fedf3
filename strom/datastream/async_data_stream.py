"""PyFlink's ``pyflink.datastream.async_data_stream`` module path (re-exports; see
:mod:`strom.api.async_data_stream`)."""

from strom.api.async_data_stream import AsyncDataStream
from strom.api.async_function import AsyncFunction
from strom.api.async_retry_strategies import AsyncRetryStrategy

__all__ = ["AsyncDataStream", "AsyncFunction", "AsyncRetryStrategy"]
