"""The ``parquet`` format of the ``filesystem`` table connector (Flink's ``ParquetFileFormatFactory``), on pyarrow.

A table's physical columns (without its partition columns, which live in the directory names) map to Arrow
types: BOOLEAN → bool, TINYINT … BIGINT → int8 … int64, FLOAT/DOUBLE → float32/float64, DECIMAL(p, s) →
decimal128(p, s), CHAR/VARCHAR/STRING → string, BINARY/VARBINARY/BYTES → binary, DATE → date32, TIME → time64[us],
TIMESTAMP(p) → timestamp[ms|us|ns] (by precision), TIMESTAMP_LTZ(p) → timestamp with time zone UTC. Rows are
written column-wise, one Arrow batch per batch of rows the sink gets, and read back a batch at a time into rows
of the SQL types' Python values (a TIMESTAMP_LTZ as a naive ``datetime`` in UTC). Departure from Flink: Flink
writes TIMESTAMP as Parquet's legacy INT96 by default (``parquet.write.int64.timestamp`` = false); strom writes
INT64 timestamps, which every current reader (pyarrow, DuckDB, Spark) reads as timestamps too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from strom.api.row import _create_row
from strom.connectors.file_system.bulk_format import BulkFormat, RecordBatchSplitReader
from strom.connectors.file_system.bulk_writer import BulkWriter, BulkWriterFactory
from strom.connectors.file_system.split import NO_OFFSET, CheckpointedPosition, FileSourceSplit
from strom.exceptions import ConnectorError
from strom.formats.parquet import ParquetColumnarRowInputFormat
from strom.formats.parquet_writer import to_record_batch
from strom.table.connectors.arrow_types import atomic_arrow_type
from strom.table.errors import ValidationException

__all__ = ["TableParquetFormat", "TableParquetWriterFactory", "arrow_schema", "open_row_group"]

_PARTITION = Callable[[str], tuple[Any, ...]]


def arrow_type(data_type: Any) -> pa.DataType:
    """The Arrow type a SQL type is stored as (see the module docstring)."""
    atomic = atomic_arrow_type(data_type)
    if atomic is not None:
        return atomic
    root = data_type.type_root.name
    if root == "TIME_WITHOUT_TIME_ZONE":
        return pa.time64("us")
    if root == "DECIMAL":
        return pa.decimal128(data_type.precision, data_type.scale)
    if root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        precision = data_type.precision
        unit = "ms" if precision <= 3 else "us" if precision <= 6 else "ns"
        return pa.timestamp(unit, tz="UTC" if root == "TIMESTAMP_WITH_LOCAL_TIME_ZONE" else None)
    if root == "ARRAY":
        return pa.list_(arrow_type(data_type.element_type))
    raise ValidationException(
        f"expected a column type the parquet format stores (numbers, strings, bytes, DATE, TIME, TIMESTAMP, "
        f"TIMESTAMP_LTZ, DECIMAL, ARRAY); got {data_type}; hint: CAST the column, or use the 'json' format"
    )


def arrow_schema(names: Sequence[str], types: Sequence[Any]) -> pa.Schema:
    return pa.schema([pa.field(n, arrow_type(t), nullable=True) for n, t in zip(names, types, strict=True)])


class _TableParquetWriter(BulkWriter):
    """One Parquet part file: each batch of rows projected to the file's columns and written as one Arrow batch."""

    def __init__(self, stream: BinaryIO, schema: pa.Schema, indices: tuple[int, ...], compression: str) -> None:
        self.schema = schema
        self.indices = indices
        self._writer = pq.ParquetWriter(stream, schema, compression=compression)

    def add_elements(self, elements: list[Any]) -> None:
        if not elements:
            return
        indices = self.indices
        rows = [tuple([r._values[i] for i in indices]) for r in elements]
        self._writer.write_batch(to_record_batch(rows, self.schema))

    def finish(self) -> None:
        self._writer.close()

    def discard(self) -> None:
        try:
            self._writer.close()
        except Exception:  # a broken stream may refuse the footer; the part is dropped anyway
            return


class TableParquetWriterFactory(BulkWriterFactory):
    """Parquet part files of a table's non-partition columns (``indices`` into the rows)."""

    def __init__(self, schema: pa.Schema, indices: tuple[int, ...], compression: str = "snappy") -> None:
        self.schema = schema
        self.indices = indices
        self.compression = compression

    def create(self, stream: BinaryIO) -> BulkWriter:
        return _TableParquetWriter(stream, self.schema, self.indices, self.compression)


class TableParquetFormat(BulkFormat):
    """Reads a table's Parquet files (one split per row group) into rows of the table's physical columns: the
    file's columns by name, the partition columns from the file's directories (``partition_values``)."""

    def __init__(
        self,
        file_columns: Sequence[str],
        file_types: Sequence[Any],
        layout: Sequence[tuple[bool, int]],
        partition_values: _PARTITION | None,
        prune: Callable[[str], bool] | None = None,
    ) -> None:
        self.inner = ParquetColumnarRowInputFormat(columns=list(file_columns))
        self.file_columns = tuple(file_columns)
        self.utc = tuple(t.type_root.name == "TIMESTAMP_WITH_LOCAL_TIME_ZONE" for t in file_types)
        self.layout = tuple(layout)  # per table column: (from the path?, index into the file or path values)
        self.partition_values = partition_values
        self.prune = prune  # a pushed partition filter: False skips the file

    def create_splits(self, fs: Any, fs_path: str, url: str, size: int) -> list[FileSourceSplit]:
        if self.prune is not None and not self.prune(fs_path):
            return []
        return self.inner.create_splits(fs, fs_path, url, size)

    def create_reader(self, fs: Any, fs_path: str, split: FileSourceSplit) -> _TableParquetReader:
        return _TableParquetReader(self, fs, fs_path, split)


def open_row_group(
    fs: Any, fs_path: str, split: FileSourceSplit, file_columns: Sequence[str], columns: Sequence[str], batch_size: int
) -> tuple[BinaryIO, Any]:
    """The open file and an iterator of the ``columns`` of the split's row group in Arrow batches; a file without
    one of the table's ``file_columns`` is refused naming them."""
    file = fs.open(fs_path, "rb")
    try:
        parquet = pq.ParquetFile(file)
        missing = [c for c in file_columns if parquet.schema_arrow.get_field_index(c) < 0]
        if missing:
            raise ConnectorError(
                f"expected the columns {list(file_columns)} in the Parquet file {split.path}; got "
                f"{parquet.schema_arrow.names} (no {missing}); hint: declare the table's columns as the files "
                "have them"
            )
        batches = parquet.iter_batches(
            batch_size=batch_size, row_groups=[split.row_group], columns=list(columns), use_threads=False
        )
    except BaseException:
        file.close()
        raise
    return file, batches


class _TableParquetReader(RecordBatchSplitReader):
    def __init__(self, fmt: TableParquetFormat, fs: Any, fs_path: str, split: FileSourceSplit) -> None:
        assert split.row_group is not None
        self._split = split
        self._fmt = fmt
        self._parts = fmt.partition_values(fs_path) if fmt.partition_values is not None else ()
        self._file, self._batches = open_row_group(fs, fs_path, split, fmt.file_columns, fmt.file_columns, 2048)
        self._rows_read = split.position.records_after_offset
        self._to_skip = self._rows_read
        self._pending: list[Any] = []

    def _rows(self, batch: pa.RecordBatch) -> list[Any]:
        columns = []
        for column, utc in zip(batch.columns, self._fmt.utc, strict=True):
            values = column.to_pylist()
            if utc:
                values = [None if v is None else v.replace(tzinfo=None) for v in values]
            columns.append(values)
        parts = self._parts
        layout = self._fmt.layout
        if not parts and all(not from_path for from_path, _ in layout):
            return [_create_row(None, list(values)) for values in zip(*columns, strict=True)]
        out = []
        for values in zip(*columns, strict=True):
            out.append(_create_row(None, [parts[i] if from_path else values[i] for from_path, i in layout]))
        return out

    def current_split(self) -> FileSourceSplit:
        return self._split.with_position(CheckpointedPosition(offset=NO_OFFSET, records_after_offset=self._rows_read))

    def close(self) -> None:
        self._file.close()
