"""PyFlink's ``pyflink.datastream.connectors.jdbc`` module path (re-exports; see :mod:`strom.connectors.jdbc`)."""

from strom.connectors.jdbc import (
    JdbcConnectionOptions,
    JdbcExactlyOnceOptions,
    JdbcExecutionOptions,
    JdbcNumericBetweenParametersProvider,
    JdbcSink,
    JdbcSource,
)

__all__ = [
    "JdbcConnectionOptions",
    "JdbcExactlyOnceOptions",
    "JdbcExecutionOptions",
    "JdbcNumericBetweenParametersProvider",
    "JdbcSink",
    "JdbcSource",
]
