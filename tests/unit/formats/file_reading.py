"""Reading a FileSource in a test without a job: the splits its enumerator would make, a reader driven by hand
(its side output collected), and "read k records, snapshot, restore, read the rest"."""

from __future__ import annotations

import pickle
from typing import Any

from strom.api.source import SourceReader, SourceReaderContext, SourceSplit
from strom.connectors.file_system import FileSource, FileSourceSplit


def splits_of(source: FileSource[Any]) -> list[FileSourceSplit]:
    return [split for _, splits in source.file_enumerator().enumerate_splits() for split in splits]


class Reading:
    """A reader of ``splits`` with all its splits at once (as a restored reader has them)."""

    def __init__(self, source: FileSource[Any], splits: list[SourceSplit], batch_size: int = 7) -> None:
        self.side: list[tuple[str, Any]] = []
        self.requests = 0
        self.context = SourceReaderContext(
            subtask_index=0,
            parallelism=1,
            batch_size=batch_size,
            split_request_sender=self._request,
            side_output_emitter=lambda tag, records: self.side.extend((tag, r) for r in records),
        )
        self.batch_size = batch_size
        self.reader: SourceReader[Any] = source.create_reader(self.context)
        self.reader.add_splits(splits)
        self.reader.notify_no_more_splits()
        self.reader.start()

    def _request(self) -> None:
        self.requests += 1

    def read(self, limit: int | None = None) -> list[Any]:
        """Up to ``limit`` records (all when None)."""
        out: list[Any] = []
        while limit is None or len(out) < limit:
            self.context.batch_size = self.batch_size if limit is None else min(self.batch_size, limit - len(out))
            batch = self.reader.poll_batch()
            if batch is None:
                break
            assert len(batch) <= self.context.batch_size
            out.extend(batch)
        return out

    def close(self) -> None:
        self.reader.close()


def read_all(source: FileSource[Any], batch_size: int = 7) -> list[Any]:
    reading = Reading(source, list(splits_of(source)), batch_size)
    try:
        return reading.read()
    finally:
        reading.close()


def read_with_restore(source: FileSource[Any], k: int, batch_size: int = 7) -> tuple[list[Any], list[Any]]:
    """Read ``k`` records, snapshot, and read the rest with a new reader restored from the snapshot."""
    first = Reading(source, list(splits_of(source)), batch_size)
    head = first.read(k)
    state = pickle.loads(pickle.dumps(first.reader.snapshot_state(1)))
    first.close()
    second = Reading(source, state, batch_size)
    tail = second.read()
    second.close()
    return head, tail
