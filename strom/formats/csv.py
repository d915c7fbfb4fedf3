"""CSV files read into named, typed rows (PyFlink's ``CsvReaderFormat`` and ``CsvSchema``).

    >>> schema = (CsvSchema.builder()
    ...     .add_number_column("id", number_type="BIGINT")
    ...     .add_string_column("name")
    ...     .add_number_column("score", number_type=float)
    ...     .set_use_header()
    ...     .build())
    >>> source = FileSource.for_record_stream_format(CsvReaderFormat.for_schema(schema), "data/").build()

A record is a :class:`~strom.api.row.Row` with the schema's column names. Quoted fields may hold the column
separator, doubled quotes and line breaks. An empty field of a non-string column, and a field equal to the
null literal (``set_null_value``) in any column, is ``None``. A block of lines is parsed by one
``csv.reader`` and converted a column at a time; a line with the wrong number of fields or a value that does
not fit its column raises :class:`~strom.exceptions.ConnectorError` naming file, line and column, or goes to
the side output of ``with_invalid_records_to(tag)``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from strom.api.row import row_factory
from strom.connectors.file_system.stream_format import BlockInfo, InvalidRecord, LineFormat, ParsedBlock
from strom.exceptions import ConnectorError
from strom.formats.column_types import ColumnType, column_type

__all__ = ["CsvReaderFormat", "CsvSchema", "CsvSchemaBuilder"]

_CONVERSION_ERRORS = (ValueError, TypeError, ArithmeticError, KeyError)


@dataclass(frozen=True, slots=True)
class CsvColumn:
    name: str
    type: ColumnType
    #: an array column's element separator (``None`` for scalar columns)
    array_separator: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CsvSchema:
    """The columns of a CSV file and how it is written (Jackson's ``CsvSchema`` as PyFlink shows it)."""

    columns: tuple[CsvColumn, ...]
    column_separator: str = ","
    quote_char: str | None = '"'
    escape_char: str | None = None
    use_header: bool = False
    skip_first_data_row: bool = False
    strict_headers: bool = False
    allow_comments: bool = False
    null_value: str | None = None

    @staticmethod
    def builder() -> CsvSchemaBuilder:
        return CsvSchemaBuilder()

    def field_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def size(self) -> int:
        return len(self.columns)

    def __len__(self) -> int:
        return len(self.columns)


def _single_char(char: str, what: str) -> str:
    if not isinstance(char, str) or len(char) != 1:
        raise ValueError(f"expected the {what} to be a single character; got {char!r}")
    return char


@dataclass(slots=True)
class CsvSchemaBuilder:
    """Builds a :class:`CsvSchema` (PyFlink's ``CsvSchemaBuilder``; every setter returns the builder)."""

    _columns: list[CsvColumn] = field(default_factory=list)
    _options: dict[str, Any] = field(default_factory=dict)

    def build(self) -> CsvSchema:
        if not self._columns:
            raise ValueError("expected a CSV schema with at least one column; got none; hint: add_string_column('a')")
        names = [c.name for c in self._columns]
        if len(set(names)) != len(names):
            raise ValueError(f"expected distinct CSV column names; got {names}")
        return CsvSchema(columns=tuple(self._columns), **self._options)

    def _add(self, name: str, spec: Any, array_separator: str | None = None) -> CsvSchemaBuilder:
        if not isinstance(name, str) or not name:
            raise ValueError(f"expected a column name (a non-empty str); got {name!r}")
        self._columns.append(CsvColumn(name, column_type(spec, column=name), array_separator))
        return self

    def add_string_column(self, name: str) -> CsvSchemaBuilder:
        return self._add(name, str)

    def add_number_column(self, name: str, number_type: Any = "BIGINT") -> CsvSchemaBuilder:
        """A number column: ``number_type`` is ``int``/``float``/``Decimal`` or ``"BIGINT"``, ``"DOUBLE"``, ..."""
        return self._add(name, number_type)

    def add_boolean_column(self, name: str) -> CsvSchemaBuilder:
        return self._add(name, bool)

    def add_array_column(self, name: str, separator: str = ";", element_type: Any = "STRING") -> CsvSchemaBuilder:
        """A column of ``separator``-separated values of ``element_type``, read as a list."""
        return self._add(name, element_type, separator)

    def add_column(self, name: str, column_type: Any = "STRING") -> CsvSchemaBuilder:
        """A column of any supported type (``"DATE"``, ``"TIMESTAMP"``, ``"DECIMAL"``, ``datetime.date``, ...)."""
        return self._add(name, column_type)

    def add_columns_from(self, schema: CsvSchema) -> CsvSchemaBuilder:
        self._columns.extend(schema.columns)
        return self

    def clear_columns(self) -> CsvSchemaBuilder:
        self._columns.clear()
        return self

    def set_column_separator(self, char: str) -> CsvSchemaBuilder:
        self._options["column_separator"] = _single_char(char, "column separator")
        return self

    def set_quote_char(self, char: str) -> CsvSchemaBuilder:
        self._options["quote_char"] = _single_char(char, "quote char")
        return self

    def disable_quote_char(self) -> CsvSchemaBuilder:
        self._options["quote_char"] = None
        return self

    def set_escape_char(self, char: str) -> CsvSchemaBuilder:
        self._options["escape_char"] = _single_char(char, "escape char")
        return self

    def disable_escape_char(self) -> CsvSchemaBuilder:
        self._options["escape_char"] = None
        return self

    def set_use_header(self, use: bool = True) -> CsvSchemaBuilder:
        """The first line of each file is a header (skipped; checked against the columns with strict headers)."""
        self._options["use_header"] = use
        return self

    def set_skip_first_data_row(self, skip: bool = True) -> CsvSchemaBuilder:
        self._options["skip_first_data_row"] = skip
        return self

    def set_strict_headers(self, strict: bool = True) -> CsvSchemaBuilder:
        self._options["strict_headers"] = strict
        return self

    def set_allow_comments(self, allow: bool = True) -> CsvSchemaBuilder:
        """Skip lines starting with ``#``."""
        self._options["allow_comments"] = allow
        return self

    def set_null_value(self, null_value: str) -> CsvSchemaBuilder:
        self._options["null_value"] = null_value
        return self

    def set_line_separator(self, separator: str) -> CsvSchemaBuilder:
        """For writing only (as in PyFlink): reading recognizes ``\\n``, ``\\r\\n`` and ``\\r``."""
        return self

    def set_array_element_separator(self, separator: str) -> CsvSchemaBuilder:
        self._columns = [
            CsvColumn(c.name, c.type, separator) if c.array_separator is not None else c for c in self._columns
        ]
        return self

    def size(self) -> int:
        return len(self._columns)

    def __len__(self) -> int:
        return len(self._columns)


#: column types the pyarrow parser converts exactly as the Python converters do
_ARROW_TYPES = ("STRING", "BIGINT", "DOUBLE", "BOOLEAN")


class _ArrowCsvParser:
    """pyarrow's CSV parser for the plain cases (UTF-8, no escape char, null literal or comments; string,
    integer, float and boolean columns): it parses and converts a block in C++, about 3x the csv module's
    speed. A block it rejects (a wrong field count, a value that does not convert, an integer beyond 64 bits)
    is parsed again by the csv module, which finds and reports the line; on RFC 4180 input both give the same
    records."""

    def __init__(self, schema: CsvSchema) -> None:
        import pyarrow as pa
        import pyarrow.csv as pacsv

        arrow_types = {"STRING": pa.string(), "BIGINT": pa.int64(), "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_()}
        names = schema.field_names()
        self._pa = pa
        self._pacsv = pacsv
        self._names = names
        self._parse = pacsv.ParseOptions(
            delimiter=schema.column_separator,
            quote_char=schema.quote_char or False,
            double_quote=True,
            newlines_in_values=True,
            ignore_empty_lines=True,
        )
        self._convert = pacsv.ConvertOptions(
            column_types={c.name: arrow_types[c.type.name] for c in schema.columns},
            null_values=[""],
            strings_can_be_null=False,
            quoted_strings_can_be_null=True,
            true_values=["true", "True", "TRUE"],
            false_values=["false", "False", "FALSE"],
        )

    def parse(self, data: bytes) -> list[list[Any]] | None:
        """The converted columns of ``data``, or ``None`` when pyarrow rejects it."""
        read = self._pacsv.ReadOptions(column_names=self._names, use_threads=False, block_size=len(data) + 1)
        try:
            table = self._pacsv.read_csv(
                self._pa.py_buffer(data), read_options=read, parse_options=self._parse, convert_options=self._convert
            )
        except (self._pa.ArrowInvalid, self._pa.ArrowNotImplementedError):
            return None
        return [column.to_pylist() for column in table.columns]


class CsvReaderFormat(LineFormat):
    """The ``StreamFormat`` of CSV files with a :class:`CsvSchema`: records are named rows."""

    def __init__(self, schema: CsvSchema, charset_name: str = "UTF-8") -> None:
        from strom.connectors.file_system.stream_format import _newline_compatible

        if not isinstance(schema, CsvSchema):
            raise ValueError(
                f"CsvReaderFormat.for_schema expects a CsvSchema; got a {type(schema).__name__}; "
                "hint: CsvSchema.builder().add_string_column('name').build()"
            )
        self.schema = schema
        self.charset = _newline_compatible(charset_name)
        self._names = schema.field_names()
        self._make = row_factory(self._names)
        self._quote = schema.quote_char.encode(self.charset) if schema.quote_char else None
        self._escaped_quote = (
            (schema.escape_char + schema.quote_char).encode(self.charset)
            if schema.escape_char and schema.quote_char
            else None
        )
        self._dialect: dict[str, Any] = {
            "delimiter": schema.column_separator,
            "quotechar": schema.quote_char,
            "quoting": csv.QUOTE_MINIMAL if schema.quote_char else csv.QUOTE_NONE,
            "escapechar": schema.escape_char,
            "doublequote": schema.escape_char is None,
            "strict": False,
        }

        self._arrow: Any = None
        if (
            self.charset == "utf-8"
            and schema.escape_char is None
            and schema.null_value is None
            and not schema.allow_comments
            and all(c.array_separator is None and c.type.name in _ARROW_TYPES for c in schema.columns)
        ):
            try:
                self._arrow = _ArrowCsvParser(schema)
            except ImportError:  # pyarrow is optional (strom[files]): the csv module parses every block
                self._arrow = None

    @staticmethod
    def for_schema(schema: CsvSchema) -> CsvReaderFormat:
        return CsvReaderFormat(schema)

    def record_end(self, data: bytes, eof: bool) -> int:
        """After the last line feed outside quotes (an even number of quote chars before it)."""
        if eof:
            return len(data)
        cut = data.rfind(b"\n") + 1
        quote = self._quote
        if quote is None:
            return cut
        while cut > 0 and self._quotes(data, cut) % 2:
            cut = data.rfind(b"\n", 0, cut - 1) + 1
        return cut

    def _quotes(self, data: bytes, end: int) -> int:
        assert self._quote is not None
        n = data.count(self._quote, 0, end)
        if self._escaped_quote is not None:
            n -= data.count(self._escaped_quote, 0, end)
        return n

    # -- parsing -----------------------------------------------------------------------------------
    def parse_block(self, text: str, info: BlockInfo) -> ParsedBlock:
        s = self.schema
        if (
            self._arrow is not None
            and info.data
            and not (info.at_file_start and (s.use_header or s.skip_first_data_row))
        ):
            columns = self._arrow.parse(info.data)
            if columns is not None:
                return list(map(self._make, zip(*columns, strict=True))), []
        rows = self._drop_non_records(list(csv.reader(io.StringIO(text, newline=""), **self._dialect)), info)
        if rows is not None:
            n = len(self._names)
            if not rows:
                return [], []
            if len(set(map(len, rows))) == 1 and len(rows[0]) == n:
                try:
                    columns = [
                        self._convert_column(c, values)
                        for c, values in zip(self.schema.columns, zip(*rows, strict=True), strict=True)
                    ]
                except _CONVERSION_ERRORS:
                    pass  # a value does not fit its column: the slow path below finds and reports the line
                else:
                    return list(map(self._make, zip(*columns, strict=False))), []
        return self._parse_slowly(text, info)

    def _drop_non_records(self, rows: list[list[str]], info: BlockInfo) -> list[list[str]] | None:
        """Rows without empty lines, comments and the header (``None``: let the slow path see them)."""
        s = self.schema
        if [] in rows:
            rows = [r for r in rows if r]
        if s.allow_comments:
            rows = [r for r in rows if not r[0].startswith("#")]
        if info.at_file_start and (s.use_header or s.skip_first_data_row) and rows:
            if s.strict_headers and s.use_header and rows[0] != self._names:
                return None
            rows = rows[1:]
        return rows

    def _convert_column(self, column: CsvColumn, values: tuple[str, ...]) -> Any:
        null = self.schema.null_value
        conv = column.type.from_text
        if column.array_separator is not None:
            return [self._convert_cell(column, v) for v in values]
        if conv is str:
            if null is not None and null in values:
                return [None if v == null else v for v in values]
            return values
        if "" in values or (null is not None and null in values):
            return [None if v == "" or v == null else conv(v) for v in values]
        return list(map(conv, values))

    def _convert_cell(self, column: CsvColumn, value: str) -> Any:
        if value == self.schema.null_value:
            return None
        conv = column.type.from_text
        if column.array_separator is not None:
            if value == "":
                return []
            return [conv(v) for v in value.split(column.array_separator)]
        if value == "" and conv is not str:
            return None
        return conv(value)

    def _records_with_lines(self, text: str, first_line: int) -> Iterator[tuple[int, str, list[str]]]:
        """(line number, raw text, fields) of each record of ``text``."""
        lines = text.split("\n")
        reader = csv.reader(io.StringIO(text, newline=""), **self._dialect)
        start = 0
        for row in reader:
            end = reader.line_num
            yield first_line + start, "\n".join(lines[start:end]).rstrip("\r\n"), row
            start = end

    def _parse_slowly(self, text: str, info: BlockInfo) -> ParsedBlock:
        """The records of ``text`` one by one, each rejected line with its line number and reason."""
        s = self.schema
        records: list[Any] = []
        invalid: list[tuple[int, InvalidRecord]] = []
        header_due = info.at_file_start and (s.use_header or s.skip_first_data_row)
        n = len(self._names)
        for line, raw, row in self._records_with_lines(text, info.first_line):
            if not row or (s.allow_comments and row[0].startswith("#")):
                continue
            if header_due:
                header_due = False
                if s.strict_headers and s.use_header and row != self._names:
                    raise ConnectorError(
                        f"expected the header of {info.path} to name the schema's columns {self._names}; got {row}; "
                        "hint: fix the schema's column order, or drop set_strict_headers()"
                    )
                continue
            if len(row) != n:
                self.reject(
                    invalid,
                    len(records),
                    info,
                    line,
                    raw,
                    f"expected {n} fields ({', '.join(self._names)}) in a CSV record; got {len(row)}",
                    f"check the column separator ({s.column_separator!r}) and the quoting of that line",
                )
                continue
            values = []
            for column, cell in zip(s.columns, row, strict=False):
                try:
                    values.append(self._convert_cell(column, cell))
                except _CONVERSION_ERRORS:
                    position = self._names.index(column.name) + 1
                    self.reject(
                        invalid,
                        len(records),
                        info,
                        line,
                        raw,
                        f"expected a {column.type.name} value in column '{column.name}' (column {position}); "
                        f"got {cell!r}",
                        "fix the value or the column's type in the CsvSchema",
                    )
                    break
            else:
                records.append(self._make(values))
        return records, invalid
