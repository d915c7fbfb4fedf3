"""``SparkTableSink``: a stream into a Spark table, exactly once, each checkpoint's rows visible all at once.

    sink = SparkTableSink("analytics.clicks_per_minute", partition_by=["day"])
    windows.sink_to(sink)          # the stream's Types.ROW_NAMED (or schema=...) creates the table when missing

In the client (``execute()``), the sink resolves the table through the SparkSession's catalog — creating it as
a Parquet table from the stream's declared ``Types.ROW_NAMED`` or the given ``schema`` when it does not exist —
and checks that the stream's fields are the table's columns. Each writer subtask then writes Parquet files (the
files connector's bulk writer) into ``<table location>/_strom_staging/`` — a hidden directory Spark does not
list — one file per table partition, rolled at every checkpoint. Their names go to the JobManager before the
subtask acknowledges the checkpoint; once the checkpoint is complete, :class:`SparkTableCommitter` (a global
committer, in the driver's process, where the SparkSession is) moves every file of the checkpoint into the table,
registers new partitions in the catalog, refreshes Spark's view of the table (``spark.catalog.refreshTable``),
and records the commit in ``<table location>/_strom_commits/``. Spark caches a table's file listing until it is
refreshed, so a query of the session sees a checkpoint's rows all at once or not at all. A commit that comes
again (after a failure) moves nothing twice: a staged file is moved once, and a recorded commit is skipped.
"""

from __future__ import annotations

import datetime
import decimal
import json
import logging
import reprlib
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import xxhash

from strom.api.row import Row
from strom.api.sink import GlobalCommitter, GlobalCommittingSink, PrecommittingSinkWriter, SinkWriterContext
from strom.api.typeinfo import (
    BasicArrayTypeInfo,
    BasicTypeInfo,
    ListTypeInfo,
    PrimitiveArrayTypeInfo,
    RowTypeInfo,
    SqlTimeTypeInfo,
    TypeInformation,
)
from strom.connectors.spark.catalog import (
    HIVE_DEFAULT_PARTITION,
    SparkTable,
    arrow_schema_to_spark,
    describe_table,
    spark_schema_to_arrow,
)
from strom.exceptions import ConnectorError, InvalidProgramError

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

    from strom.formats.parquet_writer import ParquetBulkWriter

__all__ = ["SparkTableCommitter", "SparkTableSink", "StagedFile"]

log = logging.getLogger(__name__)

STAGING_DIR = "_strom_staging"
COMMITS_DIR = "_strom_commits"
_MODES = ("append", "overwrite", "error")


@dataclass(frozen=True, slots=True, kw_only=True)
class StagedFile:
    """A Parquet file a writer closed at a checkpoint: where it waits, and where it goes in the table."""

    staging_url: str
    #: the path below the table's location: ``day=2024-01-01/part-00001-<uuid>.c000.snappy.parquet``
    table_path: str
    #: the partition it belongs to: (column, value as Spark writes it in the path), in the table's order
    partition: tuple[tuple[str, str], ...]
    rows: int


@dataclass(frozen=True, slots=True, kw_only=True)
class _TableSpec:
    """What writers and the committer need of the table, resolved in the client."""

    name: str
    location: str
    data_schema: pa.Schema  # the columns the files hold (partition columns are in the paths)
    partition_columns: tuple[str, ...]
    run: str  # this submission's staging directory
    compression: str | None


_SCHEMA_FORMS = (
    "Spark's DDL string ('user string, start long'), a pyspark StructType, a pyarrow.Schema or {name: pyarrow type}"
)


def _checked_schema(schema: object) -> Any:
    """``schema`` as given when it is one of the accepted forms (a DDL string is parsed later, with a session)."""
    if schema is None or isinstance(schema, str | Mapping):
        if isinstance(schema, str) and not schema.strip():
            raise InvalidProgramError(f"SparkTableSink expects schema as {_SCHEMA_FORMS}; got an empty string")
        return schema
    import pyarrow as pa
    from pyspark.sql.types import StructType

    if isinstance(schema, pa.Schema | StructType):
        return schema
    raise InvalidProgramError(
        f"SparkTableSink expects schema as {_SCHEMA_FORMS}; got a {type(schema).__name__}; "
        "hint: schema='user string, start long, n long'"
    )


def _arrow_schema(schema: Any, table: str) -> pa.Schema:
    """A ``pyarrow.Schema`` of any accepted ``schema`` form (a DDL string needs the client's SparkContext)."""
    import pyarrow as pa
    from pyspark.sql.types import DataType, StructType, _parse_datatype_string

    where = f"the schema of table '{table}'"
    if isinstance(schema, pa.Schema):
        return schema
    if isinstance(schema, StructType):
        return spark_schema_to_arrow(schema, where)
    if isinstance(schema, str):
        try:
            parsed = _parse_datatype_string(schema)
        except Exception as exc:
            raise InvalidProgramError(
                f"SparkTableSink expects schema as Spark's DDL ('name type, ...'); got {schema!r} "
                f"({type(exc).__name__}: {str(exc).strip().splitlines()[0][:300]}); "
                "hint: schema='user string, start long, n long'"
            ) from None
        if not isinstance(parsed, StructType):
            raise InvalidProgramError(
                f"SparkTableSink expects schema as Spark's DDL with named columns; got {schema!r} "
                f"({parsed.simpleString()}); hint: schema='user string, start long, n long'"
            )
        return spark_schema_to_arrow(parsed, where)
    fields = []
    for name, column_type in dict(schema).items():
        if isinstance(column_type, DataType):
            column_type = spark_schema_to_arrow(StructType().add(name, column_type), where).field(0).type
        fields.append((name, column_type))
    return pa.schema(fields)


class SparkTableSink(GlobalCommittingSink[Any, StagedFile]):
    """Writes a stream into the Spark table ``table`` (see the module documentation).

    ``mode``: ``"append"`` (default: create the table when missing, else add to it), ``"overwrite"`` (empty the
    table when the job is submitted), ``"error"`` (refuse a table that exists). ``partition_by``: the partition
    columns of a table the sink creates (an existing table's own are used). ``schema``: the columns of a table the
    sink creates, when the stream does not declare ``Types.ROW_NAMED`` — Spark's DDL string
    (``"user string, start long, n long"``), a pyspark ``StructType``, a ``pyarrow.Schema`` or
    ``{name: pyarrow type}``.
    ``spark``: the SparkSession (default: the active one). Records are named Rows, dicts, or tuples in the
    table's column order.
    """

    def __init__(
        self,
        table: str,
        *,
        mode: str = "append",
        partition_by: Sequence[str] = (),
        schema: str | StructType | pa.Schema | Mapping[str, Any] | None = None,
        spark: SparkSession | None = None,
        compression: str | None = "snappy",
    ) -> None:
        if not isinstance(table, str) or not table.strip():
            raise InvalidProgramError(f"SparkTableSink expects a table name; got {table!r}; hint: 'db.events'")
        if mode not in _MODES:
            raise InvalidProgramError(f"SparkTableSink expects mode one of {_MODES}; got {mode!r}")
        self.table = table
        self.mode = mode
        self.partition_by = tuple(partition_by)
        self.schema = _checked_schema(schema)
        self.compression = compression
        self._spark = spark
        self._input_type: TypeInformation | None = None
        self._spec: _TableSpec | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_spark"] = None  # a SparkSession stays in the client
        return state

    # -- in the client -----------------------------------------------------------------------------------
    def set_input_type(self, type_info: Any) -> None:
        self._input_type = type_info

    def validate(self) -> None:
        spark = self._spark if self._spark is not None else active_session("SparkTableSink", self.table)
        table = describe_table(spark, self.table)
        if table is not None and self.mode == "error":
            raise ConnectorError(
                f"SparkTableSink: expected table '{self.table}' not to exist (mode='error'); got "
                f"{table.qualified_name}; hint: mode='append' adds to it, mode='overwrite' empties it first"
            )
        if table is None:
            table = self._create_table(spark)
        elif self.mode == "overwrite":
            spark.sql(f"TRUNCATE TABLE {_quoted(table.qualified_name)}")
        self._spec = self._check_table(table)
        spark.catalog.refreshTable(table.qualified_name)

    def _stream_schema(self) -> pa.Schema | None:
        import pyarrow as pa

        if self.schema is not None:
            return _arrow_schema(self.schema, self.table)
        t = self._input_type
        if isinstance(t, RowTypeInfo):
            return pa.schema(
                [(n, type_info_to_arrow(ft, n)) for n, ft in zip(t.get_field_names(), t.get_field_types(), strict=True)]
            )
        return None

    def _create_table(self, spark: SparkSession) -> SparkTable:
        import pyarrow as pa

        schema = self._stream_schema()
        if schema is None:
            raise ConnectorError(
                f"SparkTableSink: expected table '{self.table}' to exist, or a schema to create it; got neither "
                "(the stream declares no Types.ROW_NAMED); hint: .map(..., output_type=Types.ROW_NAMED([...], "
                "[...])) before the sink, or SparkTableSink(..., schema='user string, start long, n long')"
            )
        missing = [c for c in self.partition_by if c not in schema.names]
        if missing:
            raise ConnectorError(
                f"SparkTableSink: expected partition columns among the stream's fields {schema.names}; got "
                f"{missing} for table '{self.table}'; hint: partition_by names fields of the records"
            )
        # Spark puts partition columns last
        ordered = [f for f in schema if f.name not in self.partition_by] + [schema.field(c) for c in self.partition_by]
        struct = arrow_schema_to_spark(pa.schema(ordered))
        empty = spark.createDataFrame([], struct)
        writer = empty.write.format("parquet")
        if self.partition_by:
            writer = writer.partitionBy(*self.partition_by)
        writer.saveAsTable(self.table)
        log.info("SparkTableSink: created table '%s' (%s)", self.table, struct.simpleString())
        table = describe_table(spark, self.table)
        assert table is not None
        return table

    def _check_table(self, table: SparkTable) -> _TableSpec:
        import pyarrow as pa

        if table.location is None or table.file_format != "parquet":
            raise ConnectorError(
                f"SparkTableSink: expected a Parquet table with a location; got '{table.qualified_name}' "
                f"({table.table_type}, format {table.file_format}); hint: write to a Parquet table"
            )
        stream = self._stream_schema()
        if stream is not None:
            columns = [c.name.casefold() for c in table.columns]
            fields = [n.casefold() for n in stream.names]
            missing = [c.name for c in table.columns if c.name.casefold() not in fields]
            extra = [n for n in stream.names if n.casefold() not in columns]
            if missing or extra:
                raise ConnectorError(
                    f"SparkTableSink: expected the stream's fields to be the columns of table "
                    f"'{table.qualified_name}' {list(table.column_names)}; got fields {stream.names} "
                    f"(missing {missing}, not in the table {extra}); hint: map the records to the table's columns"
                )
        data = pa.schema([pa.field(c.name, c.arrow_type, True) for c in table.data_columns])
        return _TableSpec(
            name=table.qualified_name,
            location=table.location.rstrip("/"),
            data_schema=data,
            partition_columns=table.partition_columns,
            run=uuid.uuid4().hex,
            compression=self.compression,
        )

    # -- on the TaskManagers and the JobManager ----------------------------------------------------------
    @property
    def spec(self) -> _TableSpec:
        if self._spec is None:
            raise InvalidProgramError(
                f"SparkTableSink for '{self.table}' was not resolved in the client; hint: run the job with "
                "env.execute(), which resolves the table first"
            )
        return self._spec

    def create_writer(self, context: SinkWriterContext) -> SparkTableWriter:
        return SparkTableWriter(self.spec, context.subtask_index)

    def create_global_committer(self) -> SparkTableCommitter:
        return SparkTableCommitter(self.spec)


class SparkTableWriter(PrecommittingSinkWriter[Any, StagedFile]):
    """Writes a subtask's records into staged Parquet files, one per table partition, closed at each checkpoint."""

    def __init__(self, spec: _TableSpec, subtask: int) -> None:
        from fsspec.core import url_to_fs

        self.spec = spec
        self.subtask = subtask
        self._fs, self._root = url_to_fs(spec.location)
        self._names = list(spec.data_schema.names)
        self._n_data = len(self._names)
        self._all_names = self._names + list(spec.partition_columns)
        #: partition -> (staged url, open stream, Parquet writer, rows so far)
        self._open: dict[tuple[tuple[str, str], ...], tuple[str, Any, ParquetBulkWriter, int]] = {}

    def write(self, element: Any) -> None:
        self.write_batch([element])

    def write_batch(self, elements: list[Any]) -> None:
        if not self.spec.partition_columns:
            self._append((), elements)
            return
        groups: dict[tuple[tuple[str, str], ...], list[Any]] = {}
        for record in elements:
            groups.setdefault(self._partition_of(record), []).append(record)
        for partition, records in groups.items():
            self._append(partition, records)

    def _partition_of(self, record: Any) -> tuple[tuple[str, str], ...]:
        values = []
        for i, column in enumerate(self.spec.partition_columns):
            try:
                if (isinstance(record, Row) and record.get_field_names() is not None) or isinstance(record, dict):
                    value = record[column]
                else:
                    value = record[self._n_data + i]
            except (KeyError, IndexError, TypeError):
                raise ConnectorError(
                    f"SparkTableSink: expected records with the partition column {column!r} of table "
                    f"'{self.spec.name}' (columns {self._all_names}); got {reprlib.repr(record)}; hint: named Rows, "
                    "dicts, or tuples in the table's column order"
                ) from None
            values.append((column, partition_path_value(value)))
        return tuple(values)

    def _append(self, partition: tuple[tuple[str, str], ...], records: list[Any]) -> None:
        from strom.formats.parquet_writer import ParquetBulkWriter

        entry = self._open.get(partition)
        if entry is None:
            name = f"{_part_prefix(self.subtask)}{uuid.uuid4()}.c000{_suffix(self.spec.compression)}"
            url = f"{self._root}/{STAGING_DIR}/{self.spec.run}/{name}"
            self._fs.makedirs(f"{self._root}/{STAGING_DIR}/{self.spec.run}", exist_ok=True)
            stream = self._fs.open(url, "wb")
            writer = ParquetBulkWriter(stream, self.spec.data_schema, compression=self.spec.compression)
            entry = (url, stream, writer, 0)
        url, stream, writer, rows = entry
        data = records if not self.spec.partition_columns else [self._data_part(r) for r in records]
        try:
            writer.add_elements(data)
        except ConnectorError as exc:
            raise ConnectorError(f"SparkTableSink (table '{self.spec.name}'): {exc}") from None
        self._open[partition] = (url, stream, writer, rows + len(records))

    def _data_part(self, record: Any) -> Any:
        if isinstance(record, tuple | list) or (isinstance(record, Row) and record.get_field_names() is None):
            return tuple(record)[: self._n_data]
        return record

    def prepare_commit(self) -> list[StagedFile]:
        staged = []
        for partition, (url, stream, writer, rows) in self._open.items():
            writer.finish()
            stream.close()
            directory = "/".join(f"{_escape_path_name(c)}={v}" for c, v in partition)
            name = url.rsplit("/", 1)[1]
            table_path = f"{directory}/{name}" if directory else name
            staged.append(StagedFile(staging_url=url, table_path=table_path, partition=partition, rows=rows))
        self._open = {}
        return staged

    def close(self) -> None:
        for url, stream, writer, _rows in self._open.values():
            writer.discard()
            stream.close()
            try:
                self._fs.rm(url)
            except OSError:
                log.debug("SparkTableSink: removing the unfinished %s failed", url, exc_info=True)
        self._open = {}


class SparkTableCommitter(GlobalCommitter[StagedFile]):
    """Moves a checkpoint's staged files into the table, registers its partitions, refreshes Spark's view and
    records the commit (``_strom_commits/<checkpoint>-<files hash>.json``); runs in the driver's process."""

    def __init__(self, spec: _TableSpec) -> None:
        from fsspec.core import url_to_fs

        self.spec = spec
        self._fs, self._root = url_to_fs(spec.location)

    def commit(self, checkpoint_id: int, committables: list[StagedFile]) -> None:
        files = sorted(committables, key=lambda f: f.staging_url)
        digest = xxhash.xxh3_64_hexdigest("\n".join(f.staging_url for f in files).encode())
        marker = f"{self._root}/{COMMITS_DIR}/{checkpoint_id:010d}-{digest}.json"
        if self._fs.exists(marker):
            log.info("SparkTableSink: checkpoint %d was committed to '%s' before", checkpoint_id, self.spec.name)
            return
        for f in files:
            self._move(f)
        partitions = sorted({f.partition for f in files if f.partition})
        spark = active_session("SparkTableSink", self.spec.name)
        if partitions:
            self._add_partitions(spark, partitions)
        spark.catalog.refreshTable(self.spec.name)
        record = {
            "checkpoint_id": checkpoint_id,
            "committed_at": datetime.datetime.now(datetime.UTC).isoformat(),
            "rows": sum(f.rows for f in files),
            "files": [f.table_path for f in files],
        }
        self._fs.makedirs(f"{self._root}/{COMMITS_DIR}", exist_ok=True)
        with self._fs.open(marker, "w") as out:
            json.dump(record, out)
        log.info("SparkTableSink: checkpoint %d: %d rows into '%s'", checkpoint_id, record["rows"], self.spec.name)

    def _move(self, f: StagedFile) -> None:
        """Moves ``f`` into the table once: a committer that finds it moved already (by an earlier attempt, or by
        the job a savepoint was taken of, whose last commit may still be running) has nothing to do."""
        target = f"{self._root}/{f.table_path}"
        if self._fs.exists(f.staging_url):
            parent = target.rsplit("/", 1)[0]
            self._fs.makedirs(parent, exist_ok=True)
            try:
                self._fs.mv(f.staging_url, target)
            except FileNotFoundError:  # moved meanwhile by the other committer
                if not self._fs.exists(target):
                    raise
        elif not self._fs.exists(target):
            raise ConnectorError(
                f"SparkTableSink: expected the staged file {f.staging_url} of table '{self.spec.name}' or its "
                f"committed copy {target}; got neither; hint: something removed the table's {STAGING_DIR} "
                "directory while the job ran"
            )

    def _add_partitions(self, spark: SparkSession, partitions: list[tuple[tuple[str, str], ...]]) -> None:
        if any(v == HIVE_DEFAULT_PARTITION for p in partitions for _c, v in p):
            spark.catalog.recoverPartitions(self.spec.name)
            return
        specs = " ".join(
            "PARTITION (" + ", ".join(f"{_quoted(c)} = {_sql_string(_unescape(v))}" for c, v in p) + ")"
            for p in partitions
        )
        try:
            spark.sql(f"ALTER TABLE {_quoted(self.spec.name)} ADD IF NOT EXISTS {specs}")
        except Exception as exc:  # a table whose partitions the catalog does not track: refreshing finds them
            if "not allowed" not in str(exc) and "NOT_SUPPORTED" not in str(exc):
                raise
            log.debug("SparkTableSink: %s tracks no partitions in the catalog (%s)", self.spec.name, exc)

    def discard(self, committables: list[StagedFile]) -> None:
        for f in committables:
            if self._fs.exists(f.staging_url):
                self._fs.rm(f.staging_url)

    def clean_up(self, subtask: int, keep: list[StagedFile]) -> None:
        run = f"{self._root}/{STAGING_DIR}/{self.spec.run}"
        kept = {f.staging_url for f in keep}
        prefix = _part_prefix(subtask)
        try:
            names = self._fs.ls(run, detail=False)
        except FileNotFoundError:
            return
        for path in names:
            url = f"{run}/{path.rsplit('/', 1)[1]}"
            if url.rsplit("/", 1)[1].startswith(prefix) and url not in kept:
                self._fs.rm(url)

    def close(self) -> None:
        run = f"{self._root}/{STAGING_DIR}/{self.spec.run}"
        try:
            if self._fs.exists(run) and not self._fs.ls(run):
                self._fs.rmdir(run)
        except OSError:
            log.debug("SparkTableSink: removing %s failed", run, exc_info=True)


# -- Spark -------------------------------------------------------------------------------------------------------
def active_session(connector: str, table: str) -> SparkSession:
    """The SparkSession of this process (the client's, or the driver's on the JobManager)."""
    try:
        from pyspark import SparkContext
        from pyspark.sql import SparkSession
    except ImportError:
        raise ConnectorError(
            f"{connector}: expected pyspark for table '{table}'; got none installed; hint: pip install 'strom[spark]'"
        ) from None
    if SparkContext._active_spark_context is None:
        raise ConnectorError(
            f"{connector}: expected a SparkSession in this process for table '{table}'; got none; hint: create "
            "one before execute() (SparkSession.builder.getOrCreate()), or pass spark=..."
        )
    return SparkSession.builder.getOrCreate()


def _quoted(name: str) -> str:
    return ".".join(f"`{part.strip('`')}`" for part in name.split("."))


def _sql_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


# -- partition paths (Spark's ExternalCatalogUtils) ---------------------------------------------------------------
_ESCAPED = {chr(c) for c in range(0x01, 0x20)} | set("\"#%'*/:=?\\\x7f{[]^")


def _escape_path_name(text: str) -> str:
    """Spark's ``escapePathName``: the characters it escapes as ``%XX``."""
    return "".join(f"%{ord(ch):02X}" if ch in _ESCAPED else ch for ch in text)


def _unescape(text: str) -> str:
    import re

    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), text)


def partition_path_value(value: Any) -> str:
    """A partition value as Spark writes it in a directory name (``day=2024-01-01``): cast to a string as Spark
    does, escaped; ``None`` and ``""`` are ``__HIVE_DEFAULT_PARTITION__``."""
    if value is None or value == "":
        return HIVE_DEFAULT_PARTITION
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, datetime.datetime):
        text = value.isoformat(sep=" ")
    elif isinstance(value, datetime.date):
        text = value.isoformat()
    elif isinstance(value, decimal.Decimal):
        text = str(value)
    else:
        text = str(value)
    return _escape_path_name(text)


def _part_prefix(subtask: int) -> str:
    return f"part-{subtask:05d}-"


def _suffix(compression: str | None) -> str:
    return f".{compression}.parquet" if compression else ".parquet"


# -- strom's declared types as Arrow types -------------------------------------------------------------------------
def type_info_to_arrow(type_info: TypeInformation, field: str) -> pa.DataType:
    """The Arrow type of a field the stream declares (``Types.LONG()`` → ``int64``)."""
    import pyarrow as pa

    basic = {
        "String": pa.string(),
        "Byte": pa.int8(),
        "Boolean": pa.bool_(),
        "Short": pa.int16(),
        "Integer": pa.int32(),
        "Long": pa.int64(),
        "Float": pa.float32(),
        "Double": pa.float64(),
        "Char": pa.string(),
        "BigDecimal": pa.decimal128(38, 18),
        "Instant": pa.timestamp("us", tz="UTC"),
    }
    sql = {"Date": pa.date32(), "Time": pa.time64("us"), "Timestamp": pa.timestamp("us")}
    if isinstance(type_info, BasicTypeInfo) and type_info.java_name in basic:
        return basic[type_info.java_name]
    if isinstance(type_info, SqlTimeTypeInfo) and type_info.java_name in sql:
        return sql[type_info.java_name]
    if isinstance(type_info, ListTypeInfo | PrimitiveArrayTypeInfo | BasicArrayTypeInfo):
        return pa.list_(type_info_to_arrow(type_info.element_type, field))
    raise ConnectorError(
        f"SparkTableSink: expected a field type with a Spark column type for {field!r}; got {type_info!r}; hint: "
        "declare it as a basic type (Types.LONG(), Types.STRING(), Types.SQL_DATE(), ...) or pass schema=..."
    )
