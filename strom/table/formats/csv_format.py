"""Flink's ``csv`` format (``CsvRowDataDeserializationSchema`` / ``CsvRowDataSerializationSchema``): one CSV line
per message, its cells by the row's columns in order, no line separator. Written as Jackson's CSV writer writes
Flink's: numbers and booleans bare, a DECIMAL with trailing zeros stripped (``1E+2``), a text cell quoted when it
has a character below the separator, quote and line feed (a space: ``"2024-01-02 03:04:05.5"``), NULL empty (or the
null literal). Flink 2.3's output: ``tests/data/flink_sql/sqlconn_csv_write.txt``.

Options as Flink's: ``field-delimiter`` (``,``), ``quote-character`` (``"``), ``disable-quote-character``,
``allow-comments``, ``ignore-parse-errors``, ``array-element-delimiter`` (``;``), ``escape-character``,
``null-literal`` (a cell equal to it is NULL; an empty cell of a non-string column is NULL too),
``write-bigdecimal-in-scientific-notation`` (accepted).
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from typing import Any

from strom.table.formats.row_data_converters import decimal_text, from_text, to_text
from strom.table.formats.row_data_format import RowDataFormat, option_bool
from strom.table.types import DataType

__all__ = ["CsvFormat"]


class CsvFormat(RowDataFormat):
    identifier = "csv"
    option_keys = frozenset(
        {
            "field-delimiter",
            "quote-character",
            "disable-quote-character",
            "allow-comments",
            "ignore-parse-errors",
            "array-element-delimiter",
            "escape-character",
            "null-literal",
            "write-bigdecimal-in-scientific-notation",
        }
    )

    def __init__(self, names: Sequence[str], types: Sequence[DataType], options: Mapping[str, str]) -> None:
        super().__init__(names, types, options)
        delimiter = options.get("field-delimiter", ",").replace("\\t", "\t")
        no_quote = option_bool(options, "disable-quote-character")
        quote = None if no_quote else options.get("quote-character", '"')
        escape = options.get("escape-character")
        self.dialect: dict[str, Any] = {
            "delimiter": delimiter,
            "quotechar": quote,
            "escapechar": escape,
            "quoting": csv.QUOTE_NONE if quote is None else csv.QUOTE_MINIMAL,
            "doublequote": escape is None,
            "lineterminator": "",
        }
        self.allow_comments = option_bool(options, "allow-comments")
        self.ignore_errors = option_bool(options, "ignore-parse-errors")
        self.null_literal = options.get("null-literal")
        array = options.get("array-element-delimiter", ";")
        self.readers = [from_text(t, array) for t in self.types]
        self.strings = [t.type_root.name in ("CHAR", "VARCHAR") for t in self.types]
        self.writers = [
            (decimal_text if t.type_root.name == "DECIMAL" else to_text(t, array_delimiter=array)) for t in self.types
        ]
        numeric = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL", "BOOLEAN")
        self.textual = [t.type_root.name not in numeric for t in self.types]
        self.delimiter, self.quote, self.escape = delimiter, quote, escape
        self.min_safe = chr(max(ord(delimiter), ord(quote or '"'), ord("\n")) + 1)

    def _cell(self, text: str, index: int) -> Any:
        if text == self.null_literal or (text == "" and not self.strings[index]):
            return None
        return self.readers[index](text)

    def deserialize(self, message: bytes) -> list[Any] | None:
        line = message.decode().rstrip("\r\n")
        if self.allow_comments and line.startswith("#"):
            return None
        try:
            cells = next(csv.reader([line], **self.dialect), [])
            if len(cells) != len(self.readers):
                raise ValueError(f"expected {len(self.readers)} CSV fields {list(self.names)}; got {len(cells)}")
            return [self._cell(cell, i) for i, cell in enumerate(cells)]
        except (ValueError, TypeError, ArithmeticError, csv.Error):
            if self.ignore_errors:
                return None
            raise

    def _quoted(self, text: str) -> str:
        """Jackson's ``CsvEncoder._mustQuote``: a character below its safe minimum, or the escape character."""
        if self.quote is None or not any(c < self.min_safe or c == self.escape for c in text):
            return text
        return self.quote + text.replace(self.quote, self.quote * 2) + self.quote

    def serialize(self, values: Sequence[Any]) -> bytes | None:
        null = self.null_literal if self.null_literal is not None else ""
        cells = [
            null if v is None else (self._quoted(w(v)) if text else w(v))
            for v, w, text in zip(values, self.writers, self.textual, strict=True)
        ]
        return self.delimiter.join(cells).encode()
