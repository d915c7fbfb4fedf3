"""Column operations in PyFlink's Table API style (as PyFlink 2.3's ``examples/table/basic_operations.py`` shows
them; our own code): ``add_columns`` with ``json_value``, ``drop_columns``, ``rename_columns``,
``add_or_replace_columns`` with ``concat`` and ``cast``, a ``where`` and a ``group_by(...).select``.

``column_operations.txt`` beside it is what PyFlink 2.3 printed for this program; the test runs it with
``pyflink`` → ``strom`` in its imports.
"""

from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col, concat, lit

PEOPLE = [
    (1, '{"name": "Flink", "tel": 123, "addr": {"country": "Germany", "city": "Berlin"}}'),
    (2, '{"name": "hello", "tel": 135, "addr": {"country": "China", "city": "Shanghai"}}'),
    (3, '{"name": "world", "tel": 124, "addr": {"country": "USA", "city": "NewYork"}}'),
    (4, '{"name": "PyFlink", "tel": 32, "addr": {"country": "China", "city": "Hangzhou"}}'),
]


def main() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    table = t_env.from_elements(PEOPLE, ["id", "data"])
    table = table.add_columns(
        col("data").json_value("$.name", DataTypes.STRING()).alias("name"),
        col("data").json_value("$.tel", DataTypes.STRING()).alias("tel"),
        col("data").json_value("$.addr.country", DataTypes.STRING()).alias("country"),
    )
    table.execute().print()
    table = table.drop_columns(col("data"))
    table.execute().print()
    table = table.rename_columns(col("tel").alias("telephone"))
    table.execute().print()
    table = table.add_or_replace_columns(concat(col("id").cast(DataTypes.STRING()), "_", col("name")).alias("id"))
    table.execute().print()
    table.where(col("country") == "China").select(col("id"), col("telephone")).execute().print()
    table.group_by(col("country")).select(col("country"), lit(1).count.alias("cnt")).execute().print()


if __name__ == "__main__":
    main()
