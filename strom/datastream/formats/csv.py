"""PyFlink's ``pyflink.datastream.formats.csv`` module path (re-exports; see :mod:`strom.formats.csv` and
:mod:`strom.formats.csv_row`)."""

from strom.formats.csv import CsvReaderFormat, CsvSchema, CsvSchemaBuilder
from strom.formats.csv_row import CsvRowDeserializationSchema, CsvRowSerializationSchema

__all__ = [
    "CsvReaderFormat",
    "CsvRowDeserializationSchema",
    "CsvRowSerializationSchema",
    "CsvSchema",
    "CsvSchemaBuilder",
]
