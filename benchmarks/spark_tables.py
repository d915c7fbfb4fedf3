"""Rows/s reading a Spark Parquet table: strom's ``SparkSource.from_table`` at p=1 and p=2 (source → a counting
sink, on the MiniCluster) against Spark reading the same files into the same Python process, in the same run; and
rows/s writing one: strom's ``SparkTableSink`` at p=1 and p=2 against the plain library calls, in the same run.

    python benchmarks/spark_tables.py                 # 3 rounds, 1 000 000 rows, prints the table
    python benchmarks/spark_tables.py --quick         # smoke run
    python benchmarks/spark_tables.py --write-docs    # ... and its docs/benchmarks.md section (make bench-spark-tables)

The table — ``(id bigint, user string, amount double, ts bigint)`` in 4 Parquet files written by Spark
(``saveAsTable``) — is made once, in a local[2] SparkSession. Each round runs, in a rotating order: Spark's
``spark.read.parquet(location).collect()`` (every row a pyspark ``Row`` in the driver: the reference, since strom also
gives Python rows), Spark's ``toArrow()`` (columnar, no Python objects per row: for scale), and strom at p=1 and p=2.
A strom figure is N / the time inside the job (the first sink writer's creation, before the first split request,
to the last writer's close: cluster start-up is not in it); the wall column adds the table's resolution through the
catalog (``from_table``) and ``execute()``'s cluster start. Ratios to ``collect()`` are paired within rounds; every
run's row count is checked.

The write side: N rows ``(key string, value bigint, day string)`` over 4 days, into a Parquet table partitioned by
``day``. strom: ``from_sequence(0, N - 1)`` → ``map`` to the tuple → ``SparkTableSink`` (chained), checkpoints
every second, so a commit per second and a last one at the end; its figure is N / the time from the first map
task's start to ``execute()``'s return (the job is FINISHED only after the last commit); the wall column adds the
table's resolution and the cluster's start. The references get the same rows as a Python list of tuples and time
their conversion to a pyarrow table and the write: Spark's
``spark.createDataFrame(arrow table).write.mode("append").partitionBy("day").saveAsTable(...)`` (the baseline of the
ratios) and pyarrow's ``pq.write_to_dataset(arrow table, partition_cols=["day"])`` into a plain directory (no
catalog, for scale). Each table is emptied (``TRUNCATE TABLE``, not timed) before each run and counted after it.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import DOCS, log, machine, md_table, splice_section
from jobs import read_parts, write_part

from strom import Configuration, MapFunction, Sink, SinkWriter, SinkWriterContext, StreamExecutionEnvironment

BEGIN = "<!-- spark-table-benchmarks:begin -->"
END = "<!-- spark-table-benchmarks:end -->"
TABLE = "bench_rows"
SINK_TABLE = "bench_sink_strom"
REF_TABLE = "bench_sink_spark"
DAYS = ("2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04")


class _StampingWriter(SinkWriter[Any]):
    """Counts records; stamps its creation (the task's start) and its close."""

    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir
        self.records = 0
        write_part(out_dir, "source", {"t_open": time.monotonic_ns()})

    def write(self, element: Any) -> None:
        self.records += 1

    def write_batch(self, elements: list[Any]) -> None:
        self.records += len(elements)

    def close(self) -> None:
        write_part(self.out_dir, "sink", {"t_close": time.monotonic_ns(), "records": self.records})


class StampingSink(Sink[Any]):
    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir

    def create_writer(self, context: SinkWriterContext) -> SinkWriter[Any]:
        return _StampingWriter(self.out_dir)


def make_table(spark: Any, rows: int) -> str:
    df = spark.range(rows).selectExpr(
        "id",
        "concat('user-', cast(id % 1000 as string)) as user",
        "(id % 10000) / 100.0 as amount",
        "1700000000000 + id as ts",
    )
    df.repartition(4).write.format("parquet").saveAsTable(TABLE)
    from strom.connectors.spark import describe_table

    table = describe_table(spark, TABLE)
    assert table is not None and table.location is not None
    return table.location


def spark_collect(spark: Any, location: str) -> tuple[float, int]:
    t0 = time.perf_counter()
    n = len(spark.read.parquet(location).collect())
    return time.perf_counter() - t0, n


def spark_to_arrow(spark: Any, location: str) -> tuple[float, int]:
    t0 = time.perf_counter()
    n = spark.read.parquet(location).toArrow().num_rows
    return time.perf_counter() - t0, n


def strom_read(spark: Any, parallelism: int) -> tuple[float, int, float]:
    """SparkSource → counting sink (chained): seconds inside the job, records, and the wall seconds from
    ``from_table`` to the end of ``execute()``."""
    from strom.connectors.spark import SparkSource

    out_dir = tempfile.mkdtemp(prefix="strom-bench-spark-tables-")
    try:
        t0 = time.perf_counter()
        source = SparkSource.from_table(spark, TABLE)
        env = StreamExecutionEnvironment.get_execution_environment(Configuration())
        env.set_parallelism(parallelism)
        env.from_source(source, None, TABLE).sink_to(StampingSink(out_dir))
        env.execute(f"read {TABLE} p={parallelism}")
        wall = time.perf_counter() - t0
        opens = [p["t_open"] for p in read_parts(out_dir, "source")]
        closes = read_parts(out_dir, "sink")
        seconds = (max(p["t_close"] for p in closes) - min(opens)) / 1e9
        return seconds, sum(p["records"] for p in closes), wall
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


# -- writing a table --------------------------------------------------------------------------------------------
def sink_row(i: int) -> tuple[str, int, str]:
    return (f"k{i % 1000}", i, DAYS[i % 4])


class _StampedRows(MapFunction[int, tuple[str, int, str]]):
    """``sink_row``; stamps the task's start (``open``)."""

    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir

    def open(self, runtime_context: Any) -> None:
        write_part(self.out_dir, "map", {"t_open": time.monotonic_ns()})

    def map(self, value: int) -> tuple[str, int, str]:
        return (f"k{value % 1000}", value, DAYS[value % 4])


def sink_schema() -> Any:
    import pyarrow as pa

    return pa.schema([("key", pa.string()), ("value", pa.int64()), ("day", pa.string())])


def arrow_of(rows: list[tuple[str, int, str]]) -> Any:
    import pyarrow as pa

    keys, values, days = zip(*rows, strict=True)
    return pa.table([list(keys), list(values), list(days)], schema=sink_schema())


def table_count(spark: Any, table: str) -> int:
    spark.catalog.refreshTable(table)
    return int(spark.table(table).count())


def empty(spark: Any, table: str) -> None:
    if spark.catalog.tableExists(table):
        spark.sql(f"TRUNCATE TABLE {table}")


def spark_write(spark: Any, rows: list[tuple[str, int, str]]) -> tuple[float, int, None]:
    empty(spark, REF_TABLE)
    t0 = time.perf_counter()
    df = spark.createDataFrame(arrow_of(rows))
    df.write.mode("append").format("parquet").partitionBy("day").saveAsTable(REF_TABLE)
    seconds = time.perf_counter() - t0
    return seconds, table_count(spark, REF_TABLE), None


def pyarrow_write(rows: list[tuple[str, int, str]]) -> tuple[float, int, None]:
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    out = tempfile.mkdtemp(prefix="strom-bench-pq-")
    try:
        t0 = time.perf_counter()
        pq.write_to_dataset(arrow_of(rows), out, partition_cols=["day"])
        seconds = time.perf_counter() - t0
        return seconds, ds.dataset(out, format="parquet", partitioning="hive").count_rows(), None
    finally:
        shutil.rmtree(out, ignore_errors=True)


def strom_write(spark: Any, n: int, parallelism: int) -> tuple[float, int, float]:
    """sequence → map → SparkTableSink (chained), checkpoints every second: seconds from the first map task's start
    to the end of ``execute()`` (after the last commit), rows in the table, wall seconds of ``execute()``."""
    from strom.connectors.spark import SparkTableSink

    empty(spark, SINK_TABLE)
    out_dir = tempfile.mkdtemp(prefix="strom-bench-spark-sink-")
    try:
        t0 = time.perf_counter()
        env = StreamExecutionEnvironment.get_execution_environment(Configuration({"restart-strategy.type": "none"}))
        env.set_parallelism(parallelism)
        env.enable_checkpointing(1000)
        sink = SparkTableSink(SINK_TABLE, partition_by=["day"], schema=sink_schema(), spark=spark)
        env.from_sequence(0, n - 1).map(_StampedRows(out_dir)).sink_to(sink)
        env.execute(f"write {SINK_TABLE} p={parallelism}")
        end = time.monotonic_ns()
        wall = time.perf_counter() - t0
        seconds = (end - min(p["t_open"] for p in read_parts(out_dir, "map"))) / 1e9
        return seconds, table_count(spark, SINK_TABLE), wall
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def write_benchmark(spark: Any, n: int, rounds: int) -> str:
    """The write side's paired rounds; returns its Markdown table."""
    rows = [sink_row(i) for i in range(n)]
    configs: list[tuple[str, Any]] = [
        ("Spark createDataFrame(arrow).saveAsTable (append)", lambda: spark_write(spark, rows)),
        ("pyarrow write_to_dataset (no catalog, for scale)", lambda: pyarrow_write(rows)),
        ("strom SparkTableSink p=1", lambda: strom_write(spark, n, 1)),
        ("strom SparkTableSink p=2", lambda: strom_write(spark, n, 2)),
    ]
    seconds, walls = paired_rounds(configs, n, rounds, "wrote")
    return ratio_table(configs, seconds, walls, n, rounds, "writer", "× Spark saveAsTable, paired")


def paired_rounds(
    configs: list[tuple[str, Any]], n: int, rounds: int, verb: str
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Every config once per round, in a rotating order; each run's row count checked."""
    seconds: dict[str, list[float]] = {name: [] for name, _ in configs}
    walls: dict[str, list[float]] = {name: [] for name, _ in configs}
    for r in range(rounds):
        order = configs[r % len(configs) :] + configs[: r % len(configs)]
        for name, run in order:
            s, got, wall = run()
            if got != n:
                raise SystemExit(f"{name}: {verb} {got} rows, expected {n}")
            seconds[name].append(s)
            if wall is not None:
                walls[name].append(wall)
            log(f"round {r + 1}/{rounds} {name}: {n / s:,.0f} rows/s")
    return seconds, walls


def ratio_table(
    configs: list[tuple[str, Any]],
    seconds: dict[str, list[float]],
    walls: dict[str, list[float]],
    n: int,
    rounds: int,
    what: str,
    ratio: str,
) -> str:
    """rows/s (median), the ratio to the first config paired within rounds, the wall seconds."""
    base = configs[0][0]
    rows = []
    for name, _ in configs:
        ratios = [seconds[base][i] / seconds[name][i] for i in range(rounds)]
        rows.append(
            [
                name,
                f"{n / statistics.median(seconds[name]):,.0f}",
                f"{statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})",
                f"{statistics.median(walls[name]):.1f} s" if walls[name] else "—",
            ]
        )
    wall = "wall (resolve + execute)"
    return md_table([what, "rows/s (median)", ratio, wall], rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--rows", type=int)
    ap.add_argument("--write-docs", action="store_true")
    a = ap.parse_args(argv)
    rounds = a.rounds or (1 if a.quick else 3)
    n = a.rows or (50_000 if a.quick else 1_000_000)

    import pyspark

    from strom.deploy.spark.session import create_session

    warehouse = tempfile.mkdtemp(prefix="strom-bench-warehouse-")
    spark = create_session(
        Configuration(
            {
                "spark.master": "local[2]",
                "spark.sql.warehouse.dir": warehouse,
                "spark.driver.memory": "3g",
                "spark.ui.showConsoleProgress": "false",
            }
        ),
        "strom-bench-spark-tables",
    )
    spark.sparkContext.setLogLevel("ERROR")
    configs: list[tuple[str, Any]] = [
        ("Spark collect() (rows into Python)", lambda: (*spark_collect(spark, location), None)),
        ("Spark toArrow() (columnar, for scale)", lambda: (*spark_to_arrow(spark, location), None)),
        ("strom SparkSource p=1", lambda: strom_read(spark, 1)),
        ("strom SparkSource p=2", lambda: strom_read(spark, 2)),
    ]
    try:
        log(f"writing {n:,} rows as the Spark table {TABLE}")
        location = make_table(spark, n)
        seconds, walls = paired_rounds(configs, n, rounds, "read")
        table = ratio_table(configs, seconds, walls, n, rounds, "reader", "× Spark collect(), paired")
        print(table)
        log(f"writing {n:,} rows into Spark tables")
        write_table = write_benchmark(spark, n, rounds)
        print(write_table)
    finally:
        spark.stop()
        shutil.rmtree(warehouse, ignore_errors=True)
    if a.write_docs:
        m = machine()
        section = "\n".join(
            [
                BEGIN,
                "## Spark tables (SparkSource, SparkTableSink)",
                "",
                f"Measured {time.strftime('%Y-%m-%d')} on {m['cpu']}, {m['ram']} RAM, {m['python']}, PySpark "
                f"{pyspark.__version__}, commit {m['commit']}; `python benchmarks/spark_tables.py "
                f"{' '.join(sys.argv[1:])}` (`make bench-spark-tables`); {rounds} rounds of N = {n:,} rows "
                "`(id bigint, user string, amount double, ts bigint)` in a Spark Parquet table of 4 files, Spark in "
                "local[2] on the same 2 cores. Spark's figures read the table's files into the benchmark process "
                "(`spark.read.parquet(location)`; `collect()` makes a pyspark `Row` per row, `toArrow()` a columnar "
                "table); strom's are N / the time inside the job (source → counting sink, chained; the tasks' start "
                "to the last sink's close), and the wall column adds `from_table` (the catalog and "
                "`inputFiles()`) and the MiniCluster's start.",
                "",
                table,
                "",
                f"Writing: N = {n:,} rows `(key string, value bigint, day string)` over 4 days into a Parquet table "
                "partitioned by `day`, the same rounds. strom: `from_sequence` → `map` to the tuple → "
                "`SparkTableSink` (chained), checkpoints every second (a commit per checkpoint: files moved in, "
                "partitions added, `refreshTable`, a marker), N / the time from the first map task's start to "
                "`execute()`'s return (after the last commit); the wall column adds the table's resolution and the "
                "MiniCluster's start. The references get the same rows as a Python list of tuples and time the "
                "conversion to a pyarrow table plus the write: Spark's `spark.createDataFrame(arrow table).write"
                '.mode("append").partitionBy("day").saveAsTable(...)` (the ratios\' baseline) and pyarrow\'s '
                '`pq.write_to_dataset(..., partition_cols=["day"])` into a plain directory (no catalog). Every '
                "table is emptied (`TRUNCATE TABLE`, not timed) before each run and counted after it.",
                "",
                write_table,
                END,
            ]
        )
        DOCS.write_text(splice_section(DOCS.read_text() if DOCS.exists() else "", section, BEGIN, END))
        log(f"wrote {DOCS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
