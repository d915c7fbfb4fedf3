"""Issue 34's "Verify": a SQL job with a GROUP BY and a window join survives three TaskManager SIGKILLs (real
TaskManager processes) with exactly-once output: the window join's rows into the filesystem sink (json, and a
parquet table partitioned by minute with partition commit: every partition gets its _SUCCESS) and into a JDBC
table without a key through PostgreSQL prepared transactions (append-only: every window's row once, none lost,
none twice, no prepared transaction left behind), the GROUP BY into a JDBC table upserting by its key (the final
table equals the expected one)."""

from __future__ import annotations

import datetime
import json
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from failover import committed_files, failover_env, result_with_kills
from postgres_server import PostgresDatabase

from strom.table import StreamTableEnvironment

ROWS = 24_000
WINDOW_MS = 5_000
PER_WINDOW = WINDOW_MS // 10  # ts = id * 10 ms


def _expected_windows() -> Counter[tuple[str, int, int]]:
    expected: Counter[tuple[str, int, int]] = Counter()
    for w in range(ROWS // PER_WINDOW):
        ids = range(w * PER_WINDOW, (w + 1) * PER_WINDOW)
        start = datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=w * WINDOW_MS)
        expected[(start.isoformat(sep=" "), len(ids), sum(ids))] += 1
    return expected


@pytest.mark.processes  # kills TaskManagers
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_group_by_and_window_join_exactly_once_across_three_task_manager_kills(
    tmp_path: Path, postgres_db: PostgresDatabase
) -> None:
    postgres_db.query("CREATE TABLE totals (k BIGINT PRIMARY KEY, n BIGINT NOT NULL, total BIGINT NOT NULL)")
    postgres_db.query("CREATE TABLE window_log (window_start TIMESTAMP, n BIGINT NOT NULL, total BIGINT NOT NULL)")
    env = failover_env(parallelism=2, interval_ms=200, attempts=30)
    t_env = StreamTableEnvironment.create(env)
    t_env.execute_sql(
        "CREATE TABLE gen (id BIGINT, ts AS TO_TIMESTAMP_LTZ(id * 10, 3), WATERMARK FOR ts AS ts) WITH ("
        "'connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '0', "
        f"'fields.id.end' = '{ROWS - 1}', 'rows-per-second' = '1500')"
    )
    out = tmp_path / "windows"
    t_env.execute_sql(
        "CREATE TABLE windows (window_start TIMESTAMP(3), n BIGINT, total BIGINT) WITH ("
        f"'connector' = 'filesystem', 'path' = '{out}', 'format' = 'json')"
    )
    by_minute = tmp_path / "by_minute"
    t_env.execute_sql(
        "CREATE TABLE by_minute (window_start TIMESTAMP(3), n BIGINT, total BIGINT, m STRING) PARTITIONED BY (m) "
        f"WITH ('connector' = 'filesystem', 'path' = '{by_minute}', 'format' = 'parquet', "
        "'sink.partition-commit.trigger' = 'partition-time', "
        "'partition.time-extractor.timestamp-pattern' = '1970-01-01 00:$m:00', "
        "'sink.partition-commit.delay' = '1 min', 'sink.partition-commit.policy.kind' = 'success-file')"
    )
    t_env.execute_sql(
        "CREATE TABLE totals (k BIGINT, n BIGINT, total BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ("
        f"'connector' = 'jdbc', 'url' = '{postgres_db.url}', 'table-name' = 'totals', 'username' = 'strom', "
        "'sink.buffer-flush.max-rows' = '50')"
    )
    t_env.execute_sql(
        "CREATE TABLE window_log (window_start TIMESTAMP(3), n BIGINT, total BIGINT) WITH ("
        f"'connector' = 'jdbc', 'url' = '{postgres_db.url}', 'table-name' = 'window_log', 'username' = 'strom', "
        "'sink.delivery-guarantee' = 'exactly-once')"
    )
    t_env.create_temporary_view(
        "window_join",
        t_env.sql_query(
            "SELECT L.window_start, L.n, R.total FROM "
            "(SELECT window_start, window_end, COUNT(*) AS n FROM "
            "TABLE(TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end) L JOIN "
            "(SELECT window_start, window_end, SUM(id) AS total FROM "
            "TABLE(TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end) R "
            "ON L.window_start = R.window_start AND L.window_end = R.window_end"
        ),
    )
    statements = t_env.create_statement_set()
    statements.add_insert_sql("INSERT INTO windows SELECT * FROM window_join")
    statements.add_insert_sql("INSERT INTO window_log SELECT * FROM window_join")
    statements.add_insert_sql("INSERT INTO by_minute SELECT *, DATE_FORMAT(window_start, 'mm') FROM window_join")
    statements.add_insert_sql("INSERT INTO totals SELECT id % 10, COUNT(*), SUM(id) FROM gen GROUP BY id % 10")
    client = statements.execute().get_job_client()
    assert client is not None
    result, killed = result_with_kills(client, 3, seed=34)
    assert len(killed) == 3 and result.num_restarts >= 3, (killed, result.num_restarts)

    rows = [json.loads(line) for f in committed_files(out) for line in f.read_text().splitlines()]
    got = Counter((r["window_start"], r["n"], r["total"]) for r in rows)
    assert got == _expected_windows()  # every window once: none lost, none twice
    parts = [f for f in committed_files(by_minute) if not f.name.startswith("_")]
    table = pa.concat_tables([pq.read_table(f) for f in parts]).to_pylist()
    minutes = Counter((r["window_start"].isoformat(sep=" "), r["n"], r["total"]) for r in table)
    assert minutes == _expected_windows()
    assert sorted(f.parent.name for f in committed_files(by_minute) if f.name == "_SUCCESS") == [
        f"m={m:02d}" for m in range(ROWS * 10 // 60_000)
    ]
    logged = postgres_db.query("SELECT window_start, n, total FROM window_log")
    assert Counter((w.isoformat(sep=" "), n, total) for w, n, total in logged) == _expected_windows()

    expected_totals = sorted((k, ROWS // 10, sum(range(k, ROWS, 10))) for k in range(10))
    assert sorted(postgres_db.query("SELECT k, n, total FROM totals")) == expected_totals
    assert postgres_db.prepared_transactions() == []
