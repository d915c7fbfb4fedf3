"""The pure pieces of the Spark source: partition paths, URLs, partition values, Spark <-> pyarrow types, and the
file format reading pyarrow-written files into named rows with partition values (no SparkSession: pyspark's types
are plain Python)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("pyspark")
from pyspark.sql import types as T

from strom.api.typeinfo import Types
from strom.connectors.file_system.split import CheckpointedPosition
from strom.connectors.spark.catalog import (
    SparkColumn,
    SparkTable,
    TableFile,
    arrow_schema_to_spark,
    arrow_to_spark_type,
    parse_partition_path,
    partition_value,
    spark_schema_to_arrow,
    spark_to_arrow_type,
    spark_to_type_info,
    to_fsspec_url,
)
from strom.connectors.spark.table_format import SparkFileEnumerator, SparkFilesFormat, nested_converter
from strom.exceptions import ConnectorError

pytestmark = pytest.mark.timeout(30)


# -- paths --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("uri", "url"),
    [
        ("file:/tmp/t/part-0.parquet", "file:///tmp/t/part-0.parquet"),
        ("file:///tmp/t/p=a%20b/x.parquet", "file:///tmp/t/p=a b/x.parquet"),
        ("file:///tmp/t/s=50%2525/x.parquet", "file:///tmp/t/s=50%25/x.parquet"),
        ("/tmp/t", "file:///tmp/t"),
        ("s3a://bucket/t/x.parquet", "s3://bucket/t/x.parquet"),
        ("s3n://bucket/t", "s3://bucket/t"),
        ("hdfs://nn:8020/warehouse/t", "hdfs://nn:8020/warehouse/t"),
    ],
)
def test_spark_uris_become_fsspec_urls(uri: str, url: str) -> None:
    assert to_fsspec_url(uri) == url


def test_partition_segments_are_parsed_unescaped_and_case_insensitively() -> None:
    path = "file:///w/t/Day=2024-01-01/city=x%2Fy/s=50%25/part-0.parquet"
    assert parse_partition_path(path, ["day", "city", "s"]) == {"day": "2024-01-01", "city": "x/y", "s": "50%"}
    assert parse_partition_path("/w/t/s=__HIVE_DEFAULT_PARTITION__/part-0", ["s"]) == {"s": None}
    assert parse_partition_path("/w/t/s=%C3%A9%3D%3A%23/part-0", ["s"]) == {"s": "Ã©=:#"}  # Spark escapes per byte
    assert parse_partition_path("/w/t/s=é%3D%3A%23/part-0", ["s"]) == {"s": "é=:#"}
    assert parse_partition_path("/w/p=1/t/p=2/part-0", ["p"]) == {"p": "2"}  # the innermost segment wins
    assert parse_partition_path("/w/t/part-0", []) == {}


def test_a_file_without_its_partition_segment_is_a_clear_error() -> None:
    with pytest.raises(ConnectorError, match=r"SparkSource: expected a 'day=<value>' directory .* /w/t/part-0"):
        parse_partition_path("/w/t/part-0", ["day"], "table t")


def test_partition_values_are_typed_by_the_partition_schema() -> None:
    assert partition_value("7", pa.int32()) == 7
    assert partition_value("-3", pa.int64()) == -3
    assert partition_value("2024-01-02", pa.date32()) == dt.date(2024, 1, 2)
    assert partition_value("1.50", pa.decimal128(10, 2)) == Decimal("1.50")
    assert partition_value("true", pa.bool_()) is True
    assert partition_value("0.5", pa.float64()) == 0.5
    assert partition_value("a b", pa.string()) == "a b"
    assert partition_value(None, pa.int32()) is None
    with pytest.raises(ConnectorError, match=r"partition value of 'n' in /t/n=x/f to be a int32; got 'x'"):
        partition_value("x", pa.int32(), "/t/n=x/f", "n")


# -- types --------------------------------------------------------------------------------------------------------
SPARK_SCHEMA = T.StructType(
    [
        T.StructField("b", T.BooleanType(), True),
        T.StructField("i8", T.ByteType(), True),
        T.StructField("i16", T.ShortType(), True),
        T.StructField("i32", T.IntegerType(), False),
        T.StructField("i64", T.LongType(), True),
        T.StructField("f32", T.FloatType(), True),
        T.StructField("f64", T.DoubleType(), True),
        T.StructField("s", T.StringType(), True),
        T.StructField("bin", T.BinaryType(), True),
        T.StructField("dec", T.DecimalType(12, 3), True),
        T.StructField("d", T.DateType(), True),
        T.StructField("ts", T.TimestampType(), True),
        T.StructField("ntz", T.TimestampNTZType(), True),
        T.StructField("arr", T.ArrayType(T.LongType()), True),
        T.StructField("m", T.MapType(T.StringType(), T.DoubleType()), True),
        T.StructField("st", T.StructType([T.StructField("x", T.IntegerType()), T.StructField("y", T.StringType())])),
    ]
)
ARROW_SCHEMA = pa.schema(
    [
        pa.field("b", pa.bool_()),
        pa.field("i8", pa.int8()),
        pa.field("i16", pa.int16()),
        pa.field("i32", pa.int32(), nullable=False),
        pa.field("i64", pa.int64()),
        pa.field("f32", pa.float32()),
        pa.field("f64", pa.float64()),
        pa.field("s", pa.string()),
        pa.field("bin", pa.binary()),
        pa.field("dec", pa.decimal128(12, 3)),
        pa.field("d", pa.date32()),
        pa.field("ts", pa.timestamp("us", tz="UTC")),
        pa.field("ntz", pa.timestamp("us")),
        pa.field("arr", pa.list_(pa.int64())),
        pa.field("m", pa.map_(pa.string(), pa.float64())),
        pa.field("st", pa.struct([pa.field("x", pa.int32()), pa.field("y", pa.string())])),
    ]
)


def test_spark_schemas_convert_to_pyarrow_and_back() -> None:
    assert spark_schema_to_arrow(SPARK_SCHEMA) == ARROW_SCHEMA
    back = arrow_schema_to_spark(ARROW_SCHEMA)
    # Spark's MapType has valueContainsNull and ArrayType containsNull: both True either way
    assert back.simpleString() == SPARK_SCHEMA.simpleString()
    assert [f.nullable for f in back] == [f.nullable for f in SPARK_SCHEMA]


def test_pyarrow_types_without_an_exact_spark_twin_are_widened() -> None:
    assert arrow_to_spark_type(pa.large_string()) == T.StringType()
    assert arrow_to_spark_type(pa.uint8()) == T.ShortType()
    assert arrow_to_spark_type(pa.uint32()) == T.LongType()
    assert arrow_to_spark_type(pa.uint64()) == T.DecimalType(20, 0)
    assert arrow_to_spark_type(pa.timestamp("ns", tz="Europe/Berlin")) == T.TimestampType()
    assert arrow_to_spark_type(pa.timestamp("ms")) == T.TimestampNTZType()
    assert arrow_to_spark_type(pa.date64()) == T.DateType()
    with pytest.raises(ConnectorError, match=r"expected a pyarrow type with a Spark counterpart; got time64"):
        arrow_to_spark_type(pa.time64("us"))


def test_a_spark_type_without_a_pyarrow_twin_names_the_column() -> None:
    with pytest.raises(ConnectorError, match=r"SparkSource: .* for column 'span'; got interval year to month"):
        spark_to_arrow_type(T.YearMonthIntervalType(), "column 'span'")


def test_spark_types_map_to_pyflink_types() -> None:
    assert spark_to_type_info(T.LongType()) == Types.LONG()
    assert spark_to_type_info(T.DecimalType(10, 2)) == Types.BIG_DEC()
    assert spark_to_type_info(T.DateType()) == Types.SQL_DATE()
    assert spark_to_type_info(T.ArrayType(T.StringType())) == Types.LIST(Types.STRING())
    assert spark_to_type_info(T.BinaryType()) == Types.PICKLED_BYTE_ARRAY()
    st = spark_to_type_info(T.StructType([T.StructField("x", T.IntegerType())]))
    assert st == Types.ROW_NAMED(["x"], [Types.INT()])


def test_a_table_finds_columns_as_spark_does() -> None:
    def col(name: str, part: bool = False) -> SparkColumn:
        return SparkColumn(
            name=name, data_type="int", spark_type_json='"integer"', arrow_type=pa.int32(), is_partition=part
        )

    table = SparkTable(
        qualified_name="spark_catalog.default.t",
        table_type="MANAGED",
        provider="parquet",
        file_format="parquet",
        location="file:///w/t",
        columns=(col("id"), col("Name"), col("day", True)),
    )
    assert table.column("name") is table.columns[1]
    assert table.column("nope") is None
    assert table.partition_columns == ("day",)
    assert [c.name for c in table.data_columns] == ["id", "Name"]
    assert table.is_file_backed
    assert table.arrow_schema().names == ["id", "Name", "day"]
    assert table.columns[0].spark_type() == T.IntegerType()


# -- reading files ----------------------------------------------------------------------------------------------
def _format(**kw: object) -> SparkFilesFormat:
    base: dict[str, object] = {
        "what": "table t",
        "file_format": "parquet",
        "fields": ("id", "name", "day", "extra"),
        "arrow_types": (pa.int64(), pa.string(), pa.date32(), pa.int32()),
        "sources": ("id", "name", 0, "extra"),
        "batch_size": 7,
    }
    base.update(kw)
    return SparkFilesFormat(**base)  # type: ignore[arg-type]


def _write(path: Path, rows: int, row_group_size: int = 10) -> None:
    table = pa.table({"ID": pa.array(range(rows), pa.int32()), "name": [f"n{i}" for i in range(rows)]})
    pq.write_table(table, path, row_group_size=row_group_size)


def _read_all(fmt: SparkFilesFormat, files: list[TableFile]) -> list[tuple[object, ...]]:
    fs = fsspec.filesystem("file")
    enumerator = SparkFileEnumerator(tuple(f.url for f in files), {}, fmt.create_splits, tuple(files), fmt)
    rows = []
    for _, splits in enumerator.enumerate_splits():
        for split in splits:
            reader = fmt.create_reader(fs, split.path.removeprefix("file://"), split)
            while (batch := reader.read_batch(5)) is not None:
                rows.extend(tuple(r) for r in batch)
            reader.close()
    return rows


def test_files_read_into_named_rows_with_partition_values_casts_and_missing_columns(tmp_path: Path) -> None:
    _write(tmp_path / "a.parquet", 25)
    files = [TableFile(url=f"file://{tmp_path}/a.parquet", partition_values=(dt.date(2024, 1, 2),))]
    rows = _read_all(_format(), files)
    # "id" matches the file's "ID" (case-insensitively), int32 cast to the table's int64; "extra" is null
    assert rows == [(i, f"n{i}", dt.date(2024, 1, 2), None) for i in range(25)]
    fs = fsspec.filesystem("file")
    fmt = _format()
    split = fmt.create_file_splits(fs, str(tmp_path / "a.parquet"), files[0].url, 0, files[0].partition_values)[1]
    reader = fmt.create_reader(fs, str(tmp_path / "a.parquet"), split)
    first = reader.read_batch(3)
    assert first is not None and first[0]["name"] == "n10" and first[0].day == dt.date(2024, 1, 2)
    resumed = fmt.create_reader(fs, str(tmp_path / "a.parquet"), reader.current_split())
    reader.close()
    rest: list[object] = []
    while (batch := resumed.read_batch(100)) is not None:
        rest.extend(r["id"] for r in batch)
    resumed.close()
    assert rest == list(range(13, 20))
    assert split.with_position(CheckpointedPosition(offset=-1, records_after_offset=3)) == reader.current_split()


def test_only_partition_columns_still_gives_a_row_per_record(tmp_path: Path) -> None:
    _write(tmp_path / "a.parquet", 12)
    fmt = _format(fields=("day",), arrow_types=(pa.date32(),), sources=(0,))
    rows = _read_all(fmt, [TableFile(url=f"file://{tmp_path}/a.parquet", partition_values=(None,))])
    assert rows == [(None,)] * 12


def test_a_file_gone_since_the_catalog_listed_it_is_named(tmp_path: Path) -> None:
    _write(tmp_path / "a.parquet", 5)
    url = f"file://{tmp_path}/gone.parquet"
    with pytest.raises(ConnectorError, match=r"SparkSource: expected the file .*gone\.parquet of table t to exist"):
        _read_all(_format(), [TableFile(url=url, partition_values=(None,))])
    fmt = _format()
    fs = fsspec.filesystem("file")
    split = fmt.create_file_splits(fs, str(tmp_path / "a.parquet"), url, 0, (None,))[0]
    with pytest.raises(ConnectorError, match=r"gone\.parquet of table t to exist"):
        fmt.create_reader(fs, str(tmp_path / "gone.parquet"), split)


def test_nested_values_take_spark_shapes_structs_as_named_rows() -> None:
    st = pa.struct([pa.field("x", pa.int32()), pa.field("tags", pa.map_(pa.string(), pa.int64()))])
    arr = pa.array([{"x": 1, "tags": [("a", 2)]}, None], type=st)
    convert = nested_converter(st)
    assert convert is not None
    first, second = (convert(v) for v in arr.to_pylist(maps_as_pydicts="strict"))
    assert first.x == 1 and first["tags"] == {"a": 2} and first.get_field_names() == ["x", "tags"]
    assert second is None
    assert nested_converter(pa.list_(pa.int64())) is None  # lists of plain values are right as they are
    assert nested_converter(pa.map_(pa.string(), pa.int64())) is None
    rows = nested_converter(pa.list_(st))
    assert rows is not None and rows([{"x": 3, "tags": None}])[0].x == 3
