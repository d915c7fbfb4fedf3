"""The text line format and compressed input: lines without terminators, in file order, the same through
gzip/bzip2/zstd; a reader restored from any position reads exactly the remaining lines."""

from __future__ import annotations

import bz2
import gzip
import sys
from pathlib import Path

import pytest
import zstandard
from file_reading import read_all, read_with_restore

from strom.api.environment import StreamExecutionEnvironment
from strom.connectors.file_system import FileSource, StreamFormat
from strom.connectors.file_system import reader as reader_module
from strom.exceptions import ConnectorError

LINES = [f"line {i} " + "é" * (i % 5) for i in range(200)]
COMPRESSORS = {
    "": lambda b: b,
    ".gz": gzip.compress,
    ".bz2": bz2.compress,
    ".zst": lambda b: zstandard.ZstdCompressor().compress(b),
}


def text_source(*paths: Path | str) -> FileSource[str]:
    return FileSource.for_record_stream_format(StreamFormat.text_line_format(), *map(str, paths)).build()


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 64 bytes: records and positions cross many block boundaries."""
    monkeypatch.setattr(reader_module, "BLOCK_SIZE", 64)


def test_lines_without_terminators_in_order(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"one\r\ntwo\n\nthree")  # CRLF, an empty line, no final newline
    assert read_all(text_source(tmp_path / "a.txt")) == ["one", "two", "", "three"]


def test_directory_read_recursively_without_hidden_files(tmp_path: Path) -> None:
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "sub" / "deeper" / "b.txt").write_text("b\n")
    (tmp_path / ".hidden.txt").write_text("hidden\n")
    (tmp_path / "_SUCCESS").write_text("marker\n")
    (tmp_path / "_tmp").mkdir()
    (tmp_path / "_tmp" / "c.txt").write_text("in a hidden directory\n")
    assert sorted(read_all(text_source(tmp_path))) == ["a", "b"]


@pytest.mark.parametrize("suffix", list(COMPRESSORS))
def test_compressed_files_read_as_plain(tmp_path: Path, suffix: str, small_blocks: None) -> None:
    path = tmp_path / f"lines.txt{suffix}"
    path.write_bytes(COMPRESSORS[suffix]("\n".join(LINES).encode() + b"\n"))
    assert read_all(text_source(path)) == LINES


@pytest.mark.parametrize("suffix", list(COMPRESSORS))
@pytest.mark.parametrize("k", [0, 1, 7, 50, 199, 200])
def test_restored_reader_reads_exactly_the_rest(tmp_path: Path, suffix: str, k: int, small_blocks: None) -> None:
    for name in ("a", "b"):  # two splits: the snapshot holds the current one with its position and the next
        path = tmp_path / f"{name}.txt{suffix}"
        path.write_bytes(COMPRESSORS[suffix]("\n".join(f"{name}{line}" for line in LINES).encode()))
    expected = [f"{n}{line}" for n in ("a", "b") for line in LINES]
    head, tail = read_with_restore(text_source(tmp_path), k, batch_size=3)
    assert head == expected[:k]
    assert head + tail == expected


def test_missing_zstandard_names_the_file_and_the_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "lines.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(b"a\n"))
    monkeypatch.setitem(sys.modules, "zstandard", None)  # import zstandard now raises ImportError
    with pytest.raises(ConnectorError, match=r"lines\.zst.*pip install zstandard"):
        read_all(text_source(path))


def test_charset(tmp_path: Path) -> None:
    (tmp_path / "latin.txt").write_bytes("café\nnaïve\n".encode("latin-1"))
    source = FileSource.for_record_stream_format(StreamFormat.text_line_format("ISO-8859-1"), str(tmp_path)).build()
    assert read_all(source) == ["café", "naïve"]


def test_undecodable_bytes_name_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "bad.txt").write_bytes(b"ok\nalso ok\nbad \xff byte\n")
    with pytest.raises(ConnectorError, match=r"bad\.txt:3.*charset"):
        read_all(text_source(tmp_path))


def test_charset_without_line_feed_byte_is_refused() -> None:
    with pytest.raises(ValueError, match="UTF-16"):
        StreamFormat.text_line_format("UTF-16")


def test_read_text_file_is_a_bounded_file_source(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    env = StreamExecutionEnvironment.get_execution_environment()
    stream = env.read_text_file(str(tmp_path / "a.txt"))
    source = stream._transformation.operator.source  # type: ignore[attr-defined]
    assert isinstance(source, FileSource)
    assert source.get_boundedness() == "BOUNDED"
    assert read_all(source) == ["x"]
