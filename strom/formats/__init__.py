"""File formats of the file connector (PyFlink's ``pyflink.datastream.formats``): CSV with a schema, JSON
lines and Parquet, read by :class:`~strom.connectors.file_system.FileSource`; Parquet written by
:class:`~strom.connectors.file_system.FileSink` (``ParquetBulkWriters``)."""

from strom.formats.csv import CsvReaderFormat, CsvSchema, CsvSchemaBuilder
from strom.formats.json import JsonLinesReaderFormat
from strom.formats.parquet import ParquetBulkWriters, ParquetColumnarRowInputFormat

__all__ = [
    "CsvReaderFormat",
    "CsvSchema",
    "CsvSchemaBuilder",
    "JsonLinesReaderFormat",
    "ParquetBulkWriters",
    "ParquetColumnarRowInputFormat",
]
