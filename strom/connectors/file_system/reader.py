"""``FileSourceReader``: reads the file splits of one source subtask (Flink's ``FileSourceReader``), on the task
thread, pulling a split from the enumerator whenever it has none.

A line format's split is read by :class:`StreamFormatSplitReader`: blocks of about 1 MiB that end at a record
boundary, decoded once and parsed in bulk; a poll returns a slice of the block's records. Its position is the
block's byte offset plus the records already returned from it (Flink's ``CheckpointedPosition``), so a reader
restored from a snapshot re-reads that block and skips exactly those records. In a compressed file the offset
counts decompressed bytes, which a restored reader decompresses again and drops.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Callable, Sequence
from typing import IO, Any, Generic, TypeVar

from strom.api.source import SourceReader, SourceReaderContext, SourceSplit
from strom.connectors.file_system.bulk_format import SplitReader
from strom.connectors.file_system.compression import open_decompressed, skip_bytes
from strom.connectors.file_system.split import CheckpointedPosition, FileSourceSplit
from strom.connectors.file_system.stream_format import BlockInfo, InvalidRecord, StreamFormat
from strom.exceptions import ConnectorError, InvalidProgramError

__all__ = ["BLOCK_SIZE", "FileSourceReader", "StreamFormatSplitReader"]

T = TypeVar("T")

#: bytes read from a file at a time; a block is at least one whole record
BLOCK_SIZE = 1 << 20


class StreamFormatSplitReader:
    """Reads one file of a :class:`StreamFormat` from the split's position on."""

    def __init__(
        self,
        split: FileSourceSplit,
        stream_format: StreamFormat,
        fs: Any,
        fs_path: str,
        context: SourceReaderContext,
        block_size: int | None = None,
    ) -> None:
        self._split = split
        self._format = stream_format
        self._context = context
        self._block_size = block_size or BLOCK_SIZE
        position = split.position
        self._stream: IO[bytes] = open_decompressed(fs, fs_path, split.path)
        try:
            skip_bytes(self._stream, position.offset, split.path)
        except BaseException:
            self._stream.close()
            raise
        self._next_offset = position.offset
        self._next_line = position.line
        self._offset = position.offset
        self._line = position.line
        self._leftover = b""
        self._eof = False
        self._records: list[Any] = []
        self._taken = 0
        self._invalid: list[tuple[int, InvalidRecord]] = []
        self._invalid_keys: list[int] = []
        self._invalid_sent = 0
        self._skip(position.records_after_offset)

    def _skip(self, count: int) -> None:
        """Drop the ``count`` records (and the rejected lines among them) a restored position says were read."""
        while count > 0:
            if not self._load_block():
                raise ConnectorError(
                    f"expected {self._split.path} to have {count} more records after byte {self._offset} to "
                    "resume reading there; got fewer; hint: the file was changed since the checkpoint"
                )
            take = min(count, len(self._records))
            count -= take
            self._taken = take
            if take == len(self._records):
                self._invalid_sent = len(self._invalid)
            else:
                self._invalid_sent = bisect.bisect_left(self._invalid_keys, take)

    def _load_block(self) -> bool:
        data = self._leftover
        read = self._stream.read
        cut = 0
        while not self._eof:
            chunk = read(self._block_size)
            if not chunk:
                self._eof = True
            data = data + chunk if data else chunk
            cut = self._format.record_end(data, self._eof)
            if cut > 0:
                break
        if self._eof:
            cut = len(data)
        if cut == 0:
            self._leftover = b""
            return False
        block, self._leftover = data[:cut], data[cut:]
        self._offset, self._line = self._next_offset, self._next_line
        self._next_offset += cut
        self._next_line += block.count(b"\n")
        try:
            text = block.decode(self._format.charset)
        except UnicodeDecodeError as exc:
            line = self._line + block.count(b"\n", 0, exc.start)
            raise ConnectorError(
                f"expected text in {self._format.charset}; got {exc.reason} (byte {block[exc.start : exc.end]!r}) "
                f"at {self._split.path}:{line}; hint: pass the file's charset to the format (charset_name=...)"
            ) from None
        info = BlockInfo(self._split.path, self._line, self._offset == 0, block)
        self._records, self._invalid = self._format.parse_block(text, info)
        self._invalid_keys = [k for k, _ in self._invalid]
        self._taken = 0
        self._invalid_sent = 0
        return True

    def read_batch(self, limit: int) -> list[Any] | None:
        while self._taken >= len(self._records):
            self._send_invalid(len(self._invalid))
            if not self._load_block():
                return None
        start = self._taken
        end = min(len(self._records), start + max(limit, 1))
        self._taken = end
        if self._invalid:
            self._send_invalid(
                len(self._invalid) if end == len(self._records) else bisect.bisect_left(self._invalid_keys, end)
            )
        if start == 0 and end == len(self._records):
            return self._records
        return self._records[start:end]

    def _send_invalid(self, upto: int) -> None:
        """Rejected lines before the records returned so far go to the side output, each once."""
        if upto > self._invalid_sent:
            tag = getattr(self._format, "invalid_records_tag", None)
            self._context.emit_side_output(tag, [r for _, r in self._invalid[self._invalid_sent : upto]])
            self._invalid_sent = upto

    def current_split(self) -> FileSourceSplit:
        if self._taken < len(self._records):
            position = CheckpointedPosition(offset=self._offset, records_after_offset=self._taken, line=self._line)
        else:
            position = CheckpointedPosition(offset=self._next_offset, records_after_offset=0, line=self._next_line)
        return self._split.with_position(position)

    def close(self) -> None:
        self._stream.close()


class FileSourceReader(SourceReader[T], Generic[T]):
    """Reads its splits one after another, asking the enumerator for the next one when it has none."""

    def __init__(self, context: SourceReaderContext, open_split: Callable[[FileSourceSplit], SplitReader]) -> None:
        self._context = context
        self._open_split = open_split
        self._splits: deque[FileSourceSplit] = deque()
        self._current: SplitReader | None = None
        self._no_more_splits = False
        self._awaiting_split = False

    def start(self) -> None:
        if not self._splits:
            self._request_split()

    def _request_split(self) -> None:
        if not self._awaiting_split and not self._no_more_splits:
            self._awaiting_split = True
            self._context.send_split_request()

    def add_splits(self, splits: Sequence[SourceSplit]) -> None:
        for split in splits:
            if not isinstance(split, FileSourceSplit):
                raise InvalidProgramError(
                    f"expected a FileSourceSplit for the file source's reader; got a {type(split).__name__} "
                    f"({split.split_id!r}); hint: splits come from the FileSource's enumerator or snapshot_state"
                )
            self._splits.append(split)
        self._awaiting_split = False

    def notify_no_more_splits(self) -> None:
        self._no_more_splits = True
        self._awaiting_split = False

    def poll_batch(self) -> list[T] | None:
        limit = self._context.batch_size
        while True:
            if self._current is None:
                if not self._splits:
                    if self._no_more_splits:
                        return None
                    self._request_split()
                    return []
                self._current = self._open_split(self._splits.popleft())
            batch = self._current.read_batch(limit)
            if batch is not None:
                return batch
            self._current.close()
            self._current = None
            if not self._splits:
                self._request_split()

    def snapshot_state(self, checkpoint_id: int) -> list[SourceSplit]:
        state: list[SourceSplit] = []
        if self._current is not None:
            state.append(self._current.current_split())
        state.extend(self._splits)
        return state

    def close(self) -> None:
        if self._current is not None:
            self._current.close()
            self._current = None
