"""``BulkWriter``: formats that write a part file as a whole — columnar files with a footer (Flink's
``BulkWriter`` and ``BulkWriter.Factory``).

A factory creates one writer per part file on its open binary stream; the FileSink hands it the records of
every batch (``add_elements``), and when the part rolls calls ``finish()``, which writes what is buffered
and the format's footer but leaves the stream open (the sink makes it durable and closes it). A part of a
bulk format cannot be resumed, so bulk parts roll at every checkpoint (``OnCheckpointRollingPolicy``);
``FileSink.enable_compact`` merges them (:mod:`.compaction`).
``strom.formats.parquet_writer.ParquetBulkWriters`` is one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, BinaryIO

__all__ = ["BulkWriter", "BulkWriterFactory"]


class BulkWriter(ABC):
    @abstractmethod
    def add_elements(self, elements: list[Any]) -> None:
        """Add a batch of records (buffered or written at once)."""

    def flush(self) -> None:
        """Write what is buffered to the stream (a row group, say)."""

    @abstractmethod
    def finish(self) -> None:
        """Write everything left and the format's trailer; do not close the stream."""

    def discard(self) -> None:
        """The part is dropped (nothing references it): release resources; the stream is discarded next."""


class BulkWriterFactory(ABC):
    @abstractmethod
    def create(self, stream: BinaryIO) -> BulkWriter: ...

    def validate(self) -> None:
        """Called in the client by ``execute()``: raise a ``ConnectorError`` for a missing package, say."""
