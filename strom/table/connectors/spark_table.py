"""The ``spark`` table connector over strom's Spark connector (``SparkSource.from_table`` / ``SparkTableSink``): a
table of Spark's catalog (Parquet or ORC files) read as a bounded table, and written exactly once.

Options (Flink's naming style; Flink has no Spark connector of its own): ``table`` (the Spark table: ``sales`` or
``db.sales``, required), ``sink.mode`` (``append`` — the default, creating the table when missing —,
``overwrite``, ``error``), ``sink.partition-by`` (``a;b``: the partition columns of a table the sink creates),
``sink.compression`` (``snappy``), ``sink.parallelism``. The SparkSession is the client's (a
:class:`~strom.table.catalog.spark_catalog.SparkCatalog`'s, or ``SparkSession.builder.getOrCreate()``'s before the
job runs). Columns are matched by name (Spark's case-insensitive rule); Spark's ``timestamp`` is TIMESTAMP_LTZ,
``timestamp_ntz`` TIMESTAMP. The sink takes inserts only (the files are appended).
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from strom.api.row import Row, _create_row
from strom.table.connectors.arrow_types import atomic_arrow_type
from strom.table.connectors.base import DynamicTableSink, DynamicTableSource, check_options
from strom.table.errors import ValidationException

if TYPE_CHECKING:
    import pyarrow as pa

    from strom.api.datastream import DataStream
    from strom.api.environment import StreamExecutionEnvironment
    from strom.table.catalog.catalog_manager import CatalogTable
    from strom.table.planner.logical import RowType
    from strom.table.types import DataType

__all__ = ["SparkDynamicSink", "SparkDynamicSource", "arrow_type_of"]

_SOURCE = {"table", "scan.parallelism"}
_SINK = {"table", "sink.mode", "sink.partition-by", "sink.compression", "sink.parallelism"}


def _table(name: str, table: CatalogTable) -> str:
    spark_table = table.options.get("table")
    if not spark_table:
        raise ValidationException(
            f"One or more required options are missing for table '{name}'.\n\nMissing required options are:\n\ntable"
        )
    return spark_table


def arrow_type_of(data_type: DataType) -> pa.DataType:
    """The pyarrow type a SQL type is written as (Spark's types through :mod:`strom.connectors.spark.catalog`)."""
    import pyarrow as pa

    atomic = atomic_arrow_type(data_type)
    if atomic is not None:
        return atomic
    root = data_type.type_root.name
    if root == "TIMESTAMP_WITHOUT_TIME_ZONE":
        return pa.timestamp("us")
    if root == "TIMESTAMP_WITH_LOCAL_TIME_ZONE":
        return pa.timestamp("us", "UTC")
    if root == "DECIMAL":
        return pa.decimal128(getattr(data_type, "precision"), getattr(data_type, "scale"))  # noqa: B009
    children = data_type.children
    if root == "ARRAY":
        return pa.list_(arrow_type_of(children[0]))
    if root == "MAP":
        return pa.map_(arrow_type_of(children[0]), arrow_type_of(children[1]))
    raise ValidationException(f"The 'spark' connector doesn't support the type {data_type}; expected a Spark type")


class _ToSqlRow:
    """A Spark row as a positional SQL row; aware timestamps (Spark's ``timestamp``) as naive UTC."""

    def __init__(self, ltz: tuple[int, ...]) -> None:
        self.ltz = ltz

    def __call__(self, row: Row) -> Row:
        values = list(row._values)
        for i in self.ltz:
            value = values[i]
            if isinstance(value, datetime.datetime) and value.tzinfo is not None:
                values[i] = value.astimezone(datetime.UTC).replace(tzinfo=None)
        return _create_row(None, values)


class SparkDynamicSource(DynamicTableSource):
    bounded = True

    def __init__(self, name: str, spark_table: str, parallelism: int | None) -> None:
        self.name = name
        self.spark_table = spark_table
        self.parallelism = parallelism

    @classmethod
    def create(cls, name: str, table: CatalogTable, row_type: RowType) -> SparkDynamicSource:
        check_options(name, "spark", table.options, _SOURCE)
        parallelism = int(table.options["scan.parallelism"]) if "scan.parallelism" in table.options else None
        return cls(name, _table(name, table), parallelism)

    def create_stream(self, env: StreamExecutionEnvironment, row_type: RowType) -> DataStream[Any]:
        from strom.connectors.spark.sink import active_session
        from strom.connectors.spark.source import SparkSource

        spark = active_session("the spark table connector", self.spark_table)
        source = SparkSource.from_table(spark, self.spark_table, list(row_type.names))
        stream = env.from_source(source, None, f"SparkSource-{self.name}")
        if self.parallelism is not None:
            stream.set_parallelism(self.parallelism)
        ltz = tuple(i for i, t in enumerate(row_type.types) if t.type_root.name == "TIMESTAMP_WITH_LOCAL_TIME_ZONE")
        return stream.map(_ToSqlRow(ltz)).name(f"SparkRowToRow-{self.name}")


class _Named:
    """A SQL row named by the table's columns (the Spark sink matches named rows by name)."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = list(names)

    def __call__(self, row: Row) -> Row:
        named = _create_row(self.names, row._values)
        return named


class SparkDynamicSink(DynamicTableSink):
    accepts_updates = False

    def __init__(self, name: str, table: CatalogTable) -> None:
        options = table.options
        self.name = name
        self.spark_table = _table(name, table)
        self.mode = options.get("sink.mode", "append")
        if self.mode not in ("append", "overwrite", "error"):
            raise ValidationException(f"expected 'sink.mode' append, overwrite or error; got '{self.mode}' ('{name}')")
        self.partition_by = [c for c in options.get("sink.partition-by", "").split(";") if c]
        self.compression = options.get("sink.compression", "snappy")
        self.parallelism = int(options["sink.parallelism"]) if "sink.parallelism" in options else None

    @classmethod
    def create(cls, name: str, table: CatalogTable, row_type: RowType) -> SparkDynamicSink:
        check_options(name, "spark", table.options, _SINK)
        return cls(name, table)

    def consume(self, stream: DataStream[Any], row_type: RowType) -> None:
        import pyarrow as pa

        from strom.connectors.spark.sink import SparkTableSink

        schema = pa.schema([(n, arrow_type_of(t)) for n, t in zip(row_type.names, row_type.types, strict=True)])
        sink = SparkTableSink(
            self.spark_table,
            mode=self.mode,
            partition_by=self.partition_by,
            schema=schema,
            compression=self.compression,
        )
        named = stream.map(_Named(row_type.names)).name(f"RowToSparkRow-{self.name}")
        written = named.sink_to(sink).name(f"Sink: SparkTableSink-{self.name}")
        if self.parallelism is not None:
            written.set_parallelism(self.parallelism)
