"""The ``filesystem`` table connector (Flink's ``FileSystemTableFactory``) over strom's FileSource and FileSink.

``path`` (a file or a directory; any fsspec URL) and ``format`` = ``csv`` or ``json`` (one JSON object per line,
Flink's ``json`` format). The source reads every file once (bounded); the sink writes part files through strom's
exactly-once FileSink (files become visible on checkpoint completion or at the end of a bounded job) and, as
Flink's, accepts inserts only.
"""

from __future__ import annotations

import csv
import datetime
import decimal
import io
import json
from typing import TYPE_CHECKING, Any

from strom.api.row import Row, _create_row
from strom.table.connectors.base import DynamicTableSink, DynamicTableSource, check_options
from strom.table.errors import ValidationException

if TYPE_CHECKING:
    from strom.api.datastream import DataStream
    from strom.api.environment import StreamExecutionEnvironment
    from strom.table.catalog.catalog_manager import CatalogTable
    from strom.table.planner.logical import RowType

__all__ = ["FileSystemTableSink", "FileSystemTableSource"]

_FORMATS = ("csv", "json")
_OPTIONS = {
    "path",
    "format",
    "csv.field-delimiter",
    "csv.ignore-parse-errors",
    "csv.null-literal",
    "json.ignore-parse-errors",
    "sink.rolling-policy.file-size",
    "sink.rolling-policy.rollover-interval",
    "source.monitor-interval",
    "partition.default-name",
}


def _converter(root: str) -> Any:
    if root in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT"):
        return int
    if root in ("FLOAT", "DOUBLE"):
        return float
    if root == "DECIMAL":
        return decimal.Decimal
    if root == "BOOLEAN":
        return lambda s: s.lower() == "true" if isinstance(s, str) else bool(s)
    if root == "DATE":
        return datetime.date.fromisoformat
    if root.startswith("TIMESTAMP"):
        return lambda s: datetime.datetime.fromisoformat(str(s).replace("T", " ").rstrip("Z"))
    return str


class _LineParser:
    def __init__(
        self, fmt: str, names: tuple[str, ...], roots: tuple[str, ...], delimiter: str, null: str | None
    ) -> None:
        self.fmt = fmt
        self.names = names
        self.converters = [_converter(r) for r in roots]
        self.delimiter = delimiter
        self.null = null

    def __call__(self, line: str) -> list[Row]:
        if not line.strip():
            return []
        if self.fmt == "json":
            obj = json.loads(line)
            raw = [obj.get(n) for n in self.names]
        else:
            raw = next(csv.reader([line], delimiter=self.delimiter))
            raw = [None if (v == "" or v == self.null) else v for v in raw]
            raw += [None] * (len(self.names) - len(raw))
        values = [None if v is None else c(v) for v, c in zip(raw, self.converters, strict=False)]
        return [_create_row(None, values)]


class _LineFormatter:
    def __init__(self, fmt: str, names: tuple[str, ...], delimiter: str) -> None:
        self.fmt = fmt
        self.names = names
        self.delimiter = delimiter

    def __call__(self, row: Row) -> str:
        if self.fmt == "json":
            return json.dumps(
                dict(zip(self.names, [_jsonable(v) for v in row._values], strict=True)), separators=(",", ":")
            )
        out = io.StringIO()
        csv.writer(out, delimiter=self.delimiter, lineterminator="").writerow(
            ["" if v is None else _text(v) for v in row._values]
        )
        return out.getvalue()


def _jsonable(value: Any) -> Any:
    if isinstance(value, decimal.Decimal | datetime.date | datetime.time | datetime.datetime):
        return str(value)
    return value


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _format(name: str, table: CatalogTable) -> str:
    fmt = table.options.get("format")
    if fmt not in _FORMATS:
        raise ValidationException(
            f"filesystem table '{name}': expected 'format' = {' or '.join(repr(f) for f in _FORMATS)}; got {fmt!r}"
        )
    if "path" not in table.options:
        raise ValidationException(f"filesystem table '{name}': the required option 'path' is missing")
    check_options(name, "filesystem", table.options, _OPTIONS)
    return fmt


class FileSystemTableSource(DynamicTableSource):
    def __init__(self, path: str, fmt: str, delimiter: str, null: str | None) -> None:
        self.path, self.fmt, self.delimiter, self.null = path, fmt, delimiter, null

    @classmethod
    def create(cls, name: str, table: CatalogTable, row_type: RowType) -> FileSystemTableSource:
        fmt = _format(name, table)
        options = table.options
        return cls(options["path"], fmt, options.get("csv.field-delimiter", ","), options.get("csv.null-literal"))

    def create_stream(self, env: StreamExecutionEnvironment, row_type: RowType) -> DataStream[Any]:
        roots = tuple(t.type_root.name for t in row_type.types)
        parser = _LineParser(self.fmt, row_type.names, roots, self.delimiter, self.null)
        return env.read_text_file(self.path).flat_map(parser).name(f"filesystem: {self.path}")


class FileSystemTableSink(DynamicTableSink):
    accepts_updates = False

    def __init__(self, path: str, fmt: str, delimiter: str) -> None:
        self.path, self.fmt, self.delimiter = path, fmt, delimiter

    @classmethod
    def create(cls, name: str, table: CatalogTable, row_type: RowType) -> FileSystemTableSink:
        fmt = _format(name, table)
        return cls(table.options["path"], fmt, table.options.get("csv.field-delimiter", ","))

    def consume(self, stream: DataStream[Any], row_type: RowType) -> None:
        from strom.connectors.file_system.encoders import SimpleStringEncoder
        from strom.connectors.file_system.sink import FileSink

        encoder = SimpleStringEncoder(formatter=_LineFormatter(self.fmt, row_type.names, self.delimiter))
        stream.sink_to(FileSink.for_row_format(self.path, encoder).build()).name("Sink: filesystem")
