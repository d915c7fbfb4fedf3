"""Compressed input by file extension (Flink's ``StandardDeCompression``): ``.gz``/``.gzip``, ``.bz2`` and
``.zst`` (with the ``zstandard`` package). Readers see the decompressed bytes; a compressed file cannot be
split or seeked, so a restored reader decompresses again up to its position."""

from __future__ import annotations

import bz2
import gzip
from collections.abc import Callable
from typing import IO, Any

from strom.exceptions import ConnectorError

__all__ = ["EXTENSIONS", "is_compressed", "open_decompressed", "skip_bytes"]


def _gzip(raw: IO[bytes], path: str) -> IO[bytes]:
    return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]


def _bzip2(raw: IO[bytes], path: str) -> IO[bytes]:
    return bz2.BZ2File(raw, mode="rb")


def _require_zstandard(path: str) -> Any:
    try:
        import zstandard
    except ImportError:
        raise ConnectorError(
            f"expected the 'zstandard' package to read the zstd-compressed file {path}; got none installed; "
            "hint: pip install zstandard (or decompress the file)"
        ) from None
    return zstandard


def _zstd(raw: IO[bytes], path: str) -> IO[bytes]:
    zstandard = _require_zstandard(path)
    reader: IO[bytes] = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
    return reader


#: file extension → opener of a decompressing stream over the raw one
EXTENSIONS: dict[str, Callable[[IO[bytes], str], IO[bytes]]] = {
    ".gz": _gzip,
    ".gzip": _gzip,
    ".bz2": _bzip2,
    ".zst": _zstd,
}


def _codec(path: str) -> Callable[[IO[bytes], str], IO[bytes]] | None:
    dot = path.rfind(".")
    return EXTENSIONS.get(path[dot:].lower()) if dot >= 0 else None


def is_compressed(path: str) -> bool:
    return _codec(path) is not None


def open_decompressed(fs: Any, fs_path: str, url: str) -> IO[bytes]:
    """``fs_path`` on ``fs`` opened for reading, decompressed when its extension names a codec."""
    codec = _codec(fs_path)
    if codec is _zstd:  # fail on a missing package before opening the file
        _require_zstandard(url)
    raw: IO[bytes] = fs.open(fs_path, "rb")
    if codec is None:
        return raw
    try:
        return codec(raw, url)
    except BaseException:
        raw.close()
        raise


def skip_bytes(stream: IO[bytes], count: int, url: str) -> None:
    """Move ``count`` bytes on: a seek for a plain file, reading and dropping for a decompressing stream."""
    if count <= 0:
        return
    try:
        if stream.seekable() and not is_compressed(url):
            stream.seek(count)
            return
    except (AttributeError, OSError):
        pass  # not seekable after all: read and drop below
    left = count
    while left > 0:
        chunk = stream.read(min(left, 1 << 20))
        if not chunk:
            raise ConnectorError(
                f"expected {url} to have at least {count} bytes to resume reading at that offset; got "
                f"{count - left}; hint: the file was changed or truncated since the checkpoint"
            )
        left -= len(chunk)
