"""The JDBC connector for PostgreSQL (psycopg 3): ``JdbcSink`` (at-least-once, or exactly-once with two-phase
commit) and ``JdbcSource`` (a query split by ranges of a numeric column), with Flink's options. Needs
``pip install 'strom[jdbc]'``."""

from strom.connectors.jdbc.options import JdbcConnectionOptions, JdbcExactlyOnceOptions, JdbcExecutionOptions
from strom.connectors.jdbc.sink import JdbcCommittable, JdbcSink
from strom.connectors.jdbc.source import JdbcNumericBetweenParametersProvider, JdbcSource

__all__ = [
    "JdbcCommittable",
    "JdbcConnectionOptions",
    "JdbcExactlyOnceOptions",
    "JdbcExecutionOptions",
    "JdbcNumericBetweenParametersProvider",
    "JdbcSink",
    "JdbcSource",
]
