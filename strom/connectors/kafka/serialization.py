"""The Kafka connector's record schemas: ``KafkaRecordSerializationSchema`` (topic, key and value of each outgoing
record) and ``KafkaRecordDeserializationSchema`` (the value of each incoming record); the value schemas are
:mod:`strom.api.serialization_schema`'s.

    KafkaRecordSerializationSchema.builder().set_topic("out").set_value_serialization_schema(SimpleStringSchema()).build()
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from typing import Any

from strom.api.serialization_schema import (
    ByteArraySchema,
    DeserializationSchema,
    SerializationSchema,
    SimpleStringSchema,
)
from strom.exceptions import InvalidProgramError

#: a record to produce: topic, value (None: a tombstone), key, partition (-1: the producer's partitioner),
#: timestamp (epoch ms; 0: now) and headers (or None)
ProducerRecord = tuple[str, bytes | None, bytes | None, int, int, list[tuple[str, bytes]] | None]

__all__ = [
    "KafkaRecordDeserializationSchema",
    "KafkaRecordSerializationSchema",
    "KafkaRecordSerializationSchemaBuilder",
    "ProducerRecord",
    "serializer_of_batches",
]


class KafkaRecordDeserializationSchema:
    """What a ``KafkaSource`` emits for a Kafka record (Flink's ``KafkaRecordDeserializationSchema``): the value
    deserialized by a ``DeserializationSchema`` (``value_only``)."""

    def __init__(self, value_schema: DeserializationSchema) -> None:
        if not isinstance(value_schema, DeserializationSchema):
            raise InvalidProgramError(
                f"expected a DeserializationSchema; got {value_schema!r:.60}; hint: SimpleStringSchema()"
            )
        self.value_schema = value_schema

    #: True for a schema that reads whole records (key, headers, timestamp, …): the reader then hands it the
    #: batch of messages (:meth:`deserialize_records`) instead of their values
    reads_records = False

    @staticmethod
    def value_only(value_schema: DeserializationSchema) -> KafkaRecordDeserializationSchema:
        return KafkaRecordDeserializationSchema(value_schema)

    def deserialize_records(self, messages: list[Any]) -> tuple[list[Any], list[Any]]:
        """The values of a batch of confluent-kafka messages and the messages they came from, in order (a
        message the schema skips is in neither): Flink's ``deserialize(ConsumerRecord, Collector)`` per batch."""
        values = [self.value_schema.deserialize(m.value()) for m in messages]
        return values, messages


class KafkaRecordSerializationSchema:
    """How a ``KafkaSink`` makes a Kafka record of an element (Flink's ``KafkaRecordSerializationSchema``): its
    topic (fixed, or chosen per element by a topic selector), its value and optionally its key."""

    def __init__(
        self,
        topic: str | None,
        topic_selector: Callable[[Any], str] | None,
        value_schema: SerializationSchema,
        key_schema: SerializationSchema | None,
    ) -> None:
        self.topic = topic
        self.topic_selector = topic_selector
        self.value_schema = value_schema
        self.key_schema = key_schema

    #: True for a schema that makes whole records (partition, timestamp, headers, tombstones): the writer then
    #: produces what :meth:`serialize_records` returns
    writes_records = False

    @staticmethod
    def builder() -> KafkaRecordSerializationSchema.Builder:
        return KafkaRecordSerializationSchema.Builder()

    def serialize_records(self, elements: list[Any], writer: Any) -> list[ProducerRecord]:
        """The records of a batch of elements (Flink's ``serialize(element, context, timestamp)`` per batch);
        ``writer`` is the sink writer (its ``context`` and ``producer``)."""
        key = self.key_schema
        return [
            (self.topic_of(e), self.value_schema.serialize(e), key.serialize(e) if key else None, -1, 0, None)
            for e in elements
        ]

    def topic_of(self, element: Any) -> str:
        if self.topic_selector is not None:
            return str(self.topic_selector(element))
        assert self.topic is not None
        return self.topic

    class Builder:
        def __init__(self) -> None:
            self._topic: str | None = None
            self._selector: Callable[[Any], str] | None = None
            self._value: SerializationSchema | None = None
            self._key: SerializationSchema | None = None

        def set_topic(self, topic: str) -> KafkaRecordSerializationSchema.Builder:
            self._topic = topic
            return self

        def set_topic_selector(self, topic_selector: Callable[[Any], str]) -> KafkaRecordSerializationSchema.Builder:
            self._selector = topic_selector
            return self

        def set_value_serialization_schema(
            self, value_serialization_schema: SerializationSchema
        ) -> KafkaRecordSerializationSchema.Builder:
            self._value = value_serialization_schema
            return self

        def set_key_serialization_schema(
            self, key_serialization_schema: SerializationSchema
        ) -> KafkaRecordSerializationSchema.Builder:
            self._key = key_serialization_schema
            return self

        def build(self) -> KafkaRecordSerializationSchema:
            if (self._topic is None) == (self._selector is None):
                raise InvalidProgramError(
                    "expected exactly one of set_topic(topic) and set_topic_selector(fn) on "
                    f"KafkaRecordSerializationSchema.builder(); got {'both' if self._topic else 'neither'}; "
                    "hint: set_topic('output')"
                )
            if not isinstance(self._value, SerializationSchema):
                raise InvalidProgramError(
                    f"expected a value SerializationSchema; got {self._value!r:.60}; "
                    "hint: set_value_serialization_schema(SimpleStringSchema())"
                )
            return KafkaRecordSerializationSchema(self._topic, self._selector, self._value, self._key)


def serializer_of_batches(schema: SerializationSchema) -> Callable[[list[Any]], list[bytes]]:
    """The serialized values of a batch of elements, as ``schema.serialize`` makes them: in C for the byte schemas
    (UTF-8 ``str(element)``, ``bytes(element)``), else ``serialize`` per element (``map``, no frame of ours)."""
    if type(schema) is SimpleStringSchema and codecs.lookup(schema.charset).name == "utf-8":
        return lambda elements: list(map(str.encode, map(str, elements)))
    if type(schema) is ByteArraySchema:
        return lambda elements: list(map(bytes, elements))
    serialize = schema.serialize
    return lambda elements: list(map(serialize, elements))


#: PyFlink's name of the builder
KafkaRecordSerializationSchemaBuilder = KafkaRecordSerializationSchema.Builder
