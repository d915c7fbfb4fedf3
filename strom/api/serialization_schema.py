"""Flink's ``SerializationSchema`` and ``DeserializationSchema``: a record to bytes and back, as connectors that move
bytes (Kafka) take them; PyFlink's ``SimpleStringSchema`` and ``ByteArraySchema`` (``pyflink.common.serialization``).

    >>> SimpleStringSchema().deserialize(SimpleStringSchema().serialize("héllo"))
    'héllo'
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

__all__ = ["ByteArraySchema", "DeserializationSchema", "SerializationSchema", "SimpleStringSchema"]


class SerializationSchema(ABC):
    """A record to bytes (Flink's ``SerializationSchema``)."""

    @abstractmethod
    def serialize(self, element: Any) -> bytes: ...


class DeserializationSchema(ABC):
    """Bytes to a record (Flink's ``DeserializationSchema``)."""

    @abstractmethod
    def deserialize(self, message: bytes) -> Any: ...


class SimpleStringSchema(SerializationSchema, DeserializationSchema):
    """Strings as their bytes in ``charset`` (PyFlink's ``SimpleStringSchema``, UTF-8 by default)."""

    def __init__(self, charset: str = "UTF-8") -> None:
        "".encode(charset)  # an unknown charset fails when the job is built
        self.charset = charset

    def serialize(self, element: Any) -> bytes:
        return str(element).encode(self.charset)

    def deserialize(self, message: bytes) -> Any:
        return message.decode(self.charset)


class ByteArraySchema(SerializationSchema, DeserializationSchema):
    """Bytes as they are (PyFlink's ``ByteArraySchema``)."""

    def serialize(self, element: Any) -> bytes:
        return bytes(element)

    def deserialize(self, message: bytes) -> Any:
        return message
