"""PyFlink's ``pyflink.common.serialization`` module path (re-exports; see :mod:`strom.connectors.file_system` and
:mod:`strom.connectors.kafka.serialization`)."""

from strom.connectors.file_system.bulk_writer import BulkWriterFactory
from strom.connectors.file_system.encoders import Encoder
from strom.connectors.kafka.serialization import (
    ByteArraySchema,
    DeserializationSchema,
    SerializationSchema,
    SimpleStringSchema,
)

__all__ = [
    "BulkWriterFactory",
    "ByteArraySchema",
    "DeserializationSchema",
    "Encoder",
    "SerializationSchema",
    "SimpleStringSchema",
]
