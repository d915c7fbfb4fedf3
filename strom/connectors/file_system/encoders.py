"""Row formats of the FileSink: an ``Encoder`` turns each record into the bytes of one row (Flink's ``Encoder``).

``Encoder.simple_string_encoder()`` (PyFlink's name) is :class:`SimpleStringEncoder`: ``str(record)`` and a
newline; :class:`JsonLinesEncoder` and :class:`CsvEncoder` write JSON lines and CSV rows.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from strom.exceptions import InvalidProgramError, SerializationError

__all__ = ["CsvEncoder", "Encoder", "JsonLinesEncoder", "SimpleStringEncoder"]

T = TypeVar("T")


# -- encoders --------------------------------------------------------------------------------------------------
class Encoder(ABC, Generic[T]):
    """Turns a record into the bytes of one row (Flink's ``Encoder``)."""

    @abstractmethod
    def encode(self, record: T) -> bytes: ...

    def encode_batch(self, records: list[T]) -> bytes:
        """The rows of a whole batch as one bytes object; override for speed."""
        encode = self.encode
        return b"".join([encode(r) for r in records])

    @staticmethod
    def simple_string_encoder(charset: str = "utf-8") -> SimpleStringEncoder:
        """PyFlink's ``Encoder.simple_string_encoder()``: ``str(record)`` and a newline."""
        return SimpleStringEncoder(charset)


class SimpleStringEncoder(Encoder[Any]):
    """``str(record)`` and a newline (Flink's default row encoder). Records of a stream with a declared type are
    written as Flink's Java side writes them (``formatter``, set when the stream is sunk): a ``Types.TUPLE`` as
    ``(a,5)``."""

    def __init__(self, charset: str = "utf-8", formatter: Callable[[Any], str] | None = None) -> None:
        self.charset = _checked_charset(charset)
        self.formatter: Callable[[Any], str] = formatter or str

    def encode(self, record: Any) -> bytes:
        return f"{self.formatter(record)}\n".encode(self.charset)

    def encode_batch(self, records: list[Any]) -> bytes:
        if not records:
            return b""
        return ("\n".join(map(self.formatter, records)) + "\n").encode(self.charset)


def _checked_charset(charset: str) -> str:
    try:
        codecs.lookup(charset)
    except (LookupError, TypeError) as exc:
        raise InvalidProgramError(
            f"an encoder's charset must name a Python codec; got {charset!r}; hint: 'utf-8'"
        ) from exc
    return charset


_JSON = json.JSONEncoder(separators=(",", ":"))


class JsonLinesEncoder(Encoder[Any]):
    """One compact JSON document per line (``json.dumps(record, separators=(",", ":"))``)."""

    def encode(self, record: Any) -> bytes:
        return self.encode_batch([record])

    def encode_batch(self, records: list[Any]) -> bytes:
        if not records:
            return b""
        try:
            text = "\n".join(map(_JSON.encode, records))
        except (TypeError, ValueError) as exc:
            raise _json_error(records, exc) from exc
        return (text + "\n").encode("utf-8")


def _json_error(records: list[Any], exc: Exception) -> SerializationError:
    bad: Any = None
    for r in records:
        try:
            _JSON.encode(r)
        except (TypeError, ValueError):
            bad = r
            break
    return SerializationError(
        "JsonLinesEncoder expected a JSON-serializable record (dict, list, str, int, float, bool or None); "
        f"got a {type(bad).__name__!r} ({exc}); hint: map records to dicts or lists first, "
        "e.g. .map(dataclasses.asdict) or .map(lambda r: {'id': r.id, ...})"
    )


class CsvEncoder(Encoder[Any]):
    """One CSV row per record (``csv.writer``): a tuple or list is a row of columns, any other value a
    single column; ``None`` is an empty field."""

    def __init__(self, delimiter: str = ",", line_terminator: str = "\n", charset: str = "utf-8") -> None:
        try:
            csv.writer(io.StringIO(), delimiter=delimiter, lineterminator=line_terminator)
        except (TypeError, csv.Error) as exc:
            raise InvalidProgramError(
                f"CsvEncoder expects a one-character delimiter; got {delimiter!r} ({exc}); hint: delimiter=';'"
            ) from exc
        self.charset = _checked_charset(charset)
        self.delimiter = delimiter
        self.line_terminator = line_terminator

    def encode(self, record: Any) -> bytes:
        return self.encode_batch([record])

    def encode_batch(self, records: list[Any]) -> bytes:
        buf = io.StringIO()
        writer = csv.writer(buf, delimiter=self.delimiter, lineterminator=self.line_terminator)
        rows: list[Any] = []
        for r in records:
            if isinstance(r, tuple | list):
                rows.append(r)
            elif isinstance(r, dict | set | frozenset):
                raise SerializationError(
                    f"CsvEncoder expected a tuple, a list or a single value per record; got a "
                    f"{type(r).__name__!r}; hint: map it to a tuple of the columns first, "
                    "e.g. .map(lambda d: (d['id'], d['name']))"
                )
            else:
                rows.append((r,))
        writer.writerows(rows)
        return buf.getvalue().encode(self.charset)
