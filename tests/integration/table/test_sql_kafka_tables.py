"""The ``kafka`` and ``upsert-kafka`` tables against the test broker (noida-db): key, value and METADATA columns
read and written, an exactly-once INSERT, the upsert changelog through ChangelogNormalize (Flink's exact rows at
parallelism 1, derived from Flink's ``DeduplicateFunctionHelper.processLastRowOnChangelog``), tombstones, and
watermarks per partition."""

from __future__ import annotations

import datetime
import time
from typing import Any

import pytest
from kafka_broker import KafkaBroker

from strom.api.row import RowKind
from strom.table import DataTypes, EnvironmentSettings, TableEnvironment

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def t_env() -> TableEnvironment:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    return t_env


def _now_ms() -> int:  # the broker drops records older than its retention: timestamps near now
    return int(time.time()) * 1000


def _produce(broker: KafkaBroker, topic: str, records: list[tuple[Any, ...]]) -> None:
    """``(partition, key, value, timestamp_ms, headers)`` each."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "acks": "all"})
    for partition, key, value, timestamp, headers in records:
        producer.produce(
            topic,
            None if value is None else value.encode(),
            None if key is None else key.encode(),
            partition,
            timestamp=timestamp,
            headers=headers,
        )
    assert producer.flush(30) == 0


def _consume(broker: KafkaBroker, topic: str, *, idle_s: float = 2.0) -> list[Any]:
    """Every committed message of ``topic`` (read_committed), from the beginning."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap_servers, "group.id": f"check-{time.monotonic_ns()}",
         "isolation.level": "read_committed", "enable.auto.commit": False}
    )  # fmt: skip
    try:
        partitions = broker.admin().list_topics(topic, timeout=10).topics[topic].partitions
        consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
        out: list[Any] = []
        last = time.monotonic()
        while time.monotonic() - last < idle_s:
            for message in consumer.consume(1000, 0.2):
                if message.error() is None:
                    out.append(message)
                    last = time.monotonic()
        return out
    finally:
        consumer.close()


def _with(broker: KafkaBroker, topic: str, extra: str = "") -> str:
    return f"'topic' = '{topic}', 'properties.bootstrap.servers' = '{broker.bootstrap_servers}'" + (
        f", {extra}" if extra else ""
    )


def test_a_kafka_table_reads_key_value_and_metadata_columns(kafka_broker: KafkaBroker, t_env: TableEnvironment) -> None:
    topic = kafka_broker.create_topic("sql-kafka-read", 2)
    now = _now_ms()
    _produce(
        kafka_broker,
        topic,
        [
            (0, "alice", '{"amount": 3}', now, [("h", b"1")]),
            (1, "bob", '{"amount": 5}', now + 1, None),
            (0, "alice", '{"amount": 4}', now + 2, None),
            (1, "carol", "not json", now + 3, None),  # skipped: value.json.ignore-parse-errors
        ],
    )
    t_env.execute_sql(
        "CREATE TABLE clicks (`user` STRING, amount INT, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', "
        "`partition` INT METADATA VIRTUAL, `offset` BIGINT METADATA VIRTUAL, headers MAP<STRING, BYTES> METADATA, "
        "t AS `user` || '!') WITH ('connector' = 'kafka', "
        + _with(
            kafka_broker,
            topic,
            "'key.format' = 'raw', 'key.fields' = 'user', 'value.format' = 'json', 'value.fields-include' = "
            "'EXCEPT_KEY', 'value.json.ignore-parse-errors' = 'true', 'scan.startup.mode' = 'earliest-offset', "
            "'scan.bounded.mode' = 'latest-offset'",
        )
        + ")"
    )
    rows = sorted(tuple(r._values) for r in t_env.execute_sql("SELECT * FROM clicks").collect())
    epoch = datetime.datetime(1970, 1, 1)
    at = [epoch + datetime.timedelta(milliseconds=now + i) for i in range(3)]
    assert rows == [
        ("alice", 3, at[0], 0, 0, {"h": b"1"}, "alice!"),
        ("alice", 4, at[2], 0, 1, {}, "alice!"),
        ("bob", 5, at[1], 1, 0, {}, "bob!"),
    ]
    totals = t_env.execute_sql("SELECT `user`, SUM(amount) FROM clicks GROUP BY `user`").collect()
    assert {r[0]: r[1] for r in totals if r.get_row_kind() in (RowKind.INSERT, RowKind.UPDATE_AFTER)} == {
        "alice": 7,
        "bob": 5,
    }


def test_a_kafka_table_writes_keys_partitions_timestamps_and_headers(
    kafka_broker: KafkaBroker, t_env: TableEnvironment
) -> None:
    topic = kafka_broker.create_topic("sql-kafka-write", 3)
    t_env.execute_sql(
        "CREATE TABLE out_t (id INT, name STRING, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', "
        "headers MAP<STRING, BYTES> METADATA) WITH ('connector' = 'kafka', "
        + _with(kafka_broker, topic, "'key.format' = 'raw', 'key.fields' = 'name', 'format' = 'csv', "
                "'sink.partitioner' = 'fixed'")
        + ")"
    )  # fmt: skip
    now = datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=_now_ms())
    schema = DataTypes.ROW(
        [
            DataTypes.FIELD("id", DataTypes.INT()),
            DataTypes.FIELD("name", DataTypes.STRING()),
            DataTypes.FIELD("ts", DataTypes.TIMESTAMP_LTZ(3)),
            DataTypes.FIELD("h", DataTypes.MAP(DataTypes.STRING(), DataTypes.BYTES())),
        ]
    )
    later = now + datetime.timedelta(seconds=1)
    rows = [(1, "a", now, {"src": b"strom"}), (2, "b", later, {"src": b"strom"})]
    t_env.create_temporary_view("src", t_env.from_elements(rows, schema))
    t_env.execute_sql("INSERT INTO out_t SELECT * FROM src").wait()
    messages = _consume(kafka_broker, topic)
    got = sorted((m.partition(), m.key(), m.value(), m.timestamp()[1], m.headers()) for m in messages)
    stamp = _now_ms_of(now)
    assert got == [  # 'fixed': subtask 0 of 1 writes partition 0
        (0, b"a", b"1,a", stamp, [("src", b"strom")]),
        (0, b"b", b"2,b", stamp + 1000, [("src", b"strom")]),
    ]


def _now_ms_of(value: datetime.datetime) -> int:
    return int((value - datetime.datetime(1970, 1, 1)).total_seconds() * 1000)


def test_an_exactly_once_insert_commits_its_transaction(kafka_broker: KafkaBroker, t_env: TableEnvironment) -> None:
    topic = kafka_broker.create_topic("sql-kafka-eo", 1)
    t_env.execute_sql(
        "CREATE TABLE eo (n BIGINT) WITH ('connector' = 'kafka', "
        + _with(kafka_broker, topic, "'format' = 'json', 'sink.delivery-guarantee' = 'exactly-once', "
                "'sink.transactional-id-prefix' = 'sql-eo'")
        + ")"
    )  # fmt: skip
    t_env.execute_sql("INSERT INTO eo SELECT * FROM (VALUES (1), (2), (3)) AS t(n)").wait()
    assert sorted(m.value() for m in _consume(kafka_broker, topic)) == [b'{"n":1}', b'{"n":2}', b'{"n":3}']


def _upsert_topic(broker: KafkaBroker, name: str) -> str:
    topic = broker.create_topic(name, 1)
    now = _now_ms()
    records = [
        ("1", '{"id":1,"name":"a","n":1}'),
        ("2", '{"id":2,"name":"b","n":1}'),
        ("1", '{"id":1,"name":"a","n":2}'),
        ("1", '{"id":1,"name":"a","n":2}'),  # unchanged: no change
        ("2", None),  # a tombstone: -D of the whole previous row
        ("3", None),  # a tombstone of an unknown key: nothing
    ]
    _produce(broker, topic, [(0, f'{{"id":{k}}}', v, now, None) for k, v in records])
    return topic


def test_an_upsert_kafka_table_reads_as_a_normalized_changelog(
    kafka_broker: KafkaBroker, t_env: TableEnvironment, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = _upsert_topic(kafka_broker, "sql-upsert-read")
    t_env.execute_sql(
        "CREATE TABLE u (id INT, name STRING, n INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = "
        "'upsert-kafka', "
        + _with(kafka_broker, topic, "'key.format' = 'json', 'value.format' = 'json', 'scan.bounded.mode' = "
                "'latest-offset'")
        + ")"
    )  # fmt: skip
    t_env.execute_sql("SELECT * FROM u").print()
    assert capsys.readouterr().out.splitlines() == [
        "+----+-------------+--------------------------------+-------------+",
        "| op |          id |                           name |           n |",
        "+----+-------------+--------------------------------+-------------+",
        "| +I |           1 |                              a |           1 |",
        "| +I |           2 |                              b |           1 |",
        "| -U |           1 |                              a |           1 |",
        "| +U |           1 |                              a |           2 |",
        "| -D |           2 |                              b |           1 |",
        "+----+-------------+--------------------------------+-------------+",
        "5 rows in set",
    ]
    t_env.execute_sql("SELECT SUM(n) AS total FROM u").print()
    assert capsys.readouterr().out.splitlines()[3:-2] == [
        "| +I |           1 |",
        "| -U |           1 |",
        "| +U |           2 |",
        "| -U |           2 |",
        "| +U |           1 |",
        "| -U |           1 |",
        "| +U |           3 |",
        "| -U |           3 |",
        "| +U |           2 |",
    ]


def test_an_upsert_kafka_sink_writes_upserts_and_tombstones(kafka_broker: KafkaBroker, t_env: TableEnvironment) -> None:
    target = kafka_broker.create_topic("sql-upsert-out", 1)
    t_env.execute_sql(
        "CREATE TABLE agg_out (name STRING, total INT, PRIMARY KEY (name) NOT ENFORCED) WITH ('connector' = "
        "'upsert-kafka', " + _with(kafka_broker, target, "'key.format' = 'raw', 'value.format' = 'json'") + ")"
    )
    t_env.execute_sql(
        "INSERT INTO agg_out SELECT name, CAST(SUM(n) AS INT) FROM (VALUES ('x', 1, 1), ('y', 2, 1), ('x', 3, 1), "
        "('y', 2, -1)) AS t(name, n, sign) GROUP BY name HAVING SUM(sign) > 0"
    ).wait()
    got = [(m.key(), m.value()) for m in _consume(kafka_broker, target)]
    # a filter over the aggregation (HAVING) makes Flink keep -U (FLINK-9528), which upsert-kafka writes as tombstones
    assert got == [
        (b"x", b'{"name":"x","total":1}'),
        (b"y", b'{"name":"y","total":2}'),
        (b"x", None),
        (b"x", b'{"name":"x","total":4}'),
        (b"y", None),
    ]
    t_env.execute_sql(
        "INSERT INTO agg_out SELECT name, CAST(SUM(n) AS INT) FROM (VALUES ('z', 1), ('z', 2)) AS t(name, n) "
        "GROUP BY name"
    ).wait()
    got = [(m.key(), m.value()) for m in _consume(kafka_broker, target)][5:]
    assert got == [(b"z", b'{"name":"z","total":1}'), (b"z", b'{"name":"z","total":3}')]  # no -U without a filter


def test_watermarks_are_generated_per_partition(kafka_broker: KafkaBroker, t_env: TableEnvironment) -> None:
    topic = kafka_broker.create_topic("sql-kafka-watermarks", 2)
    base = _now_ms() // 60_000 * 60_000 - 600_000
    late = [(0, None, f'{{"v": {i}}}', base + i * 1000, None) for i in range(30)]  # partition 0: seconds 0..29
    ahead = [(1, None, f'{{"v": {i}}}', base + 300_000 + i * 1000, None) for i in range(30)]  # partition 1: 5 min on
    _produce(kafka_broker, topic, ahead + late)
    t_env.execute_sql(
        "CREATE TABLE w (v INT, ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', WATERMARK FOR ts AS ts) WITH "
        "('connector' = 'kafka', "
        + _with(kafka_broker, topic, "'format' = 'json', 'scan.startup.mode' = 'earliest-offset', "
                "'scan.bounded.mode' = 'latest-offset'")
        + ")"
    )  # fmt: skip
    result = t_env.execute_sql(
        "SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE w, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) "
        "GROUP BY window_start, window_end"
    )
    counts = sorted(r[1] for r in result.collect())
    assert (
        sum(counts) == 60
    )  # per partition, the watermark is the partitions' minimum: no record of the one behind is late


def test_an_upsert_kafka_table_has_the_same_final_table_at_parallelism_2(kafka_broker: KafkaBroker) -> None:
    from strom.table.table_result import materialize

    topic = kafka_broker.create_topic("sql-upsert-p2", 2)
    now = _now_ms()
    records = [('{"id":1}', '{"id":1,"n":1}'), ('{"id":2}', '{"id":2,"n":5}'), ('{"id":1}', '{"id":1,"n":2}'),
               ('{"id":3}', '{"id":3,"n":7}'), ('{"id":2}', None)]  # fmt: skip
    # a key's records in one partition (as a keyed producer puts them), the keys spread over both
    _produce(kafka_broker, topic, [(int(k[6:-1]) % 2, k, v, now, None) for k, v in records])
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "2")
    t_env.execute_sql(
        "CREATE TABLE u (id INT, n INT, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', "
        + _with(kafka_broker, topic, "'key.format' = 'json', 'value.format' = 'json', 'scan.bounded.mode' = "
                "'latest-offset'")
        + ")"
    )  # fmt: skip
    final = materialize(iter(t_env.execute_sql("SELECT * FROM u").collect()))
    assert sorted(tuple(r._values) for r in final) == [(1, 2), (3, 7)]
    total = materialize(iter(t_env.execute_sql("SELECT SUM(n) FROM u").collect()))
    assert [tuple(r._values) for r in total] == [(9,)]
