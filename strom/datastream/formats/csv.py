"""PyFlink's ``pyflink.datastream.formats.csv`` module path (re-exports; see :mod:`strom.formats.csv`)."""

from strom.formats.csv import CsvReaderFormat, CsvSchema, CsvSchemaBuilder

__all__ = ["CsvReaderFormat", "CsvSchema", "CsvSchemaBuilder"]
