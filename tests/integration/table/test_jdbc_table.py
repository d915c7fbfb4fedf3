"""The ``jdbc`` table connector on a real PostgreSQL server: scans (whole and by ranges of a column, in parallel),
append-only inserts, upserts by the declared primary key (updates and deletes of an updating query), the
exactly-once mode, and Flink's refusal of an updating query into a table without a key."""

from __future__ import annotations

import datetime
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from postgres_server import PostgresDatabase

from strom.table import EnvironmentSettings, TableEnvironment
from strom.table.errors import TableException, ValidationException

pytestmark = pytest.mark.timeout(300)


def _env(parallelism: int = 1, checkpoints: bool = False) -> TableEnvironment:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    config = t_env.get_config()
    config.set("parallelism.default", str(parallelism))
    if checkpoints:
        config.set("execution.checkpointing.interval", "100 ms")
    return t_env


def _jdbc(db: PostgresDatabase, table: str, extra: str = "") -> str:
    return f"'connector' = 'jdbc', 'url' = '{db.url}', 'table-name' = '{table}', 'username' = 'strom'{extra}"


def _fill(db: PostgresDatabase, count: int) -> None:
    db.query(
        "CREATE TABLE orders (id BIGINT PRIMARY KEY, customer TEXT, amount NUMERIC(10, 2), score DOUBLE PRECISION, "
        "ts TIMESTAMP, day DATE)"
    )
    db.query(
        "INSERT INTO orders SELECT i, 'c' || (i %% 7), i * 1.25, i / 2.0, TIMESTAMP '2024-01-01' + i * INTERVAL "
        "'1 minute', DATE '2024-01-01' + (i %% 3) FROM generate_series(1, %s) AS i",
        (count,),
    )


def _expected_orders(count: int) -> list[tuple[Any, ...]]:
    start = datetime.datetime(2024, 1, 1)
    return [
        (
            i,
            f"c{i % 7}",
            (Decimal(i) * Decimal("1.25")).quantize(Decimal("0.01")),
            i / 2.0,
            start + datetime.timedelta(minutes=i),
            datetime.date(2024, 1, 1) + datetime.timedelta(days=i % 3),
        )
        for i in range(1, count + 1)
    ]


ORDERS_DDL = (
    "CREATE TABLE orders (id BIGINT, customer STRING, amount DECIMAL(10, 2), score DOUBLE, ts TIMESTAMP(3), "
    "`day` DATE, PRIMARY KEY (id) NOT ENFORCED) WITH ({})"
)


def test_scan_reads_the_table_as_rows_of_the_sql_types(postgres_db: PostgresDatabase) -> None:
    _fill(postgres_db, 50)
    t_env = _env()
    t_env.execute_sql(ORDERS_DDL.format(_jdbc(postgres_db, "orders")))
    rows = [tuple(r) for r in t_env.execute_sql("SELECT * FROM orders").collect()]
    assert sorted(rows) == _expected_orders(50)


def test_a_partitioned_scan_reads_every_range_once_in_parallel(postgres_db: PostgresDatabase) -> None:
    _fill(postgres_db, 1000)
    t_env = _env(parallelism=2)
    options = _jdbc(
        postgres_db,
        "orders",
        ", 'scan.partition.column' = 'id', 'scan.partition.num' = '7', 'scan.partition.lower-bound' = '1', "
        "'scan.partition.upper-bound' = '1000', 'scan.fetch-size' = '50'",
    )
    t_env.execute_sql(ORDERS_DDL.format(options))
    rows = [tuple(r) for r in t_env.execute_sql("SELECT id, customer FROM orders").collect()]
    assert Counter(rows) == Counter((i, f"c{i % 7}") for i in range(1, 1001))


def test_a_partitioned_scan_needs_all_four_options(postgres_db: PostgresDatabase) -> None:
    t_env = _env()
    t_env.execute_sql(ORDERS_DDL.format(_jdbc(postgres_db, "orders", ", 'scan.partition.column' = 'id'")))
    with pytest.raises(ValidationException, match=r"scan\.partition\.lower-bound"):
        t_env.execute_sql("SELECT * FROM orders")


WORDS = ["a", "b", "a", "c", "a", "b", "d", "a", "e", "e"]


def _words(t_env: TableEnvironment) -> None:
    t_env.create_temporary_view("src", t_env.from_elements([(w,) for w in WORDS], ["word"]))


def test_an_insert_only_query_appends_to_a_table_without_a_key(postgres_db: PostgresDatabase) -> None:
    postgres_db.query("CREATE TABLE log (word TEXT, n BIGINT, at TIMESTAMPTZ)")
    t_env = _env()
    _words(t_env)
    t_env.execute_sql(
        f"CREATE TABLE log (word STRING, n BIGINT, at TIMESTAMP_LTZ(3)) WITH ({_jdbc(postgres_db, 'log')})"
    )
    t_env.execute_sql("INSERT INTO log SELECT word, CAST(1 AS BIGINT), TO_TIMESTAMP_LTZ(1000, 3) FROM src").wait()
    rows = postgres_db.query("SELECT word, n, extract(epoch FROM at) FROM log")
    assert Counter((w, n, int(e)) for w, n, e in rows) == Counter((w, 1, 1) for w in WORDS)


def test_an_updating_query_upserts_and_deletes_by_the_primary_key(postgres_db: PostgresDatabase) -> None:
    postgres_db.query("CREATE TABLE counts (word TEXT PRIMARY KEY, n BIGINT)")
    postgres_db.query("CREATE TABLE histogram (n BIGINT PRIMARY KEY, words BIGINT)")
    t_env = _env(parallelism=2)
    _words(t_env)
    counts = _jdbc(postgres_db, "counts", ", 'sink.buffer-flush.max-rows' = '3'")
    t_env.execute_sql(f"CREATE TABLE counts (word STRING, n BIGINT, PRIMARY KEY (word) NOT ENFORCED) WITH ({counts})")
    histogram = _jdbc(postgres_db, "histogram", ", 'sink.buffer-flush.interval' = '0 s'")
    t_env.execute_sql(
        f"CREATE TABLE histogram (n BIGINT, words BIGINT, PRIMARY KEY (n) NOT ENFORCED) WITH ({histogram})"
    )
    statements = t_env.create_statement_set()
    statements.add_insert_sql("INSERT INTO counts SELECT word, COUNT(*) FROM src GROUP BY word")
    statements.add_insert_sql(
        "INSERT INTO histogram SELECT n, COUNT(*) FROM (SELECT word, COUNT(*) AS n FROM src GROUP BY word) GROUP BY n"
    )
    statements.execute().wait()
    assert sorted(postgres_db.query("SELECT word, n FROM counts")) == [("a", 4), ("b", 2), ("c", 1), ("d", 1), ("e", 2)]
    # the histogram's rows for counts that no word has any more (1 → 2 → 3 for 'a') were deleted
    assert sorted(postgres_db.query("SELECT n, words FROM histogram")) == [(1, 2), (2, 2), (4, 1)]


def test_the_exactly_once_mode_commits_prepared_transactions(postgres_db: PostgresDatabase) -> None:
    postgres_db.query("CREATE TABLE log (word TEXT, n BIGINT)")
    t_env = _env(parallelism=2, checkpoints=True)
    _words(t_env)
    options = _jdbc(postgres_db, "log", ", 'sink.delivery-guarantee' = 'exactly-once'")
    t_env.execute_sql(f"CREATE TABLE log (word STRING, n BIGINT) WITH ({options})")
    t_env.execute_sql("INSERT INTO log SELECT word, CAST(1 AS BIGINT) FROM src").wait()
    assert Counter(postgres_db.query("SELECT word, n FROM log")) == Counter((w, 1) for w in WORDS)
    assert postgres_db.prepared_transactions() == []


def test_the_exactly_once_mode_is_refused_for_a_table_with_a_key(postgres_db: PostgresDatabase) -> None:
    t_env = _env()
    _words(t_env)
    options = _jdbc(postgres_db, "counts", ", 'sink.delivery-guarantee' = 'exactly-once'")
    t_env.execute_sql(f"CREATE TABLE counts (word STRING, n BIGINT, PRIMARY KEY (word) NOT ENFORCED) WITH ({options})")
    with pytest.raises(ValidationException, match="without a PRIMARY KEY; got the key \\(word\\)"):
        t_env.execute_sql("INSERT INTO counts SELECT word, COUNT(*) FROM src GROUP BY word")


def test_an_updating_query_into_a_table_without_a_key_is_refused(postgres_db: PostgresDatabase) -> None:
    t_env = _env()
    _words(t_env)
    t_env.execute_sql(f"CREATE TABLE counts (word STRING, n BIGINT) WITH ({_jdbc(postgres_db, 'counts')})")
    with pytest.raises(TableException, match="update"):
        t_env.execute_sql("INSERT INTO counts SELECT word, COUNT(*) FROM src GROUP BY word")


def test_unknown_options_and_missing_ones_name_the_table(postgres_db: PostgresDatabase) -> None:
    t_env = _env()
    t_env.execute_sql("CREATE TABLE a (x INT) WITH ('connector' = 'jdbc', 'url' = 'jdbc:postgresql://h/db')")
    with pytest.raises(ValidationException, match="'table-name' is missing"):
        t_env.execute_sql("SELECT * FROM a")
    t_env.execute_sql(
        f"CREATE TABLE b (x INT) WITH ({_jdbc(postgres_db, 'b', ', ' + repr('sink.flush') + ' = ' + repr('1'))})"
    )
    with pytest.raises(ValidationException, match=r"unsupported options sink\.flush"):
        t_env.execute_sql("SELECT * FROM b")


ORDERS = Path(__file__).parents[2] / "data" / "flink_sql" / "temporal" / "orders.csv"


def _lookup_env(db: PostgresDatabase, cache: str) -> TableEnvironment:
    db.query("CREATE TABLE rates (currency TEXT PRIMARY KEY, rate INT, name TEXT)")
    db.query("INSERT INTO rates VALUES ('EUR', 119, 'euro'), ('USD', 102, 'dollar'), ('GBP', 90, 'pound')")
    t_env = _env(parallelism=2)
    t_env.execute_sql(
        "CREATE TABLE orders (id INT, currency STRING, amount INT, ts TIMESTAMP(3), pt AS PROCTIME()) WITH ("
        f"'connector' = 'filesystem', 'format' = 'csv', 'path' = '{ORDERS}')"
    )
    t_env.execute_sql(
        "CREATE TABLE rates (currency STRING, rate INT, name STRING, PRIMARY KEY (currency) NOT ENFORCED) "
        f"WITH ({_jdbc(db, 'rates', cache)})"
    )
    return t_env


@pytest.mark.parametrize(
    "cache",
    [
        "",
        ", 'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '2', "
        "'lookup.partial-cache.expire-after-write' = '1 min'",
        ", 'lookup.cache.max-rows' = '10', 'lookup.cache.ttl' = '10 s'",
    ],
)
def test_a_lookup_join_looks_rows_up_by_key(postgres_db: PostgresDatabase, cache: str) -> None:
    t_env = _lookup_env(postgres_db, cache)
    query = (
        "SELECT o.id, o.amount * r.rate, r.name FROM orders AS o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.pt AS r "
        "ON o.currency = r.currency"
    )
    rows = sorted(tuple(r) for r in t_env.execute_sql(query).collect())
    assert rows == [
        (1, 1190, "euro"),
        (2, 2040, "dollar"),
        (3, 3570, "euro"),
        (4, None, None),
        (5, 5100, "dollar"),
        (6, 7140, "euro"),
        (7, 8330, "euro"),
        (8, 8160, "dollar"),
    ]


def test_a_lookup_opens_a_lost_connection_again(postgres_db: PostgresDatabase) -> None:
    from strom.table.catalog.catalog_manager import CatalogColumn, CatalogTable
    from strom.table.connectors.jdbc_table import JdbcTableSource
    from strom.table.connectors.lookup import LookupContext
    from strom.table.planner.logical import RowType
    from strom.table.types import DataTypes

    _lookup_env(postgres_db, "")

    types = (DataTypes.STRING(), DataTypes.INT(), DataTypes.STRING())
    table = CatalogTable(
        tuple(CatalogColumn(n, t) for n, t in zip(("currency", "rate", "name"), types, strict=True)),
        {
            "connector": "jdbc",
            "url": postgres_db.url,
            "table-name": "rates",
            "username": "strom",
            "lookup.max-retries": "2",
        },
        primary_key=("currency",),
    )
    lookup = JdbcTableSource.create("rates", table, RowType(("currency", "rate", "name"), types))
    function = lookup.get_lookup_runtime_provider(LookupContext((0,))).function
    function.open()
    try:
        assert function.lookup(("EUR",)) == [("EUR", 119, "euro")]
        postgres_db.query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        )
        assert function.lookup(("GBP",)) == [("GBP", 90, "pound")]
        assert function.lookup(("XXX",)) == []
    finally:
        function.close()
