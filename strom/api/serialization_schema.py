"""Flink's ``SerializationSchema`` and ``DeserializationSchema``: a record to bytes and back, as connectors that move
bytes (Kafka) take them; PyFlink's ``SimpleStringSchema``, ``ByteArraySchema`` and ``RowFieldExtractorSchema``
(``pyflink.common.serialization``).

    >>> SimpleStringSchema().deserialize(SimpleStringSchema().serialize("héllo"))
    'héllo'
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, cast

__all__ = [
    "ByteArraySchema",
    "DeserializationSchema",
    "RowFieldExtractorSchema",
    "SerializationSchema",
    "SimpleStringSchema",
]


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


class RowFieldExtractorSchema(SerializationSchema):
    """One field of a ``Row``, which must be bytes, as the record's bytes (PyFlink's ``RowFieldExtractorSchema``,
    e.g. a Kafka record's key and value from two fields); a ``None`` field stays ``None`` (no key)."""

    def __init__(self, field_index: int) -> None:
        if field_index < 0:
            raise ValueError(f"Field index must be non-negative, got: {field_index}")
        self.field_index = field_index

    def serialize(self, element: Any) -> bytes:
        try:
            value = element[self.field_index]
        except (IndexError, TypeError) as exc:
            raise ValueError(
                f"expected a row with a field {self.field_index} for RowFieldExtractorSchema; got {element!r:.80}"
            ) from exc
        if value is None or isinstance(value, bytes):
            return cast(bytes, value)  # None: a Kafka record without a key
        if not isinstance(value, bytearray):
            raise TypeError(
                f"expected bytes in field {self.field_index} for RowFieldExtractorSchema; got "
                f"{type(value).__name__}; hint: encode it first, e.g. value.encode('utf-8')"
            )
        return bytes(value)
