"""``CREATE TABLE … WITH (…) AS SELECT`` (CTAS) on the MiniCluster at parallelism 2: the table gets the query's
columns, the query's rows land in it, and a query the sink refuses leaves no table behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from strom.table import EnvironmentSettings, TableEnvironment
from strom.table.errors import TableException, ValidationException

ORDERS = (
    "CREATE TEMPORARY VIEW orders AS SELECT * FROM (VALUES (1, 'alice', 12), (2, 'bob', 30), (3, 'carol', 5)) "
    "AS t(id, customer, amount)"
)


def _env(batch: bool) -> TableEnvironment:
    settings = EnvironmentSettings.in_batch_mode() if batch else EnvironmentSettings.in_streaming_mode()
    t_env = TableEnvironment.create(settings)
    t_env.get_config().set("parallelism.default", "2")
    t_env.execute_sql(ORDERS)
    return t_env


@pytest.mark.timeout(300)
@pytest.mark.parametrize("batch", [False, True])
def test_ctas_creates_the_table_with_the_querys_columns_and_fills_it(tmp_path: Path, batch: bool) -> None:
    t_env = _env(batch)
    t_env.execute_sql(
        f"CREATE TABLE big WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'csv') "
        "AS SELECT id, UPPER(customer) AS who FROM orders WHERE amount > 6"
    ).wait()
    assert t_env.from_path("big").get_schema().names == ("id", "who")
    rows = t_env.execute_sql("SELECT * FROM big").collect()
    assert sorted(tuple(r) for r in rows) == [(1, "ALICE"), (2, "BOB")]


def test_ctas_of_an_updating_query_into_an_append_only_sink_is_refused_and_leaves_no_table(tmp_path: Path) -> None:
    t_env = _env(batch=False)
    with pytest.raises(TableException, match="doesn't support consuming update changes"):
        t_env.execute_sql(
            f"CREATE TABLE counts WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'csv') "
            "AS SELECT customer, COUNT(*) AS n FROM orders GROUP BY customer"
        )
    assert "counts" not in t_env.list_tables()


def test_ctas_with_a_column_list_is_refused_with_the_position() -> None:
    t_env = _env(batch=False)
    with pytest.raises(TableException, match=r"at line 1, column \d+: CREATE TABLE with a column list AS SELECT"):
        t_env.execute_sql("CREATE TABLE p (id INT) WITH ('connector' = 'blackhole') AS SELECT id FROM orders")


def test_insert_overwrite_is_refused_rather_than_appending() -> None:
    t_env = _env(batch=True)
    t_env.execute_sql("CREATE TABLE sink (id INT) WITH ('connector' = 'blackhole')")
    with pytest.raises(  # as Flink 2.3 (tests/data/flink_sql/feat_ow_overwrite_blackhole.txt), with the position
        ValidationException,
        match=r"implements the SupportsOverwrite interface\. "
        r".*at line 1, column \d+: INSERT OVERWRITE; .* hint: INSERT INTO",
    ):
        t_env.execute_sql("INSERT OVERWRITE sink SELECT id FROM orders")
