"""A Parquet table scan that reads Arrow record batches (Flink's ``ParquetColumnarRowInputFormat`` with its
``VectorizedColumnBatch`` es, before the per-row ``ColumnarRowData`` view): one record per Arrow batch of a row
group, its columns named ``f0 … fN`` in the table's order and cast to the table's Arrow types. Only the columns the
plan reads are read (Flink's projection push-down); the others are all-NULL columns of their type.

>>> import pyarrow as pa
>>> ArrowParquetFormat(inner=None, file_columns=("a",), schema=pa.schema([("f0", pa.int64())])).schema.names
['f0']
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from strom.connectors.file_system.bulk_format import BulkFormat
from strom.connectors.file_system.split import NO_OFFSET, CheckpointedPosition, FileSourceSplit
from strom.table.connectors.parquet_format import open_row_group

__all__ = ["ArrowParquetFormat"]

BATCH_ROWS = 65_536


class ArrowParquetFormat(BulkFormat):
    """Splits as the table's parquet format makes them (one per row group, ``inner``); records are Arrow batches
    of ``file_columns`` renamed and cast to ``schema``."""

    def __init__(
        self, inner: Any, file_columns: tuple[str, ...], schema: pa.Schema, read: tuple[bool, ...] | None = None
    ) -> None:
        self.inner = inner
        self.file_columns = file_columns
        self.schema = schema
        self.read = read if read is not None else (True,) * len(file_columns)

    def create_splits(self, fs: Any, fs_path: str, url: str, size: int) -> list[FileSourceSplit]:
        splits: list[FileSourceSplit] = self.inner.create_splits(fs, fs_path, url, size)
        return splits

    def create_reader(self, fs: Any, fs_path: str, split: FileSourceSplit) -> ArrowBatchReader:
        return ArrowBatchReader(self, fs, fs_path, split)


class ArrowBatchReader:
    """The Arrow batches of one row group, one per ``read_batch``; its position counts rows."""

    def __init__(self, fmt: ArrowParquetFormat, fs: Any, fs_path: str, split: FileSourceSplit) -> None:
        assert split.row_group is not None
        self._split = split
        self._schema = fmt.schema
        self._read = fmt.read
        columns = [c for c, r in zip(fmt.file_columns, fmt.read, strict=True) if r]
        self._file, self._batches = open_row_group(fs, fs_path, split, fmt.file_columns, columns, BATCH_ROWS)
        self._rows_read = split.position.records_after_offset
        self._to_skip = self._rows_read

    def read_batch(self, limit: int) -> list[Any] | None:
        while True:
            batch = next(self._batches, None)
            if batch is None:
                return None
            if self._to_skip >= batch.num_rows:
                self._to_skip -= batch.num_rows
                continue
            if self._to_skip:
                batch = batch.slice(self._to_skip)
                self._to_skip = 0
            self._rows_read += batch.num_rows
            return [self._conformed(batch)]

    def _conformed(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """The batch in the table's schema: the read columns cast to their types, the others all NULL."""
        read = iter(batch.columns)
        columns = []
        for field, wanted in zip(self._schema, self._read, strict=True):
            if not wanted:
                columns.append(pa.nulls(batch.num_rows, field.type))
                continue
            column = next(read)
            columns.append(column if column.type == field.type else column.cast(field.type))
        return pa.RecordBatch.from_arrays(columns, schema=self._schema)

    def current_split(self) -> FileSourceSplit:
        return self._split.with_position(CheckpointedPosition(offset=NO_OFFSET, records_after_offset=self._rows_read))

    def close(self) -> None:
        self._file.close()
