"""The Kafka connector's record schemas: ``KafkaRecordSerializationSchema`` (topic, key and value of each outgoing
record) and ``KafkaRecordDeserializationSchema`` (the value of each incoming record); the value schemas are
:mod:`strom.api.serialization_schema`'s.

    KafkaRecordSerializationSchema.builder().set_topic("out").set_value_serialization_schema(SimpleStringSchema()).build()
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from strom.api.serialization_schema import DeserializationSchema, SerializationSchema
from strom.exceptions import InvalidProgramError

__all__ = [
    "KafkaRecordDeserializationSchema",
    "KafkaRecordSerializationSchema",
    "KafkaRecordSerializationSchemaBuilder",
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

    @staticmethod
    def value_only(value_schema: DeserializationSchema) -> KafkaRecordDeserializationSchema:
        return KafkaRecordDeserializationSchema(value_schema)


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

    @staticmethod
    def builder() -> KafkaRecordSerializationSchema.Builder:
        return KafkaRecordSerializationSchema.Builder()

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


#: PyFlink's name of the builder
KafkaRecordSerializationSchemaBuilder = KafkaRecordSerializationSchema.Builder
