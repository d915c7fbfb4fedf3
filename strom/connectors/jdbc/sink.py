"""``JdbcSink``: rows into PostgreSQL, at-least-once or exactly-once (Flink's ``JdbcSink.sink`` and its
``exactlyOnceSink``; PyFlink's ``pyflink.datastream.connectors.jdbc``).

    stream.add_sink(JdbcSink.sink(
        "INSERT INTO orders (id, amount) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET amount = EXCLUDED.amount",
        Types.ROW([Types.LONG(), Types.DOUBLE()]),
        JdbcConnectionOptions.JdbcConnectionOptionsBuilder().with_url("jdbc:postgresql://127.0.0.1:5432/shop")
            .with_user_name("app").with_password("secret").build(),
        JdbcExecutionOptions.builder().with_batch_size(1000).with_batch_interval_ms(200).build()))

**At-least-once** (``JdbcSink.sink``): each subtask sends its records in batches (``batch_size``, at least every
``batch_interval_ms``, and at every checkpoint) and commits each batch; a batch that fails on a lost connection
is sent again on a new one up to ``max_retries`` times, ``i`` seconds after the ``i``-th failure. After a
failover the records since the last checkpoint are written again: use an upsert (``ON CONFLICT``) to keep the
table free of duplicates.

**Exactly-once** (``JdbcSink.exactly_once_sink``, Flink's XA sink done with PostgreSQL's two-phase commit): each
subtask writes into one transaction per checkpoint; at the checkpoint barrier it ``PREPARE TRANSACTION``\\ s it
under ``<prefix>:<subtask>:<last checkpoint>:<writer>:<n>``, the id travels in the checkpoint, and
``COMMIT PREPARED`` makes the rows visible once the checkpoint completes. A restored subtask first commits the
transactions of the checkpoint it restores (a missing one was committed already), then rolls back the prepared
transactions a failed attempt left behind after that checkpoint: their records are read again. PostgreSQL keeps
prepared transactions across its own restarts, so a database restart loses nothing. The server needs
``max_prepared_transactions`` at least the sink's parallelism times the checkpoints in flight (+1).
"""

from __future__ import annotations

import hashlib
import logging
import time
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from strom.api.sink import (
    CommitRequest,
    Committer,
    PrecommittingSinkWriter,
    Sink,
    SinkWriter,
    SinkWriterContext,
    StatefulSinkWriter,
    TwoPhaseCommittingSink,
)
from strom.connectors.jdbc.connection import connect, psycopg_module
from strom.connectors.jdbc.options import JdbcConnectionOptions, JdbcExactlyOnceOptions, JdbcExecutionOptions
from strom.connectors.jdbc.statement import execute_batch, psycopg_sql
from strom.exceptions import ConnectorError, InvalidProgramError

__all__ = ["JdbcCommittable", "JdbcSink"]

log = logging.getLogger(__name__)


class JdbcSink:
    """Factories of the JDBC sinks (PyFlink's ``JdbcSink``); both go to ``add_sink`` or ``sink_to``."""

    @staticmethod
    def sink(
        sql: str,
        type_info: Any = None,
        jdbc_connection_options: JdbcConnectionOptions | None = None,
        jdbc_execution_options: JdbcExecutionOptions | None = None,
    ) -> Sink[Any]:
        """An at-least-once sink running ``sql`` (JDBC ``?`` placeholders) once per record."""
        statement, connection = _checked(sql, jdbc_connection_options)
        return _AtLeastOnceJdbcSink(statement, connection, jdbc_execution_options)

    @staticmethod
    def exactly_once_sink(
        sql: str,
        type_info: Any = None,
        jdbc_connection_options: JdbcConnectionOptions | None = None,
        jdbc_execution_options: JdbcExecutionOptions | None = None,
        exactly_once_options: JdbcExactlyOnceOptions | None = None,
    ) -> TwoPhaseCommittingSink[Any, JdbcCommittable]:
        """An exactly-once sink: one prepared transaction per subtask and checkpoint, committed when the
        checkpoint completes."""
        options = exactly_once_options
        if options is None:  # a prefix per statement: two jobs writing different statements do not meet
            digest = hashlib.sha1(sql.encode()).hexdigest()[:10] if isinstance(sql, str) else "x"
            options = JdbcExactlyOnceOptions(transaction_id_prefix=f"strom-{digest}")
        statement, connection = _checked(sql, jdbc_connection_options)
        return _ExactlyOnceJdbcSink(statement, connection, jdbc_execution_options, options)


def _checked(sql: object, connection: object) -> tuple[str, JdbcConnectionOptions]:
    if not isinstance(sql, str) or "?" not in sql:
        raise InvalidProgramError(
            f"expected an SQL statement with JDBC '?' placeholders; got {sql!r:.80}; "
            "hint: 'INSERT INTO t (a, b) VALUES (?, ?)'"
        )
    if not isinstance(connection, JdbcConnectionOptions):
        raise InvalidProgramError(
            f"expected JdbcConnectionOptions for the JDBC sink; got {connection!r:.60}; hint: "
            "JdbcConnectionOptions.JdbcConnectionOptionsBuilder().with_url('jdbc:postgresql://host/db').build()"
        )
    return sql, connection


class _JdbcSinkBase:
    def __init__(self, sql: str, connection: JdbcConnectionOptions, execution: JdbcExecutionOptions | None) -> None:
        self.sql = sql
        self.connection = connection
        self.execution = execution or JdbcExecutionOptions()

    def validate(self) -> None:
        psycopg_module()


class _AtLeastOnceJdbcSink(_JdbcSinkBase, Sink[Any]):
    def create_writer(self, context: SinkWriterContext) -> SinkWriter[Any]:
        return _AtLeastOnceWriter(self, context)


class _BatchingWriter(ABC):
    """Buffers records; sends them by size, by interval (a processing-time timer) and at checkpoints."""

    def __init__(self, sink: _JdbcSinkBase, context: SinkWriterContext, role: str) -> None:
        self.sink = sink
        self.context = context
        self.sql = psycopg_sql(sink.sql)
        self.arity = self.sql.count("%s")
        self.what = f"{role} subtask {context.subtask_index + 1}/{context.parallelism}, statement {sink.sql!r:.100}"
        self.buffer: list[Any] = []
        self.conn: Any = None
        self._timer_due = False
        self._closed = False
        self._schedule()

    def write(self, element: Any) -> None:
        self.write_batch([element])

    def write_batch(self, elements: list[Any]) -> None:
        self.buffer.extend(elements)
        if len(self.buffer) >= self.sink.execution.batch_size:
            self._send()

    def _schedule(self) -> None:
        interval = self.sink.execution.batch_interval_ms
        pts = self.context.processing_time_service
        if interval <= 0 or pts is None or self._timer_due:
            return
        self._timer_due = True
        pts.register_timer(pts.get_current_processing_time() + interval, self._on_timer)

    def _on_timer(self, timestamp: int) -> None:
        self._timer_due = False
        if self._closed:
            return
        if self.buffer:
            self._send()
        self._schedule()

    def _connection(self) -> Any:
        if self.conn is None or self.conn.closed:
            self.conn = connect(self.sink.connection, what=self.what)
        return self.conn

    def _drop_connection(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # a broken connection may fail to close; it is gone either way
                log.debug("closing a broken PostgreSQL connection failed", exc_info=True)

    @abstractmethod
    def _send(self) -> None:
        """Send the buffered records (at-least-once: committed; exactly-once: into the open transaction)."""

    def close(self) -> None:
        self._closed = True
        self._drop_connection()


class _AtLeastOnceWriter(_BatchingWriter, SinkWriter[Any]):
    def __init__(self, sink: _AtLeastOnceJdbcSink, context: SinkWriterContext) -> None:
        super().__init__(sink, context, "JDBC sink (at-least-once)")

    def flush(self, end_of_input: bool) -> None:
        self._send()

    def _send(self) -> None:
        """One transaction per batch; on a lost connection the batch is sent again on a new one."""
        if not self.buffer:
            return
        psycopg = psycopg_module()
        retries = self.sink.execution.max_retries
        for attempt in range(retries + 1):
            try:
                conn = self._connection()
                with conn.transaction(), conn.cursor() as cur:
                    execute_batch(cur, self.sql, self.buffer, self.arity, self.what)
                self.buffer = []
                return
            except (psycopg.OperationalError, ConnectorError) as exc:
                if isinstance(exc, ConnectorError) and not isinstance(exc.__cause__, psycopg.OperationalError):
                    raise  # a refused record: retrying would not help
                self._drop_connection()
                if attempt == retries:
                    raise ConnectorError(
                        f"expected to write {len(self.buffer)} records to PostgreSQL at "
                        f"{self.sink.connection.describe()} ({self.what}); got {str(exc).strip()} after "
                        f"{retries + 1} attempts; hint: the job's restart strategy retries from its checkpoint"
                    ) from exc
                log.warning("%s: sending a batch failed (%s); retrying in %d s", self.what, exc, attempt + 1)
                time.sleep(attempt + 1)  # Flink's JdbcOutputFormat: i seconds after the i-th failure


@dataclass(frozen=True)
class JdbcCommittable:
    """A prepared transaction of the exactly-once sink, committed when its checkpoint completes."""

    transaction_id: str


class _ExactlyOnceJdbcSink(_JdbcSinkBase, TwoPhaseCommittingSink[Any, JdbcCommittable]):
    def __init__(
        self,
        sql: str,
        connection: JdbcConnectionOptions,
        execution: JdbcExecutionOptions | None,
        exactly_once: JdbcExactlyOnceOptions,
    ) -> None:
        super().__init__(sql, connection, execution)
        self.exactly_once = exactly_once

    def create_writer(self, context: SinkWriterContext) -> PrecommittingSinkWriter[Any, JdbcCommittable]:
        return _ExactlyOnceWriter(self, context)

    def restore_writer(
        self, context: SinkWriterContext, recovered_state: list[Any]
    ) -> PrecommittingSinkWriter[Any, JdbcCommittable]:
        return _ExactlyOnceWriter(self, context)

    def create_committer(self) -> Committer[JdbcCommittable]:
        return _PreparedTransactionCommitter(self.connection, self.exactly_once.max_commit_attempts)


class _ExactlyOnceWriter(_BatchingWriter, PrecommittingSinkWriter[Any, JdbcCommittable], StatefulSinkWriter[Any, Any]):
    """One transaction per checkpoint; ``prepare_commit`` prepares it under an id that says after which
    checkpoint it began (``last``): on a restore from checkpoint C, the prepared transactions with ``last >= C``
    belong to no completed checkpoint and are rolled back."""

    def __init__(self, sink: _ExactlyOnceJdbcSink, context: SinkWriterContext) -> None:
        self.eo = sink.exactly_once
        self.last_checkpoint = context.restored_checkpoint_id or 0
        self.token = uuid.uuid4().hex[:12]
        self.prepared = 0
        self.in_transaction = False
        super().__init__(sink, context, "JDBC sink (exactly-once)")
        if self.eo.discover_and_rollback_on_recovery:
            self._roll_back_leftovers()

    def flush(self, end_of_input: bool) -> None:
        self._send()

    def _send(self) -> None:
        if not self.buffer:
            return
        psycopg = psycopg_module()
        try:
            conn = self._connection()
            with conn.cursor() as cur:
                if not self.in_transaction:
                    cur.execute("BEGIN")
                    self.in_transaction = True
                execute_batch(cur, self.sql, self.buffer, self.arity, self.what)
        except psycopg.OperationalError as exc:  # the open transaction is lost: fail over to the checkpoint
            self._drop_connection()
            self.in_transaction = False
            raise ConnectorError(
                f"expected PostgreSQL at {self.sink.connection.describe()} to keep the transaction of {self.what} "
                f"open; got {str(exc).strip()}; hint: the job's restart strategy restores the last checkpoint "
                "and writes its records again"
            ) from exc
        self.buffer = []

    def prepare_commit(self) -> list[JdbcCommittable]:
        self._send()
        if not self.in_transaction:
            return []
        psycopg = psycopg_module()
        from psycopg import sql as pg_sql

        gid = f"{self.eo.transaction_id_prefix}:{self.context.subtask_index}:{self.last_checkpoint}:{self.token}:"
        gid += str(self.prepared)
        try:
            with self.conn.cursor() as cur:
                cur.execute(pg_sql.SQL("PREPARE TRANSACTION {}").format(pg_sql.Literal(gid)))
        except psycopg.errors.ObjectNotInPrerequisiteState as exc:
            raise ConnectorError(
                f"expected PostgreSQL at {self.sink.connection.describe()} to prepare transactions ({self.what}); "
                f"got {str(exc).strip()}; hint: set max_prepared_transactions in postgresql.conf to at least the "
                "sink's parallelism + 1 and restart the server"
            ) from exc
        except psycopg.OperationalError as exc:
            self._drop_connection()
            raise ConnectorError(
                f"expected to prepare the transaction {gid} on PostgreSQL at {self.sink.connection.describe()}; "
                f"got {str(exc).strip()}; hint: the job's restart strategy restores the last checkpoint"
            ) from exc
        finally:
            self.in_transaction = False
        self.prepared += 1
        return [JdbcCommittable(gid)]

    def snapshot_state(self, checkpoint_id: int) -> list[Any]:
        self.last_checkpoint = checkpoint_id  # transactions begun from now on belong to later checkpoints
        return []

    def close(self) -> None:
        conn = self.conn
        if conn is not None and self.in_transaction and not conn.closed:
            try:
                conn.execute("ROLLBACK")
            except Exception:
                log.debug("rolling back the open transaction failed", exc_info=True)
        super().close()

    def _roll_back_leftovers(self) -> None:
        """Roll back this sink's prepared transactions begun after the restored checkpoint (no completed
        checkpoint holds them), of the old subtasks that map onto this one."""
        psycopg = psycopg_module()
        from psycopg import sql as pg_sql

        prefix = self.eo.transaction_id_prefix + ":"
        conn = self._connection()
        rows = conn.execute(
            "SELECT gid FROM pg_prepared_xacts WHERE database = current_database() AND starts_with(gid, %s)",
            (prefix,),
        ).fetchall()
        for (gid,) in rows:
            parts = gid[len(prefix) :].split(":")
            if len(parts) != 4 or not (parts[0].isdigit() and parts[1].isdigit()):
                continue
            old_subtask, begun_after = int(parts[0]), int(parts[1])
            if old_subtask % self.context.parallelism != self.context.subtask_index:
                continue
            if begun_after < self.last_checkpoint or parts[2] == self.token:
                continue  # part of the restored checkpoint (committed by it), or this writer's own
            try:
                conn.execute(pg_sql.SQL("ROLLBACK PREPARED {}").format(pg_sql.Literal(gid)))
                log.info("%s: rolled back the prepared transaction %s of a failed attempt", self.what, gid)
            except psycopg.errors.UndefinedObject:
                pass  # another subtask or a committer got there first


class _PreparedTransactionCommitter(Committer[JdbcCommittable]):
    """``COMMIT PREPARED``; a transaction that is no longer prepared was committed before (the checkpoint is
    committed again after a restore). A lost connection is retried up to ``max_attempts`` times, then fails
    the job, which commits again from its checkpoint. (Committables carry only the transaction id: no
    credentials in checkpoints.)"""

    def __init__(self, connection: JdbcConnectionOptions, max_attempts: int) -> None:
        self.connection = connection
        self.max_attempts = max_attempts
        self._conn: Any = None

    def commit(self, requests: list[CommitRequest[JdbcCommittable]]) -> None:
        psycopg = psycopg_module()
        from psycopg import sql as pg_sql

        for request in requests:
            gid = request.get_committable().transaction_id
            for attempt in range(1, self.max_attempts + 1):
                try:
                    if self._conn is None or self._conn.closed:
                        self._conn = connect(self.connection, what="the exactly-once JDBC committer")
                    self._conn.execute(pg_sql.SQL("COMMIT PREPARED {}").format(pg_sql.Literal(gid)))
                    break
                except psycopg.errors.UndefinedObject:
                    request.signal_already_committed()
                    break
                except (psycopg.OperationalError, ConnectorError) as exc:
                    self.close()
                    if attempt == self.max_attempts:
                        raise ConnectorError(
                            f"expected to commit the prepared transaction {gid} on PostgreSQL at "
                            f"{self.connection.describe()}; got {str(exc).strip()} after {attempt} attempts; "
                            "hint: the job restarts and commits it from its checkpoint"
                        ) from exc
                    time.sleep(attempt)

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:
                log.debug("closing a broken PostgreSQL connection failed", exc_info=True)
