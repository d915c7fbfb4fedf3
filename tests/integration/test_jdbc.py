"""JdbcSink on a real PostgreSQL server and real TaskManager processes: at-least-once upserts, exactly-once
two-phase commit across TaskManager SIGKILLs and a database restart (the table equals the failure-free result,
no row twice, no prepared transaction left), refused records and an unreachable server with clear errors."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import pytest
from failover import completed_checkpoints, failover_env, result_with_kills
from postgres_server import PostgresDatabase

from strom import DataGeneratorSource, JobExecutionError, StreamExecutionEnvironment
from strom.common import Row, Types
from strom.datastream.connectors.jdbc import JdbcExactlyOnceOptions, JdbcExecutionOptions, JdbcSink


def event(i: int) -> tuple[int, str, int]:
    return i, f"k{i % 7}", (i * 7919) % 1000


@pytest.mark.timeout(120)
def test_at_least_once_upserts_leave_the_final_value_of_every_key(postgres_db: PostgresDatabase) -> None:
    postgres_db.query("CREATE TABLE totals (k TEXT PRIMARY KEY, total BIGINT NOT NULL, n INT NOT NULL)")
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.enable_checkpointing(200)
    stream = env.from_collection([event(i) for i in range(3000)])
    running = (
        stream.map(lambda e: (e[1], e[2], 1))
        .key_by(lambda t: t[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1], a[2] + b[2]))
    )
    row = Types.ROW([Types.STRING(), Types.LONG(), Types.INT()])
    running.map(lambda t: Row(t[0], t[1], t[2]), output_type=row).add_sink(
        JdbcSink.sink(
            "INSERT INTO totals (k, total, n) VALUES (?, ?, ?) "
            "ON CONFLICT (k) DO UPDATE SET total = GREATEST(totals.total, EXCLUDED.total), n = GREATEST(totals.n, "
            "EXCLUDED.n)",
            row,
            postgres_db.connection_options(),
            JdbcExecutionOptions.builder().with_batch_size(50).with_batch_interval_ms(20).with_max_retries(2).build(),
        )
    )
    env.execute("upserts")
    expected: dict[str, tuple[int, int]] = {}
    for _, k, v in (event(i) for i in range(3000)):
        t, n = expected.get(k, (0, 0))
        expected[k] = (t + v, n + 1)
    got = {k: (t, n) for k, t, n in postgres_db.query("SELECT k, total, n FROM totals")}
    assert got == expected


def _numbers_job(env: Any, count: int, db: PostgresDatabase, prefix: str, rate: int) -> None:
    source = DataGeneratorSource(lambda i: i, count, records_per_second=rate)
    (
        env.from_source(source, source_name="numbers")
        .map(lambda i: (i, i % 13))
        .sink_to(
            JdbcSink.exactly_once_sink(
                "INSERT INTO numbers (n, m) VALUES (?, ?)",
                Types.TUPLE([Types.LONG(), Types.INT()]),
                db.connection_options(),
                JdbcExecutionOptions.builder().with_batch_size(200).build(),
                JdbcExactlyOnceOptions(transaction_id_prefix=prefix),
            )
        )
    )


@pytest.mark.processes  # kills TaskManagers
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_exactly_once_across_killed_task_managers(postgres_db: PostgresDatabase) -> None:
    postgres_db.query("CREATE TABLE numbers (n BIGINT NOT NULL, m INT NOT NULL)")  # no key: a duplicate would stay
    count = 20_000
    env = failover_env(parallelism=2, interval_ms=150, attempts=20)
    _numbers_job(env, count, postgres_db, "kills", rate=2_000)
    client = env.execute_async("exactly-once into PostgreSQL")
    result, killed = result_with_kills(client, 2, 3)
    assert len(killed) == 2 and result.num_restarts >= 2
    rows = postgres_db.query("SELECT n, m FROM numbers")
    assert Counter(rows) == Counter((i, i % 13) for i in range(count))  # each record once
    assert postgres_db.prepared_transactions() == []


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_exactly_once_across_a_database_restart(postgres_db: PostgresDatabase) -> None:
    postgres_db.query("CREATE TABLE numbers (n BIGINT NOT NULL, m INT NOT NULL)")
    count = 12_000
    env = failover_env(parallelism=2, interval_ms=150, attempts=50)
    _numbers_job(env, count, postgres_db, "restart", rate=2_000)
    client = env.execute_async("exactly-once across a PostgreSQL restart")
    completed_checkpoints(client, at_least=2, timeout_s=120)
    deadline = time.monotonic() + 60
    while not postgres_db.query("SELECT count(*) FROM numbers")[0][0] and time.monotonic() < deadline:
        time.sleep(0.05)  # some checkpoint's rows are committed
    server = postgres_db.server
    server.stop()  # open transactions are aborted, prepared ones kept: the job fails over until it is back
    deadline = time.monotonic() + 60
    while client.get_job_status().name == "RUNNING" and not client.get_job_status().is_globally_terminal:
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    server.start_again()
    result = client.get_job_execution_result()
    assert result.num_restarts >= 1
    rows = postgres_db.query("SELECT n, m FROM numbers")
    assert Counter(rows) == Counter((i, i % 13) for i in range(count))
    assert postgres_db.prepared_transactions() == []


@pytest.mark.timeout(120)
def test_a_record_that_does_not_fit_fails_the_job_naming_it(postgres_db: PostgresDatabase) -> None:
    postgres_db.query("CREATE TABLE small (n SMALLINT NOT NULL)")
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_collection([(1,), (2,), (100_000,), (3,)]).add_sink(
        JdbcSink.sink("INSERT INTO small (n) VALUES (?)", None, postgres_db.connection_options())
    )
    with pytest.raises(JobExecutionError) as info:
        env.execute("too big")
    text = str(info.value)
    assert "expected the database to accept the record (100000,)" in text
    assert "smallint" in text and "hint:" in text
    assert postgres_db.query("SELECT count(*) FROM small") == [(0,)]  # the refused batch left nothing


@pytest.mark.timeout(120)
def test_an_unreachable_database_fails_the_job_naming_it(postgres_db: PostgresDatabase) -> None:
    options = postgres_db.connection_options()
    url = options.url.replace(f":{postgres_db.server.port}/", ":1/")  # nothing listens on port 1
    from strom.datastream.connectors.jdbc import JdbcConnectionOptions

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_collection([(1,)]).add_sink(
        JdbcSink.sink(
            "INSERT INTO t (n) VALUES (?)",
            None,
            JdbcConnectionOptions.JdbcConnectionOptionsBuilder().with_url(url).with_user_name("strom").build(),
        )
    )
    with pytest.raises(JobExecutionError) as info:
        env.execute("nowhere")
    assert f"expected to reach PostgreSQL at jdbc:postgresql://127.0.0.1:1/{postgres_db.name}" in str(info.value)


def _fill_orders(db: PostgresDatabase, count: int) -> None:
    db.query("CREATE TABLE orders (id BIGINT PRIMARY KEY, customer TEXT NOT NULL, amount NUMERIC(10, 2) NOT NULL)")
    db.query(
        "INSERT INTO orders SELECT g, 'c' || (g %% 17), (g %% 1000) / 10.0 FROM generate_series(1, %s) AS g", (count,)
    )


@pytest.mark.timeout(120)
def test_a_query_split_by_ranges_reads_every_row_once(postgres_db: PostgresDatabase) -> None:
    from strom.common import WatermarkStrategy
    from strom.datastream.connectors.jdbc import JdbcNumericBetweenParametersProvider, JdbcSource

    _fill_orders(postgres_db, 5000)
    source = (
        JdbcSource.builder()
        .set_sql("SELECT id, customer, amount FROM orders WHERE id BETWEEN ? AND ? ORDER BY id")
        .set_connection_options(postgres_db.connection_options())
        .set_parameters_provider(JdbcNumericBetweenParametersProvider(1, 5000).of_batch_num(7))
        .build()
    )
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    stream = env.from_source(source, WatermarkStrategy.no_watermarks(), "orders")
    with stream.execute_and_collect() as results:
        rows = list(results)
    assert sorted(rows) == sorted(postgres_db.query("SELECT id, customer, amount FROM orders"))


@pytest.mark.processes  # kills TaskManagers
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_postgres_to_postgres_exactly_once_across_killed_task_managers(postgres_db: PostgresDatabase) -> None:
    """A table read by ranges (its reader positions in the checkpoints) into another table through the
    exactly-once sink, with two TaskManagers SIGKILLed: the copy equals the original, no row twice."""
    from strom.datastream.connectors.jdbc import JdbcNumericBetweenParametersProvider, JdbcSource

    count = 20_000
    _fill_orders(postgres_db, count)
    postgres_db.query("CREATE TABLE copy (id BIGINT NOT NULL, customer TEXT NOT NULL, amount NUMERIC(10, 2) NOT NULL)")
    env = failover_env(parallelism=2, interval_ms=150, attempts=20)
    source = (
        JdbcSource.builder()
        .set_sql("SELECT id, customer, amount FROM orders WHERE id BETWEEN ? AND ? ORDER BY id")
        .set_connection_options(postgres_db.connection_options())
        .set_parameters_provider(JdbcNumericBetweenParametersProvider(1, count).of_batch_size(1000))
        .set_fetch_size(100)
        .build()
    )
    from strom.common import WatermarkStrategy

    (
        env.from_source(source, WatermarkStrategy.no_watermarks(), "orders")
        .map(_slowly)
        .sink_to(
            JdbcSink.exactly_once_sink(
                "INSERT INTO copy (id, customer, amount) VALUES (?, ?, ?)",
                None,
                postgres_db.connection_options(),
                JdbcExecutionOptions.builder().with_batch_size(500).build(),
                JdbcExactlyOnceOptions(transaction_id_prefix="copy"),
            )
        )
    )
    client = env.execute_async("orders copy")
    result, killed = result_with_kills(client, 2, 11)
    assert len(killed) == 2 and result.num_restarts >= 2
    copy = Counter(postgres_db.query("SELECT id, customer, amount FROM copy"))
    assert copy == Counter(postgres_db.query("SELECT id, customer, amount FROM orders"))
    assert postgres_db.prepared_transactions() == []


def _slowly(row: Any) -> Any:
    time.sleep(0.0002)  # keeps the job running long enough for the kills; nothing asserts on time
    return row
