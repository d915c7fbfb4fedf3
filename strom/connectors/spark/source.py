"""``SparkSource``: a Spark table or DataFrame as a bounded strom source, read by the TaskManagers from the files
themselves (pyarrow, fsspec) — the rows never pass through the Spark driver.

    >>> source = SparkSource.from_table(spark, "sales", columns=["id", "amount", "day"])
    >>> rows = env.from_source(source, None, "sales")   # Row(id=..., amount=..., day=...), typed ROW_NAMED
    >>> big = SparkSource.from_dataframe(spark.table("sales").where("amount > 100").groupBy("day").count())

``from_table`` asks Spark's catalog (in the client, where the SparkSession is) for the table's columns, partition
columns and files (:mod:`strom.connectors.spark.catalog`). The files — Parquet or ORC — become splits of one row
group or stripe each, handed out by the FileSource's static enumerator on the JobManager as readers ask, and read
on the TaskManagers; a checkpoint holds each unfinished split with the rows read, so failover and savepoints
resume exactly. Rows are named :class:`~strom.api.row.Row` s with the table's column names, partition columns
included (their values come from the files' ``column=value`` directories, typed by the partition schema);
:meth:`SparkSource.get_produced_type` is their ``Types.ROW_NAMED``, the stream's declared type (as a Flink
``ResultTypeQueryable`` source's).

``from_dataframe`` reads a DataFrame that is a plain scan of Parquet or ORC files (its analyzed plan is a
``LogicalRelation`` over a ``HadoopFsRelation``, under ``SubqueryAlias`` and ``Project`` s of plain columns only)
from its files in the same way. Any other DataFrame — a filter, a join, an aggregation, a view, CSV or JSON files,
whose reader options pyarrow would not follow — is first written by Spark, in parallel on its executors, to a
staging Parquet directory (``df.write.parquet``) and read from there. The default staging directory is a new
temporary directory on the driver's machine, so it needs executors that share the driver's filesystem (a
``local`` master, or ``spark://`` on 127.0.0.1); with another master pass ``staging_path`` (e.g. ``s3://...``).

Staging cleanup: a staging directory strom made under the temporary directory is deleted when the client process
exits (or earlier by :meth:`SparkSource.delete_staging`); a ``staging_path`` you pass is yours — strom writes it
and never deletes it, so a savepoint of the job stays restorable as long as you keep it.

Errors are :class:`~strom.exceptions.ConnectorError` s raised in the client, before any TaskManager starts: a table
that does not exist (naming the tables of its database), a column that does not exist (naming the columns), a
table that is not a directory of Parquet or ORC files, and — in ``validate()``, run by ``execute()`` — a file that
vanished since the source was built (a file that vanishes later fails the job naming it).
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from strom.api.row import Row
from strom.api.typeinfo import RowTypeInfo, Types
from strom.connectors.file_system import fs as fsspec_urls
from strom.connectors.file_system.file_enumerator import is_hidden
from strom.connectors.file_system.source import FileSource
from strom.connectors.spark.catalog import (
    READABLE_FORMATS,
    SparkColumn,
    SparkTable,
    TableFile,
    describe_table,
    parse_partition_path,
    partition_value,
    spark_to_arrow_type,
    spark_to_type_info,
    table_files,
    to_fsspec_url,
)
from strom.connectors.spark.table_format import SparkFileEnumerator, SparkFilesFormat, vanished
from strom.exceptions import ConnectorError, InvalidProgramError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructField

__all__ = ["SparkSource"]

log = logging.getLogger(__name__)

_SAME_MACHINE = re.compile(r"^(local(-cluster)?(\[.*\])?|spark://(127\.0\.0\.1|localhost)(:\d+)?)$")


class SparkSource(FileSource[Row]):
    """A bounded source of a Spark table's or DataFrame's rows (see the module docs); build it with
    :meth:`from_table` or :meth:`from_dataframe`."""

    def __init__(
        self,
        *,
        what: str,
        files: Sequence[TableFile],
        fmt: SparkFilesFormat,
        produced_type: RowTypeInfo,
        staging_path: str | None = None,
        storage_options: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(None, fmt, tuple(f.url for f in files), None, storage_options or {})
        #: ``table spark_catalog.default.sales`` or ``a DataFrame``, for messages
        self.what = what
        self.files = tuple(files)
        self.fmt = fmt
        self.produced_type = produced_type
        #: where Spark staged the DataFrame (an fsspec URL), or ``None`` when the source reads the input's own files
        self.staging_path = staging_path
        self._owns_staging = False

    # -- building (in the client, where the SparkSession is) -----------------------------------------------------
    @staticmethod
    def from_table(
        spark: SparkSession,
        name: str,
        columns: Sequence[str] | None = None,
        *,
        storage_options: Mapping[str, Any] | None = None,
    ) -> SparkSource:
        """The rows of the table ``name`` (``sales``, ``db.sales``), all its columns or ``columns`` (matched as
        Spark does, case-insensitively) in that order; ``storage_options`` are fsspec's for the files (an S3
        endpoint)."""
        if not isinstance(name, str) or not name:
            raise InvalidProgramError(f"SparkSource.from_table expects a table name (a str); got {name!r}")
        table = describe_table(spark, name)
        if table is None:
            raise _no_such_table(spark, name)
        chosen = _select_columns(table, columns)
        if not table.is_file_backed:
            raise _not_file_backed(table, name)
        assert table.file_format is not None
        partitions = table.partition_columns
        fmt = SparkFilesFormat(
            what=f"table {table.qualified_name}",
            file_format=table.file_format,
            fields=tuple(c.name for c in chosen),
            arrow_types=tuple(c.arrow_type for c in chosen),
            sources=tuple(partitions.index(c.name) if c.is_partition else c.name for c in chosen),
        )
        produced = Types.ROW_NAMED([c.name for c in chosen], [spark_to_type_info(c.spark_type()) for c in chosen])
        files = table_files(spark, table)
        log.info("SparkSource: table %s, %d %s files", table.qualified_name, len(files), table.file_format)
        return SparkSource(what=fmt.what, files=files, fmt=fmt, produced_type=produced, storage_options=storage_options)

    @staticmethod
    def from_dataframe(
        df: DataFrame, staging_path: str | None = None, *, storage_options: Mapping[str, Any] | None = None
    ) -> SparkSource:
        """The rows of ``df``: read from its files when it is a plain scan of Parquet or ORC files, else written by
        Spark to ``staging_path`` (a directory URL that must not exist yet; by default a new temporary directory,
        for masters whose executors share the driver's filesystem) and read from there. A plain scan ignores
        ``staging_path``."""
        fields = list(df.schema.fields)
        _check_unique([f.name for f in fields], "the DataFrame")
        produced = Types.ROW_NAMED([f.name for f in fields], [spark_to_type_info(f.dataType) for f in fields])
        arrow_types = tuple(spark_to_arrow_type(f.dataType, f"column '{f.name}' of the DataFrame") for f in fields)
        scan = plain_scan(df)
        if scan is not None:
            sources = scan.sources([f.name for f in fields])
            if sources is not None:
                fmt = SparkFilesFormat(
                    what="a DataFrame",
                    file_format=scan.file_format,
                    fields=tuple(f.name for f in fields),
                    arrow_types=arrow_types,
                    sources=sources,
                )
                return SparkSource(
                    what=fmt.what, files=scan.files(), fmt=fmt, produced_type=produced, storage_options=storage_options
                )
        url, owned = _stage(df, staging_path, storage_options)
        fmt = SparkFilesFormat(
            what=f"the DataFrame staged at {url}",
            file_format="parquet",
            fields=tuple(f.name for f in fields),
            arrow_types=arrow_types,
            sources=tuple(f.name for f in fields),
        )
        source = SparkSource(
            what=fmt.what,
            files=_staged_files(url, storage_options),
            fmt=fmt,
            produced_type=produced,
            staging_path=url,
            storage_options=storage_options,
        )
        source._owns_staging = owned
        return source

    # -- the source ------------------------------------------------------------------------------------------------
    def get_produced_type(self) -> RowTypeInfo:
        """The rows' type, ``Types.ROW_NAMED`` of the columns' names and PyFlink types (Flink's
        ``ResultTypeQueryable.getProducedType``): pass it to ``from_source(..., type_info=...)`` so typed operators
        and sinks downstream see the names."""
        return self.produced_type

    def file_enumerator(self) -> SparkFileEnumerator:
        return SparkFileEnumerator(self.paths, self.storage_options, self.fmt.create_splits, self.files, self.fmt)

    def validate(self) -> None:
        """Every local file still exists (a remote one is checked by the enumerator when the job starts)."""
        for file in self.files:
            if not fsspec_urls.is_local(file.url):
                continue
            fs, fs_path = fsspec_urls.resolve(file.url, self.storage_options, role="table file")
            if not fs.exists(fs_path):
                raise vanished(file.url, self.what)

    def delete_staging(self) -> None:
        """Delete the staging directory strom made for a DataFrame (it goes at process exit anyway); a
        ``staging_path`` you passed is left alone. A job still reading it fails."""
        if self._owns_staging and self.staging_path is not None:
            _remove_tree(self.staging_path)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_owns_staging"] = False  # only the client's copy deletes
        return state


# -- plain scans --------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PlainScan:
    """A DataFrame that only reads files: their format, URIs, root directories, data and partition schema."""

    file_format: str
    uris: tuple[str, ...]
    roots: tuple[str, ...]
    data_columns: tuple[str, ...]
    partition_fields: tuple[StructField, ...]

    def sources(self, names: Sequence[str]) -> tuple[str | int, ...] | None:
        """Where each of ``names`` comes from: a data column's name, or a partition column's index."""
        folded = [f.name.casefold() for f in self.partition_fields]
        result: list[str | int] = []
        for name in names:
            if name.casefold() in folded:
                result.append(folded.index(name.casefold()))
            else:
                match = next((c for c in self.data_columns if c.casefold() == name.casefold()), None)
                if match is None:
                    return None
                result.append(match)
        return tuple(result)

    def files(self) -> list[TableFile]:
        roots = [to_fsspec_url(r).rstrip("/") + "/" for r in self.roots]
        arrow = [spark_to_arrow_type(f.dataType, f"partition column '{f.name}'") for f in self.partition_fields]
        names = [f.name for f in self.partition_fields]
        files = []
        for uri in sorted(self.uris):
            url = to_fsspec_url(uri)
            relative = next((url[len(r) - 1 :] for r in roots if url.startswith(r)), url)
            raw = parse_partition_path(relative, names, "the DataFrame") if names else {}
            values = tuple(partition_value(raw[n], t, url, n) for n, t in zip(names, arrow, strict=True))
            files.append(TableFile(url=url, partition_values=values))
        return files


def plain_scan(df: DataFrame) -> PlainScan | None:
    """The files ``df`` reads when its analyzed plan is only a scan of Parquet or ORC files (see the module docs),
    else ``None`` (also on Spark Connect, where the plan is not at hand)."""
    from pyspark.sql.types import StructType

    jdf = getattr(df, "_jdf", None)
    if jdf is None:
        return None
    try:
        plan = jdf.queryExecution().analyzed()
        kind = plan.getClass().getSimpleName()
        while kind in ("SubqueryAlias", "Project"):
            if kind == "Project":
                exprs = plan.projectList()
                if any(exprs.apply(i).getClass().getSimpleName() != "AttributeReference" for i in range(exprs.size())):
                    return None
            plan = plan.child()
            kind = plan.getClass().getSimpleName()
        if kind != "LogicalRelation" or plan.relation().getClass().getSimpleName() != "HadoopFsRelation":
            return None
        relation = plan.relation()
        file_format = str(relation.fileFormat().shortName()).lower()
        if file_format not in READABLE_FORMATS:
            return None
        roots = relation.location().rootPaths()
        partition = StructType.fromJson(json.loads(relation.partitionSchema().json()))
        data = StructType.fromJson(json.loads(relation.dataSchema().json()))
        return PlainScan(
            file_format=file_format,
            uris=tuple(df.inputFiles()),
            roots=tuple(str(roots.apply(i).toString()) for i in range(roots.size())),
            data_columns=tuple(f.name for f in data.fields),
            partition_fields=tuple(partition.fields),
        )
    except Exception as exc:  # a plan of another shape than expected: stage it, which is always right
        log.debug("SparkSource: the DataFrame's plan is not a plain file scan (%r); staging it", exc)
        return None


# -- staging ------------------------------------------------------------------------------------------------------
def _master(spark: SparkSession) -> str:
    try:
        return str(spark.conf.get("spark.master", "") or "")
    except Exception:
        return ""


def _stage(df: DataFrame, staging_path: str | None, storage_options: Mapping[str, Any] | None) -> tuple[str, bool]:
    """Writes ``df`` as Parquet with Spark; the fsspec URL of the directory and whether strom owns it."""
    spark = df.sparkSession
    owned = staging_path is None
    if staging_path is None:
        master = _master(spark)
        if not _SAME_MACHINE.match(master.strip()):
            raise ConnectorError(
                f"SparkSource: expected a staging_path every executor and TaskManager can reach to stage the "
                f"DataFrame (it is not a plain scan of Parquet or ORC files); got none, and the master {master!r} "
                "may run executors on other machines than the driver's temporary directory; hint: "
                "SparkSource.from_dataframe(df, staging_path='s3://bucket/staging/job-1')"
            )
        base = tempfile.mkdtemp(prefix="strom-spark-staging-")
        atexit.register(shutil.rmtree, base, True)
        url = to_fsspec_url(os.path.join(base, "data"))
    else:
        url = to_fsspec_url(staging_path) if fsspec_urls.is_local(staging_path) else os.fspath(staging_path)
        fs, fs_path = fsspec_urls.resolve(url, storage_options, role="staging path")
        if fs.exists(fs_path):
            raise ConnectorError(
                f"SparkSource: expected a staging_path that does not exist yet; got {staging_path!r}, which does; "
                f"hint: a new directory per DataFrame, e.g. "
                f"{os.fspath(staging_path).rstrip('/')}/{uuid.uuid4().hex[:8]}"
            )
    spark_url = re.sub(r"^s3://", "s3a://", url)
    log.info("SparkSource: staging the DataFrame as Parquet at %s", url)
    df.write.parquet(spark_url)
    return url, owned


def _staged_files(url: str, storage_options: Mapping[str, Any] | None) -> list[TableFile]:
    fs, root = fsspec_urls.resolve(url, storage_options, role="staging path")
    prefix = root.rstrip("/") + "/"
    names = sorted(
        name
        for name, detail in fs.find(root, withdirs=False, detail=True).items()
        if detail.get("type") != "directory" and not is_hidden(name[len(prefix) :])
    )
    return [TableFile(url=_url_of(fs, name)) for name in names]


def _url_of(fs: Any, path: str) -> str:
    local = fsspec_urls.unstrip(fs, path)
    return to_fsspec_url(local) if "://" not in local else local


def _remove_tree(url: str) -> None:
    fs, path = fsspec_urls.resolve(url, None, role="staging path")
    if fs.exists(path):
        fs.rm(path, recursive=True)


# -- errors -------------------------------------------------------------------------------------------------------
def _check_unique(names: Sequence[str], where: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name.casefold() in seen:
            raise ConnectorError(
                f"SparkSource: expected distinct column names in {where} (rows are named by them); got '{name}' "
                f"twice in {list(names)}; hint: alias one of them, e.g. df.select(a.id, b.id.alias('b_id'))"
            )
        seen.add(name.casefold())


def _select_columns(table: SparkTable, columns: Sequence[str] | None) -> list[SparkColumn]:
    if columns is None:
        return list(table.columns)
    if isinstance(columns, str) or not isinstance(columns, Sequence):
        raise InvalidProgramError(
            f"SparkSource.from_table expects columns as a list of names; got {columns!r}; hint: columns=['id', 'day']"
        )
    chosen = []
    for name in columns:
        column = table.column(name) if isinstance(name, str) else None
        if column is None:
            raise ConnectorError(
                f"SparkSource: expected a column {name!r} in table {table.qualified_name}; got the columns "
                f"{list(table.column_names)}; hint: name columns of the table (matched case-insensitively, as Spark)"
            )
        chosen.append(column)
    _check_unique([c.name for c in chosen], f"the columns chosen of table {table.qualified_name}")
    return chosen


def _not_file_backed(table: SparkTable, name: str) -> ConnectorError:
    if table.location is None:
        got = f"a {table.table_type} with no files of its own"
    else:
        got = (
            f"a table of format '{table.file_format}' at {table.location}, and SparkSource reads only Parquet and "
            "ORC files"
        )
    return ConnectorError(
        f"SparkSource: expected a table of Parquet or ORC files for {name!r} ({table.qualified_name}); got {got}; "
        f"hint: SparkSource.from_dataframe(spark.table({name!r})) reads it through Spark, which stages it to Parquet"
    )


def _no_such_table(spark: SparkSession, name: str) -> ConnectorError:
    parts = name.split(".")
    database = ".".join(parts[:-1]) if len(parts) > 1 else spark.catalog.currentDatabase()
    try:
        if len(parts) > 1 and not spark.catalog.databaseExists(database):
            databases = sorted(d.name for d in spark.catalog.listDatabases())
            got = f"no database '{database}' (databases: {', '.join(databases) or 'none'})"
        else:
            tables = sorted(t.name for t in spark.catalog.listTables(database))
            shown = ", ".join(tables[:20]) + (f", ... ({len(tables)} in all)" if len(tables) > 20 else "")
            got = f"no such table in database '{database}' (tables there: {shown or 'none'})"
    except Exception as exc:
        got = f"no such table ({exc!r} listing the catalog)"
    return ConnectorError(
        f"SparkSource: expected a table {name!r} in Spark's catalog; got {got}; hint: check the name (database.table), "
        "and that the SparkSession is the one that created the table (its warehouse and metastore)"
    )
