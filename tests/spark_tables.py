"""What the SparkTableSink tests share: a local SparkSession with a warehouse of its own, a keyed job whose output
tells a lost or repeated record (the n-th record of its key), its failure-free result, and the table's contents."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from strom import Configuration, DataGeneratorSource, KeyedProcessFunction, StreamExecutionEnvironment
from strom.api.row import Row
from strom.api.state import ValueStateDescriptor
from strom.api.typeinfo import Types
from strom.connectors.spark.sink import STAGING_DIR, SparkTableSink

ROW = Types.ROW_NAMED(["key", "n", "value", "bucket"], [Types.STRING(), Types.LONG(), Types.LONG(), Types.STRING()])


def local_spark(warehouse: Path, app_name: str) -> Iterator[Any]:
    """A local[2] SparkSession (strom's settings) with its tables under ``warehouse``; stopped at the end."""
    from strom.deploy.spark.session import create_session

    session = create_session(
        Configuration({"spark.master": "local[2]", "spark.sql.warehouse.dir": str(warehouse)}), app_name
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


class RunningCount(KeyedProcessFunction):
    """(key, n-th record of the key, value, bucket): a failover that lost or repeated a record changes n."""

    def open(self, ctx: Any) -> None:
        self.count = ctx.get_state(ValueStateDescriptor("count", Types.LONG()))

    def process_element(self, value: tuple[str, int], ctx: Any) -> Any:
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        yield Row(key=value[0], n=n, value=value[1], bucket=f"b{value[1] % 3}")


def event(i: int) -> tuple[str, int]:
    return (f"k{i % 7}", i)


def failure_free(n: int) -> list[tuple[str, int, int, str]]:
    seen: Counter[str] = Counter()
    out = []
    for i in range(n):
        key, v = event(i)
        seen[key] += 1
        out.append((key, seen[key], v, f"b{v % 3}"))
    return sorted(out)


def keyed_job(env: StreamExecutionEnvironment, n: int, sink: SparkTableSink, rate: int = 0) -> None:
    """``n`` events (``rate`` per second, 0: at once) from one source subtask, counted per key, into ``sink``."""
    source = DataGeneratorSource(event, n, rate) if rate else DataGeneratorSource(event, n)
    (
        env.from_source(source, source_name="events")
        .set_parallelism(1)
        .uid("events")
        .key_by(lambda e: e[0])
        .process(RunningCount(), output_type=ROW)
        .uid("count")
        .sink_to(sink)
        .uid("table")
    )


def table_rows(spark: Any, name: str) -> list[tuple[Any, ...]]:
    spark.catalog.refreshTable(name)
    return sorted(tuple(r) for r in spark.table(name).select("key", "n", "value", "bucket").collect())


def location(spark: Any, name: str) -> Path:
    return Path(spark.sql(f"DESCRIBE TABLE EXTENDED {name}").where("col_name = 'Location'").first()[1][5:])


def staged_files(spark: Any, name: str) -> list[Path]:
    return sorted(p for p in (location(spark, name) / STAGING_DIR).rglob("*") if p.is_file())
