"""PyFlink's ``pyflink.datastream.stream_execution_environment`` module path
(re-exports; see :mod:`strom.api.environment`)."""

from strom.api.environment import StreamExecutionEnvironment

__all__ = ["StreamExecutionEnvironment"]
