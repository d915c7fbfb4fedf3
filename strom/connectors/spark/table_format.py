"""The TaskManager side of :class:`~strom.connectors.spark.SparkSource`: a table's files cut into splits (one per
Parquet row group or ORC stripe) and read with pyarrow into named rows that carry the file's partition values.

:class:`SparkFilesFormat` is a :class:`~strom.connectors.file_system.bulk_format.BulkFormat`, so the FileSource's
enumerator and reader do the rest: splits handed out as readers ask, positions (rows read) in checkpoints, splits
of a failed reader given back. :class:`SparkFileEnumerator` replaces the FileSource's directory listing by the
file list Spark's catalog gave in the client; it reads the files' footers on the JobManager (in a worker thread).

Each output column is either a column of the files, matched by name as Spark matches them (exactly, else
case-insensitively; a column a file lacks is null, as Spark reads an evolved schema) and cast to the column's
pyarrow type where the file's differs (Spark's INT96 timestamps), or a partition column, whose value the split
carries. Values take the shapes ``collect()`` gives: a map a ``dict``, a struct a named ``Row`` (at any depth); a
timestamp an aware ``datetime`` in UTC (``collect()`` gives Spark's instant as naive local time).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from strom.api.row import row_factory
from strom.connectors.file_system import fs as fsspec_urls
from strom.connectors.file_system.bulk_format import BulkFormat, RecordBatchSplitReader
from strom.connectors.file_system.file_enumerator import FileEnumerator
from strom.connectors.file_system.split import NO_OFFSET, CheckpointedPosition, FileSourceSplit
from strom.connectors.spark.catalog import TableFile
from strom.exceptions import ConnectorError

__all__ = ["SparkFileEnumerator", "SparkFileSplit", "SparkFileSplitReader", "SparkFilesFormat"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SparkFileSplit(FileSourceSplit):
    """A row group (Parquet) or stripe (ORC) of one file of a table, with the file's partition values."""

    partition_values: tuple[Any, ...] = ()


def vanished(url: str, what: str) -> ConnectorError:
    return ConnectorError(
        f"SparkSource: expected the file {url} of {what} to exist, as Spark's catalog listed it when the job was "
        "built; got no such file; hint: the table changed since (INSERT OVERWRITE, compaction, a dropped "
        "partition) — build the source again and rerun the job"
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class SparkFilesFormat(BulkFormat):
    """Reads the ``file_format`` (``parquet`` or ``orc``) files of ``what`` (a table's name, for messages) into
    rows of ``fields``; ``sources[i]`` is field ``i``'s column name in the files, or the index of its value in
    the split's ``partition_values``."""

    what: str
    file_format: str
    fields: tuple[str, ...]
    arrow_types: tuple[pa.DataType, ...]
    sources: tuple[str | int, ...]
    batch_size: int = 2048

    def create_splits(self, fs: Any, fs_path: str, url: str, size: int) -> list[FileSourceSplit]:
        return list(self.create_file_splits(fs, fs_path, url, size, ()))

    def create_file_splits(
        self, fs: Any, fs_path: str, url: str, size: int, partition_values: tuple[Any, ...]
    ) -> list[SparkFileSplit]:
        """The splits of one file: one per non-empty Parquet row group, one per ORC stripe."""
        try:
            with fs.open(fs_path, "rb") as f:
                units = self._units(f)
        except FileNotFoundError:
            raise vanished(url, self.what) from None
        except (pa.ArrowInvalid, OSError) as exc:
            raise ConnectorError(
                f"SparkSource: expected a {self.file_format} file at {url} (of {self.what}); got one pyarrow cannot "
                f"read ({exc}); hint: read the table with SparkSource.from_dataframe(spark.table(name)), which "
                "stages it to Parquet through Spark"
            ) from None
        return [
            SparkFileSplit(
                split_id=f"{url}#{unit}",
                path=url,
                file_size=size,
                row_group=unit,
                row_count=rows,
                position=CheckpointedPosition(offset=NO_OFFSET),
                partition_values=partition_values,
            )
            for unit, rows in units
            if rows != 0
        ]

    def _units(self, f: Any) -> list[tuple[int, int]]:
        if self.file_format == "orc":
            from pyarrow import orc

            return [(i, -1) for i in range(orc.ORCFile(f).nstripes)]
        metadata = pq.ParquetFile(f).metadata
        return [(i, metadata.row_group(i).num_rows) for i in range(metadata.num_row_groups)]

    def create_reader(self, fs: Any, fs_path: str, split: FileSourceSplit) -> SparkFileSplitReader:
        return SparkFileSplitReader(self, fs, fs_path, split)


def nested_converter(arrow_type: pa.DataType) -> Callable[[Any], Any] | None:
    """What turns ``to_pylist(maps_as_pydicts="strict")``'s value of ``arrow_type`` into Spark's shape: a struct
    into a named :class:`~strom.api.row.Row` (as ``collect()`` gives a pyspark ``Row``), inside lists and maps too;
    ``None`` when the value is right as it is."""
    if pa.types.is_struct(arrow_type):
        fields = [arrow_type.field(i) for i in range(arrow_type.num_fields)]
        names = [f.name for f in fields]
        converters = [nested_converter(f.type) or _same for f in fields]
        make = row_factory(names)
        return lambda v: None if v is None else make([c(v[n]) for n, c in zip(names, converters, strict=True)])
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        inner = nested_converter(arrow_type.value_type)
        return None if inner is None else (lambda v: None if v is None else [inner(x) for x in v])
    if pa.types.is_map(arrow_type):
        key, item = nested_converter(arrow_type.key_type), nested_converter(arrow_type.item_type)
        if key is None and item is None:
            return None
        k, i = key or _same, item or _same
        return lambda v: None if v is None else {k(a): i(b) for a, b in v.items()}
    return None


def _same(value: Any) -> Any:
    return value


def _match(names: Sequence[str], wanted: str) -> str | None:
    if wanted in names:
        return wanted
    folded = wanted.casefold()
    return next((n for n in names if n.casefold() == folded), None)


class SparkFileSplitReader(RecordBatchSplitReader):
    """Reads one row group / stripe from the split's position (rows to skip) on."""

    def __init__(self, fmt: SparkFilesFormat, fs: Any, fs_path: str, split: FileSourceSplit) -> None:
        assert split.row_group is not None
        self._fmt = fmt
        self._split = split
        self._partition_values = split.partition_values if isinstance(split, SparkFileSplit) else ()
        try:
            self._file = fs.open(fs_path, "rb")
        except FileNotFoundError:
            raise vanished(split.path, fmt.what) from None
        try:
            self._columns, self._batches = self._open(split.row_group)
        except BaseException:
            self._file.close()
            raise
        self._make = row_factory(list(fmt.fields))
        self._nested = [pa.types.is_nested(t) for t in fmt.arrow_types]
        self._converters = [nested_converter(t) for t in fmt.arrow_types]
        self._rows_read = self._to_skip = split.position.records_after_offset
        self._pending: list[Any] = []

    def _open(self, unit: int) -> tuple[list[str | None], Iterator[pa.RecordBatch]]:
        """The file's name of each output column (``None``: a partition column, or one the file lacks) and the
        unit's record batches."""
        fmt = self._fmt
        if fmt.file_format == "orc":
            from pyarrow import orc

            orc_file = orc.ORCFile(self._file)
            columns = [_match(orc_file.schema.names, s) if isinstance(s, str) else None for s in fmt.sources]
            stripe = orc_file.read_stripe(unit, columns=sorted({c for c in columns if c is not None}))
            return columns, iter(pa.Table.from_batches([stripe]).to_batches(max_chunksize=fmt.batch_size))
        parquet = pq.ParquetFile(self._file)
        columns = [_match(parquet.schema_arrow.names, s) if isinstance(s, str) else None for s in fmt.sources]
        wanted = sorted({c for c in columns if c is not None})
        return columns, parquet.iter_batches(
            batch_size=fmt.batch_size, row_groups=[unit], columns=wanted, use_threads=False
        )

    def _rows(self, batch: pa.RecordBatch) -> list[Any]:
        n = batch.num_rows
        columns: list[Any] = []
        fmt = self._fmt
        for i, (source, column, want) in enumerate(zip(fmt.sources, self._columns, fmt.arrow_types, strict=True)):
            if isinstance(source, int):
                columns.append(repeat(self._partition_values[source], n))
            elif column is None:
                columns.append(repeat(None, n))
            else:
                values = batch.column(column)
                if values.type != want:
                    values = self._cast(values, want, column)
                if not self._nested[i]:
                    columns.append(values.to_pylist())
                    continue
                pylist = values.to_pylist(maps_as_pydicts="strict")
                convert = self._converters[i]
                columns.append(pylist if convert is None else [convert(v) for v in pylist])
        if not columns:
            return [self._make(()) for _ in range(n)]
        return list(map(self._make, zip(*columns, strict=False)))

    def _cast(self, values: pa.Array, want: pa.DataType, column: str) -> pa.Array:
        try:
            return values.cast(want)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise ConnectorError(
                f"SparkSource: expected column '{column}' of {self._fmt.what} as {want} in {self._split}; got "
                f"{values.type}, which does not convert ({exc}); hint: the file does not match the table's schema"
            ) from None

    def current_split(self) -> FileSourceSplit:
        return self._split.with_position(CheckpointedPosition(offset=NO_OFFSET, records_after_offset=self._rows_read))

    def close(self) -> None:
        self._file.close()


@dataclass(frozen=True, slots=True)
class SparkFileEnumerator(FileEnumerator):
    """The splits of the files Spark's catalog listed (instead of listing directories), each file's with its
    partition values; a file that is gone fails the job naming it."""

    files: tuple[TableFile, ...]
    fmt: SparkFilesFormat

    def enumerate_splits(
        self, skip: Collection[str] = (), *, skip_unreadable: bool = False
    ) -> list[tuple[str, list[FileSourceSplit]]]:
        result: list[tuple[str, list[FileSourceSplit]]] = []
        for file in self.files:
            if file.url in skip:
                continue
            fs, fs_path = fsspec_urls.resolve(file.url, self.storage_options, role="table file")
            try:
                size = int(fs.info(fs_path).get("size") or 0)
            except FileNotFoundError:
                raise vanished(file.url, self.fmt.what) from None
            splits = self.fmt.create_file_splits(fs, fs_path, file.url, size, file.partition_values)
            result.append((file.url, list(splits)))
        return result
