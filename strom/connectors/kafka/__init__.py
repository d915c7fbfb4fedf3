"""The Apache Kafka connector (confluent-kafka, ``pip install 'strom[kafka]'``): ``KafkaSource`` (FLIP-27, one split
per partition, offsets in checkpoints) and ``KafkaSink`` (none, at-least-once or exactly-once through Kafka
transactions), with PyFlink's builders; PyFlink's module path is :mod:`strom.datastream.connectors.kafka`."""

from strom.api.serialization_schema import (
    ByteArraySchema,
    DeserializationSchema,
    SerializationSchema,
    SimpleStringSchema,
)
from strom.connectors.kafka.offsets import KafkaOffsetResetStrategy, KafkaOffsetsInitializer, KafkaTopicPartition
from strom.connectors.kafka.serialization import (
    KafkaRecordDeserializationSchema,
    KafkaRecordSerializationSchema,
    KafkaRecordSerializationSchemaBuilder,
)
from strom.connectors.kafka.sink import DeliveryGuarantee, KafkaCommittable, KafkaSink, KafkaSinkBuilder
from strom.connectors.kafka.source import KafkaSource, KafkaSourceBuilder

__all__ = [
    "ByteArraySchema",
    "DeliveryGuarantee",
    "DeserializationSchema",
    "KafkaCommittable",
    "KafkaOffsetResetStrategy",
    "KafkaOffsetsInitializer",
    "KafkaRecordDeserializationSchema",
    "KafkaRecordSerializationSchema",
    "KafkaRecordSerializationSchemaBuilder",
    "KafkaSink",
    "KafkaSinkBuilder",
    "KafkaSource",
    "KafkaSourceBuilder",
    "KafkaTopicPartition",
    "SerializationSchema",
    "SimpleStringSchema",
]
