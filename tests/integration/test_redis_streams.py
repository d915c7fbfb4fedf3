"""Redis Streams on real servers and TaskManager processes: a Redis stream into PostgreSQL exactly-once across
TaskManager SIGKILLs and a PostgreSQL restart (the table equals the failure-free result, no prepared transaction
left), and a Redis stream into another exactly-once across SIGKILLs (each entry once)."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from typing import Any

import pytest
from failover import completed_checkpoints, failover_env, kill_task_managers, result_with_kills
from postgres_server import PostgresDatabase
from redis_server import RedisServer

from strom.common import WatermarkStrategy
from strom.connectors.redis import DeliveryGuarantee, RedisStreamSink, RedisStreamSource
from strom.datastream.connectors.jdbc import JdbcExactlyOnceOptions, JdbcExecutionOptions, JdbcSink


def _fill(server: RedisServer, stream: str, count: int) -> None:
    client = server.client()
    pipe = client.pipeline(transaction=False)
    for i in range(count):
        pipe.xadd(stream, {"n": str(i), "user": f"u{i % 11}"})
        if i % 1000 == 999:
            pipe.execute()
    pipe.execute()


def _slowly(entry: Any) -> Any:
    time.sleep(0.0002)  # keeps the job running long enough for the kills; nothing asserts on time
    return entry


def _source(server: RedisServer, stream: str) -> RedisStreamSource:
    return RedisStreamSource.builder().set_connection(server.options()).set_streams([stream]).set_bounded().build()


@pytest.mark.processes  # kills TaskManagers
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_redis_to_postgres_exactly_once_across_kills_and_a_database_restart(
    redis_server: RedisServer, postgres_db: PostgresDatabase
) -> None:
    count = 20_000
    _fill(redis_server, "events", count)
    postgres_db.query("CREATE TABLE events (entry TEXT NOT NULL, n BIGINT NOT NULL, user_id TEXT NOT NULL)")
    env = failover_env(parallelism=2, interval_ms=150, attempts=50)
    (
        env.from_source(_source(redis_server, "events"), WatermarkStrategy.no_watermarks(), "events")
        .map(_slowly)
        .map(lambda e: (e.id, int(e.fields["n"]), e.fields["user"]))
        .sink_to(
            JdbcSink.exactly_once_sink(
                "INSERT INTO events (entry, n, user_id) VALUES (?, ?, ?)",
                None,
                postgres_db.connection_options(),
                JdbcExecutionOptions.builder().with_batch_size(500).build(),
                JdbcExactlyOnceOptions(transaction_id_prefix="redis-pg"),
            )
        )
    )
    client = env.execute_async("redis to postgres")
    killed: list[int] = []
    killer = threading.Thread(target=kill_task_managers, args=(client, 2, random.Random(5), killed))
    killer.start()
    try:
        killer.join()
        if not client.get_job_status().is_globally_terminal:
            completed_checkpoints(client, at_least=1, timeout_s=60)
            postgres_db.server.stop()  # mid-job: the job fails over until the database is back
            time.sleep(0.5)
            postgres_db.server.start_again()
        result = client.get_job_execution_result()
    finally:
        if postgres_db.server.process is None:
            postgres_db.server.start_again()
    assert len(killed) == 2 and result.num_restarts >= 2
    expected = Counter((entry_id, int(f["n"]), f["user"]) for entry_id, f in redis_server.client().xrange("events"))
    assert Counter(postgres_db.query("SELECT entry, n, user_id FROM events")) == expected
    assert postgres_db.prepared_transactions() == []


@pytest.mark.processes  # kills TaskManagers
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_redis_to_redis_exactly_once_across_killed_task_managers(redis_server: RedisServer) -> None:
    count = 20_000
    _fill(redis_server, "in", count)
    env = failover_env(parallelism=2, interval_ms=150, attempts=20)
    (
        env.from_source(_source(redis_server, "in"), WatermarkStrategy.no_watermarks(), "in")
        .map(_slowly)
        .map(lambda e: {"n": e.fields["n"], "from": e.id})
        .sink_to(
            RedisStreamSink.builder()
            .set_connection(redis_server.options())
            .set_stream("out")
            .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE)
            .set_transaction_prefix("copy")
            .build()
        )
    )
    client = env.execute_async("redis to redis")
    result, killed = result_with_kills(client, 2, 9)
    assert len(killed) == 2 and result.num_restarts >= 2
    redis = redis_server.client()
    out = Counter((f["n"], f["from"]) for _, f in redis.xrange("out"))
    assert out == Counter((f["n"], entry_id) for entry_id, f in redis.xrange("in"))
    staging = [k for k in redis.keys("copy:stage:*") if not k.endswith(":applied")]
    assert staging == []  # every staging list was appended or deleted
