"""A catalog registered beside the in-memory one (Flink's ``Catalog``; ``SparkCatalog`` is one): ``USE CATALOG``,
``SHOW DATABASES/TABLES``, names resolved in it, back to ``default_catalog``; Spark's column types as SQL types;
``CREATE CATALOG`` of an unknown type refused."""

from __future__ import annotations

import pyarrow as pa
import pytest

from strom.table import EnvironmentSettings, TableEnvironment
from strom.table.catalog.catalog import Catalog
from strom.table.catalog.catalog_manager import CatalogColumn, CatalogTable
from strom.table.catalog.spark_catalog import sql_type_of_arrow
from strom.table.errors import ValidationException
from strom.table.types import parse_type


class _Fixed(Catalog):
    def get_default_database(self) -> str:
        return "default"

    def list_databases(self) -> list[str]:
        return ["default", "shop"]

    def database_exists(self, database: str) -> bool:
        return database in self.list_databases()

    def list_tables(self, database: str) -> list[str]:
        return ["numbers"] if database == "shop" else []

    def get_table(self, database: str, name: str) -> CatalogTable | None:
        if (database, name) != ("shop", "numbers"):
            return None
        columns = (CatalogColumn("n", parse_type("BIGINT")),)
        return CatalogTable(columns, {"connector": "datagen", "number-of-rows": "3", "fields.n.kind": "sequence",
                                      "fields.n.start": "1", "fields.n.end": "3"})  # fmt: skip


def _names(result: object) -> list[str]:
    return [r[0] for r in result.collect()]  # type: ignore[attr-defined]


def test_a_registered_catalog_lists_and_resolves_its_tables() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.register_catalog("ext", _Fixed())
    assert t_env.list_catalogs() == ["default_catalog", "ext"]
    t_env.execute_sql("USE CATALOG ext")
    assert (t_env.get_current_catalog(), t_env.get_current_database()) == ("ext", "default")
    assert _names(t_env.execute_sql("SHOW DATABASES")) == ["default", "shop"]
    t_env.execute_sql("USE shop")
    assert _names(t_env.execute_sql("SHOW TABLES")) == ["numbers"]
    assert t_env.sql_query("SELECT n FROM numbers").get_schema().names == ("n",)
    assert t_env.sql_query("SELECT n FROM ext.shop.numbers").get_schema().names == ("n",)
    with pytest.raises(ValidationException, match="A database with name"):
        t_env.execute_sql("USE nope")
    t_env.execute_sql("USE CATALOG default_catalog")
    assert t_env.get_current_database() == "default_database"
    assert t_env.sql_query("SELECT n FROM ext.shop.numbers").get_schema().names == ("n",)
    with pytest.raises(ValidationException, match="Catalog ext already exists"):
        t_env.register_catalog("ext", _Fixed())


def test_spark_column_types_map_to_sql_types() -> None:
    cases = {
        pa.int64(): "BIGINT",
        pa.int32(): "INT",
        pa.string(): "STRING",
        pa.decimal128(10, 2): "DECIMAL(10, 2)",
        pa.date32(): "DATE",
        pa.timestamp("us", "UTC"): "TIMESTAMP_LTZ(6)",
        pa.timestamp("us"): "TIMESTAMP(6)",
        pa.list_(pa.int32()): "ARRAY<INT>",
        pa.map_(pa.string(), pa.float64()): "MAP<STRING, DOUBLE>",
    }
    assert {str(t): str(sql_type_of_arrow(t)) for t in cases} == {str(t): s for t, s in cases.items()}


def test_create_catalog_of_an_unknown_type_is_refused() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    with pytest.raises(ValidationException, match="Could not find any factory for identifier 'hive' of catalog 'h'"):
        t_env.execute_sql("CREATE CATALOG h WITH ('type' = 'hive')")
