"""The data platform of the end-to-end test: Spark applications sharing a Hive metastore, and a strom job between.

    python spark_platform.py prepare MASTER DIR   # Spark writes the Parquet table `events`; the reference windows
    strom run --target spark --spark-master MASTER -D ... spark_platform.py job [PACE_MS]   # the strom job
    python spark_platform.py read MASTER DIR      # Spark reads the table `events_per_minute` back

Each step is its own Spark application, as on a platform: the metastore (Derby, one application at a time) and
the warehouse live under DIR and every application reaches them. The job reads `events` with ``SparkSource``,
counts and sums each user's events per event-time minute and writes ``SparkTableSink("events_per_minute")``;
``PACE_MS`` slows its reading (a sleep per 50 events in each subtask) so that a test can kill TaskManagers
while it runs. All times are UTC.
"""

from __future__ import annotations

import datetime
import json
import sys
import time
from collections.abc import Iterable
from datetime import timedelta
from pathlib import Path
from typing import Any

N_EVENTS = 40_000
USERS = 20
START_MS = 1_700_000_000_000  # 2023-11-14 22:13:20 UTC: the events cross midnight, into two day partitions
STEP_MS = 180  # two hours of events


def platform_settings(directory: str) -> dict[str, str]:
    """The ``spark.*`` keys every application of the platform sets: its metastore, warehouse and time zone."""
    return {
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": f"{directory}/warehouse",
        "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={directory}/metastore_db;create=true",
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={directory}",
        "spark.sql.session.timeZone": "UTC",
    }


def session(master: str, directory: str, extra: dict[str, str]) -> Any:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master).appName("platform").enableHiveSupport()
    for key, value in {**platform_settings(directory), **extra}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def prepare(spark: Any, out: Path) -> None:
    """The table ``events`` (user, ts, amount; partitioned by day), written by Spark, and the reference: the same
    windows computed by a Spark batch query."""
    from pyspark.sql import functions as F

    events = spark.range(N_EVENTS).selectExpr(
        f"concat('u', id % {USERS}) AS user",
        f"timestamp_millis({START_MS} + id * {STEP_MS}) AS ts",
        "id % 97 AS amount",
    )
    events = events.withColumn("day", F.to_date("ts"))
    events.repartition(4).write.format("parquet").partitionBy("day").saveAsTable("events")
    reference = (
        spark.table("events")
        .groupBy("user", F.window("ts", "1 minute"))
        .agg(F.count("*").alias("events"), F.sum("amount").alias("total"))
        .select("user", F.date_format("window.start", "yyyy-MM-dd HH:mm:ss").alias("start"), "events", "total")
    )
    out.write_text(json.dumps(sorted([list(r) for r in reference.collect()])))


def read(spark: Any, out: Path) -> None:
    from pyspark.sql import functions as F

    rows = spark.table("events_per_minute").select(
        "user", F.date_format("window_start", "yyyy-MM-dd HH:mm:ss").alias("start"), "events", "total"
    )
    out.write_text(json.dumps(sorted([list(r) for r in rows.collect()])))


# -- the strom job -------------------------------------------------------------------------------------------
def job(pace_ms: float) -> None:
    from pyspark.sql import SparkSession

    from strom import (
        AggregateFunction,
        MapFunction,
        ProcessWindowFunction,
        StreamExecutionEnvironment,
        TumblingEventTimeWindows,
        WatermarkStrategy,
    )
    from strom.api.row import Row
    from strom.api.typeinfo import Types
    from strom.connectors.spark import SparkSource, SparkTableSink

    class Pace(MapFunction):
        def __init__(self, ms: float) -> None:
            self.ms = ms
            self.seen = 0

        def map(self, value: Any) -> Any:
            self.seen += 1
            if self.ms and self.seen % 50 == 0:
                time.sleep(self.ms / 1000)
            return value

    class CountAndSum(AggregateFunction):
        def create_accumulator(self) -> tuple[int, int]:
            return (0, 0)

        def add(self, value: Any, acc: tuple[int, int]) -> tuple[int, int]:
            return (acc[0] + 1, acc[1] + value.amount)

        def get_result(self, acc: tuple[int, int]) -> tuple[int, int]:
            return acc

        def merge(self, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
            return (a[0] + b[0], a[1] + b[1])

    class PerMinute(ProcessWindowFunction):
        def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
            start = datetime.datetime.fromtimestamp(context.window().start / 1000, datetime.UTC).replace(tzinfo=None)
            for count, total in elements:
                yield Row(user=key, window_start=start, events=count, total=total)

    spark = SparkSession.builder.getOrCreate()  # under `strom run --target spark`: the session strom runs on
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    # the table's files are read in any order: the watermark waits for the whole span, the windows fire at the end
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(timedelta(hours=3)).with_timestamp_assigner(
        lambda e, _ts: int(e.ts.timestamp() * 1000)
    )
    (
        env.from_source(SparkSource.from_table(spark, "events"), strategy, "events")
        .uid("events")
        .map(Pace(pace_ms))
        .uid("pace")
        .key_by(lambda e: e.user)
        .window(TumblingEventTimeWindows.of(timedelta(minutes=1)))
        .aggregate(
            CountAndSum(),
            PerMinute(),
            output_type=Types.ROW_NAMED(
                ["user", "window_start", "events", "total"],
                [Types.STRING(), Types.SQL_TIMESTAMP(), Types.LONG(), Types.LONG()],
            ),
        )
        .uid("per-minute")
        .sink_to(SparkTableSink("events_per_minute"))
        .uid("table")
    )
    env.execute("events per user and minute")


if __name__ == "__main__":
    step = sys.argv[1]
    if step == "job":
        job(float(sys.argv[2]) if len(sys.argv) > 2 else 0.0)
    else:
        master, directory = sys.argv[2], sys.argv[3]
        extra = dict(arg.split("=", 1) for arg in sys.argv[4:])
        spark = session(master, directory, extra)
        try:
            (prepare if step == "prepare" else read)(spark, Path(directory) / f"{step}.json")
        finally:
            spark.stop()
