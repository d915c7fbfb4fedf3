"""``FileSourceSplit``: one file, or one Parquet row group, with the reader's position in it (Flink's
``FileSourceSplit`` and ``CheckpointedPosition``).

Line formats (text, CSV, JSON lines) read a file as one split — they are not splittable, as in Flink. A Parquet
file gives one split per row group. The position says where a reader restored from a checkpoint goes on:
``offset`` is the byte offset of a record boundary (in the *decompressed* bytes of a compressed file) and
``records_after_offset`` the records to skip after it; for a row group, the rows to skip.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from strom.api.source import SourceSplit

__all__ = ["NO_OFFSET", "CheckpointedPosition", "FileSourceSplit"]

#: the offset of a position that counts records only (a Parquet row group's rows)
NO_OFFSET = -1


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointedPosition:
    """Where reading goes on: skip ``records_after_offset`` records after the record boundary at byte
    ``offset``; ``line`` is the line number at ``offset`` (1-based), for error messages."""

    offset: int = 0
    records_after_offset: int = 0
    line: int = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class FileSourceSplit(SourceSplit):
    """A file (``row_group is None``) or one row group of a Parquet file; ``path`` is the full URL."""

    path: str
    file_size: int = -1
    row_group: int | None = None
    #: rows of the row group (Parquet), -1 when unknown
    row_count: int = -1
    position: CheckpointedPosition = CheckpointedPosition()

    def with_position(self, position: CheckpointedPosition) -> FileSourceSplit:
        return replace(self, position=position)

    def __str__(self) -> str:
        where = f" row group {self.row_group}" if self.row_group is not None else ""
        return f"{self.path}{where}"
