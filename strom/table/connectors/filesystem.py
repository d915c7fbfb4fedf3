"""The ``filesystem`` table connector (Flink's ``FileSystemTableFactory``) over strom's FileSource and FileSink.

``path`` (a file or a directory; any fsspec URL) and ``format`` = ``csv``, ``json`` (one JSON object per line,
Flink's ``json`` format) or ``parquet`` (:mod:`.parquet_format`). A table ``PARTITIONED BY (dt, hr)`` keeps its
rows in Hive-style directories ``dt=…/hr=…`` (:mod:`.partition_path`); the partition columns are not written
into the files. The source reads every file once (bounded) or, with ``source.monitor-interval``, lists the path
again at that interval and reads the files that appeared (unbounded); files and directories whose name starts
with ``.`` or ``_`` (in-progress parts, ``_SUCCESS``) are skipped. The sink writes part files through strom's
exactly-once FileSink (files become visible on checkpoint completion or at the end of a bounded job), rolls them
by ``sink.rolling-policy.file-size`` / ``.rollover-interval`` / ``.inactivity-interval`` checked every
``.check-interval`` (row formats; bulk formats roll at every checkpoint, as Flink's), commits partitions with
``sink.partition-commit.*`` (:mod:`.partition_commit`) and, as Flink's, accepts inserts only.
"""

from __future__ import annotations

import base64
import copy
import csv
import datetime
import decimal
import io
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from strom.api.row import Row, _create_row
from strom.config_units import millis, parse_duration, parse_memory_size
from strom.connectors.file_system.bulk_format import BulkFormat
from strom.connectors.file_system.file_enumerator import whole_file_split
from strom.connectors.file_system.split import NO_OFFSET, CheckpointedPosition, FileSourceSplit
from strom.table.connectors.abilities import SupportsOverwrite
from strom.table.connectors.base import DynamicTableSink, DynamicTableSource, check_options
from strom.table.connectors.partition_path import DEFAULT_PARTITION_NAME, PartitionBucketAssigner, PartitionValueParser
from strom.table.errors import ValidationException

if TYPE_CHECKING:
    from strom.api.datastream import DataStream
    from strom.api.environment import StreamExecutionEnvironment
    from strom.connectors.file_system.sink import FileSink
    from strom.table.catalog.catalog_manager import CatalogTable
    from strom.table.connectors.partition_commit import PartitionCommitOptions
    from strom.table.planner.logical import RowType

__all__ = ["FileSystemTableSink", "FileSystemTableSource"]

_FORMATS = ("csv", "json", "parquet")
_OPTIONS = {
    "path",
    "format",
    "csv.field-delimiter",
    "csv.ignore-parse-errors",
    "csv.null-literal",
    "json.ignore-parse-errors",
    "parquet.compression",
    "sink.rolling-policy.file-size",
    "sink.rolling-policy.rollover-interval",
    "sink.rolling-policy.inactivity-interval",
    "sink.rolling-policy.check-interval",
    "sink.partition-commit.trigger",
    "sink.partition-commit.delay",
    "sink.partition-commit.watermark-time-zone",
    "sink.partition-commit.policy.kind",
    "sink.partition-commit.success-file.name",
    "partition.time-extractor.kind",
    "partition.time-extractor.timestamp-pattern",
    "partition.time-extractor.timestamp-formatter",
    "sink.parallelism",
    "source.monitor-interval",
    "partition.default-name",
}


def _converter(data_type: Any) -> Any:
    root = data_type.type_root.name
    if root in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT"):
        return int
    if root in ("FLOAT", "DOUBLE"):
        return float
    if root == "DECIMAL":  # the column's scale: Flink writes 1.50 as 1.5
        exponent = decimal.Decimal(1).scaleb(-data_type.scale)
        return lambda v: decimal.Decimal(str(v)).quantize(exponent)
    if root == "BOOLEAN":
        return lambda s: s.lower() == "true" if isinstance(s, str) else bool(s)
    if root == "DATE":
        return datetime.date.fromisoformat
    if root.startswith("TIMESTAMP"):
        return lambda s: datetime.datetime.fromisoformat(str(s).replace("T", " ").rstrip("Z"))
    if root in ("BINARY", "VARBINARY"):
        return base64.b64decode
    return str


class _LineParser:
    def __init__(
        self, fmt: str, names: tuple[str, ...], types: tuple[Any, ...], delimiter: str, null: str | None
    ) -> None:
        self.fmt = fmt
        self.names = names
        self.converters = [_converter(t) for t in types]
        self.delimiter = delimiter
        self.null = null

    def values(self, line: str) -> list[Any] | None:
        """The file columns' values of one line (``None`` for a blank line)."""
        if not line.strip():
            return None
        if self.fmt == "json":
            obj = json.loads(line, parse_float=decimal.Decimal)  # exact DECIMALs
            raw = [obj.get(n) for n in self.names]
        else:
            raw = next(csv.reader([line], delimiter=self.delimiter))
            raw = [None if (v == "" or v == self.null) else v for v in raw]
            raw += [None] * (len(self.names) - len(raw))
        return [None if v is None else c(v) for v, c in zip(raw, self.converters, strict=False)]


class _LineFormatter:
    """A row's file columns (``indices``: all but the partition columns) as one line, each value written as Flink's
    ``csv`` / ``json`` formats write it (checked against Flink 2.3: ``tests/data/flink_sql/fs/``). One writer per
    column, chosen by its type up front."""

    def __init__(
        self, fmt: str, names: tuple[str, ...], delimiter: str, indices: tuple[int, ...], types: tuple[Any, ...]
    ) -> None:
        self.fmt = fmt
        self.names = names
        self.delimiter = delimiter
        self.indices = indices
        if fmt == "json":
            keys = [json.dumps(n, ensure_ascii=False) + ":" for n in names]
            self.writers = tuple(_json_writer(t) for t in types)
            self.keys = tuple(keys)
        else:
            quote = re.compile('[\\x00-\\x20"' + re.escape(delimiter) + "]").search
            self.writers = tuple(_csv_writer(t, quote) for t in types)

    def __call__(self, row: Row) -> str:
        values = row._values
        if len(values) != len(self.indices):  # partition columns stay out of the files
            values = [values[i] for i in self.indices]
        if self.fmt == "json":
            return (
                "{"
                + ",".join(
                    k + ("null" if v is None else w(v)) for k, w, v in zip(self.keys, self.writers, values, strict=True)
                )
                + "}"
            )
        return self.delimiter.join(["" if v is None else w(v) for w, v in zip(self.writers, values, strict=True)])


def _timestamp_text(value: datetime.datetime) -> str:
    """``2024-01-01 11:00:00.123`` (Flink's SQL timestamp text: the fraction without trailing zeros)."""
    return str(value).rstrip("0") if value.microsecond else str(value)


def _decimal_text(value: decimal.Decimal) -> str:
    """Java's ``BigDecimal.stripTrailingZeros().toString()``, as Flink's formats write it: ``1.5``, ``1E+2``."""
    return str(value.normalize()) if value else "0"


def _sql_text(value: Any) -> str:
    """A value's text in Flink's csv and json formats: ``true``, a DECIMAL without trailing zeros (``1.5``,
    ``1E+2``), a TIMESTAMP as ``2024-01-01 11:00:00.123``, bytes in base64."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, decimal.Decimal):
        return _decimal_text(value)
    if isinstance(value, datetime.datetime):
        return _timestamp_text(value)
    if isinstance(value, datetime.time):
        return str(value).rstrip("0") if value.microsecond else str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return str(value)


def _boolean_text(value: Any) -> str:
    return "true" if value else "false"


def _csv_writer(data_type: Any, quote: Any) -> Any:
    """The text of one column's non-NULL value in a csv line, quoted as Flink's (Jackson's) CSV writer quotes: a
    field with the delimiter, a quote or a character up to the space."""
    root = data_type.type_root.name
    if root in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT"):
        return str
    if root == "BOOLEAN":
        return _boolean_text
    if root == "DECIMAL":
        return _decimal_text
    ltz = root == "TIMESTAMP_WITH_LOCAL_TIME_ZONE"  # Flink writes a TIMESTAMP_LTZ with a Z

    def field(value: Any) -> str:
        text = _sql_text(value) + "Z" if ltz else _sql_text(value)
        return '"' + text.replace('"', '""') + '"' if quote(text) else text

    return field


def _json_writer(data_type: Any) -> Any:
    """The JSON text of one column's non-NULL value."""
    root = data_type.type_root.name
    if root in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT"):
        return str
    if root in ("CHAR", "VARCHAR"):
        return _json_string
    if root == "BOOLEAN":
        return _boolean_text
    if root == "DECIMAL":
        return _decimal_text
    if root == "TIMESTAMP_WITH_LOCAL_TIME_ZONE":
        return lambda v: '"' + _timestamp_text(v) + 'Z"'
    if root.startswith("TIMESTAMP"):
        return lambda v: '"' + _timestamp_text(v) + '"'
    return _json_value


_json_string = json.encoder.encode_basestring  # the C encoder when there is one


def _json_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, decimal.Decimal):
        return _sql_text(value)
    if isinstance(value, bytes):
        return json.dumps(base64.b64encode(value).decode("ascii"))
    if isinstance(value, list | tuple):
        return "[" + ",".join(_json_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(str(k)) + ":" + _json_value(v) for k, v in value.items()) + "}"
    return json.dumps(_sql_text(value), ensure_ascii=False)


def _millis(name: str, option: str, text: str) -> int:
    try:
        return millis(parse_duration(text))
    except ValueError as exc:
        raise ValidationException(
            f"filesystem table '{name}': expected a duration for '{option}' (e.g. '30 min', '10 s'); got {text!r} "
            f"({exc})"
        ) from None


def _bytes(name: str, option: str, text: str) -> int:
    try:
        return parse_memory_size(text)
    except ValueError as exc:
        raise ValidationException(
            f"filesystem table '{name}': expected a size for '{option}' (e.g. '128 mb'); got {text!r} ({exc})"
        ) from None


@dataclass(frozen=True, slots=True)
class _Layout:
    """Where a table's physical columns live: the file columns (all but the partition columns) and the
    partition columns (in the directory names)."""

    file_names: tuple[str, ...]
    file_types: tuple[Any, ...]
    file_indices: tuple[int, ...]
    partition_names: tuple[str, ...]
    partition_indices: tuple[int, ...]
    #: per table column: (from the path?, index into the file's or the path's values)
    columns: tuple[tuple[bool, int], ...]

    @staticmethod
    def of(name: str, row_type: RowType, partition_keys: tuple[str, ...]) -> _Layout:
        lowered = [n.lower() for n in row_type.names]
        for key in partition_keys:
            if key.lower() not in lowered:
                raise ValidationException(
                    f"filesystem table '{name}': expected the partition column '{key}' among the physical columns "
                    f"{list(row_type.names)}; got none of that name; hint: PARTITIONED BY names declared columns"
                )
        keys = [k.lower() for k in partition_keys]
        part_index = {k: lowered.index(k) for k in keys}
        file_indices = tuple(i for i, n in enumerate(lowered) if n not in keys)
        columns = tuple(
            (True, keys.index(n)) if n in keys else (False, file_indices.index(i)) for i, n in enumerate(lowered)
        )
        return _Layout(
            tuple(row_type.names[i] for i in file_indices),
            tuple(row_type.types[i] for i in file_indices),
            file_indices,
            tuple(row_type.names[part_index[k]] for k in keys),
            tuple(part_index[k] for k in keys),
            columns,
        )

    def partition_parser(self, types: tuple[Any, ...], default_name: str) -> PartitionValueParser | None:
        if not self.partition_names:
            return None
        roots = [types[i].type_root.name for i in self.partition_indices]
        return PartitionValueParser(self.partition_names, roots, default_name)


class _PartitionPruner:
    """Whether a file's partition passes the pushed partition filter (a predicate over a row of the table's
    columns, of which only the partition columns are set)."""

    def __init__(self, parser: PartitionValueParser, indices: tuple[int, ...], width: int, accept: Any) -> None:
        self.parser = parser
        self.indices = indices
        self.width = width
        self.accept = accept

    def __call__(self, fs_path: str) -> bool:
        values: list[Any] = [None] * self.width
        for i, v in zip(self.indices, self.parser(fs_path), strict=True):
            values[i] = v
        return bool(self.accept(_create_row(None, values)))


class _LineFileFormat(BulkFormat):
    """csv / json files as a bulk format of the FileSource: one split per file, read line by line; the position
    counts the lines read; rows carry the partition values of the file's directories."""

    def __init__(
        self,
        parser: _LineParser,
        layout: _Layout,
        partitions: PartitionValueParser | None,
        prune: _PartitionPruner | None = None,
    ) -> None:
        self.parser = parser
        self.layout = layout
        self.partitions = partitions
        self.prune = prune

    def create_splits(self, fs: Any, fs_path: str, url: str, size: int) -> list[FileSourceSplit]:
        if self.prune is not None and not self.prune(fs_path):
            return []
        return whole_file_split(fs, fs_path, url, size)

    def create_reader(self, fs: Any, fs_path: str, split: FileSourceSplit) -> _LineSplitReader:
        return _LineSplitReader(self, fs, fs_path, split)


class _LineSplitReader:
    def __init__(self, fmt: _LineFileFormat, fs: Any, fs_path: str, split: FileSourceSplit) -> None:
        self.fmt = fmt
        self.split = split
        self.parts = fmt.partitions(fs_path) if fmt.partitions is not None else ()
        self.file = fs.open(fs_path, "rb")
        self.lines = io.TextIOWrapper(self.file, encoding="utf-8", newline="")
        self.read = split.position.records_after_offset
        for _ in range(self.read):
            if not self.lines.readline():
                break

    def read_batch(self, limit: int) -> list[Any] | None:
        rows: list[Any] = []
        parse = self.fmt.parser.values
        columns = self.fmt.layout.columns
        plain = not self.parts
        while len(rows) < limit:
            line = self.lines.readline()
            if not line:
                return rows or None
            self.read += 1
            values = parse(line.rstrip("\r\n"))
            if values is None:
                continue
            if plain:
                rows.append(_create_row(None, values))
            else:
                parts = self.parts
                rows.append(_create_row(None, [parts[i] if p else values[i] for p, i in columns]))
        return rows

    def current_split(self) -> FileSourceSplit:
        return self.split.with_position(CheckpointedPosition(offset=NO_OFFSET, records_after_offset=self.read))

    def close(self) -> None:
        self.file.close()


def _format(name: str, table: CatalogTable) -> str:
    fmt = table.options.get("format")
    if fmt not in _FORMATS:
        raise ValidationException(
            f"filesystem table '{name}': expected 'format' = {' or '.join(repr(f) for f in _FORMATS)}; got {fmt!r}"
        )
    if "path" not in table.options:
        raise ValidationException(f"filesystem table '{name}': the required option 'path' is missing")
    check_options(name, "filesystem", table.options, _OPTIONS)
    kind = table.options.get("partition.time-extractor.kind", "default")
    if kind != "default":
        raise ValidationException(
            f"filesystem table '{name}': expected 'partition.time-extractor.kind' = 'default'; got {kind!r}; "
            "hint: a custom extractor class is Java; use 'partition.time-extractor.timestamp-pattern'"
        )
    return fmt


class FileSystemTableSource(DynamicTableSource):
    def __init__(self, name: str, options: dict[str, str], fmt: str, layout: _Layout) -> None:
        self.name = name
        self.path = options["path"]
        self.options = options
        self.fmt = fmt
        self.layout = layout
        monitor = options.get("source.monitor-interval")
        self.monitor_ms = _millis(name, "source.monitor-interval", monitor) if monitor else None
        self.bounded = self.monitor_ms is None
        self.partition_indices = layout.partition_indices
        self.partition_filter: Any = None

    def with_partition_filter(self, accept: Any) -> FileSystemTableSource:
        """This source, skipping the files of partitions ``accept`` rejects (:mod:`..planner.partition_pushdown`)."""
        pruned = copy.copy(self)
        pruned.partition_filter = accept
        return pruned

    @classmethod
    def create(cls, name: str, table: CatalogTable, row_type: RowType) -> FileSystemTableSource:
        fmt = _format(name, table)
        return cls(name, table.options, fmt, _Layout.of(name, row_type, table.partition_keys))

    def _bulk_format(self, row_type: RowType) -> BulkFormat:
        layout = self.layout
        default_name = self.options.get("partition.default-name", DEFAULT_PARTITION_NAME)
        partitions = layout.partition_parser(row_type.types, default_name)
        prune = None
        if partitions is not None and self.partition_filter is not None:
            prune = _PartitionPruner(partitions, layout.partition_indices, len(row_type), self.partition_filter)
        if self.fmt == "parquet":
            from strom.table.connectors.parquet_format import TableParquetFormat

            return TableParquetFormat(layout.file_names, layout.file_types, layout.columns, partitions, prune)
        delimiter = self.options.get("csv.field-delimiter", ",")
        null = self.options.get("csv.null-literal")
        parser = _LineParser(self.fmt, layout.file_names, layout.file_types, delimiter, null)
        return _LineFileFormat(parser, layout, partitions, prune)

    def create_stream(self, env: StreamExecutionEnvironment, row_type: RowType) -> DataStream[Any]:
        from strom.api.eventtime import WatermarkStrategy
        from strom.connectors.file_system.source import FileSource

        builder = FileSource.for_bulk_file_format(self._bulk_format(row_type), self.path)
        if self.monitor_ms is not None:
            builder = builder.monitor_continuously(self.monitor_ms)
        return env.from_source(builder.build(), WatermarkStrategy.no_watermarks(), f"filesystem: {self.path}")


class FileSystemTableSink(DynamicTableSink, SupportsOverwrite):
    accepts_updates = False
    overwrite = False  # INSERT OVERWRITE (BATCH): the parts replace the table's or the written partitions' files

    def apply_overwrite(self, overwrite: bool) -> None:
        self.overwrite = overwrite

    def __init__(self, name: str, options: dict[str, str], fmt: str, layout: _Layout) -> None:
        self.name = name
        self.path = options["path"]
        self.options = options
        self.fmt = fmt
        self.layout = layout
        get = options.get
        self.file_size = _bytes(name, "sink.rolling-policy.file-size", get("sink.rolling-policy.file-size", "128 mb"))
        self.rollover_ms = _millis(
            name, "sink.rolling-policy.rollover-interval", get("sink.rolling-policy.rollover-interval", "30 min")
        )
        self.inactivity_ms = _millis(
            name, "sink.rolling-policy.inactivity-interval", get("sink.rolling-policy.inactivity-interval", "30 min")
        )
        self.check_ms = _millis(
            name, "sink.rolling-policy.check-interval", get("sink.rolling-policy.check-interval", "1 min")
        )
        self.parallelism = int(options["sink.parallelism"]) if "sink.parallelism" in options else None
        self.commit = _commit_options(name, options, layout) if "sink.partition-commit.policy.kind" in options else None

    @classmethod
    def create(cls, name: str, table: CatalogTable, row_type: RowType) -> FileSystemTableSink:
        fmt = _format(name, table)
        return cls(name, table.options, fmt, _Layout.of(name, row_type, table.partition_keys))

    def _file_sink(self) -> FileSink:
        from strom.connectors.file_system.bucket_assigners import BasePathBucketAssigner
        from strom.connectors.file_system.encoders import SimpleStringEncoder
        from strom.connectors.file_system.rolling_policy import DefaultRollingPolicy, OnCheckpointRollingPolicy
        from strom.connectors.file_system.sink import FileSink

        layout = self.layout
        default_name = self.options.get("partition.default-name", DEFAULT_PARTITION_NAME)
        assigner = (
            PartitionBucketAssigner(layout.partition_names, layout.partition_indices, default_name)
            if layout.partition_names
            else BasePathBucketAssigner()
        )
        if self.fmt == "parquet":
            from strom.table.connectors.parquet_format import TableParquetWriterFactory, arrow_schema

            schema = arrow_schema(layout.file_names, layout.file_types)
            compression = self.options.get("parquet.compression", "snappy").lower()
            factory = TableParquetWriterFactory(schema, layout.file_indices, compression)
            bulk: FileSink = (
                FileSink.for_bulk_format(self.path, factory)
                .with_bucket_assigner(assigner)
                .with_rolling_policy(OnCheckpointRollingPolicy(max_part_size_bytes=self.file_size))
                .with_bucket_check_interval(self.check_ms)
                .build()
            )
            return bulk
        delimiter = self.options.get("csv.field-delimiter", ",")
        formatter = _LineFormatter(self.fmt, layout.file_names, delimiter, layout.file_indices, layout.file_types)
        policy: Any = (
            OnCheckpointRollingPolicy(max_part_size_bytes=self.file_size)
            if self.commit is not None
            else DefaultRollingPolicy(
                max_part_size_bytes=self.file_size,
                rollover_interval_ms=self.rollover_ms,
                inactivity_interval_ms=self.inactivity_ms,
            )
        )
        rows: FileSink = (
            FileSink.for_row_format(self.path, SimpleStringEncoder(formatter=formatter))
            .with_bucket_assigner(assigner)
            .with_rolling_policy(policy)
            .with_bucket_check_interval(self.check_ms)
            .build()
        )
        return rows

    def consume(self, stream: DataStream[Any], row_type: RowType) -> None:
        files = self._file_sink()
        if self.overwrite:
            from strom.table.connectors.overwrite_commit import OverwriteFileSink

            sink = stream.sink_to(OverwriteFileSink(files, bool(self.layout.partition_names))).name("Sink: filesystem")
        elif self.commit is not None:
            from strom.table.connectors.partition_commit import PartitionCommitSink, add_partition_commit_sink

            sink = add_partition_commit_sink(stream, PartitionCommitSink(files, self.commit))
        else:
            sink = stream.sink_to(files).name("Sink: filesystem")
        if self.parallelism is not None:
            sink.set_parallelism(self.parallelism)


def _commit_options(name: str, options: dict[str, str], layout: _Layout) -> PartitionCommitOptions:
    from strom.table.connectors.partition_commit import PartitionCommitOptions, PartitionTimeExtractor

    if not layout.partition_names:
        raise ValidationException(
            f"filesystem table '{name}': expected a partitioned table for 'sink.partition-commit.policy.kind'; got "
            "no PARTITIONED BY; hint: declare PARTITIONED BY (dt, ...) or drop the partition commit options"
        )
    kinds = [k.strip().lower() for k in options["sink.partition-commit.policy.kind"].split(",") if k.strip()]
    if kinds != ["success-file"]:
        raise ValidationException(
            f"filesystem table '{name}': expected 'sink.partition-commit.policy.kind' = 'success-file'; got "
            f"{options['sink.partition-commit.policy.kind']!r}; hint: 'metastore' needs a Hive metastore and "
            "'custom' a Java class, neither of which strom has"
        )
    trigger = options.get("sink.partition-commit.trigger", "process-time")
    if trigger not in ("process-time", "partition-time"):
        raise ValidationException(
            f"filesystem table '{name}': expected 'sink.partition-commit.trigger' = 'process-time' or "
            f"'partition-time'; got {trigger!r}"
        )
    zone = options.get("sink.partition-commit.watermark-time-zone", "UTC")
    extractor = PartitionTimeExtractor(
        layout.partition_names,
        options.get("partition.time-extractor.timestamp-pattern"),
        options.get("partition.time-extractor.timestamp-formatter"),
    )
    return PartitionCommitOptions(
        trigger=trigger,
        delay_ms=_millis(name, "sink.partition-commit.delay", options.get("sink.partition-commit.delay", "0 s")),
        success_file_name=options.get("sink.partition-commit.success-file.name", "_SUCCESS"),
        extractor=extractor,
        time_zone=zone,
    )
