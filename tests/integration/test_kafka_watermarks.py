"""``KafkaSource``'s per-partition watermarks against the test broker (noida-db, tests/kafka_broker.py), as Flink's
``KafkaSource``: the ``WatermarkStrategy`` runs per partition inside the reader, so a partition with old event times
holds the watermark back (its records land in their windows, not late), and with ``with_idleness`` a partition with
no records does not block the windows of the others."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from kafka_broker import KafkaBroker

from strom import DataStream, MapFunction, StreamExecutionEnvironment
from strom.common import SimpleStringSchema, WatermarkStrategy
from strom.datastream.connectors.kafka import KafkaOffsetsInitializer, KafkaSource
from strom.datastream.window import TumblingEventTimeWindows

#: event times of the records: recent, whole 10 s windows (the broker deletes records older than its retention by their
#: timestamps, as Kafka does, so times near 1970 would be gone before the job reads them)
T0 = (int(time.time() * 1000) // 10_000) * 10_000 - 3_600_000


def _source(broker: KafkaBroker, topic: str) -> KafkaSource:
    return (
        KafkaSource.builder()
        .set_bootstrap_servers(broker.bootstrap_servers)
        .set_topics(topic)
        .set_starting_offsets(KafkaOffsetsInitializer.earliest())
        .set_value_only_deserializer(SimpleStringSchema())
        .build()
    )


def _produce(broker: KafkaBroker, topic: str, partition: int, records: list[tuple[str, int]]) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "acks": "all"})
    for value, timestamp in records:
        producer.produce(topic, value.encode(), partition=partition, timestamp=timestamp)
    assert producer.flush(10) == 0


class _MarkWhenSeen(MapFunction):
    """Passes the records on and creates ``path`` once it saw ``value`` (the test's producer waits for it)."""

    def __init__(self, value: str, path: Path) -> None:
        self.value = value
        self.path = path

    def map(self, value: str) -> str:
        if value == self.value:
            self.path.touch()
        return value


def _window_counts(stream: DataStream, limit: int) -> list[Any]:
    """(key, count) per 10 s event-time window of the records ``key:i``, the first ``limit`` windows fired."""
    windows = (
        stream.map(lambda v: (v.split(":")[0], 1))
        .key_by(lambda kv: kv[0])
        .window(TumblingEventTimeWindows.of(timedelta(seconds=10)))
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
    )
    with windows.execute_and_collect("kafka windows", limit=limit) as results:
        return sorted(results)


@pytest.mark.timeout(120)
def test_a_partition_with_old_event_times_holds_the_watermark_so_its_windows_are_complete(
    kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    topic = kafka_broker.create_topic("wm-old-partition", 2)
    _produce(kafka_broker, topic, 0, [(f"new:{i}", T0 + 100_000 + 100 * i) for i in range(20)])
    seen = tmp_path / "seen"

    def later() -> None:
        # partition 0 was read and periodic watermarks went out (every 200 ms) well before: one watermark over both
        # partitions would now be 100 s past the records below, late, dropped
        deadline = time.monotonic() + 60
        while not seen.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)
        _produce(kafka_broker, topic, 1, [(f"old:{i}", T0 + 1_000 + 100 * i) for i in range(20)])
        for partition in (0, 1):  # event time moves on in both: every window above fires
            _produce(kafka_broker, topic, partition, [("end:0", T0 + 1_000_000)])

    producer = threading.Thread(target=later, daemon=True)
    producer.start()
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)  # one reader with both partitions
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(timedelta(0))  # the Kafka record timestamps
    stream = env.from_source(_source(kafka_broker, topic), strategy, "kafka").map(_MarkWhenSeen("new:19", seen))
    got = _window_counts(stream, limit=2)
    producer.join(10)
    assert got == [("new", 20), ("old", 20)]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("parallelism", [1, 2])
def test_an_idle_partition_does_not_hold_the_watermark_back(kafka_broker: KafkaBroker, parallelism: int) -> None:
    topic = kafka_broker.create_topic(f"wm-idle-partition-{parallelism}", 2)
    _produce(kafka_broker, topic, 0, [(f"a:{i}", T0 + 1_000 + 100 * i) for i in range(10)] + [("end:0", T0 + 100_000)])
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)  # p=2: the reader of the empty partition is idle as a whole
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(timedelta(0)).with_idleness(timedelta(seconds=1))
    assert _window_counts(env.from_source(_source(kafka_broker, topic), strategy, "kafka"), limit=1) == [("a", 10)]
