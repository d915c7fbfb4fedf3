"""Parquet files read with pyarrow (PyFlink's ``ParquetColumnarRowInputFormat``): one split per row group,
columns projected, record batches turned into named :class:`~strom.api.row.Row` s in bulk.

    >>> fmt = ParquetColumnarRowInputFormat(columns=["id", "name"])       # all columns when None
    >>> source = FileSource.for_bulk_file_format(fmt, "s3://bucket/events/").build()

A batch becomes rows with one ``to_pylist()`` per column and one ``row_factory`` call per row over
``zip(*columns)``. A file that lacks a projected column, or (with ``schema``, a ``pyarrow.Schema`` or
``{name: pyarrow type}``) has a column of another type, raises :class:`~strom.exceptions.ConnectorError`
naming the file, row group and column.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from strom.api.row import row_factory
from strom.connectors.file_system.bulk_format import BulkFormat, RecordBatchSplitReader
from strom.connectors.file_system.split import NO_OFFSET, CheckpointedPosition, FileSourceSplit
from strom.exceptions import ConnectorError
from strom.formats.parquet_writer import ParquetBulkWriters

__all__ = ["ParquetBulkWriters", "ParquetColumnarRowInputFormat"]


class ParquetColumnarRowInputFormat(BulkFormat):
    """Reads Parquet row groups into named rows; ``batch_size`` rows are decoded at a time."""

    def __init__(
        self,
        columns: Sequence[str] | None = None,
        *,
        schema: pa.Schema | Mapping[str, Any] | None = None,
        batch_size: int = 2048,
    ) -> None:
        arrow_schema: pa.Schema | None = None
        if schema is not None:
            arrow_schema = schema if isinstance(schema, pa.Schema) else pa.schema(list(dict(schema).items()))
        self.schema = arrow_schema
        if columns is None and arrow_schema is not None:
            columns = arrow_schema.names
        self.columns: list[str] | None = list(columns) if columns is not None else None
        if batch_size <= 0:
            raise ValueError(f"expected a positive batch_size; got {batch_size}")
        self.batch_size = batch_size

    def create_splits(self, fs: Any, fs_path: str, url: str, size: int) -> list[FileSourceSplit]:
        with fs.open(fs_path, "rb") as f:
            try:
                metadata = pq.ParquetFile(f).metadata
            except (pa.ArrowInvalid, OSError) as exc:
                raise ConnectorError(
                    f"expected a Parquet file at {url}; got one pyarrow cannot read ({exc}); "
                    "hint: keep other files out of the source's directories"
                ) from None
        return [
            FileSourceSplit(
                split_id=f"{url}#{group}",
                path=url,
                file_size=size,
                row_group=group,
                row_count=metadata.row_group(group).num_rows,
                position=CheckpointedPosition(offset=NO_OFFSET),
            )
            for group in range(metadata.num_row_groups)
            if metadata.row_group(group).num_rows > 0
        ]

    def create_reader(self, fs: Any, fs_path: str, split: FileSourceSplit) -> ParquetRowGroupReader:
        return ParquetRowGroupReader(self, fs, fs_path, split)


class ParquetRowGroupReader(RecordBatchSplitReader):
    """Reads one row group from the split's position (rows to skip) on."""

    def __init__(self, fmt: ParquetColumnarRowInputFormat, fs: Any, fs_path: str, split: FileSourceSplit) -> None:
        assert split.row_group is not None
        self._split = split
        self._file = fs.open(fs_path, "rb")
        try:
            parquet = pq.ParquetFile(self._file)
            columns = self._check_schema(fmt, parquet.schema_arrow)
            self._rows_read = split.position.records_after_offset
            self._batches = parquet.iter_batches(
                batch_size=fmt.batch_size, row_groups=[split.row_group], columns=columns, use_threads=False
            )
        except BaseException:
            self._file.close()
            raise
        self._make = row_factory(columns)
        self._pending: list[Any] = []
        self._to_skip = self._rows_read

    def _check_schema(self, fmt: ParquetColumnarRowInputFormat, schema: pa.Schema) -> list[str]:
        where = f"{self._split.path} row group {self._split.row_group}"
        columns = fmt.columns if fmt.columns is not None else schema.names
        for name in columns:
            index = schema.get_field_index(name)
            if index < 0:
                raise ConnectorError(
                    f"expected a column '{name}' in {where}; got the columns {schema.names}; hint: read files of "
                    "one schema, or project only columns every file has"
                )
            if fmt.schema is not None and name in fmt.schema.names:
                want, got = fmt.schema.field(name).type, schema.field(index).type
                if want != got:
                    raise ConnectorError(
                        f"expected column '{name}' of type {want} in {where}; got {got}; hint: read files of one "
                        "schema, or declare the type the files have"
                    )
        return list(columns)

    def _rows(self, batch: pa.RecordBatch) -> list[Any]:
        columns = [column.to_pylist() for column in batch.columns]
        return list(map(self._make, zip(*columns, strict=False)))

    def current_split(self) -> FileSourceSplit:
        return self._split.with_position(CheckpointedPosition(offset=NO_OFFSET, records_after_offset=self._rows_read))

    def close(self) -> None:
        self._file.close()
