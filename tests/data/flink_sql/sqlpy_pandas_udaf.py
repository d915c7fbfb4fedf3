"""pandas aggregate functions (@udaf(func_type="pandas")) in PyFlink 2.3 over OVER windows (ROWS and RANGE, the
facts in sqlpy_pandas_udaf.txt) and in a BATCH group by; the test runs the same program with `pyflink` -> `strom`."""

from pyflink.common import Types
from pyflink.common.time import Instant
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.table import DataTypes, EnvironmentSettings, Schema, StreamTableEnvironment, TableEnvironment
from pyflink.table.expressions import CURRENT_ROW, col, lit, row_interval
from pyflink.table.udf import udaf
from pyflink.table.window import Over

PRICES = [
    (1000, "Alice", 110.1),
    (4000, "Bob", 30.2),
    (3000, "Alice", 20.0),
    (2000, "Bob", 53.1),
    (5000, "Alice", 13.1),
    (3500, "Bob", 3.1),
    (7000, "Bob", 16.1),
    (10000, "Alice", 20.1),
]


@udaf(result_type=DataTypes.FLOAT(), func_type="pandas")
def mean_udaf(v):
    return v.mean()


@udaf(result_type=DataTypes.BIGINT(), func_type="pandas")
def spread(v):
    return v.max() - v.min()


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    t_env = StreamTableEnvironment.create(stream_execution_environment=env)
    rows = [(Instant.of_epoch_milli(ms), name, price) for ms, name, price in PRICES]
    ds = env.from_collection(rows, type_info=Types.ROW([Types.INSTANT(), Types.STRING(), Types.FLOAT()]))
    schema = (
        Schema.new_builder()
        .column_by_expression("ts", "CAST(f0 AS TIMESTAMP(3))")
        .column("f1", DataTypes.STRING())
        .column("f2", DataTypes.FLOAT())
        .watermark("ts", "ts - INTERVAL '3' SECOND")
        .build()
    )
    table = t_env.from_data_stream(ds, schema).alias("ts", "name", "price")
    rows_window = Over.partition_by(col("name")).order_by(col("ts")).preceding(row_interval(2))
    table.over_window(rows_window.following(CURRENT_ROW).alias("w")).select(
        col("name"), col("ts"), mean_udaf(col("price")).over(col("w"))
    ).execute().print()
    range_window = Over.partition_by(col("name")).order_by(col("ts")).preceding(lit(2).seconds).alias("w")
    ranged = table.over_window(range_window)
    ranged.select(col("name"), col("ts"), mean_udaf(col("price")).over(col("w"))).execute().print()

    batch = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    batch.get_config().set("parallelism.default", "1")
    numbers = batch.from_elements([(1, "a"), (5, "a"), (3, "b"), (9, "a"), (4, "b")], ["n", "k"])
    numbers.group_by(col("k")).select(col("k"), spread(col("n")).alias("spread")).execute().print()


if __name__ == "__main__":
    main()
