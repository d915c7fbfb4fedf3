"""``JdbcSource``: a bounded, parallel source reading a query split by ranges of a numeric column (Flink's
``JdbcSource`` with a ``JdbcNumericBetweenParametersProvider``).

    source = (
        JdbcSource.builder()
        .set_sql("SELECT id, customer, amount FROM orders WHERE id BETWEEN ? AND ? ORDER BY id")
        .set_connection_options(options)
        .set_parameters_provider(JdbcNumericBetweenParametersProvider(1, 1_000_000).of_batch_num(8))
        .build()
    )
    orders = env.from_source(source, WatermarkStrategy.no_watermarks(), "orders")

Each range ``[lo, hi]`` is a split the readers take as they ask (FLIP-27); a reader runs the query with the
range's bounds on a server-side cursor and emits each row as a tuple. A checkpoint holds each split's range and
how many of its rows were emitted; a restored reader runs the query again and skips those, so the query must
return a range's rows in a stable order (``ORDER BY`` the numeric column).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from strom.api.source import Boundedness, Source, SourceReader, SourceReaderContext, SourceSplit
from strom.connectors.jdbc.connection import connect, psycopg_module
from strom.connectors.jdbc.options import JdbcConnectionOptions
from strom.connectors.jdbc.statement import psycopg_sql
from strom.exceptions import ConnectorError, InvalidProgramError

__all__ = ["JdbcNumericBetweenParametersProvider", "JdbcSource"]


@dataclass(frozen=True)
class JdbcNumericBetweenParametersProvider:
    """``[min_value, max_value]`` cut into ranges, each the two parameters of a ``BETWEEN ? AND ?`` query
    (Flink's): ``of_batch_num(n)`` gives ``n`` ranges, ``of_batch_size(s)`` ranges of ``s`` values."""

    min_value: int
    max_value: int
    batch_size: int | None = None

    def __post_init__(self) -> None:
        for name in ("min_value", "max_value"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int):
                raise InvalidProgramError(
                    f"expected an int {name} for JdbcNumericBetweenParametersProvider; got {v!r}; "
                    "hint: JdbcNumericBetweenParametersProvider(1, 1_000_000)"
                )
        if self.max_value < self.min_value:
            raise InvalidProgramError(
                f"expected min_value <= max_value; got {self.min_value} > {self.max_value}; hint: both are inclusive"
            )

    def of_batch_size(self, batch_size: int) -> JdbcNumericBetweenParametersProvider:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidProgramError(f"expected a batch size of at least 1; got {batch_size!r}; hint: 10_000")
        return JdbcNumericBetweenParametersProvider(self.min_value, self.max_value, batch_size)

    def of_batch_num(self, batch_num: int) -> JdbcNumericBetweenParametersProvider:
        span = self.max_value - self.min_value + 1
        if isinstance(batch_num, bool) or not isinstance(batch_num, int) or not 1 <= batch_num <= span:
            raise InvalidProgramError(
                f"expected between 1 and {span} batches over [{self.min_value}, {self.max_value}]; got {batch_num!r}"
            )
        return JdbcNumericBetweenParametersProvider(self.min_value, self.max_value, -(-span // batch_num))

    def get_parameter_values(self) -> list[tuple[int, int]]:
        size = self.batch_size or (self.max_value - self.min_value + 1)
        return [(lo, min(lo + size - 1, self.max_value)) for lo in range(self.min_value, self.max_value + 1, size)]


class JdbcSource(Source[tuple[Any, ...]]):
    """Rows of ``sql`` for every range of the parameters provider (see the module's docstring)."""

    def __init__(
        self,
        sql: str,
        connection: JdbcConnectionOptions,
        parameters: JdbcNumericBetweenParametersProvider,
        fetch_size: int = 1000,
    ) -> None:
        if not isinstance(sql, str) or psycopg_sql(sql).count("%s") != 2:
            raise InvalidProgramError(
                f"expected a query with two '?' placeholders for the bounds of a range; got {sql!r:.80}; "
                "hint: 'SELECT id, name FROM t WHERE id BETWEEN ? AND ? ORDER BY id'"
            )
        if not isinstance(connection, JdbcConnectionOptions):
            raise InvalidProgramError(f"expected JdbcConnectionOptions for JdbcSource; got {connection!r:.60}")
        if not isinstance(parameters, JdbcNumericBetweenParametersProvider):
            raise InvalidProgramError(
                f"expected a JdbcNumericBetweenParametersProvider; got {parameters!r:.60}; "
                "hint: JdbcNumericBetweenParametersProvider(1, 1_000_000).of_batch_num(8)"
            )
        self.sql = sql
        self.connection = connection
        self.parameters = parameters
        self.fetch_size = fetch_size

    @staticmethod
    def builder() -> JdbcSource.Builder:
        return JdbcSource.Builder()

    @property
    def boundedness(self) -> str:
        return Boundedness.BOUNDED

    def validate(self) -> None:
        psycopg_module()

    def create_splits(self, parallelism: int) -> Sequence[SourceSplit]:
        return [
            SourceSplit(split_id=f"jdbc-{lo}-{hi}", payload=(lo, hi, 0))
            for lo, hi in self.parameters.get_parameter_values()
        ]

    def create_reader(self, context: SourceReaderContext) -> SourceReader[tuple[Any, ...]]:
        return _JdbcReader(self, context)

    class Builder:
        def __init__(self) -> None:
            self._fields: dict[str, Any] = {}

        def set_sql(self, sql: str) -> JdbcSource.Builder:
            self._fields["sql"] = sql
            return self

        def set_connection_options(self, options: JdbcConnectionOptions) -> JdbcSource.Builder:
            self._fields["connection"] = options
            return self

        def set_parameters_provider(self, provider: JdbcNumericBetweenParametersProvider) -> JdbcSource.Builder:
            self._fields["parameters"] = provider
            return self

        def set_fetch_size(self, fetch_size: int) -> JdbcSource.Builder:
            self._fields["fetch_size"] = fetch_size
            return self

        def build(self) -> JdbcSource:
            missing = [k for k in ("sql", "connection", "parameters") if k not in self._fields]
            if missing:
                raise InvalidProgramError(
                    f"expected JdbcSource.builder() to be given {', '.join(missing)}; got none; hint: set_sql(...), "
                    "set_connection_options(...), set_parameters_provider(...)"
                )
            return JdbcSource(**self._fields)


class _JdbcReader(SourceReader[tuple[Any, ...]]):
    """Reads its splits one after the other through a server-side cursor; ``(lo, hi, emitted)`` per split."""

    def __init__(self, source: JdbcSource, context: SourceReaderContext) -> None:
        self.source = source
        self.context = context
        self.sql = psycopg_sql(source.sql)
        self.splits: list[tuple[str, int, int, int]] = []
        self.conn: Any = None
        self.cursor: Any = None
        self.what = f"JdbcSource subtask {context.get_index_of_subtask() + 1}, query {source.sql!r:.100}"

    def add_splits(self, splits: Sequence[SourceSplit]) -> None:
        for s in splits:
            lo, hi, emitted = s.payload
            self.splits.append((s.split_id, lo, hi, emitted))

    def poll_batch(self) -> list[tuple[Any, ...]] | None:
        if not self.splits:
            return None
        psycopg = psycopg_module()
        split_id, lo, hi, emitted = self.splits[0]
        try:
            if self.cursor is None:
                self._open(lo, hi, emitted)
            rows = self.cursor.fetchmany(self.context.batch_size)
        except psycopg.Error as exc:
            self._close_cursor()
            raise ConnectorError(
                f"expected {self.what} to read the range [{lo}, {hi}] from {self.source.connection.describe()}; "
                f"got {type(exc).__name__}: {' '.join(str(exc).split())}; hint: check the query and the table; "
                "the job's restart strategy retries from its checkpoint"
            ) from exc
        if not rows:
            self._close_cursor()
            self.splits.pop(0)
            return []
        self.splits[0] = (split_id, lo, hi, emitted + len(rows))
        return [tuple(r) for r in rows]

    def _open(self, lo: int, hi: int, skip: int) -> None:
        if self.conn is None or self.conn.closed:
            self.conn = connect(self.source.connection, what=self.what)
            self.conn.autocommit = False  # a named (server-side) cursor lives in a transaction
        self.cursor = self.conn.cursor(name=f"strom_{self.context.get_index_of_subtask()}")
        self.cursor.itersize = self.source.fetch_size
        self.cursor.execute(self.sql, (lo, hi))
        if skip:
            self.cursor.scroll(skip)  # rows emitted before the checkpoint this reader restores

    def _close_cursor(self) -> None:
        cursor, self.cursor = self.cursor, None
        if cursor is not None:
            try:
                cursor.close()
                self.conn.rollback()
            except Exception:  # a broken connection: gone either way
                self.conn = None

    def snapshot_state(self, checkpoint_id: int) -> list[SourceSplit]:
        return [SourceSplit(split_id=i, payload=(lo, hi, emitted)) for i, lo, hi, emitted in self.splits]

    def close(self) -> None:
        self._close_cursor()
        if self.conn is not None:
            self.conn.close()
            self.conn = None
