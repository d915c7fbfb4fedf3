"""The ``redis`` table connector against a real redis-server: stream entries read as rows (fields by column name,
METADATA ``stream`` / ``id`` / ``timestamp``), rows appended with XADD — at least once and exactly once."""

from __future__ import annotations

import datetime

import pytest
from redis_server import RedisServer

from strom.table import EnvironmentSettings, TableEnvironment

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def t_env() -> TableEnvironment:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    return t_env


def test_a_redis_table_reads_entries_with_metadata(redis_server: RedisServer, t_env: TableEnvironment) -> None:
    with redis_server.client() as client:
        first = client.xadd("clicks", {"user": "alice", "amount": "3", "at": "2024-01-02 03:04:05"})
        client.xadd("clicks", {"user": "bob", "amount": "5"})
        client.xadd("orders", {"user": "carol", "amount": "7"})
    t_env.execute_sql(
        "CREATE TABLE clicks (`user` STRING, amount INT, at TIMESTAMP(3), s STRING METADATA FROM 'stream' VIRTUAL, "
        "id STRING METADATA VIRTUAL, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL) WITH ('connector' = "
        f"'redis', 'url' = '{redis_server.url}', 'stream' = 'clicks;orders', 'scan.bounded.mode' = 'latest-offset')"
    )
    rows = sorted(tuple(r._values) for r in t_env.execute_sql("SELECT * FROM clicks").collect())
    assert [r[:4] for r in rows] == [
        ("alice", 3, datetime.datetime(2024, 1, 2, 3, 4, 5), "clicks"),
        ("bob", 5, None, "clicks"),
        ("carol", 7, None, "orders"),
    ]
    assert rows[0][4] == first
    assert rows[0][5] == datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=int(first.split("-")[0]))


@pytest.mark.parametrize("guarantee", ["at-least-once", "exactly-once"])
def test_an_insert_appends_rows_as_entries(redis_server: RedisServer, t_env: TableEnvironment, guarantee: str) -> None:
    t_env.execute_sql(
        f"CREATE TABLE alerts (`user` STRING, total BIGINT, ok BOOLEAN) WITH ('connector' = 'redis', 'url' = "
        f"'{redis_server.url}', 'stream' = 'alerts', 'sink.delivery-guarantee' = '{guarantee}', "
        "'sink.transactional-id-prefix' = 'sql-alerts')"
    )
    t_env.execute_sql(
        "INSERT INTO alerts SELECT * FROM (VALUES ('alice', 3, TRUE), ('bob', CAST(NULL AS BIGINT), FALSE)) "
        "AS t(u, n, ok)"
    ).wait()
    with redis_server.client() as client:
        entries = [fields for _, fields in client.xrange("alerts")]
    assert entries == [{"user": "alice", "total": "3", "ok": "true"}, {"user": "bob", "ok": "false"}]


def test_an_updating_query_into_redis_is_refused(redis_server: RedisServer, t_env: TableEnvironment) -> None:
    t_env.execute_sql(
        f"CREATE TABLE counts (n BIGINT) WITH ('connector' = 'redis', 'url' = '{redis_server.url}', 'stream' = 'c')"
    )
    with pytest.raises(Exception, match="doesn't support consuming update changes"):
        t_env.execute_sql("INSERT INTO counts SELECT COUNT(*) FROM (VALUES (1), (2)) AS t(x)")
