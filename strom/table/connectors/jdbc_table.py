"""The ``jdbc`` table connector for PostgreSQL (Flink's ``JdbcDynamicTableFactory``) over strom's ``JdbcSource`` and
``JdbcSink`` (psycopg 3).

    CREATE TABLE orders (id BIGINT, customer STRING, amount DECIMAL(10, 2), PRIMARY KEY (id) NOT ENFORCED)
    WITH ('connector' = 'jdbc', 'url' = 'jdbc:postgresql://127.0.0.1:5432/shop', 'table-name' = 'orders',
          'username' = 'app', 'password' = 'secret')

**Scan** (bounded): ``SELECT <columns> FROM <table-name>``; with ``scan.partition.column`` (a numeric column),
``scan.partition.num``, ``scan.partition.lower-bound`` and ``scan.partition.upper-bound`` the query is cut into
``num`` ranges ``column BETWEEN ? AND ?`` that the parallel readers take as they ask (Flink's
``JdbcNumericBetweenParametersProvider``). Each range is read in a stable order (the primary key, else every
column) so that a reader restored from a checkpoint skips exactly the rows it emitted. ``scan.fetch-size`` rows
are fetched at a time.

**Lookup** (Flink's ``LookupTableSource``, the right side of ``JOIN t FOR SYSTEM_TIME AS OF o.proc_time ON …``):
``SELECT … WHERE k = ?`` per left row's key on one connection per subtask, retried on a lost connection up to
``lookup.max-retries`` (default 3) times; ``'lookup.cache' = 'PARTIAL'`` with ``lookup.partial-cache.*`` (or
Flink's legacy ``lookup.cache.max-rows`` / ``lookup.cache.ttl``) caches the rows of recent keys.

**Sink**: without a primary key, inserts only (``INSERT INTO``), and an updating query is refused as Flink refuses
it. With ``PRIMARY KEY (…) NOT ENFORCED`` it upserts by the key: an INSERT / UPDATE_AFTER row becomes
``INSERT … ON CONFLICT (key) DO UPDATE SET …``, a DELETE row ``DELETE … WHERE key = …``, an UPDATE_BEFORE row
is dropped (Flink's upsert sink; both in one statement per row, so a batch keeps the rows' order).
``sink.buffer-flush.max-rows`` (default 100) and ``sink.buffer-flush.interval`` (default 1 s) batch the writes,
``sink.max-retries`` (default 3) retries a batch on a lost connection. The default ``at-least-once`` is Flink's
JDBC table sink: after a failover the rows since the checkpoint are written again, which upserts by key make
harmless (the table ends exactly as without the failure). strom's addition ``sink.delivery-guarantee`` =
``exactly-once``, for tables without a key, writes through the exactly-once JdbcSink (one PostgreSQL prepared
transaction per subtask and checkpoint, committed when the checkpoint completes; the server needs
``max_prepared_transactions``): appended rows appear once. With a key it is refused: a prepared transaction keeps
its rows locked until its checkpoint completes, and the next checkpoint's upsert of the same key would wait for
it.

As Flink's PostgreSQL dialect, identifiers are written as declared (unquoted: PostgreSQL folds them to lower case).
"""

from __future__ import annotations

import contextlib
import datetime
import decimal
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from strom.api.row import RowKind, _create_row
from strom.config_units import millis, parse_duration
from strom.table.connectors.base import DynamicTableSink, DynamicTableSource, check_options
from strom.table.connectors.lookup import (
    LookupCacheOptions,
    LookupContext,
    LookupFunction,
    LookupFunctionProvider,
    LookupTableSource,
)
from strom.table.errors import ValidationException

if TYPE_CHECKING:
    from strom.api.datastream import DataStream
    from strom.api.environment import StreamExecutionEnvironment
    from strom.api.sink import Sink
    from strom.connectors.jdbc.options import JdbcConnectionOptions
    from strom.table.catalog.catalog_manager import CatalogTable
    from strom.table.planner.logical import RowType

__all__ = ["JdbcTableSink", "JdbcTableSource", "pg_type", "upsert_statement"]

_OPTIONS = {
    "url",
    "table-name",
    "driver",
    "username",
    "password",
    "connection.max-retry-timeout",
    "scan.partition.column",
    "scan.partition.num",
    "scan.partition.lower-bound",
    "scan.partition.upper-bound",
    "scan.fetch-size",
    "scan.auto-commit",
    "sink.buffer-flush.max-rows",
    "sink.buffer-flush.interval",
    "sink.max-retries",
    "sink.parallelism",
    "sink.delivery-guarantee",
    "lookup.cache",
    "lookup.partial-cache.max-rows",
    "lookup.partial-cache.expire-after-write",
    "lookup.partial-cache.expire-after-access",
    "lookup.partial-cache.cache-missing-key",
    "lookup.cache.max-rows",
    "lookup.cache.ttl",
    "lookup.cache.caching-missing-key",
    "lookup.max-retries",
}
_PARTITION_OPTIONS = (
    "scan.partition.column",
    "scan.partition.num",
    "scan.partition.lower-bound",
    "scan.partition.upper-bound",
)


def pg_type(data_type: Any) -> str:
    """The PostgreSQL type a parameter of a SQL type is cast to (``?::bigint``)."""
    root = data_type.type_root.name
    names = {
        "BOOLEAN": "boolean",
        "TINYINT": "smallint",
        "SMALLINT": "smallint",
        "INTEGER": "integer",
        "BIGINT": "bigint",
        "FLOAT": "real",
        "DOUBLE": "double precision",
        "DECIMAL": "numeric",
        "CHAR": "text",
        "VARCHAR": "text",
        "BINARY": "bytea",
        "VARBINARY": "bytea",
        "DATE": "date",
        "TIME_WITHOUT_TIME_ZONE": "time",
        "TIMESTAMP_WITHOUT_TIME_ZONE": "timestamp",
        "TIMESTAMP_WITH_LOCAL_TIME_ZONE": "timestamptz",
    }
    if root not in names:
        raise ValidationException(
            f"expected a column type the jdbc connector writes to PostgreSQL (numbers, strings, bytes, BOOLEAN, "
            f"DATE, TIME, TIMESTAMP, TIMESTAMP_LTZ, DECIMAL); got {data_type}; hint: CAST the column"
        )
    return names[root]


def upsert_statement(table: str, names: Sequence[str], types: Sequence[Any], key: Sequence[str]) -> str:
    """One statement that deletes a key (first and last parameter true) or upserts a row (both false); the
    parameters are ``(delete, *key values, *row values, delete)``.

    >>> from strom.table.types import DataTypes
    >>> print(upsert_statement("t", ["id", "v"], [DataTypes.BIGINT(), DataTypes.STRING()], ["id"]))
    WITH deleted AS (DELETE FROM t WHERE ?::boolean AND id = ?::bigint) INSERT INTO t (id, v) SELECT ?::bigint, \
?::text WHERE NOT ?::boolean ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v
    """
    typed = dict(zip(names, types, strict=True))
    where = " AND ".join(f"{k} = ?::{pg_type(typed[k])}" for k in key)
    values = ", ".join(f"?::{pg_type(t)}" for t in types)
    others = [n for n in names if n not in key]
    action = f"DO UPDATE SET {', '.join(f'{n} = EXCLUDED.{n}' for n in others)}" if others else "DO NOTHING"
    return (
        f"WITH deleted AS (DELETE FROM {table} WHERE ?::boolean AND {where}) INSERT INTO {table} "
        f"({', '.join(names)}) SELECT {values} WHERE NOT ?::boolean ON CONFLICT ({', '.join(key)}) {action}"
    )


def _millis(name: str, option: str, text: str) -> int:
    try:
        return millis(parse_duration(text))
    except ValueError as exc:
        raise ValidationException(
            f"jdbc table '{name}': expected a duration for '{option}' (e.g. '1 s'); got {text!r} ({exc})"
        ) from None


def _int(name: str, options: dict[str, str], option: str, default: int) -> int:
    text = options.get(option)
    if text is None:
        return default
    try:
        return int(text)
    except ValueError:
        raise ValidationException(f"jdbc table '{name}': expected an integer for '{option}'; got {text!r}") from None


def _connection(name: str, options: dict[str, str]) -> JdbcConnectionOptions:
    from strom.connectors.jdbc.options import JdbcConnectionOptions

    for required in ("url", "table-name"):
        if required not in options:
            raise ValidationException(
                f"jdbc table '{name}': the required option '{required}' is missing; hint: WITH ('connector' = "
                "'jdbc', 'url' = 'jdbc:postgresql://host:5432/db', 'table-name' = 'orders')"
            )
    check_options(name, "jdbc", options, _OPTIONS)
    builder = JdbcConnectionOptions.JdbcConnectionOptionsBuilder().with_url(options["url"])
    if "username" in options:
        builder = builder.with_user_name(options["username"])
    if "password" in options:
        builder = builder.with_password(options["password"])
    built: JdbcConnectionOptions = builder.build()
    return built


def _reader(root: str) -> Callable[[Any], Any] | None:
    """How a value psycopg returns becomes the SQL type's Python value (None: as it is)."""
    if root in ("FLOAT", "DOUBLE"):
        return float
    if root == "DECIMAL":
        return lambda v: v if isinstance(v, decimal.Decimal) else decimal.Decimal(str(v))
    if root == "TIMESTAMP_WITH_LOCAL_TIME_ZONE":
        return lambda v: v.astimezone(datetime.UTC).replace(tzinfo=None) if v.tzinfo is not None else v
    if root in ("CHAR", "VARCHAR"):
        return lambda v: v if isinstance(v, str) else str(v)
    return None


class _ToRow:
    """A tuple the JdbcSource read as a row of the table's Python values."""

    def __init__(self, roots: Sequence[str]) -> None:
        self.readers = tuple(_reader(r) for r in roots)
        self.plain = all(r is None for r in self.readers)

    def __call__(self, values: tuple[Any, ...]) -> Any:
        if self.plain:
            return _create_row(None, list(values))
        return _create_row(
            None, [v if r is None or v is None else r(v) for v, r in zip(values, self.readers, strict=True)]
        )


class _JdbcLookupFunction(LookupFunction):
    """``SELECT <columns> FROM <table> WHERE k1 = ? AND …`` per key (Flink's ``JdbcRowDataLookupFunction``): a lost
    connection is opened again and the query retried up to ``lookup.max-retries`` times, ``i`` seconds after the
    ``i``-th failure."""

    def __init__(
        self, connection: JdbcConnectionOptions, query: str, roots: Sequence[str], max_retries: int, what: str
    ) -> None:
        self.connection = connection
        self.query = query
        self.roots = tuple(roots)
        self.max_retries = max_retries
        self.what = what
        self.conn: Any = None

    def open(self) -> None:
        self.to_row = _ToRow(self.roots)

    def lookup(self, keys: tuple[Any, ...]) -> Sequence[tuple[Any, ...]]:
        from strom.connectors.jdbc.connection import connect, psycopg_module
        from strom.exceptions import ConnectorError

        psycopg = psycopg_module()
        for attempt in range(self.max_retries + 1):
            try:
                if self.conn is None or self.conn.closed:
                    self.conn = connect(self.connection, what=self.what)
                rows = self.conn.execute(self.query, keys).fetchall()
                return [tuple(self.to_row(tuple(r))) for r in rows]
            except (psycopg.OperationalError, ConnectorError) as exc:
                self.close()
                if attempt >= self.max_retries:
                    raise ConnectorError(
                        f"expected {self.what} to look up {keys!r} at {self.connection.describe()}; got "
                        f"{str(exc).strip()} after {attempt + 1} attempts; hint: raise 'lookup.max-retries', or "
                        "check the server; the job's restart strategy retries"
                    ) from exc
                time.sleep(attempt + 1)
        return []

    def close(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            with contextlib.suppress(Exception):  # a broken connection: gone either way
                conn.close()


def _cache_options(options: dict[str, str]) -> LookupCacheOptions | None:
    """``lookup.cache`` (Flink's), or the legacy ``lookup.cache.max-rows`` / ``.ttl`` / ``.caching-missing-key``
    that Flink still maps to a PARTIAL cache."""
    if "lookup.cache" not in options and "lookup.cache.max-rows" in options:
        legacy = {
            "lookup.cache": "PARTIAL",
            "lookup.partial-cache.max-rows": options["lookup.cache.max-rows"],
            "lookup.partial-cache.cache-missing-key": options.get("lookup.cache.caching-missing-key", "true"),
        }
        if "lookup.cache.ttl" in options:
            legacy["lookup.partial-cache.expire-after-write"] = options["lookup.cache.ttl"]
        return LookupCacheOptions.from_options(legacy)
    return LookupCacheOptions.from_options(options)


class JdbcTableSource(DynamicTableSource, LookupTableSource):
    insert_only = True
    bounded = True

    def __init__(self, name: str, options: dict[str, str], row_type: RowType, key: tuple[str, ...]) -> None:
        self.name = name
        self.options = options
        self.connection = _connection(name, options)
        self.table = options["table-name"]
        self.names = row_type.names
        self.key = key
        given = [o for o in _PARTITION_OPTIONS if o in options]
        if given and len(given) != len(_PARTITION_OPTIONS):
            missing = [o for o in _PARTITION_OPTIONS if o not in options]
            raise ValidationException(
                f"jdbc table '{name}': expected all of {', '.join(_PARTITION_OPTIONS)} for a partitioned scan; got "
                f"no {', '.join(missing)}"
            )
        self.partitioned = bool(given)
        self.fetch_size = _int(name, options, "scan.fetch-size", 1000) or 1000
        self.roots = tuple(t.type_root.name for t in row_type.types)
        self.cache = _cache_options(options)
        self.lookup_retries = _int(name, options, "lookup.max-retries", 3)

    def get_lookup_runtime_provider(self, context: LookupContext) -> LookupFunctionProvider:
        """Rows of the table whose key columns (``context.keys``) equal a left row's values."""
        where = " AND ".join(f"{self.names[k]} = %s" for k in context.keys)
        query = f"SELECT {', '.join(self.names)} FROM {self.table} WHERE {where}"
        what = f"the lookup of jdbc table '{self.name}'"
        function = _JdbcLookupFunction(self.connection, query, self.roots, self.lookup_retries, what)
        return LookupFunctionProvider(function, self.cache)

    @classmethod
    def create(cls, name: str, table: CatalogTable, row_type: RowType) -> JdbcTableSource:
        return cls(name, table.options, row_type, table.primary_key)

    def scan_query(self) -> tuple[str, Any]:
        """The query with its two range placeholders and the parameters provider."""
        from strom.connectors.jdbc.source import JdbcNumericBetweenParametersProvider

        columns = ", ".join(self.names)
        order = ", ".join(self.key or self.names)
        if not self.partitioned:
            query = f"SELECT {columns} FROM {self.table} WHERE ?::bigint <= ?::bigint ORDER BY {order}"
            return query, JdbcNumericBetweenParametersProvider(0, 0)
        options = self.options
        column = options["scan.partition.column"]
        lower = _int(self.name, options, "scan.partition.lower-bound", 0)
        upper = _int(self.name, options, "scan.partition.upper-bound", 0)
        num = _int(self.name, options, "scan.partition.num", 1)
        if upper < lower or num < 1:
            raise ValidationException(
                f"jdbc table '{self.name}': expected scan.partition.lower-bound <= upper-bound and num >= 1; got "
                f"[{lower}, {upper}] in {num}"
            )
        provider = JdbcNumericBetweenParametersProvider(lower, upper).of_batch_num(min(num, upper - lower + 1))
        query = f"SELECT {columns} FROM {self.table} WHERE {column} BETWEEN ? AND ? ORDER BY {column}, {order}"
        return query, provider

    def create_stream(self, env: StreamExecutionEnvironment, row_type: RowType) -> DataStream[Any]:
        from strom.api.eventtime import WatermarkStrategy
        from strom.connectors.jdbc.source import JdbcSource

        query, provider = self.scan_query()
        source = (
            JdbcSource.builder()
            .set_sql(query)
            .set_connection_options(self.connection)
            .set_parameters_provider(provider)
            .set_fetch_size(self.fetch_size)
            .build()
        )
        roots = [t.type_root.name for t in row_type.types]
        stream = env.from_source(source, WatermarkStrategy.no_watermarks(), f"jdbc: {self.table}")
        return stream.map(_ToRow(roots)).name(f"jdbc: {self.table} rows")


def _writer(root: str) -> Callable[[Any], Any] | None:
    if root == "TIMESTAMP_WITH_LOCAL_TIME_ZONE":  # naive UTC → aware: the server's time zone must not apply
        return lambda v: v.replace(tzinfo=datetime.UTC) if v.tzinfo is None else v
    return None


class _UpsertParameters:
    """A changelog row as the upsert statement's parameters; UPDATE_BEFORE rows are dropped."""

    def __init__(self, key_indices: Sequence[int], roots: Sequence[str]) -> None:
        self.key_indices = tuple(key_indices)
        self.writers = tuple(_writer(r) for r in roots)
        self.plain = all(w is None for w in self.writers)

    def __call__(self, row: Any) -> list[tuple[Any, ...]]:
        kind = row._row_kind
        if kind is RowKind.UPDATE_BEFORE:
            return []
        values = row._values
        if not self.plain:
            values = [v if w is None or v is None else w(v) for v, w in zip(values, self.writers, strict=True)]
        delete = kind is RowKind.DELETE
        return [(delete, *[values[i] for i in self.key_indices], *values, delete)]


class _InsertParameters:
    def __init__(self, roots: Sequence[str]) -> None:
        self.writers = tuple(_writer(r) for r in roots)

    def __call__(self, row: Any) -> tuple[Any, ...]:
        return tuple(v if w is None or v is None else w(v) for v, w in zip(row._values, self.writers, strict=True))


class _KeyOf:
    def __init__(self, indices: Sequence[int]) -> None:
        self.indices = tuple(indices)

    def __call__(self, row: Any) -> tuple[Any, ...]:
        values = row._values
        return tuple(values[i] for i in self.indices)


class JdbcTableSink(DynamicTableSink):
    def __init__(self, name: str, options: dict[str, str], row_type: RowType, key: tuple[str, ...]) -> None:
        self.name = name
        self.connection = _connection(name, options)
        self.table = options["table-name"]
        self.key = key
        self.accepts_updates = bool(key)
        self.batch_size = _int(name, options, "sink.buffer-flush.max-rows", 100)
        self.interval_ms = _millis(name, "sink.buffer-flush.interval", options.get("sink.buffer-flush.interval", "1 s"))
        self.max_retries = _int(name, options, "sink.max-retries", 3)
        self.parallelism = _int(name, options, "sink.parallelism", 0) or None
        guarantee = options.get("sink.delivery-guarantee", "at-least-once").lower()
        if guarantee not in ("at-least-once", "exactly-once"):
            raise ValidationException(
                f"jdbc table '{name}': expected 'sink.delivery-guarantee' = 'at-least-once' or 'exactly-once'; got "
                f"{guarantee!r}"
            )
        self.exactly_once = guarantee == "exactly-once"
        if self.exactly_once and key:
            raise ValidationException(
                f"jdbc table '{name}': expected 'sink.delivery-guarantee' = 'exactly-once' on a table without a "
                f"PRIMARY KEY; got the key ({', '.join(key)}); hint: a prepared transaction keeps its keys' rows "
                "locked until its checkpoint completes, so the next checkpoint's upsert of a key would wait for a "
                "commit that the same task makes; upserts by key are idempotent: the default 'at-least-once' "
                "gives the exact final table after failovers"
            )
        for k in key:
            if k not in row_type.names:
                raise ValidationException(f"jdbc table '{name}': the primary key column '{k}' is not a column")

    @classmethod
    def create(cls, name: str, table: CatalogTable, row_type: RowType) -> JdbcTableSink:
        return cls(name, table.options, row_type, table.primary_key)

    def statement(self, row_type: RowType) -> str:
        if self.key:
            return upsert_statement(self.table, row_type.names, row_type.types, self.key)
        names = ", ".join(row_type.names)
        return f"INSERT INTO {self.table} ({names}) VALUES ({', '.join('?' for _ in row_type.names)})"

    def consume(self, stream: DataStream[Any], row_type: RowType) -> None:
        from strom.connectors.jdbc import JdbcExactlyOnceOptions, JdbcExecutionOptions, JdbcSink

        roots = [t.type_root.name for t in row_type.types]
        if self.key:
            key_indices = [row_type.names.index(k) for k in self.key]
            if self.parallelism is not None:  # Flink's keyed shuffle: one key's changes stay in order
                stream = stream.key_by(_KeyOf(key_indices))
            params = stream.flat_map(_UpsertParameters(key_indices, roots)).name(f"jdbc: {self.table} upserts")
        else:
            params = stream.map(_InsertParameters(roots)).name(f"jdbc: {self.table} inserts")
        execution = JdbcExecutionOptions(
            batch_interval_ms=self.interval_ms, batch_size=max(self.batch_size, 1), max_retries=self.max_retries
        )
        sql = self.statement(row_type)
        sink: Sink[Any]
        if self.exactly_once:
            prefix = "strom-sql-" + "".join(c if c.isalnum() else "-" for c in self.table)[:40]
            sink = JdbcSink.exactly_once_sink(
                sql, None, self.connection, execution, JdbcExactlyOnceOptions(transaction_id_prefix=prefix)
            )
        else:
            sink = JdbcSink.sink(sql, None, self.connection, execution)
        written = params.sink_to(sink).name(f"Sink: jdbc {self.table}")
        if self.parallelism is not None:
            written.set_parallelism(self.parallelism)
