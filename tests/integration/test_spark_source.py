"""``SparkSource`` on a real SparkSession (local mode): tables and DataFrames read by strom's TaskManagers — on the
MiniCluster and hosted in Spark tasks — equal what Spark's own ``collect()`` gives; a plain scan is read from its
files, anything else staged to Parquet by Spark; a TaskManager SIGKILLed mid-read loses and repeats nothing; and
every misuse is a ConnectorError naming the connector and the table in the client, before any TaskManager starts."""

from __future__ import annotations

import datetime as dt
import os
from collections import Counter
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from failover import committed_rows, failover_env, result_with_kills

from strom import Configuration, FileSink, JsonLinesEncoder, MapFunction, StreamExecutionEnvironment
from strom.connectors.spark import SparkSource, describe_table, table_files
from strom.deploy.spark.session import create_session
from strom.exceptions import ConnectorError

pytest.importorskip("pyspark")

pytestmark = [pytest.mark.slow, pytest.mark.spark]

MASTER = "local[2,4]"
ROWS = 3_000


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One SparkSession for the module (one SparkContext per process) with its tables: ``part`` partitioned by an
    int and a string (nulls and characters Spark escapes among the values), ``flat`` not partitioned, ``orc``,
    ``csv`` and the view ``recent``."""
    warehouse = tmp_path_factory.mktemp("warehouse")
    session = create_session(
        Configuration({"spark.master": MASTER, "spark.sql.warehouse.dir": str(warehouse)}), "strom-spark-source-tests"
    )
    session.sparkContext.setLogLevel("ERROR")
    cities = ["a b", "x/y", "50%", "Köln", None]
    rows = [
        (i, f"name-{i}", Decimal(i % 1000) / 100, dt.date(2024, 1, 1) + dt.timedelta(days=i % 7), i % 3, cities[i % 5])
        for i in range(ROWS)
    ]
    schema = "id bigint, name string, amount decimal(10,2), day date, bucket int, city string"
    df = session.createDataFrame(rows, schema)
    df.repartition(3).write.partitionBy("bucket", "city").format("parquet").saveAsTable("part")
    # several files of several row groups each
    df.drop("city").repartition(3).write.option("parquet.block.size", 16 * 1024).format("parquet").saveAsTable("flat")
    df.repartition(2).write.format("orc").saveAsTable("orc")
    df.limit(10).write.format("csv").saveAsTable("csv")
    session.sql("CREATE VIEW recent AS SELECT id, name FROM flat WHERE id > 100")
    yield session
    session.stop()


def env_of(parallelism: int, spark: Any = None) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment(Configuration(), spark=spark)
    env.set_parallelism(parallelism)
    return env


def read(env: StreamExecutionEnvironment, source: SparkSource) -> Counter[tuple[Any, ...]]:
    stream = env.from_source(source, None, "spark", source.get_produced_type())
    assert stream.get_type() == source.get_produced_type()
    with stream.execute_and_collect() as results:
        return Counter(tuple(row) for row in results)


def spark_rows(df: Any) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(row) for row in df.collect())


@pytest.mark.timeout(300)
@pytest.mark.parametrize("parallelism", [1, 2])
@pytest.mark.parametrize("table", ["part", "flat", "orc"])
def test_a_table_read_on_the_minicluster_equals_spark_collect(spark: Any, table: str, parallelism: int) -> None:
    source = SparkSource.from_table(spark, table)
    assert source.staging_path is None
    assert source.get_produced_type().get_field_names() == spark.table(table).columns
    assert read(env_of(parallelism), source) == spark_rows(spark.table(table))


@pytest.mark.timeout(300)
def test_columns_are_projected_and_named_as_the_table_names_them(spark: Any) -> None:
    source = SparkSource.from_table(spark, "default.part", columns=["CITY", "id"])
    assert source.get_produced_type().get_field_names() == ["city", "id"]
    env = env_of(2)
    stream = env.from_source(source, None, "part", source.get_produced_type()).map(lambda r: (r.city, r["id"]))
    with stream.execute_and_collect() as results:
        got = Counter(results)
    assert got == spark_rows(spark.table("part").select("city", "id"))


@pytest.mark.timeout(300)
def test_a_dataframe_that_is_not_a_scan_is_staged_by_spark_and_equals_its_collect(spark: Any) -> None:
    df = spark.table("part").where("amount > 2").groupBy("city", "bucket").agg({"amount": "sum", "id": "count"})
    source = SparkSource.from_dataframe(df)
    assert source.staging_path is not None and "strom-spark-staging-" in source.staging_path
    assert source.files and all(f.url.startswith(source.staging_path) for f in source.files)
    assert read(env_of(2), source) == spark_rows(df)
    source.delete_staging()
    assert not os.path.exists(source.staging_path.removeprefix("file://"))


@pytest.mark.timeout(300)
def test_a_plain_scan_dataframe_is_read_from_its_own_files(spark: Any) -> None:
    location = describe_table(spark, "part").location  # type: ignore[union-attr]
    df = spark.read.parquet(location).select("name", "Bucket", "city")
    source = SparkSource.from_dataframe(df, staging_path="/must/not/be/used")
    assert source.staging_path is None
    table = describe_table(spark, "part")
    assert table is not None
    assert {f.url for f in source.files} == {f.url for f in table_files(spark, table)}
    assert source.get_produced_type().get_field_names() == ["name", "Bucket", "city"]
    assert read(env_of(2), source) == spark_rows(df)
    # a table through spark.table(...) is a plain scan as well
    assert SparkSource.from_dataframe(spark.table("flat").select("id")).staging_path is None


@pytest.mark.timeout(300)
def test_on_the_spark_target_task_managers_in_spark_tasks_read_the_same_rows(spark: Any) -> None:
    source = SparkSource.from_table(spark, "part")
    assert read(env_of(2, spark), source) == spark_rows(spark.table("part"))
    df = spark.table("flat").where("id % 2 = 0").select("id", "amount")
    staged = SparkSource.from_dataframe(df)
    assert staged.staging_path is not None
    assert read(env_of(2, spark), staged) == spark_rows(df)


@pytest.mark.timeout(300)
def test_timestamps_binaries_and_nested_columns_and_an_empty_table(spark: Any) -> None:
    spark.sql(
        "CREATE TABLE typed USING parquet AS SELECT id, "
        "timestamp'2024-03-01 12:30:00' + make_interval(0, 0, 0, 0, 0, id) AS ts, "
        "cast(concat('b', id) AS binary) AS bin, "
        "array(id, id + 1) AS arr, named_struct('x', id, 'y', 'why') AS st, map('k', named_struct('z', id)) AS m "
        "FROM range(50)"
    )
    spark.sql("CREATE TABLE empty (id bigint, name string) USING parquet")
    try:
        source = SparkSource.from_table(spark, "typed")
        env = env_of(1)
        # Spark's TimestampType is an instant: strom gives it as an aware datetime in UTC, collect() as local time
        stream = env.from_source(source, None, "typed").map(
            lambda r: (r.id, r.ts.astimezone().replace(tzinfo=None), r.bin, tuple(r.arr), (r.st.x, r.st.y), r.m["k"].z)
        )
        with stream.execute_and_collect() as results:
            got = sorted(results)
        expected = sorted(
            (r.id, r.ts, bytes(r.bin), tuple(r.arr), (r.st.x, r.st.y), r.m["k"].z)
            for r in spark.table("typed").collect()
        )
        assert got == expected
        empty = SparkSource.from_table(spark, "empty")
        assert empty.files == () and read(env_of(2), empty) == Counter()
    finally:
        spark.sql("DROP TABLE typed")
        spark.sql("DROP TABLE empty")


class Throttle(MapFunction):
    """About ``rate`` records per second per subtask, so that the job lasts until a TaskManager is killed."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.count = 0
        self.start = 0.0

    def map(self, value: Any) -> Any:
        import time

        if self.count == 0:
            self.start = time.monotonic()
        self.count += 1
        if self.count % 50 == 0:
            ahead = self.count / self.rate - (time.monotonic() - self.start)
            if ahead > 0:
                time.sleep(ahead)
        return value


def as_json_row(row: Any) -> tuple[Any, ...]:
    return (row.id, row.name, str(row.amount), row.day.isoformat(), row.bucket, row.city)


@pytest.mark.processes  # kills a TaskManager
@pytest.mark.timeout(300)
def test_a_task_manager_killed_mid_read_still_gives_each_row_exactly_once(spark: Any, tmp_path: Path) -> None:
    source = SparkSource.from_table(spark, "part")
    env = failover_env(parallelism=2, interval_ms=200)
    (
        env.from_source(source, None, "part")
        .uid("part")
        .map(Throttle(1_000))
        .map(as_json_row)
        .sink_to(FileSink.for_row_format(str(tmp_path / "out"), JsonLinesEncoder()).build())
        .uid("out")
    )
    result, killed = result_with_kills(env.execute_async("spark table, one kill"), kills=1, seed=3)
    assert len(killed) == 1, "the job ended before a TaskManager was killed"
    assert result.num_restarts >= 1
    expected = Counter(as_json_row(r) for r in spark.table("part").collect())
    assert Counter(committed_rows(tmp_path / "out")) == expected


# -- errors, in the client ------------------------------------------------------------------------------------------
@pytest.mark.timeout(120)
def test_a_missing_table_names_the_connector_the_table_and_the_tables_there(spark: Any) -> None:
    with pytest.raises(ConnectorError, match=r"SparkSource: expected a table 'nope' .* \(tables there: csv, flat, orc"):
        SparkSource.from_table(spark, "nope")
    with pytest.raises(ConnectorError, match=r"table 'nodb\.t' .* got no database 'nodb' \(databases: default\)"):
        SparkSource.from_table(spark, "nodb.t")
    assert describe_table(spark, "nope") is None


@pytest.mark.timeout(120)
def test_a_missing_column_is_named_with_the_columns_there(spark: Any) -> None:
    with pytest.raises(
        ConnectorError,
        match=r"SparkSource: expected a column 'nope' in table spark_catalog\.default\.part; got the columns "
        r"\['id', 'name', 'amount', 'day', 'bucket', 'city'\]",
    ):
        SparkSource.from_table(spark, "part", columns=["id", "nope"])


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("table", "got"),
    [("recent", r"got a VIEW with no files of its own"), ("csv", r"got a table of format 'csv' at file://")],
)
def test_a_table_that_is_not_parquet_or_orc_files_points_to_from_dataframe(spark: Any, table: str, got: str) -> None:
    with pytest.raises(ConnectorError, match=rf"SparkSource: expected a table of Parquet or ORC files .*{got}"):
        SparkSource.from_table(spark, table)
    df = spark.table(table)
    source = SparkSource.from_dataframe(df)  # ... which reads it, staged
    assert source.staging_path is not None
    assert read(env_of(1), source) == spark_rows(df)


@pytest.mark.timeout(120)
def test_a_file_that_vanished_since_the_source_was_built_fails_execute_in_the_client(spark: Any) -> None:
    spark.table("flat").write.format("parquet").saveAsTable("doomed")
    source = SparkSource.from_table(spark, "doomed")
    gone = source.files[0].url
    os.remove(gone.removeprefix("file://"))
    env = env_of(1)
    env.from_source(source, None, "doomed").print()
    with pytest.raises(ConnectorError, match=rf"expected the file {gone} of table spark_catalog\.default\.doomed"):
        env.execute("vanished")
    spark.sql("DROP TABLE doomed")


class _FakeConf:
    def get(self, key: str, default: Any = None) -> Any:
        return "yarn" if key == "spark.master" else default


@pytest.mark.timeout(60)
def test_staging_on_a_cluster_master_needs_a_staging_path(spark: Any) -> None:
    df = spark.table("flat").where("id > 5")

    class OnYarn:  # the DataFrame as a yarn session would show it (no plan at hand: it is staged)
        schema = df.schema
        sparkSession = type("S", (), {"conf": _FakeConf()})()

    with pytest.raises(ConnectorError, match=r"expected a staging_path .* got none, and the master 'yarn'"):
        SparkSource.from_dataframe(OnYarn())  # type: ignore[arg-type]
    with pytest.raises(ConnectorError, match=r"expected a staging_path that does not exist yet"):
        SparkSource.from_dataframe(df, staging_path=str(Path(__file__).parent))
