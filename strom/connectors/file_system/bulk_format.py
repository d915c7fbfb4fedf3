"""``BulkFormat``: a format read in batches from a file's own structure (Flink's ``BulkFormat``), such as
Parquet's row groups. A bulk format cuts a file into splits itself (the enumerator asks it, off the event loop)
and reads one split a batch at a time; the split's position counts the rows read."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Protocol

from strom.connectors.file_system.split import FileSourceSplit

__all__ = ["BulkFormat", "SplitReader"]


class SplitReader(Protocol):
    """Reads one split: ``read_batch`` returns up to ``limit`` records (maybe fewer), ``None`` at the end of the
    split; ``current_split`` is the split with the position reached (an immutable copy)."""

    def read_batch(self, limit: int) -> list[Any] | None: ...

    def current_split(self) -> FileSourceSplit: ...

    def close(self) -> None: ...


class BulkFormat(ABC):
    """A format that cuts files into splits and reads them in batches (Flink's ``BulkFormat``)."""

    @abstractmethod
    def create_splits(self, fs: Any, fs_path: str, url: str, size: int) -> list[FileSourceSplit]:
        """The splits of one file (blocking I/O: called in a worker thread of the enumerator)."""

    @abstractmethod
    def create_reader(self, fs: Any, fs_path: str, split: FileSourceSplit) -> SplitReader:
        """A reader of ``split`` from its position on (on the task thread)."""
