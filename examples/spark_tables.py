"""A Spark table in, a Spark table out: clicks per user and event-time minute, exactly once.

    python examples/spark_tables.py                                        # the MiniCluster, Spark in the client
    strom run --target spark --spark-master 'local[2]' examples/spark_tables.py   # TaskManagers in Spark tasks

Spark writes a Parquet table of clicks; strom reads its files (SparkSource), windows them and writes the table
clicks_per_minute (SparkTableSink: each checkpoint's rows committed at once by the driver); Spark reads it back
and compares it with the same windows computed by a Spark batch query. Needs `pip install 'strom[spark]'` and a
Java 17+ runtime.
"""

import tempfile
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from strom.common import Configuration, Duration, Row, Types, WatermarkStrategy
from strom.connectors.spark import SparkSource, SparkTableSink
from strom.datastream import StreamExecutionEnvironment
from strom.datastream.functions import AggregateFunction, ProcessWindowFunction
from strom.datastream.window import TumblingEventTimeWindows


class Count(AggregateFunction):
    def create_accumulator(self) -> int:
        return 0

    def add(self, value: Any, accumulator: int) -> int:
        return accumulator + 1

    def get_result(self, accumulator: int) -> int:
        return accumulator

    def merge(self, a: int, b: int) -> int:
        return a + b


class PerMinute(ProcessWindowFunction):
    def process(self, key: str, context: Any, counts: Iterable[int]) -> Iterable[Row]:
        start = datetime.fromtimestamp(context.window().start / 1000, UTC).replace(tzinfo=None)
        for clicks in counts:
            yield Row(user=key, minute=start, clicks=clicks)


def main() -> None:
    spark = (
        SparkSession.builder.master("local[2]")  # under `strom run --target spark`: the session strom runs on
        .config("spark.sql.warehouse.dir", tempfile.mkdtemp())  # the tables of this example
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    spark.range(100_000).selectExpr(
        "concat('u', id % 10) AS user", "timestamp_millis(1700000000000 + id * 100) AS ts"
    ).write.format("parquet").saveAsTable("clicks")

    # a bounded restart strategy: a record that fails every attempt fails the job instead of looping
    config = Configuration({"restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": 3})
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.enable_checkpointing(1000)
    clicks = env.from_source(
        SparkSource.from_table(spark, "clicks"),  # named Rows: user, ts
        WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_hours(3)).with_timestamp_assigner(
            lambda click, _: int(click.ts.timestamp() * 1000)  # files are read in any order: a wide bound
        ),
        "clicks",
    )
    clicks.key_by(lambda click: click.user).window(TumblingEventTimeWindows.of(timedelta(minutes=1))).aggregate(
        Count(),
        PerMinute(),
        output_type=Types.ROW_NAMED(
            ["user", "minute", "clicks"], [Types.STRING(), Types.SQL_TIMESTAMP(), Types.LONG()]
        ),
    ).sink_to(SparkTableSink("clicks_per_minute"))  # created from the declared row type
    env.execute("clicks per user and minute")

    spark.catalog.refreshTable("clicks_per_minute")
    ours = spark.table("clicks_per_minute").select(
        "user", F.date_format("minute", "yyyy-MM-dd HH:mm").alias("minute"), "clicks"
    )
    theirs = (
        spark.table("clicks")
        .groupBy("user", F.window("ts", "1 minute"))
        .count()
        .select(
            "user", F.date_format("window.start", "yyyy-MM-dd HH:mm").alias("minute"), F.col("count").alias("clicks")
        )
    )
    print(f"{ours.count()} windows; equal to Spark's batch query: {sorted(ours.collect()) == sorted(theirs.collect())}")
    spark.stop()


if __name__ == "__main__":
    main()
