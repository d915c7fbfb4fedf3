"""Spark's metastore as a SQL catalog (``SparkCatalog``) and the ``spark`` table connector on a real local
SparkSession: ``USE CATALOG spark``, ``SHOW DATABASES/TABLES``, ``DESCRIBE``, a query over a Spark table, and an
INSERT into a Spark table (created by the sink) that Spark then reads."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from strom.table import EnvironmentSettings, TableEnvironment

pytest.importorskip("pyspark")

pytestmark = [pytest.mark.slow, pytest.mark.spark, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from strom.config import Configuration
    from strom.deploy.spark.session import create_session

    warehouse = tmp_path_factory.mktemp("warehouse")
    session = create_session(
        Configuration({"spark.master": "local[2]", "spark.sql.warehouse.dir": str(warehouse)}), "strom-sql-catalog"
    )
    session.sparkContext.setLogLevel("ERROR")
    session.sql("CREATE DATABASE shop")
    rows = [(i, f"u{i % 3}", Decimal(i) / 4, dt.date(2024, 1, 1 + i % 2)) for i in range(12)]
    session.createDataFrame(rows, "id bigint, user string, amount decimal(10,2), day date").write.partitionBy(
        "day"
    ).format("parquet").saveAsTable("shop.sales")
    yield session
    session.stop()


def _rows(result: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r._values) for r in result.collect())


def test_a_spark_catalog_lists_reads_and_writes_spark_tables(spark: Any, tmp_path: Path) -> None:
    from strom.table.catalog.spark_catalog import SparkCatalog

    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "2")
    t_env.register_catalog("spark", SparkCatalog("spark", spark))
    assert "spark" in t_env.list_catalogs()
    t_env.execute_sql("USE CATALOG spark")
    assert _rows(t_env.execute_sql("SHOW DATABASES")) == [("default",), ("shop",)]
    t_env.execute_sql("USE shop")
    assert _rows(t_env.execute_sql("SHOW TABLES")) == [("sales",)]
    described = [tuple(r._values)[:2] for r in t_env.execute_sql("DESCRIBE sales").collect()]
    assert described == [("id", "BIGINT"), ("user", "STRING"), ("amount", "DECIMAL(10, 2)"), ("day", "DATE")]
    totals = t_env.execute_sql("SELECT `user`, SUM(amount) AS total FROM shop.sales GROUP BY `user`")
    final = {r[0]: r[1] for r in totals.collect() if str(r.get_row_kind()) in ("+I", "+U")}
    assert final == {"u0": Decimal("4.50"), "u1": Decimal("5.50"), "u2": Decimal("6.50")}

    t_env.execute_sql("USE CATALOG default_catalog")
    t_env.execute_sql(
        "CREATE TABLE big (id BIGINT, `user` STRING, day DATE) WITH ('connector' = 'spark', 'table' = "
        "'shop.big_sales', 'sink.partition-by' = 'day')"
    )
    t_env.execute_sql("INSERT INTO big SELECT id, `user`, day FROM spark.shop.sales WHERE amount >= 2").wait()
    spark.catalog.refreshTable("shop.big_sales")
    written = sorted(tuple(r) for r in spark.table("shop.big_sales").select("id", "user", "day").collect())
    assert written == [(i, f"u{i % 3}", dt.date(2024, 1, 1 + i % 2)) for i in range(8, 12)]
