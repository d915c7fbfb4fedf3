"""``StreamFormat``: a format read from a file's byte stream a block at a time (Flink's ``StreamFormat``),
and the text line format (Flink's ``TextLineInputFormat``).

The file source's reader cuts the stream into blocks that end at a record boundary (:meth:`StreamFormat.
record_end`), decodes each block once and hands it to :meth:`StreamFormat.parse_block`, which turns it into
records in bulk (one ``str.split``, one ``csv.reader``, one conversion per column) — the per-record Python
work is what a plain loop would do anyway. Positions are block offsets plus records read after them, so a
format's parsing must depend only on the text from a record boundary on.

Records a format cannot parse fail the job with a :class:`~strom.exceptions.ConnectorError` naming the file,
line and column — or, after ``with_invalid_records_to(tag)``, go to the source's side output ``tag`` as
:class:`InvalidRecord` s, and reading goes on.
"""

from __future__ import annotations

import codecs
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, TypeVar

from strom.exceptions import ConnectorError

__all__ = ["BlockInfo", "InvalidRecord", "LineFormat", "StreamFormat", "TextLineInputFormat"]

F = TypeVar("F", bound="LineFormat")


@dataclass(frozen=True, slots=True, kw_only=True)
class InvalidRecord:
    """A line a format rejected, sent to the side output of ``with_invalid_records_to(tag)``: where it was
    (``path``, 1-based ``line``), the raw text and why."""

    path: str
    line: int
    raw: str
    reason: str


@dataclass(frozen=True, slots=True)
class BlockInfo:
    """Where a block of text comes from: the file's URL, the line number of its first line, whether it
    starts the file (so a header is there), and its bytes before decoding (for parsers of bytes)."""

    path: str
    first_line: int
    at_file_start: bool
    data: bytes = b""


#: records of a block, and the rejected ones as ``(records before it, InvalidRecord)``
ParsedBlock = tuple[list[Any], list[tuple[int, InvalidRecord]]]


def _newline_compatible(charset: str) -> str:
    try:
        name = codecs.lookup(charset).name
    except LookupError:
        raise ValueError(f"expected a charset Python knows (UTF-8, ISO-8859-1, ...); got {charset!r}") from None
    if "\n".encode(name) != b"\n":
        raise ValueError(
            f"expected a charset that encodes a line feed as the byte 0x0A (UTF-8, ASCII, ISO-8859-x, cp125x); "
            f"got {charset!r}; hint: convert the files to UTF-8"
        )
    return name


class StreamFormat(ABC):
    """A record format read from a byte stream, block by block; files in it are not split (as Flink's
    ``StreamFormat.isSplittable() == false`` formats)."""

    charset: str = "utf-8"

    def record_end(self, data: bytes, eof: bool) -> int:
        """Where the records complete in ``data`` end (a record boundary; 0 = none yet): after the last line
        feed, or everything at the end of the file."""
        if eof:
            return len(data)
        return data.rfind(b"\n") + 1

    @abstractmethod
    def parse_block(self, text: str, info: BlockInfo) -> ParsedBlock:
        """The records of ``text`` (whole records, decoded), in order."""

    @staticmethod
    def text_line_format(charset_name: str = "UTF-8") -> TextLineInputFormat:
        """Lines of text as ``str`` without their terminator (``\\n``, ``\\r\\n``)."""
        return TextLineInputFormat(charset_name)


class TextLineInputFormat(StreamFormat):
    """Each line of a text file as a ``str`` without its line terminator (Flink's ``TextLineInputFormat``)."""

    def __init__(self, charset_name: str = "UTF-8") -> None:
        self.charset = _newline_compatible(charset_name)

    def parse_block(self, text: str, info: BlockInfo) -> ParsedBlock:
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
        if "\r" in text:
            lines = [line[:-1] if line.endswith("\r") else line for line in lines]
        return lines, []


class LineFormat(StreamFormat):
    """A format of lines that may be malformed: records a line cannot be turned into fail the job or, after
    :meth:`with_invalid_records_to`, go to a side output."""

    invalid_records_tag: Any = None

    def with_invalid_records_to(self: F, output_tag: Any) -> F:
        """Send lines that cannot be read (wrong number of fields, a value that does not fit its column,
        invalid JSON) to the side output ``output_tag`` as :class:`InvalidRecord` s instead of failing the job:
        ``stream.get_side_output(output_tag)`` reads them."""
        if getattr(output_tag, "tag_id", None) is None:
            raise ValueError(
                f"with_invalid_records_to expects an OutputTag; got a {type(output_tag).__name__}; "
                "hint: OutputTag('invalid-lines')"
            )
        self.invalid_records_tag = output_tag
        return self

    def reject(
        self,
        invalid: list[tuple[int, InvalidRecord]],
        before: int,
        info: BlockInfo,
        line: int,
        raw: str,
        what: str,
        hint: str,
    ) -> None:
        """A line that cannot be read: raise, or record it for the side output (``before`` = records before it)."""
        if self.invalid_records_tag is None:
            raise ConnectorError(
                f"{what} at {info.path}:{line}; hint: {hint}, or route such lines to a side output with "
                ".with_invalid_records_to(OutputTag('invalid'))"
            )
        invalid.append((before, InvalidRecord(path=info.path, line=line, raw=raw, reason=what)))
