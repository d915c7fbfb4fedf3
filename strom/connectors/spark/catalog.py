"""What Spark's catalog says about a table: its columns with their Spark and pyarrow types, its partition
columns, where its files are and in which format — and the conversions between Spark's and pyarrow's types.

    >>> table = describe_table(spark, "sales")          # None when the catalog has no such table
    >>> table.qualified_name, table.file_format, table.location
    ('spark_catalog.default.sales', 'parquet', 'file:///warehouse/sales')
    >>> table.column_names, table.partition_columns
    (('id', 'amount', 'day'), ('day',))
    >>> files = table_files(spark, table)               # [TableFile(url=..., partition_values=(date(...),)), ...]
    >>> spark_schema_to_arrow(spark.table("sales").schema)
    id: int64
    amount: decimal128(10, 2)
    day: date32[day]

Everything here runs where the SparkSession is (the driver). The results are plain frozen dataclasses of
strings and pyarrow types, picklable without pyspark, so a source can carry them to TaskManagers.

Locations and file lists are fsspec URLs: Spark's ``file:/x`` becomes ``file:///x``, ``s3a://`` and ``s3n://``
become ``s3://``; other schemes (``hdfs://``, ``gs://``, ``abfss://``) stay. Partition values come from the
``column=value`` segments of each file's path (Hive's layout, which Spark writes), unescaped as Spark escapes
them, ``__HIVE_DEFAULT_PARTITION__`` as ``None``, and typed by the table's partition schema.

Types (Spark → pyarrow; :func:`arrow_to_spark_type` goes back): boolean, tinyint → int8, smallint → int16,
int → int32, bigint → int64, float → float32, double → float64, string/char/varchar → string, binary,
decimal(p, s) → decimal128(p, s), date → date32, timestamp → timestamp[us, UTC], timestamp_ntz → timestamp[us],
day-time interval → duration[us], array → list, map → map, struct → struct, void → null.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from strom.api.typeinfo import TypeInformation, Types
from strom.exceptions import ConnectorError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import DataType, StructType

__all__ = [
    "HIVE_DEFAULT_PARTITION",
    "SparkColumn",
    "SparkTable",
    "TableFile",
    "arrow_schema_to_spark",
    "arrow_to_spark_type",
    "describe_table",
    "parse_partition_path",
    "partition_value",
    "spark_schema_to_arrow",
    "spark_to_arrow_type",
    "spark_to_type_info",
    "table_files",
    "to_fsspec_url",
]

#: the directory name Spark (as Hive) gives a partition whose value is null or empty
HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"

#: table formats whose files strom reads itself (pyarrow); others are staged through Spark
READABLE_FORMATS = ("parquet", "orc")


@dataclass(frozen=True, slots=True, kw_only=True)
class SparkColumn:
    """One column of a table: its name, Spark type (``simpleString``: ``bigint``, ``decimal(10,2)``; and the
    type's JSON, from which :meth:`spark_type` rebuilds it), pyarrow type, and whether it partitions the table."""

    name: str
    data_type: str
    spark_type_json: str
    arrow_type: pa.DataType
    nullable: bool = True
    is_partition: bool = False

    def spark_type(self) -> DataType:
        """The column's pyspark ``DataType`` (needs pyspark)."""
        from pyspark.sql.types import _parse_datatype_json_string

        return _parse_datatype_json_string(self.spark_type_json)


@dataclass(frozen=True, slots=True, kw_only=True)
class SparkTable:
    """A table as Spark's catalog describes it (see the module docs)."""

    #: ``spark_catalog.default.sales``; a temporary view's is its bare name
    qualified_name: str
    #: ``MANAGED``, ``EXTERNAL``, ``VIEW`` or ``TEMPORARY``
    table_type: str
    #: the data source (``parquet``, ``orc``, ``csv``, ``delta``, ``hive``, ...); ``None`` for views
    provider: str | None
    #: the files' format: the provider's, or for a Hive table the one its serde reads (``parquet``, ``orc``)
    file_format: str | None
    #: an fsspec URL of the table's directory; ``None`` for views
    location: str | None
    #: every column in the table's order (Spark puts partition columns last)
    columns: tuple[SparkColumn, ...]

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    @property
    def data_columns(self) -> tuple[SparkColumn, ...]:
        return tuple(c for c in self.columns if not c.is_partition)

    @property
    def partition_columns(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns if c.is_partition)

    @property
    def is_file_backed(self) -> bool:
        """Whether the table is a directory of files in a format strom reads itself (Parquet, ORC)."""
        return self.location is not None and self.file_format in READABLE_FORMATS

    def column(self, name: str) -> SparkColumn | None:
        """The column called ``name``, matched as Spark does by default (case-insensitively)."""
        for c in self.columns:
            if c.name == name:
                return c
        folded = name.casefold()
        return next((c for c in self.columns if c.name.casefold() == folded), None)

    def arrow_schema(self) -> pa.Schema:
        return pa.schema([pa.field(c.name, c.arrow_type, c.nullable) for c in self.columns])


@dataclass(frozen=True, slots=True, kw_only=True)
class TableFile:
    """One file of a table: its fsspec URL and the values of the table's partition columns for it, in order."""

    url: str
    partition_values: tuple[Any, ...] = ()


# -- the catalog ---------------------------------------------------------------------------------------------
def describe_table(spark: SparkSession, name: str) -> SparkTable | None:
    """What Spark's catalog says about ``name`` (``sales``, ``db.sales``, ``spark_catalog.db.sales``, or a
    temporary view), or ``None`` when there is no such table or view.

    Uses the public catalog API (``tableExists``, ``getTable``, ``listColumns``) and ``DESCRIBE TABLE EXTENDED``
    for the location and provider, so it works on classic pyspark and on Spark Connect alike."""
    if not spark.catalog.tableExists(name):
        return None
    info = spark.catalog.getTable(name)
    temporary = bool(info.isTemporary) or info.catalog is None
    parts = [*(() if temporary else (info.catalog, *(info.namespace or ()))), info.name]
    qualified = ".".join(parts)
    schema = spark.table(name).schema
    partitions = {c.name.casefold() for c in spark.catalog.listColumns(name) if c.isPartition}
    details = {} if temporary else describe_details(spark, ".".join(_quote(p) for p in parts))
    provider = details.get("Provider")
    provider = provider.lower() if provider else None
    location = details.get("Location")
    columns = tuple(
        SparkColumn(
            name=f.name,
            data_type=f.dataType.simpleString(),
            spark_type_json=f.dataType.json(),
            arrow_type=spark_to_arrow_type(f.dataType, f"column '{f.name}' of table {qualified}"),
            nullable=f.nullable,
            is_partition=f.name.casefold() in partitions,
        )
        for f in schema.fields
    )
    table_type = str(info.tableType or details.get("Type") or "UNKNOWN").upper()
    return SparkTable(
        qualified_name=qualified,
        table_type=table_type,
        provider=provider,
        file_format=_file_format(provider, details),
        location=to_fsspec_url(location) if location and table_type not in ("VIEW", "TEMPORARY") else None,
        columns=columns,
    )


def describe_details(spark: SparkSession, quoted_name: str) -> dict[str, str]:
    """The ``# Detailed Table Information`` part of ``DESCRIBE TABLE EXTENDED`` as a dict (``Location``,
    ``Provider``, ``Type``, ``InputFormat``, ...)."""
    details: dict[str, str] = {}
    in_details = False
    for row in spark.sql(f"DESCRIBE TABLE EXTENDED {quoted_name}").collect():
        key, value = (row[0] or "").strip(), (row[1] or "").strip()
        if key.startswith("#"):
            in_details = key == "# Detailed Table Information"
        elif in_details and key:
            details.setdefault(key, value)
    return details


def _quote(identifier: str) -> str:
    return "`" + identifier.replace("`", "``") + "`"


def _file_format(provider: str | None, details: dict[str, str]) -> str | None:
    if provider != "hive":
        return provider
    serde = (details.get("InputFormat", "") + " " + details.get("Serde Library", "")).lower()
    for fmt in ("parquet", "orc", "avro"):
        if fmt in serde:
            return fmt
    return "textfile" if "text" in serde or "lazysimpleserde" in serde else "hive"


def table_files(spark: SparkSession, table: SparkTable) -> list[TableFile]:
    """The files of ``table`` (``spark.table(name).inputFiles()``: the files Spark would read now) with their
    partition values, typed by the partition columns' types. A file whose path lacks a partition segment (a
    partition at a custom location) is a :class:`~strom.exceptions.ConnectorError`."""
    partitions = [c for c in table.columns if c.is_partition]
    files = []
    for uri in sorted(spark.table(table.qualified_name).inputFiles()):
        url = to_fsspec_url(uri)
        raw = parse_partition_path(url, [c.name for c in partitions], table.qualified_name)
        values = tuple(partition_value(raw[c.name], c.arrow_type, url, c.name) for c in partitions)
        files.append(TableFile(url=url, partition_values=values))
    return files


# -- paths and partition values --------------------------------------------------------------------------------
def to_fsspec_url(uri: str) -> str:
    """A Hadoop/Spark file URI as an fsspec URL: ``file:/x`` and ``file:///x`` → ``file:///x``, ``s3a://b/k`` →
    ``s3://b/k``; the URI's own percent-escapes are decoded (``a%20b`` → ``a b``), as Hadoop's ``Path`` does.

    >>> to_fsspec_url("file:/tmp/t/p=a%20b/part-0.parquet")
    'file:///tmp/t/p=a b/part-0.parquet'
    """
    parsed = urllib.parse.urlsplit(uri)
    scheme = parsed.scheme.lower()
    path = urllib.parse.unquote(parsed.path)
    if scheme in ("", "file"):
        return "file://" + (path if path.startswith("/") else "/" + path)
    if scheme in ("s3a", "s3n"):
        scheme = "s3"
    return f"{scheme}://{parsed.netloc}{path}"


_SPARK_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")


def _unescape_path_name(text: str) -> str:
    """Spark's ``ExternalCatalogUtils.unescapePathName``: ``%XX`` → the character of code ``XX``."""
    return _SPARK_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)


def parse_partition_path(
    path: str, partition_columns: Sequence[str], where: str = "the table"
) -> dict[str, str | None]:
    """The raw partition values in ``path`` (``.../day=2024-01-01/country=DE/part-0.parquet``): for each of
    ``partition_columns`` the value of the last ``column=value`` directory segment of that name (Spark's names are
    case-insensitive), unescaped; ``__HIVE_DEFAULT_PARTITION__`` is ``None``.

    >>> parse_partition_path("/t/day=2024-01-01/city=x%2Fy/part-0.parquet", ["day", "city"])
    {'day': '2024-01-01', 'city': 'x/y'}
    """
    found: dict[str, str] = {}
    for segment in path.split("/")[:-1]:
        key, eq, value = segment.partition("=")
        if eq:
            found[_unescape_path_name(key).casefold()] = value
    result: dict[str, str | None] = {}
    for column in partition_columns:
        raw = found.get(column.casefold())
        if raw is None:
            raise ConnectorError(
                f"SparkSource: expected a '{column}=<value>' directory in the path of every file of {where}; got "
                f"{path}; hint: partitions at custom locations are not read from their paths — read the table with "
                "SparkSource.from_dataframe(spark.table(name)), which stages it to Parquet"
            )
        result[column] = None if raw == HIVE_DEFAULT_PARTITION else _unescape_path_name(raw)
    return result


def partition_value(raw: str | None, arrow_type: pa.DataType, path: str = "?", column: str = "?") -> Any:
    """``raw`` (a partition directory's value) as a Python value of ``arrow_type``, as Spark casts it:
    ``partition_value("7", pa.int32())`` → ``7``; ``None`` stays ``None``."""
    if raw is None:
        return None
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return raw
    try:
        return pa.array([raw], pa.string()).cast(arrow_type)[0].as_py()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise ConnectorError(
            f"SparkSource: expected the partition value of '{column}' in {path} to be a {arrow_type}; got {raw!r} "
            f"({exc}); hint: the directory does not match the table's partition schema"
        ) from None


# -- types ------------------------------------------------------------------------------------------------------
def spark_to_arrow_type(data_type: DataType, where: str = "a column") -> pa.DataType:
    """The pyarrow type of a pyspark ``DataType`` (the table in the module docs); an unsupported type (interval
    of months, variant, ...) raises :class:`~strom.exceptions.ConnectorError` naming ``where``."""
    from pyspark.sql import types as t

    simple: dict[type, pa.DataType] = {
        t.BooleanType: pa.bool_(),
        t.ByteType: pa.int8(),
        t.ShortType: pa.int16(),
        t.IntegerType: pa.int32(),
        t.LongType: pa.int64(),
        t.FloatType: pa.float32(),
        t.DoubleType: pa.float64(),
        t.StringType: pa.string(),
        t.CharType: pa.string(),
        t.VarcharType: pa.string(),
        t.BinaryType: pa.binary(),
        t.DateType: pa.date32(),
        t.TimestampType: pa.timestamp("us", tz="UTC"),
        t.TimestampNTZType: pa.timestamp("us"),
        t.DayTimeIntervalType: pa.duration("us"),
        t.NullType: pa.null(),
    }
    for kind, arrow in simple.items():
        if isinstance(data_type, kind):
            return arrow
    if isinstance(data_type, t.DecimalType):
        return pa.decimal128(data_type.precision, data_type.scale)
    if isinstance(data_type, t.ArrayType):
        return pa.list_(spark_to_arrow_type(data_type.elementType, where))
    if isinstance(data_type, t.MapType):
        return pa.map_(spark_to_arrow_type(data_type.keyType, where), spark_to_arrow_type(data_type.valueType, where))
    if isinstance(data_type, t.StructType):
        return pa.struct([pa.field(f.name, spark_to_arrow_type(f.dataType, where), f.nullable) for f in data_type])
    raise ConnectorError(
        f"SparkSource: expected a Spark type with a pyarrow counterpart for {where}; got {data_type.simpleString()}; "
        "hint: cast the column in a DataFrame (e.g. to string) and read it with SparkSource.from_dataframe"
    )


def spark_schema_to_arrow(schema: StructType, where: str = "a DataFrame") -> pa.Schema:
    """A pyspark ``StructType`` as a ``pyarrow.Schema`` (names, types, nullability kept)."""
    return pa.schema(
        [pa.field(f.name, spark_to_arrow_type(f.dataType, f"column '{f.name}' of {where}"), f.nullable) for f in schema]
    )


def arrow_to_spark_type(arrow_type: pa.DataType) -> DataType:
    """The pyspark ``DataType`` of a pyarrow type: the inverse of :func:`spark_to_arrow_type`, plus large strings,
    binaries and lists, date64, timestamps of any unit (with a time zone → ``timestamp``, without →
    ``timestamp_ntz``) and unsigned integers (widened: uint8 → smallint, ..., uint64 → decimal(20,0))."""
    from pyspark.sql import types as t

    a = pa.types
    exact: list[tuple[Any, Any]] = [
        (a.is_boolean, t.BooleanType),
        (a.is_int8, t.ByteType),
        (a.is_int16, t.ShortType),
        (a.is_int32, t.IntegerType),
        (a.is_int64, t.LongType),
        (a.is_uint8, t.ShortType),
        (a.is_uint16, t.IntegerType),
        (a.is_uint32, t.LongType),
        (a.is_float32, t.FloatType),
        (a.is_float64, t.DoubleType),
        (lambda x: a.is_string(x) or a.is_large_string(x), t.StringType),
        (lambda x: a.is_binary(x) or a.is_large_binary(x) or a.is_fixed_size_binary(x), t.BinaryType),
        (lambda x: a.is_date32(x) or a.is_date64(x), t.DateType),
        (a.is_null, t.NullType),
    ]
    for test, spark_type in exact:
        if test(arrow_type):
            return spark_type()  # type: ignore[no-any-return]
    if a.is_uint64(arrow_type):
        return t.DecimalType(20, 0)
    if a.is_decimal(arrow_type) and arrow_type.precision <= 38:
        return t.DecimalType(arrow_type.precision, arrow_type.scale)
    if a.is_timestamp(arrow_type):
        return t.TimestampType() if arrow_type.tz is not None else t.TimestampNTZType()
    if a.is_duration(arrow_type):
        return t.DayTimeIntervalType()
    if a.is_list(arrow_type) or a.is_large_list(arrow_type):
        return t.ArrayType(arrow_to_spark_type(arrow_type.value_type), True)
    if a.is_map(arrow_type):
        return t.MapType(arrow_to_spark_type(arrow_type.key_type), arrow_to_spark_type(arrow_type.item_type), True)
    if a.is_struct(arrow_type):
        return t.StructType([t.StructField(f.name, arrow_to_spark_type(f.type), f.nullable) for f in arrow_type])
    raise ConnectorError(
        f"expected a pyarrow type with a Spark counterpart; got {arrow_type}; hint: cast the column (e.g. to "
        "string or int64) before it reaches Spark"
    )


def arrow_schema_to_spark(schema: pa.Schema) -> StructType:
    """A ``pyarrow.Schema`` as a pyspark ``StructType`` (see :func:`arrow_to_spark_type`)."""
    from pyspark.sql.types import StructField, StructType

    return StructType([StructField(f.name, arrow_to_spark_type(f.type), f.nullable) for f in schema])


def spark_to_type_info(data_type: DataType) -> TypeInformation:
    """PyFlink's type of a Spark column's values: bigint → ``Types.LONG()``, decimal → ``Types.BIG_DEC()``,
    date → ``Types.SQL_DATE()``, struct → ``Types.ROW_NAMED``; binary (Python ``bytes``) and what has no
    PyFlink type (intervals, void) → ``Types.PICKLED_BYTE_ARRAY()``."""
    from pyspark.sql import types as t

    simple: list[tuple[type, Any]] = [
        (t.BooleanType, Types.BOOLEAN),
        (t.ByteType, Types.BYTE),
        (t.ShortType, Types.SHORT),
        (t.IntegerType, Types.INT),
        (t.LongType, Types.LONG),
        (t.FloatType, Types.FLOAT),
        (t.DoubleType, Types.DOUBLE),
        (t.StringType, Types.STRING),
        (t.CharType, Types.STRING),
        (t.VarcharType, Types.STRING),
        (t.DecimalType, Types.BIG_DEC),
        (t.DateType, Types.SQL_DATE),
        (t.TimestampType, Types.SQL_TIMESTAMP),
        (t.TimestampNTZType, Types.SQL_TIMESTAMP),
    ]
    for kind, make in simple:
        if isinstance(data_type, kind):
            return make()  # type: ignore[no-any-return]
    if isinstance(data_type, t.ArrayType):
        return Types.LIST(spark_to_type_info(data_type.elementType))
    if isinstance(data_type, t.MapType):
        return Types.MAP(spark_to_type_info(data_type.keyType), spark_to_type_info(data_type.valueType))
    if isinstance(data_type, t.StructType):
        return Types.ROW_NAMED([f.name for f in data_type], [spark_to_type_info(f.dataType) for f in data_type])
    return Types.PICKLED_BYTE_ARRAY()
