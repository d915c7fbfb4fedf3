"""The Table API's order_by / offset / fetch in PyFlink 2.3 (the facts in sqlpy_order_by.txt; the test runs the
same calls on strom with `pyflink` -> `strom`): BATCH sorts at parallelism 2, NULLs last ascending and first
descending (the Table API's order, unlike SQL's), an offset without a fetch refused; STREAMING refuses a sort on a
non-time attribute without fetch and plans order_by + fetch as a Top-N."""

from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col

ROWS = [(1, "a", 3.0), (2, "b", 1.0), (3, "c", None), (4, "d", 2.0), (5, "e", 5.0), (6, "f", 2.0)]


def main() -> None:
    batch = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    batch.get_config().set("parallelism.default", "2")
    table = batch.from_elements(ROWS, ["id", "name", "v"])
    table.order_by(col("v").desc, col("id")).execute().print()
    table.order_by(col("v"), col("id").desc).execute().print()
    table.order_by(col("v"), col("id")).offset(1).fetch(2).execute().print()
    table.order_by(col("name").desc).fetch(2).execute().print()
    try:
        table.order_by(col("id")).offset(4).execute().print()
    except Exception as err:  # Flink's refusal of an offset without a fetch, printed by its message
        print("Not support limitEnd is max value now!" in str(err))
    table.order_by(col("id")).limit(2, 3).execute().print()

    streaming = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    streaming.get_config().set("parallelism.default", "1")
    stream_table = streaming.from_elements(ROWS, ["id", "name", "v"])
    try:
        stream_table.order_by(col("v")).execute().print()
    except Exception as err:  # Flink's refusal, printed by its message
        print("Sort on a non-time-attribute field is not supported." in str(err))
    stream_table.order_by(col("v").desc, col("id")).fetch(2).execute().print()


if __name__ == "__main__":
    main()
