"""The Apache Kafka connector (confluent-kafka, ``pip install 'strom[kafka]'``): ``KafkaSource`` (FLIP-27, one split
per partition, offsets in checkpoints) and ``KafkaSink`` (none, at-least-once or exactly-once through Kafka
transactions), with PyFlink's builders; PyFlink's module path is :mod:`strom.datastream.connectors.kafka`."""

from strom.connectors.kafka.offsets import KafkaOffsetResetStrategy, KafkaOffsetsInitializer, KafkaTopicPartition
from strom.connectors.kafka.serialization import (
    ByteArraySchema,
    DeserializationSchema,
    KafkaRecordDeserializationSchema,
    KafkaRecordSerializationSchema,
    SerializationSchema,
    SimpleStringSchema,
)
from strom.connectors.kafka.source import KafkaSource, KafkaSourceBuilder

__all__ = [
    "ByteArraySchema",
    "DeserializationSchema",
    "KafkaOffsetResetStrategy",
    "KafkaOffsetsInitializer",
    "KafkaRecordDeserializationSchema",
    "KafkaRecordSerializationSchema",
    "KafkaSource",
    "KafkaSourceBuilder",
    "KafkaTopicPartition",
    "SerializationSchema",
    "SimpleStringSchema",
]
