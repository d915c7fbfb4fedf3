"""SparkTableSink on real TaskManager processes (MiniCluster) with a real SparkSession (local mode) in the client,
whose catalog the JobManager's global committer updates.

A stream creates its table from its Types.ROW_NAMED and lands in it partitioned; with TaskManagers SIGKILLed twice
the table still equals the failure-free result with no row twice; a Spark query of the running job sees whole
checkpoints only; a checkpoint committed twice adds its files once; bad input fails naming the table and record."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from failover import completed_checkpoints, failover_env, result_with_kills
from spark_tables import ROW, failure_free, keyed_job, local_spark, location, staged_files, table_rows

from strom import Configuration, StreamExecutionEnvironment
from strom.api.row import Row
from strom.connectors.spark.sink import COMMITS_DIR, SparkTableCommitter, SparkTableSink
from strom.exceptions import ConnectorError, InvalidProgramError, JobExecutionError

pytestmark = [pytest.mark.slow, pytest.mark.spark]


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield from local_spark(tmp_path_factory.mktemp("warehouse"), "strom-table-sink")


@pytest.mark.timeout(240)
def test_a_stream_creates_its_partitioned_table_and_lands_in_it(spark: Any) -> None:
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"parallelism.default": 2}))
    env.enable_checkpointing(300)
    keyed_job(env, 5_000, SparkTableSink("landed", partition_by=["bucket"]))
    env.execute("a stream into a new Spark table")
    assert table_rows(spark, "landed") == failure_free(5_000)
    table = spark.catalog.getTable("landed")
    assert table.tableType == "MANAGED"
    assert [c.name for c in spark.catalog.listColumns("landed") if c.isPartition] == ["bucket"]
    assert sorted(r[0] for r in spark.sql("SHOW PARTITIONS landed").collect()) == [
        "bucket=b0",
        "bucket=b1",
        "bucket=b2",
    ]
    assert dict(spark.table("landed").dtypes) == {"key": "string", "n": "bigint", "value": "bigint", "bucket": "string"}
    assert staged_files(spark, "landed") == []


@pytest.mark.processes  # kills TaskManagers
@pytest.mark.timeout(400)
def test_task_managers_killed_twice_leave_the_table_equal_to_the_failure_free_result(spark: Any) -> None:
    n = 20_000
    env = failover_env(parallelism=2, interval_ms=200)
    keyed_job(env, n, SparkTableSink("survived", partition_by=["bucket"]), rate=2_500)
    result, killed = result_with_kills(env.execute_async("kills into a Spark table"), kills=2, seed=19)
    assert len(killed) == 2 and result.num_restarts >= 2
    rows = table_rows(spark, "survived")
    assert len(rows) == len(set(rows)), "a row is in the table twice"
    assert rows == failure_free(n)
    assert staged_files(spark, "survived") == [], "staged files of failed attempts were left behind"


@pytest.mark.timeout(300)
def test_a_query_of_the_running_job_sees_whole_checkpoints_only(spark: Any) -> None:
    n = 12_000
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"parallelism.default": 2}))
    env.enable_checkpointing(150)
    keyed_job(env, n, SparkTableSink("watched"), rate=4_000)
    client = env.execute_async("watched while it runs")
    completed_checkpoints(client, 1)
    seen: list[int] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            seen.append(spark.table("watched").count())

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        client.get_job_execution_result()
    finally:
        stop.set()
        watcher.join(60)
    spark.catalog.refreshTable("watched")
    assert spark.table("watched").count() == n
    commits = sorted((location(spark, "watched") / COMMITS_DIR).glob("*.json"))
    totals = [0]
    for marker in commits:
        totals.append(totals[-1] + json.loads(marker.read_text())["rows"])
    assert totals[-1] == n and len(commits) >= 2
    assert seen and set(seen) <= set(totals), f"a query saw part of a checkpoint: {sorted(set(seen) - set(totals))}"


@pytest.mark.timeout(240)
def test_a_checkpoint_committed_twice_adds_its_files_once(spark: Any) -> None:
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"parallelism.default": 1}))
    keyed_job(env, 100, SparkTableSink("twice"))
    env.execute("no checkpoints: committed at the end")
    assert len(table_rows(spark, "twice")) == 100
    sink = SparkTableSink("twice", spark=spark)
    sink.set_input_type(ROW)
    sink.validate()
    writer = sink.create_writer(_context())
    writer.write_batch([Row(key="x", n=1, value=7, bucket="b1"), Row(key="y", n=1, value=8, bucket="b2")])
    staged = writer.prepare_commit()
    committer = sink.create_global_committer()
    assert isinstance(committer, SparkTableCommitter)
    committer.commit(5, staged)
    committer.commit(5, staged)  # after a failure the same checkpoint comes again
    committer.commit(6, list(reversed(staged)))  # ... or merged into a later one
    rows = table_rows(spark, "twice")
    assert len(rows) == 102 and rows.count(("x", 1, 7, "b1")) == 1


def _context() -> Any:
    from strom.api.sink import SinkWriterContext

    return SinkWriterContext(subtask_index=0, parallelism=1, attempt_number=0)


@pytest.mark.timeout(120)
def test_a_stream_whose_fields_are_not_the_tables_columns_is_refused_in_the_client(spark: Any) -> None:
    spark.sql("CREATE TABLE other (key STRING, total BIGINT) USING parquet")
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"parallelism.default": 1}))
    keyed_job(env, 10, SparkTableSink("other"))
    with pytest.raises(ConnectorError) as err:
        env.execute("wrong columns")
    text = str(err.value)
    assert "SparkTableSink" in text and "other" in text and "'total'" in text and "'value'" in text


@pytest.mark.timeout(120)
def test_a_stream_without_a_schema_cannot_create_a_table(spark: Any) -> None:
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"parallelism.default": 1}))
    env.from_collection([1, 2, 3]).sink_to(SparkTableSink("nowhere"))
    with pytest.raises(ConnectorError, match="expected table 'nowhere' to exist, or a schema"):
        env.execute("no schema")
    assert not spark.catalog.tableExists("nowhere")


@pytest.mark.timeout(180)
def test_a_value_that_does_not_fit_its_column_fails_the_job_naming_table_column_and_record(spark: Any) -> None:
    spark.sql("CREATE TABLE typed (key STRING, amount BIGINT) USING parquet")
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"parallelism.default": 1}))
    env.from_collection([("a", 1), ("b", "lots")]).map(lambda t: {"key": t[0], "amount": t[1]}).sink_to(
        SparkTableSink("typed")
    )
    with pytest.raises(JobExecutionError) as err:
        env.execute("bad value")
    text = str(err.value)
    assert "SparkTableSink (table 'spark_catalog.default.typed')" in text
    assert "'amount'" in text and "'lots'" in text
    assert spark.table("typed").count() == 0


@pytest.mark.timeout(180)
@pytest.mark.parametrize("form", ["ddl", "struct_type", "spark_types"])
def test_a_schema_in_spark_s_own_forms_creates_the_table(spark: Any, form: str) -> None:
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    schema: Any = {
        "ddl": "user string, start long, n long",
        "struct_type": StructType(
            [StructField("user", StringType()), StructField("start", LongType()), StructField("n", LongType())]
        ),
        "spark_types": {"user": StringType(), "start": LongType(), "n": LongType()},
    }[form]
    table = f"sessions_{form}"
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"parallelism.default": 1}))
    env.from_collection([("a", 1, 2), ("b", 3, 4)]).sink_to(SparkTableSink(table, schema=schema))
    env.execute(f"a {form} schema")
    assert dict(spark.table(table).dtypes) == {"user": "string", "start": "bigint", "n": "bigint"}
    assert sorted(tuple(r) for r in spark.table(table).collect()) == [("a", 1, 2), ("b", 3, 4)]


def test_a_schema_of_another_kind_is_refused_naming_the_forms() -> None:
    with pytest.raises(InvalidProgramError, match=r"Spark's DDL string .* got a list; hint: schema='user string"):
        SparkTableSink("t", schema=[("user", "string")])  # type: ignore[arg-type]
