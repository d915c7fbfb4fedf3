"""``BulkFormat``: a format read in batches from a file's own structure (Flink's ``BulkFormat``), such as
Parquet's row groups. A bulk format cuts a file into splits itself (the enumerator asks it, off the event loop)
and reads one split a batch at a time; the split's position counts the rows read."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any, Protocol

from strom.connectors.file_system.split import FileSourceSplit

__all__ = ["BulkFormat", "RecordBatchSplitReader", "SplitReader"]


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


class RecordBatchSplitReader(ABC):
    """The batch loop of a reader of columnar batches (pyarrow ``RecordBatch`` es of a row group or stripe):
    skips the rows its restored position says were read, turns each batch into records (``_rows``) and hands
    them out ``limit`` at a time, counting what it handed out. Subclasses set ``_batches`` (an iterator of
    batches) and ``_to_skip`` / ``_rows_read`` (the restored position) before the first ``read_batch``."""

    _batches: Iterator[Any]
    _to_skip: int
    _rows_read: int
    _pending: list[Any]

    @abstractmethod
    def _rows(self, batch: Any) -> list[Any]:
        """The records of one batch."""

    def read_batch(self, limit: int) -> list[Any] | None:
        while not self._pending:
            batch = next(self._batches, None)
            if batch is None:
                return None
            if self._to_skip >= batch.num_rows:
                self._to_skip -= batch.num_rows
                continue
            if self._to_skip:
                batch = batch.slice(self._to_skip)
                self._to_skip = 0
            self._pending = self._rows(batch)
        rows = self._pending[:limit] if limit < len(self._pending) else self._pending
        self._pending = self._pending[len(rows) :]
        self._rows_read += len(rows)
        return rows
