"""PyFlink's ``pyflink.datastream.formats.parquet`` module path (re-exports; see :mod:`strom.formats.parquet`).
It needs pyarrow: without it, importing this module is a ``ConnectorError`` saying ``pip install 'strom[files]'``."""

from strom.formats import ParquetBulkWriters, ParquetColumnarRowInputFormat

__all__ = ["ParquetBulkWriters", "ParquetColumnarRowInputFormat"]
