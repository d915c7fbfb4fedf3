"""The JDBC connector's pieces without a cluster: JDBC statements and URLs, options with their hints, and the
exactly-once writer and committer on a real PostgreSQL server — prepared rows stay invisible until committed,
a commit repeated after a restore finds the transaction gone and counts it committed, and a restored writer
rolls back exactly the prepared transactions that no completed checkpoint covers."""

from __future__ import annotations

from typing import Any

import pytest
from postgres_server import PostgresDatabase

from strom.api.sink import CommitRequest, SinkWriterContext
from strom.connectors.jdbc import JdbcConnectionOptions, JdbcExactlyOnceOptions, JdbcExecutionOptions, JdbcSink
from strom.connectors.jdbc.statement import psycopg_sql
from strom.exceptions import ConnectorError, InvalidProgramError


def test_jdbc_placeholders_become_psycopgs_outside_quotes_and_comments() -> None:
    assert psycopg_sql("INSERT INTO t VALUES (?, ?)") == "INSERT INTO t VALUES (%s, %s)"
    assert psycopg_sql("SELECT '?', \"a?\", ? -- why?\n, '100%'") == "SELECT '?', \"a?\", %s -- why?\n, '100%%'"


def test_urls_and_options_are_checked_with_hints() -> None:
    options = (
        JdbcConnectionOptions.JdbcConnectionOptionsBuilder()
        .with_url("jdbc:postgresql://db.local/shop?sslmode=require")
        .with_user_name("app")
        .with_password("it's")
        .build()
    )
    assert options.conninfo() == (
        "host='db.local' dbname='shop' sslmode='require' user='app' password='it\\'s' connect_timeout='60'"
    )
    assert options.describe() == "jdbc:postgresql://db.local/shop"
    with pytest.raises(InvalidProgramError, match=r"PostgreSQL JDBC URL.*got 'jdbc:mysql://x/y'.*hint"):
        JdbcConnectionOptions("jdbc:mysql://x/y")
    with pytest.raises(InvalidProgramError, match="host and a database"):
        JdbcConnectionOptions("jdbc:postgresql://localhost/")
    with pytest.raises(InvalidProgramError, match=r"batch_size of JdbcExecutionOptions.*at least 1"):
        JdbcExecutionOptions.builder().with_batch_size(0).build()
    with pytest.raises(InvalidProgramError, match="transaction_id_prefix"):
        JdbcExactlyOnceOptions(transaction_id_prefix="a:b")
    with pytest.raises(InvalidProgramError, match="'\\?' placeholders"):
        JdbcSink.sink("INSERT INTO t VALUES (1)", None, options)
    assert JdbcExecutionOptions.defaults() == JdbcExecutionOptions(0, 5000, 3)  # Flink's defaults


def _context(subtask: int, parallelism: int, restored: int | None) -> SinkWriterContext:
    return SinkWriterContext(
        subtask_index=subtask, parallelism=parallelism, attempt_number=0, restored_checkpoint_id=restored
    )


def _sink(db: PostgresDatabase, prefix: str = "unit") -> Any:
    return JdbcSink.exactly_once_sink(
        "INSERT INTO t (n) VALUES (?)",
        None,
        db.connection_options(),
        JdbcExecutionOptions.defaults(),
        JdbcExactlyOnceOptions(transaction_id_prefix=prefix),
    )


@pytest.mark.timeout(60)
def test_prepared_rows_are_invisible_until_committed_and_a_second_commit_counts_as_done(
    postgres_db: PostgresDatabase,
) -> None:
    postgres_db.query("CREATE TABLE t (n INT NOT NULL)")
    sink = _sink(postgres_db)
    writer = sink.create_writer(_context(0, 1, None))
    writer.write_batch([(1,), (2,)])
    writer.flush(False)
    [committable] = writer.prepare_commit()
    writer.snapshot_state(1)
    assert committable.transaction_id.startswith("unit:0:0:")  # prefix:subtask:begun after checkpoint 0:...
    assert postgres_db.query("SELECT count(*) FROM t") == [(0,)]
    assert postgres_db.prepared_transactions() == [committable.transaction_id]
    assert writer.prepare_commit() == []  # nothing written since: nothing to prepare
    committer = sink.create_committer()
    request = CommitRequest(committable)
    committer.commit([request])
    assert postgres_db.query("SELECT n FROM t ORDER BY n") == [(1,), (2,)]
    again = CommitRequest(committable)  # a restore commits the checkpoint's committables again
    committer.commit([again])
    assert again.failure is None and not again.should_retry
    assert postgres_db.query("SELECT count(*) FROM t") == [(2,)]
    committer.close()
    writer.close()


@pytest.mark.timeout(60)
def test_a_restored_writer_rolls_back_what_no_completed_checkpoint_covers(postgres_db: PostgresDatabase) -> None:
    postgres_db.query("CREATE TABLE t (n INT NOT NULL)")

    def prepare(gid: str, n: int) -> None:
        with postgres_db.connect() as conn:
            conn.execute("BEGIN")
            conn.execute("INSERT INTO t (n) VALUES (%s)", (n,))
            conn.execute(f"PREPARE TRANSACTION '{gid}'")

    prepare("unit:1:4:dead:0", 1)  # old subtask 1, begun after checkpoint 4: part of checkpoint 5 -> kept
    prepare("unit:1:5:dead:1", 2)  # begun after checkpoint 5: no completed checkpoint holds it -> rolled back
    prepare("unit:3:7:dead:0", 3)  # old subtask 3 -> new subtask 3 % 2 == 1 -> rolled back
    prepare("unit:2:9:dead:0", 4)  # old subtask 2 -> new subtask 0's to roll back, not subtask 1's
    prepare("other:1:9:dead:0", 5)  # another job's prefix: never touched
    writer = _sink(postgres_db).restore_writer(_context(1, 2, 5), [])
    assert sorted(postgres_db.prepared_transactions()) == ["other:1:9:dead:0", "unit:1:4:dead:0", "unit:2:9:dead:0"]
    _sink(postgres_db).restore_writer(_context(0, 2, 5), []).close()
    assert sorted(postgres_db.prepared_transactions()) == ["other:1:9:dead:0", "unit:1:4:dead:0"]
    writer.close()


@pytest.mark.timeout(60)
def test_prepare_refused_by_the_server_and_a_record_that_does_not_fit_are_clear_errors(
    postgres_db: PostgresDatabase,
) -> None:
    postgres_db.query("CREATE TABLE t (n INT NOT NULL)")
    writer = _sink(postgres_db).create_writer(_context(0, 1, None))
    writer.write_batch([(1,), ("two",), (3,)])
    with pytest.raises(ConnectorError, match=r"accept the record \('two',\).*InvalidTextRepresentation.*hint"):
        writer.flush(False)
    writer.close()
    assert postgres_db.prepared_transactions() == []
