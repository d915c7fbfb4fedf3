"""PyFlink's ``pyflink.common.serialization`` module path (re-exports; see :mod:`strom.connectors.file_system` and
:mod:`strom.api.serialization_schema`)."""

from strom.api.serialization_schema import (
    ByteArraySchema,
    DeserializationSchema,
    RowFieldExtractorSchema,
    SerializationSchema,
    SimpleStringSchema,
)
from strom.connectors.file_system.bulk_writer import BulkWriterFactory
from strom.connectors.file_system.encoders import Encoder

__all__ = [
    "BulkWriterFactory",
    "ByteArraySchema",
    "DeserializationSchema",
    "Encoder",
    "RowFieldExtractorSchema",
    "SerializationSchema",
    "SimpleStringSchema",
]
