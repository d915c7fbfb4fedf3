"""``KafkaSource`` with PyFlink's row formats against the test broker: a record the JSON row schema cannot read
fails the job naming its topic, partition and offset; with ``ignore_parse_errors()`` it is skipped, as in Flink."""

from __future__ import annotations

import pytest
from kafka_broker import KafkaBroker

from strom import StreamExecutionEnvironment
from strom.common import Types, WatermarkStrategy
from strom.datastream.connectors.kafka import KafkaOffsetsInitializer, KafkaSource
from strom.datastream.formats.json import JsonRowDeserializationSchema
from strom.exceptions import StromError

ROW = Types.ROW_NAMED(["id", "name"], [Types.INT(), Types.STRING()])


def _read(broker: KafkaBroker, topic: str, schema: JsonRowDeserializationSchema) -> list[tuple[int, str]]:
    source = (
        KafkaSource.builder()
        .set_bootstrap_servers(broker.bootstrap_servers)
        .set_topics(topic)
        .set_starting_offsets(KafkaOffsetsInitializer.earliest())
        .set_bounded(KafkaOffsetsInitializer.latest())
        .set_value_only_deserializer(schema)
        .build()
    )
    env = StreamExecutionEnvironment.get_execution_environment()
    stream = env.from_source(source, WatermarkStrategy.no_watermarks(), "kafka").map(lambda r: (r.id, r.name))
    with stream.execute_and_collect("json rows") as rows:
        return sorted(rows)


@pytest.fixture
def mixed_topic(kafka_broker: KafkaBroker, request: pytest.FixtureRequest) -> str:
    topic = kafka_broker.create_topic(f"json-rows-{request.node.name[:40]}", 2)
    values = ['{"id": 1, "name": "a"}', '{"id": 2, "name": "b"}', '{"id": 3, "name": "c"}', "{not json"]
    kafka_broker.produce(topic, values, partitions=2)  # the bad one: partition 1, offset 1
    return topic


def test_a_malformed_json_record_fails_naming_topic_partition_and_offset(
    kafka_broker: KafkaBroker, mixed_topic: str
) -> None:
    schema = JsonRowDeserializationSchema.builder().type_info(ROW).build()
    with pytest.raises(StromError, match=rf"topic '{mixed_topic}', partition 1, offset 1"):
        _read(kafka_broker, mixed_topic, schema)


def test_ignore_parse_errors_skips_the_malformed_record(kafka_broker: KafkaBroker, mixed_topic: str) -> None:
    schema = JsonRowDeserializationSchema.builder().type_info(ROW).ignore_parse_errors().build()
    assert _read(kafka_broker, mixed_topic, schema) == [(1, "a"), (2, "b"), (3, "c")]
