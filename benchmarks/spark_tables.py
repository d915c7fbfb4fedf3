"""Rows/s reading a Spark Parquet table: strom's ``SparkSource.from_table`` at p=1 and p=2 (source → a counting
sink, on the MiniCluster) against Spark reading the same files into the same Python process, in the same run.

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

from strom import Configuration, Sink, SinkWriter, SinkWriterContext, StreamExecutionEnvironment

BEGIN = "<!-- spark-table-benchmarks:begin -->"
END = "<!-- spark-table-benchmarks:end -->"
TABLE = "bench_rows"


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
    seconds: dict[str, list[float]] = {name: [] for name, _ in configs}
    walls: dict[str, list[float]] = {name: [] for name, _ in configs}
    try:
        log(f"writing {n:,} rows as the Spark table {TABLE}")
        location = make_table(spark, n)
        for r in range(rounds):
            order = configs[r % len(configs) :] + configs[: r % len(configs)]
            for name, run in order:
                s, got, wall = run()
                if got != n:
                    raise SystemExit(f"{name}: read {got} rows, expected {n}")
                seconds[name].append(s)
                if wall is not None:
                    walls[name].append(wall)
                log(f"round {r + 1}/{rounds} {name}: {n / s:,.0f} rows/s")
    finally:
        spark.stop()
        shutil.rmtree(warehouse, ignore_errors=True)
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
    table = md_table(["reader", "rows/s (median)", "× Spark collect(), paired", "wall (resolve + execute)"], rows)
    print(table)
    if a.write_docs:
        m = machine()
        section = "\n".join(
            [
                BEGIN,
                "## Spark tables (SparkSource)",
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
                END,
            ]
        )
        DOCS.write_text(splice_section(DOCS.read_text() if DOCS.exists() else "", section, BEGIN, END))
        log(f"wrote {DOCS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
