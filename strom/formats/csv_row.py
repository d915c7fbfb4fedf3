"""Flink's ``CsvRowDeserializationSchema`` and ``CsvRowSerializationSchema`` (PyFlink's
``pyflink.datastream.formats.csv``): one CSV line to a ``Row`` of a row type and back, as the Kafka connector
takes them.

    >>> from strom.common import Types
    >>> row_type = Types.ROW([Types.INT(), Types.STRING()])
    >>> data = CsvRowSerializationSchema.Builder(row_type).build().serialize(Row(1, "hi, there"))
    >>> data
    b'1,"hi, there"\\n'
    >>> CsvRowDeserializationSchema.Builder(row_type).build().deserialize(data)
    Row(f0=1, f1='hi, there')

Cells convert by the row type's field types (an array column splits at the array element delimiter, ``;``); the
null literal (none by default) and an empty cell of a non-string column are ``None``. A line that does not fit the
row type fails (``set_ignore_parse_errors(True)``: it is skipped — the schema returns ``None``, which the Kafka
source drops, as Flink's).
"""

from __future__ import annotations

import csv
import io
from typing import Any

from strom.api.row import Row
from strom.api.serialization_schema import DeserializationSchema, SerializationSchema
from strom.api.typeinfo import RowTypeInfo, TypeInformation
from strom.formats.row_fields import json_ready, row_type_of, text_converter

__all__ = ["CsvRowDeserializationSchema", "CsvRowSerializationSchema"]


class _Dialect:
    """The CSV options both builders share (Flink's ``CsvSchema`` settings)."""

    def __init__(self, type_info: TypeInformation, who: str) -> None:
        if type_info is None:
            raise TypeError("Type information must not be None")
        self.row_type = row_type_of(type_info, who)
        self.field_delimiter = ","
        self.quote_character: str | None = '"'
        self.escape_character: str | None = None
        self.array_element_delimiter = ";"
        self.null_literal: str | None = None

    def csv_options(self) -> dict[str, Any]:
        return {
            "delimiter": self.field_delimiter,
            "quotechar": self.quote_character,
            "escapechar": self.escape_character,
            "quoting": csv.QUOTE_MINIMAL if self.quote_character else csv.QUOTE_NONE,
            "doublequote": self.escape_character is None,
            "strict": False,
        }


class CsvRowDeserializationSchema(DeserializationSchema):
    """A CSV line (bytes, UTF-8) to a ``Row``; build one with ``CsvRowDeserializationSchema.Builder(type_info)``."""

    def __init__(self, dialect: _Dialect, allow_comments: bool, ignore_parse_errors: bool) -> None:
        self.row_type = dialect.row_type
        self.names = dialect.row_type.get_field_names()
        self.options = dialect.csv_options()
        self.allow_comments = allow_comments
        self.ignore_parse_errors = ignore_parse_errors
        self.cells = [
            text_converter(t, dialect.array_element_delimiter, dialect.null_literal)
            for t in dialect.row_type.get_field_types()
        ]

    def get_produced_type(self) -> RowTypeInfo:
        """The row type (Flink's ``ResultTypeQueryable``): a ``KafkaSource`` stream is of it."""
        return self.row_type

    def deserialize(self, message: bytes) -> Any:
        try:
            return self._row(message.decode().rstrip("\r\n"))
        except (ValueError, TypeError, ArithmeticError, csv.Error):
            if self.ignore_parse_errors:
                return None
            raise

    def _row(self, line: str) -> Row | None:
        if self.allow_comments and line.startswith("#"):
            return None
        cells = next(csv.reader([line], **self.options), [])
        if len(cells) != len(self.cells):
            raise ValueError(f"expected {len(self.cells)} CSV fields {self.names}; got {len(cells)} in {line!r:.80}")
        row = Row(*[convert(cell) for convert, cell in zip(self.cells, cells, strict=True)])
        row.set_field_names(self.names)
        return row

    class Builder:
        """PyFlink's ``CsvRowDeserializationSchema.Builder``."""

        def __init__(self, type_info: TypeInformation) -> None:
            self._dialect = _Dialect(type_info, "CsvRowDeserializationSchema.Builder(type_info)")
            self._allow_comments = False
            self._ignore_parse_errors = False

        def set_field_delimiter(self, delimiter: str) -> CsvRowDeserializationSchema.Builder:
            self._dialect.field_delimiter = delimiter
            return self

        def set_allow_comments(self, allow_comments: bool) -> CsvRowDeserializationSchema.Builder:
            self._allow_comments = allow_comments
            return self

        def set_array_element_delimiter(self, delimiter: str) -> CsvRowDeserializationSchema.Builder:
            self._dialect.array_element_delimiter = delimiter
            return self

        def set_quote_character(self, c: str) -> CsvRowDeserializationSchema.Builder:
            self._dialect.quote_character = c
            return self

        def set_escape_character(self, c: str) -> CsvRowDeserializationSchema.Builder:
            self._dialect.escape_character = c
            return self

        def set_null_literal(self, null_literal: str) -> CsvRowDeserializationSchema.Builder:
            self._dialect.null_literal = null_literal
            return self

        def set_ignore_parse_errors(self, ignore_parse_errors: bool) -> CsvRowDeserializationSchema.Builder:
            self._ignore_parse_errors = ignore_parse_errors
            return self

        def build(self) -> CsvRowDeserializationSchema:
            return CsvRowDeserializationSchema(self._dialect, self._allow_comments, self._ignore_parse_errors)


class CsvRowSerializationSchema(SerializationSchema):
    """A ``Row`` (or tuple) to one CSV line (UTF-8, ending in the line delimiter, ``\\n``); build one with
    ``CsvRowSerializationSchema.Builder(type_info)``."""

    def __init__(self, dialect: _Dialect, line_delimiter: str) -> None:
        self.arity = len(dialect.row_type.get_field_types())
        self.options = dialect.csv_options()
        self.line_delimiter = line_delimiter
        self.array_element_delimiter = dialect.array_element_delimiter
        self.null_literal = dialect.null_literal or ""

    def serialize(self, element: Any) -> bytes:
        values = list(element) if isinstance(element, Row | tuple | list) else [element]
        if len(values) != self.arity:
            raise ValueError(
                f"expected a row of {self.arity} fields for CSV; got {element!r:.80}; "
                "hint: the stream's rows must match the type info given to CsvRowSerializationSchema"
            )
        out = io.StringIO()
        csv.writer(out, lineterminator=self.line_delimiter, **self.options).writerow([self._cell(v) for v in values])
        return out.getvalue().encode()

    def _cell(self, value: Any) -> str:
        if value is None:
            return self.null_literal
        if isinstance(value, list | tuple):
            return self.array_element_delimiter.join(self._cell(v) for v in value)
        if isinstance(value, bool):
            return "true" if value else "false"
        ready = json_ready(value)
        return ready if isinstance(ready, str) else str(ready)

    class Builder:
        """PyFlink's ``CsvRowSerializationSchema.Builder``."""

        def __init__(self, type_info: TypeInformation) -> None:
            self._dialect = _Dialect(type_info, "CsvRowSerializationSchema.Builder(type_info)")
            self._line_delimiter = "\n"

        def set_field_delimiter(self, c: str) -> CsvRowSerializationSchema.Builder:
            self._dialect.field_delimiter = c
            return self

        def set_line_delimiter(self, delimiter: str) -> CsvRowSerializationSchema.Builder:
            if delimiter not in ("\n", "\r", "\r\n", ""):
                raise ValueError(f"expected a line delimiter of '\\n', '\\r', '\\r\\n' or ''; got {delimiter!r}")
            self._line_delimiter = delimiter
            return self

        def set_array_element_delimiter(self, delimiter: str) -> CsvRowSerializationSchema.Builder:
            self._dialect.array_element_delimiter = delimiter
            return self

        def disable_quote_character(self) -> CsvRowSerializationSchema.Builder:
            self._dialect.quote_character = None
            return self

        def set_quote_character(self, c: str) -> CsvRowSerializationSchema.Builder:
            self._dialect.quote_character = c
            return self

        def set_escape_character(self, c: str) -> CsvRowSerializationSchema.Builder:
            self._dialect.escape_character = c
            return self

        def set_null_literal(self, s: str) -> CsvRowSerializationSchema.Builder:
            self._dialect.null_literal = s
            return self

        def build(self) -> CsvRowSerializationSchema:
            return CsvRowSerializationSchema(self._dialect, self._line_delimiter)
