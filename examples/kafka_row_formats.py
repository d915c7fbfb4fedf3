"""Rows through Kafka in JSON, CSV and Avro — PyFlink's Kafka format examples, written for strom in PyFlink's style.

For each format the program writes seven ``(id, name)`` rows to a topic of its own with a ``KafkaSink`` and that
format's ``*RowSerializationSchema``, then reads them back with a ``KafkaSource`` and the matching
``*RowDeserializationSchema`` and prints them. PyFlink's programs read forever; this one reads up to the end of each
topic as it was at the start (``set_bounded``), so it ends. Change ``pyflink`` to ``strom`` in the imports of a
PyFlink program and it runs the same way.

    KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:9092 python examples/kafka_row_formats.py    # default localhost:9092
"""

from __future__ import annotations

import os
import sys
from typing import Any

from strom.common import Types, WatermarkStrategy
from strom.datastream import StreamExecutionEnvironment
from strom.datastream.connectors.kafka import (
    KafkaOffsetsInitializer,
    KafkaRecordSerializationSchema,
    KafkaSink,
    KafkaSource,
)
from strom.datastream.formats.avro import AvroRowDeserializationSchema, AvroRowSerializationSchema
from strom.datastream.formats.csv import CsvRowDeserializationSchema, CsvRowSerializationSchema
from strom.datastream.formats.json import JsonRowDeserializationSchema, JsonRowSerializationSchema

BOOTSTRAP_SERVERS = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "localhost:9092")
ROWS = [(1, "hi"), (2, "hello"), (3, "hi"), (4, "hello"), (5, "hi"), (6, "hello"), (6, "hello")]
TYPE_INFO = Types.ROW([Types.INT(), Types.STRING()])
AVRO_SCHEMA = """
    {
        "type": "record",
        "name": "TestRecord",
        "fields": [
            {"name": "id", "type": "int"},
            {"name": "name", "type": "string"}
        ]
    }"""

FORMATS: dict[str, tuple[Any, Any]] = {
    "json": (
        JsonRowSerializationSchema.Builder().with_type_info(TYPE_INFO).build(),
        JsonRowDeserializationSchema.Builder().type_info(TYPE_INFO).build(),
    ),
    "csv": (
        CsvRowSerializationSchema.Builder(TYPE_INFO).build(),
        CsvRowDeserializationSchema.Builder(TYPE_INFO).build(),
    ),
    "avro": (
        AvroRowSerializationSchema(avro_schema_string=AVRO_SCHEMA),
        AvroRowDeserializationSchema(avro_schema_string=AVRO_SCHEMA),
    ),
}


def write_to_kafka(env: StreamExecutionEnvironment, topic: str, serialization_schema: Any) -> None:
    ds = env.from_collection(ROWS, type_info=TYPE_INFO)
    record_serializer = (
        KafkaRecordSerializationSchema.builder()
        .set_topic(topic)
        .set_value_serialization_schema(serialization_schema)
        .build()
    )
    kafka_sink = KafkaSink.builder().set_record_serializer(record_serializer).set_bootstrap_servers(BOOTSTRAP_SERVERS)
    ds.sink_to(kafka_sink.build())
    env.execute(f"write {topic}")


def read_from_kafka(env: StreamExecutionEnvironment, topic: str, deserialization_schema: Any) -> None:
    kafka_source = (
        KafkaSource.builder()
        .set_topics(topic)
        .set_value_only_deserializer(deserialization_schema)
        .set_properties({"bootstrap.servers": BOOTSTRAP_SERVERS, "group.id": "row-formats-example"})
        .set_starting_offsets(KafkaOffsetsInitializer.earliest())
        .set_bounded(KafkaOffsetsInitializer.latest())
        .build()
    )
    ds = env.from_source(kafka_source, watermark_strategy=WatermarkStrategy.no_watermarks(), source_name="kafka")
    ds.map(lambda row: f"{topic}: {row}").print()
    env.execute(f"read {topic}")


def main(formats: list[str]) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    for name in formats:
        topic = f"example_{name}_topic"
        serialization_schema, deserialization_schema = FORMATS[name]
        print(f"start writing {name} rows to kafka")
        write_to_kafka(env, topic, serialization_schema)
        print(f"start reading {name} rows from kafka")
        read_from_kafka(env, topic, deserialization_schema)


if __name__ == "__main__":
    main(sys.argv[1:] or list(FORMATS))
