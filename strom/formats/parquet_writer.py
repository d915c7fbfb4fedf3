"""Parquet part files for ``FileSink.for_bulk_format`` (PyFlink's ``ParquetBulkWriters``).

    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("score", pa.float64())])
    sink = FileSink.for_bulk_format("s3://bucket/scores", ParquetBulkWriters.for_schema(schema)).build()

Records are named :class:`~strom.api.row.Row` s, dicts (by field name; extra keys are ignored) or tuples/lists
and unnamed Rows with the schema's fields in order. Each batch the sink gets is converted column-wise to an
Arrow record batch at once (so a record that does not fit the schema fails the batch it came in, as a
:class:`~strom.exceptions.ConnectorError` naming the field, the value and the record); the batches are buffered
and written as one row group per ``row_group_size`` rows, and the rest when the part rolls (at every
checkpoint), which also writes the footer. ``for_row_type`` (PyFlink's name, which takes a Flink ``RowType``)
takes an Arrow schema here: strom has no table type system, and Arrow's types are what the file holds.
"""

from __future__ import annotations

import contextlib
import reprlib
from collections.abc import Sequence
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from strom.api.row import Row
from strom.connectors.file_system.bulk_writer import BulkWriter, BulkWriterFactory
from strom.exceptions import ConnectorError, InvalidProgramError

__all__ = ["ParquetBulkWriter", "ParquetBulkWriters", "ParquetWriterFactory"]

_ARROW_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError, TypeError, ValueError)


class ParquetBulkWriters:
    """Factories of Parquet bulk writers (PyFlink's ``ParquetBulkWriters``)."""

    @staticmethod
    def for_schema(
        schema: pa.Schema, *, row_group_size: int = 65_536, compression: str | None = "snappy"
    ) -> ParquetWriterFactory:
        """Parquet files of ``schema`` (a ``pyarrow.Schema``), ``row_group_size`` rows per row group."""
        return ParquetWriterFactory(schema, row_group_size=row_group_size, compression=compression)

    @staticmethod
    def for_row_type(
        row_type: pa.Schema, *, row_group_size: int = 65_536, compression: str | None = "snappy"
    ) -> ParquetWriterFactory:
        """PyFlink's name: ``row_type`` is an Arrow schema here (see the module documentation)."""
        return ParquetBulkWriters.for_schema(row_type, row_group_size=row_group_size, compression=compression)


class ParquetWriterFactory(BulkWriterFactory):
    def __init__(self, schema: pa.Schema, *, row_group_size: int = 65_536, compression: str | None = "snappy") -> None:
        if not isinstance(schema, pa.Schema) or len(schema) == 0:
            raise InvalidProgramError(
                f"ParquetBulkWriters expects a non-empty pyarrow.Schema; got {reprlib.repr(schema)}; "
                "hint: pa.schema([('id', pa.int64()), ('name', pa.string())])"
            )
        if not isinstance(row_group_size, int) or isinstance(row_group_size, bool) or row_group_size <= 0:
            raise InvalidProgramError(
                f"ParquetBulkWriters expects a positive row_group_size; got {row_group_size!r}; hint: 65_536"
            )
        if compression is not None and not _codec_available(compression):
            raise InvalidProgramError(
                f"ParquetBulkWriters expects a compression codec pyarrow has; got {compression!r}; "
                "hint: 'snappy', 'zstd', 'gzip' or None"
            )
        self.schema = schema
        self.row_group_size = row_group_size
        self.compression = compression

    def create(self, stream: BinaryIO) -> ParquetBulkWriter:
        return ParquetBulkWriter(stream, self.schema, row_group_size=self.row_group_size, compression=self.compression)


def _codec_available(name: str) -> bool:
    try:
        return bool(pa.Codec.is_available(name))
    except (ValueError, TypeError):
        return False


class ParquetBulkWriter(BulkWriter):
    """One Parquet file on an open stream: buffers converted batches, writes a row group per ``row_group_size``
    rows; ``finish`` writes the rest and the footer and leaves the stream open."""

    def __init__(
        self, stream: BinaryIO, schema: pa.Schema, *, row_group_size: int = 65_536, compression: str | None = "snappy"
    ) -> None:
        self.schema = schema
        self.row_group_size = row_group_size
        self._names = list(schema.names)
        self._writer = pq.ParquetWriter(stream, schema, compression=compression or "none")
        self._batches: list[pa.RecordBatch] = []
        self._buffered = 0

    def add_elements(self, elements: list[Any]) -> None:
        if not elements:
            return
        self._batches.append(to_record_batch(elements, self.schema, self._names))
        self._buffered += len(elements)
        if self._buffered >= self.row_group_size:
            self.flush()

    def flush(self) -> None:
        if not self._batches:
            return
        table = pa.Table.from_batches(self._batches, self.schema)
        self._batches, self._buffered = [], 0
        self._writer.write_table(table, row_group_size=self.row_group_size)

    def finish(self) -> None:
        self.flush()
        self._writer.close()

    def discard(self) -> None:
        self._batches, self._buffered = [], 0
        with contextlib.suppress(Exception):  # the part is dropped anyway; a broken stream may refuse the footer
            self._writer.close()


def to_record_batch(records: list[Any], schema: pa.Schema, names: Sequence[str] | None = None) -> pa.RecordBatch:
    """``records`` as an Arrow record batch of ``schema``, converted column by column."""
    names = list(schema.names) if names is None else names
    rows = _rows(records, names)
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in names]
    arrays = []
    for i, f in enumerate(schema):
        try:
            array = pa.array(columns[i], type=f.type)
        except _ARROW_ERRORS:
            raise _bad_value(records, columns[i], f) from None
        if not f.nullable and array.null_count:
            j = columns[i].index(None)
            raise ConnectorError(
                f"expected a value for the non-nullable Parquet field {f.name!r} ({f.type}); got None in the "
                f"record {reprlib.repr(records[j])}; hint: fill it before the sink or declare the field "
                f"pa.field({f.name!r}, {f.type}, nullable=True)"
            )
        arrays.append(array)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _rows(records: list[Any], names: Sequence[str]) -> list[Sequence[Any]]:
    n = len(names)
    out: list[Sequence[Any]] = []
    append = out.append
    same: Any = None  # the field list of the last named Row that matched the schema's order
    for r in records:
        if type(r) is Row:
            fields = r.get_field_names()
            if fields is same and same is not None:
                append(r._values)
                continue
            if fields is None or list(fields) == names:
                if len(r) != n:
                    raise _bad_shape(r, names)
                if fields is not None:
                    same = fields
                append(r._values)
                continue
            try:
                append([r[name] for name in names])
            except KeyError as exc:
                raise _missing_field(r, exc.args[0], names) from None
        elif isinstance(r, dict):
            try:
                append([r[name] for name in names])
            except KeyError as exc:
                raise _missing_field(r, exc.args[0], names) from None
        elif isinstance(r, tuple | list) and len(r) == n:
            append(r)
        else:
            raise _bad_shape(r, names)
    return out


def _bad_value(records: list[Any], column: Sequence[Any], f: pa.Field) -> ConnectorError:
    for j, value in enumerate(column):
        try:
            pa.array([value], type=f.type)
        except _ARROW_ERRORS as exc:
            return ConnectorError(
                f"expected a value of type {f.type} for the Parquet field {f.name!r}; got {reprlib.repr(value)} "
                f"(a {type(value).__name__!r}) in the record {reprlib.repr(records[j])} ({exc}); hint: convert "
                "it before the sink (a .map) or change the schema"
            )
    return ConnectorError(  # each value fits alone: the column as a whole does not (mixed types)
        f"expected values of type {f.type} for the Parquet field {f.name!r}; got a column pyarrow cannot "
        f"convert, e.g. {reprlib.repr(list(column[:3]))}; hint: give the field one Python type in every record"
    )


def _missing_field(record: Any, name: Any, names: Sequence[str]) -> ConnectorError:
    return ConnectorError(
        f"expected records with the Parquet schema's fields {list(names)}; got the record "
        f"{reprlib.repr(record)} without {name!r}; hint: map records to named Rows or dicts of every field"
    )


def _bad_shape(record: Any, names: Sequence[str]) -> ConnectorError:
    return ConnectorError(
        f"expected a named Row, a dict, or a tuple of {len(names)} values in the order of the Parquet schema's "
        f"fields {list(names)}; got {reprlib.repr(record)} (a {type(record).__name__!r}); hint: map records "
        "to Row(...) or to tuples in schema order first"
    )
