"""File formats of the file connector (PyFlink's ``pyflink.datastream.formats``): CSV with a schema, JSON
lines and Parquet, read by :class:`~strom.connectors.file_system.FileSource`; Parquet written by
:class:`~strom.connectors.file_system.FileSink` (``ParquetBulkWriters``). The row schemas of the Kafka connector:
JSON, CSV and Avro (``JsonRowDeserializationSchema``, ...; Avro needs fastavro, ``pip install 'strom[avro]'``).

Parquet needs pyarrow (``pip install 'strom[files]'``); its names load on first use, so CSV and JSON lines work
without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from strom.formats.avro_row import AvroRowDeserializationSchema, AvroRowSerializationSchema
from strom.formats.csv import CsvReaderFormat, CsvSchema, CsvSchemaBuilder
from strom.formats.csv_row import CsvRowDeserializationSchema, CsvRowSerializationSchema
from strom.formats.json import JsonLinesReaderFormat
from strom.formats.json_row import JsonRowDeserializationSchema, JsonRowSerializationSchema

if TYPE_CHECKING:
    from strom.formats.parquet import ParquetBulkWriters, ParquetColumnarRowInputFormat

__all__ = [
    "AvroRowDeserializationSchema",
    "AvroRowSerializationSchema",
    "CsvReaderFormat",
    "CsvRowDeserializationSchema",
    "CsvRowSerializationSchema",
    "CsvSchema",
    "CsvSchemaBuilder",
    "JsonLinesReaderFormat",
    "JsonRowDeserializationSchema",
    "JsonRowSerializationSchema",
    "ParquetBulkWriters",
    "ParquetColumnarRowInputFormat",
]

_PARQUET = ("ParquetBulkWriters", "ParquetColumnarRowInputFormat")


def __getattr__(name: str) -> Any:
    if name in _PARQUET:
        try:
            from strom.formats import parquet
        except ImportError as exc:
            from strom.exceptions import ConnectorError

            raise ConnectorError(
                f"expected pyarrow for the Parquet format ({name}); got {exc}; hint: pip install 'strom[files]'"
            ) from None
        return getattr(parquet, name)
    raise AttributeError(f"module 'strom.formats' has no attribute {name!r}")
