"""Flink's ``raw`` format (``RawFormatDeserializationSchema`` / ``RawFormatSerializationSchema``): the message is
the value of the row's single column — a string in ``charset`` (UTF-8), BYTES as they are, numbers in
``endianness`` (``big-endian``) binary; a NULL value is a message without value (and back)."""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from typing import Any

from strom.table.errors import ValidationException
from strom.table.formats.row_data_format import RowDataFormat
from strom.table.types import DataType

__all__ = ["RawFormat"]

_NUMBERS = {"TINYINT": "b", "SMALLINT": "h", "INTEGER": "i", "BIGINT": "q", "FLOAT": "f", "DOUBLE": "d", "BOOLEAN": "?"}


class RawFormat(RowDataFormat):
    identifier = "raw"
    option_keys = frozenset({"charset", "endianness"})

    def __init__(self, names: Sequence[str], types: Sequence[DataType], options: Mapping[str, str]) -> None:
        super().__init__(names, types, options)
        if len(self.types) != 1:
            raise ValidationException(
                f"The 'raw' format only supports single physical column; got {len(self.types)} columns "
                f"({', '.join(self.names)}); hint: declare one column, or use 'json' / 'csv'"
            )
        self.root = self.types[0].type_root.name
        self.charset = options.get("charset", "UTF-8")
        endianness = options.get("endianness", "big-endian")
        if endianness not in ("big-endian", "little-endian"):
            raise ValidationException(f"expected 'raw.endianness' big-endian or little-endian; got {endianness!r}")
        code = _NUMBERS.get(self.root)
        self.struct = struct.Struct((">" if endianness == "big-endian" else "<") + code) if code else None
        if self.struct is None and self.root not in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
            raise ValidationException(
                f"The 'raw' format doesn't support the type {self.types[0]}; expected a string, BYTES or a number"
            )

    def deserialize(self, message: bytes) -> list[Any] | None:
        if self.struct is not None:
            return [self.struct.unpack(message)[0]]
        if self.root in ("BINARY", "VARBINARY"):
            return [bytes(message)]
        return [message.decode(self.charset)]

    def serialize(self, values: Sequence[Any]) -> bytes | None:
        (value,) = values
        if value is None:
            return None
        if self.struct is not None:
            return self.struct.pack(value)
        if isinstance(value, bytes):
            return value
        return str(value).encode(self.charset)
