"""``PartitionedFile``: the on-disk form of one blocking result partition (Flink's ``PartitionedFile`` of the
sort-merge shuffle), with its writer and a reader per subpartition.

Two files per partition, ``<base>.data`` and ``<base>.index``:

* The data file is a sequence of *regions*, one per spill of the producer's sort buffer. Inside a region the
  buffers are grouped by subpartition, subpartition 0 first, each group in the order the producer wrote them. A
  buffer is a header ``kind u8, codec u8, length u32`` and its payload: a serialized batch (``kind`` 0) or a
  pickled runtime event (``kind`` 1), the data payload compressed where that made it smaller (``codec``: the
  codec id of :mod:`~strom.runtime.network.buffer_compressor`, 0 for a payload stored as it is).
* The index file starts with ``magic, version, subpartitions u32, regions u32``, then per region and per
  subpartition ``offset u64, length u64, buffers u32``: where that subpartition's buffers of that region lie.

A reader of subpartition ``s`` walks the regions in order and reads only ``s``'s buffers, in chunks of at most 1 MiB,
so a consumer holds one chunk at a time whatever the file's size.
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from strom.exceptions import StromError
from strom.runtime.network.buffer_compressor import NO_COMPRESSION, BufferCompressor, check_codec, decompress

__all__ = [
    "DATA_BUFFER",
    "EVENT_BUFFER",
    "READ_CHUNK_BYTES",
    "PartitionedFile",
    "PartitionedFileError",
    "PartitionedFileReader",
    "PartitionedFileWriter",
]

DATA_BUFFER = 0
EVENT_BUFFER = 1

_BUFFER_HEADER = struct.Struct("!BBI")
_INDEX_HEADER = struct.Struct("!4sBII")
_INDEX_ENTRY = struct.Struct("!QQI")
_MAGIC = b"SMRP"
_VERSION = 1
#: a reader reads its subpartition's part of a region in pieces of this size
READ_CHUNK_BYTES = 1 << 20


class PartitionedFileError(StromError):
    """A partition file that is not what its index says (truncated, garbled, of another version)."""


@dataclass(frozen=True, slots=True)
class _Entry:
    offset: int
    length: int
    num_buffers: int


class PartitionedFileWriter:
    """Writes the regions of one partition (producer's task thread only), then the index on :meth:`finish`.

    With ``compress``, data buffers are compressed with ``codec`` (``taskmanager.network.compression.codec``)."""

    def __init__(self, base_path: str, num_subpartitions: int, *, compress: bool, codec: str = "LZ4") -> None:
        self.base_path = base_path
        self.num_subpartitions = num_subpartitions
        self.compress = compress
        self._compressor = BufferCompressor(check_codec(codec)) if compress else None
        os.makedirs(os.path.dirname(base_path) or ".", exist_ok=True)
        self._data = open(base_path + ".data", "wb")  # noqa: SIM115 - closed by finish()/abort()
        self._regions: list[list[_Entry]] = []
        self._offset = 0
        self.bytes_written = 0
        self.bytes_uncompressed = 0

    def write_region(self, buffers: Sequence[Sequence[tuple[int, bytes]]]) -> None:
        """One spill: ``buffers[s]`` are subpartition ``s``'s buffers ``(kind, payload)`` in write order."""
        if len(buffers) != self.num_subpartitions:
            raise ValueError(f"expected buffers of {self.num_subpartitions} subpartitions; got {len(buffers)}")
        region: list[_Entry] = []
        parts: list[bytes] = []
        pack = _BUFFER_HEADER.pack
        compress = self._compressor.compress if self._compressor is not None else None
        for group in buffers:
            start = self._offset
            for kind, payload in group:
                self.bytes_uncompressed += len(payload)
                codec = NO_COMPRESSION
                if compress is not None and kind == DATA_BUFFER:
                    codec, payload = compress(payload)
                parts.append(pack(kind, codec, len(payload)))
                parts.append(payload)
                self._offset += _BUFFER_HEADER.size + len(payload)
            region.append(_Entry(start, self._offset - start, len(group)))
        self._data.writelines(parts)
        self._regions.append(region)

    def finish(self) -> PartitionedFile:
        """Close the data file and write the index: the partition is complete and may be read."""
        self._data.close()
        self.bytes_written = self._offset
        index = [_INDEX_HEADER.pack(_MAGIC, _VERSION, self.num_subpartitions, len(self._regions))]
        index.extend(_INDEX_ENTRY.pack(e.offset, e.length, e.num_buffers) for region in self._regions for e in region)
        tmp = self.base_path + ".index.tmp"
        with open(tmp, "wb") as f:
            f.writelines(index)
        os.replace(tmp, self.base_path + ".index")
        return PartitionedFile(self.base_path, self.num_subpartitions, tuple(tuple(r) for r in self._regions))

    def abort(self) -> None:
        """Give up (the producer failed or was released): close and delete what was written."""
        self._data.close()
        PartitionedFile.delete_files(self.base_path)


@dataclass(frozen=True, slots=True)
class PartitionedFile:
    base_path: str
    num_subpartitions: int
    #: per region, per subpartition: where its buffers lie in the data file
    regions: tuple[tuple[_Entry, ...], ...]

    @property
    def data_path(self) -> str:
        return self.base_path + ".data"

    @property
    def index_path(self) -> str:
        return self.base_path + ".index"

    @staticmethod
    def open(base_path: str) -> PartitionedFile:
        """Read the index of the partition written at ``base_path``."""
        with open(base_path + ".index", "rb") as f:
            raw = f.read()
        if len(raw) < _INDEX_HEADER.size:
            raise PartitionedFileError(f"expected a partition index at {base_path}.index; got {len(raw)} bytes")
        magic, version, n, num_regions = _INDEX_HEADER.unpack_from(raw)
        if magic != _MAGIC or version != _VERSION:
            raise PartitionedFileError(
                f"expected a partition index of version {_VERSION}; got magic {magic!r}, version {version}"
            )
        expected = _INDEX_HEADER.size + n * num_regions * _INDEX_ENTRY.size
        if len(raw) != expected:
            raise PartitionedFileError(f"expected {expected} bytes of partition index; got {len(raw)}")
        entries = [_Entry(*e) for e in _INDEX_ENTRY.iter_unpack(raw[_INDEX_HEADER.size :])]
        regions = tuple(tuple(entries[r * n : (r + 1) * n]) for r in range(num_regions))
        return PartitionedFile(base_path, n, regions)

    def num_buffers(self, subpartition: int) -> int:
        return sum(region[subpartition].num_buffers for region in self.regions)

    def reader(self, subpartition: int) -> PartitionedFileReader:
        if not 0 <= subpartition < self.num_subpartitions:
            raise ValueError(f"expected a subpartition in [0, {self.num_subpartitions}); got {subpartition}")
        return PartitionedFileReader(self, subpartition)

    def delete(self) -> None:
        PartitionedFile.delete_files(self.base_path)

    @staticmethod
    def delete_files(base_path: str) -> None:
        for suffix in (".data", ".index", ".index.tmp"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(base_path + suffix)


class PartitionedFileReader:
    """Reads one subpartition's buffers in order (one thread: the consumer's task thread or the data server's loop).

    It reads its subpartition's part of a region in chunks of up to :data:`READ_CHUNK_BYTES` (a buffer larger than that
    in one piece), so a reader holds at most one chunk and makes one system call per chunk, not per buffer."""

    def __init__(self, file: PartitionedFile, subpartition: int) -> None:
        self.file = file
        self.subpartition = subpartition
        self.remaining = file.num_buffers(subpartition)
        self._entries = [r[subpartition] for r in file.regions if r[subpartition].num_buffers]
        self._region = -1
        self._left_in_region = 0
        self._position = 0  # file offset of the next buffer
        self._region_end = 0
        self._chunk = b""
        self._chunk_start = 0  # file offset of _chunk[0]
        self._fd = -1

    def _read(self, position: int, need: int) -> memoryview:
        """``need`` bytes at ``position``, from the chunk in hand or a new one read from there."""
        start = position - self._chunk_start
        if start < 0 or start + need > len(self._chunk):
            if self._fd < 0:
                self._fd = os.open(self.file.data_path, os.O_RDONLY)
            size = max(need, min(READ_CHUNK_BYTES, self._region_end - position))
            self._chunk = os.pread(self._fd, size, position)
            self._chunk_start, start = position, 0
            if len(self._chunk) < need:
                raise PartitionedFileError(
                    f"expected {need} bytes at {position} of {self.file.data_path}; got {len(self._chunk)}"
                )
        return memoryview(self._chunk)[start : start + need]

    def next_buffer(self) -> tuple[int, bytes] | None:
        """The next ``(kind, payload)`` (payload decompressed), or ``None`` after the last one."""
        if self.remaining == 0:
            self.close()
            return None
        if self._left_in_region == 0:
            self._region += 1
            entry = self._entries[self._region]
            self._left_in_region, self._position = entry.num_buffers, entry.offset
            self._region_end = entry.offset + entry.length
        kind, codec, length = _BUFFER_HEADER.unpack(self._read(self._position, _BUFFER_HEADER.size))
        payload = self._read(self._position + _BUFFER_HEADER.size, length)
        self._position += _BUFFER_HEADER.size + length
        self._left_in_region -= 1
        self.remaining -= 1
        if self.remaining == 0:
            self.close()
        return kind, decompress(codec, payload) if codec else bytes(payload)

    def close(self) -> None:
        self._chunk = b""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
