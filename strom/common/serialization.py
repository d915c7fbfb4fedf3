"""PyFlink's ``pyflink.common.serialization`` module path (re-exports; see :mod:`strom.connectors.file_system`)."""

from strom.connectors.file_system.bulk_writer import BulkWriterFactory
from strom.connectors.file_system.encoders import Encoder

__all__ = ["BulkWriterFactory", "Encoder"]
