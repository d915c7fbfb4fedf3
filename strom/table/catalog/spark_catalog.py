"""``SparkCatalog``: Spark's metastore (its session catalog, Hive's or the in-memory one) as a Flink catalog, so
that ``USE CATALOG spark; SELECT … FROM db.sales`` reads Spark tables and ``INSERT INTO db.sales …`` writes them.

    t_env.register_catalog("spark", SparkCatalog("spark", spark_session))
    t_env.execute_sql("CREATE CATALOG spark WITH ('type' = 'spark', 'spark.master' = 'local[2]', "
                      "'spark.sql.warehouse.dir' = '/data/warehouse')")   # a SparkSession of these settings

Databases and tables are Spark's (``SHOW DATABASES``, ``SHOW TABLES``); a table's columns come from Spark's
schema (as :func:`strom.connectors.spark.catalog.describe_table` reads it, types mapped through pyarrow: Spark's
``timestamp`` is TIMESTAMP_LTZ(6), ``timestamp_ntz`` TIMESTAMP(6), ``decimal(p,s)`` DECIMAL(p, s)), and its
options select the ``spark`` table connector. Tables are created and dropped in Spark, not here.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from strom.table.catalog.catalog import Catalog
from strom.table.catalog.catalog_manager import CatalogColumn, CatalogTable
from strom.table.errors import ValidationException
from strom.table.types import DataType, parse_type

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["SparkCatalog", "sql_type_of_arrow"]


def sql_type_of_arrow(arrow_type: pa.DataType) -> DataType:
    """The SQL type of a column whose pyarrow type is ``arrow_type`` (Spark's types as strom maps them)."""
    return parse_type(_type_text(arrow_type))


def _type_text(t: Any) -> str:
    import pyarrow as pa
    import pyarrow.types as pt

    simple = [
        (pt.is_boolean, "BOOLEAN"),
        (pt.is_int8, "TINYINT"),
        (pt.is_int16, "SMALLINT"),
        (pt.is_int32, "INT"),
        (pt.is_int64, "BIGINT"),
        (pt.is_float32, "FLOAT"),
        (pt.is_float64, "DOUBLE"),
        (pt.is_string, "STRING"),
        (pt.is_large_string, "STRING"),
        (pt.is_binary, "BYTES"),
        (pt.is_date32, "DATE"),
    ]
    for check, text in simple:
        if check(t):
            return text
    if pt.is_decimal(t):
        return f"DECIMAL({t.precision}, {t.scale})"
    if pt.is_timestamp(t):
        return "TIMESTAMP_LTZ(6)" if t.tz is not None else "TIMESTAMP(6)"
    if pt.is_list(t):
        return f"ARRAY<{_type_text(t.value_type)}>"
    if pt.is_map(t):
        return f"MAP<{_type_text(t.key_type)}, {_type_text(t.item_type)}>"
    if pt.is_struct(t):
        fields = ", ".join(f"`{f.name}` {_type_text(f.type)}" for f in t)
        return f"ROW<{fields}>"
    if t == pa.null():
        return "NULL"
    raise ValidationException(f"expected a Spark column type strom maps to SQL; got pyarrow {t}")


class SparkCatalog(Catalog):
    """Spark's catalog through a SparkSession (the client's)."""

    def __init__(self, name: str, spark: Any, default_database: str = "default") -> None:
        self.name = name
        self.spark = spark
        self.default_database = default_database

    @classmethod
    def from_options(cls, name: str, options: dict[str, str]) -> SparkCatalog:
        """``CREATE CATALOG name WITH ('type' = 'spark', 'spark.master' = …, 'spark.*' = …,
        'default-database' = …)``: a SparkSession of these settings (the active one when it exists)."""
        from strom.config import Configuration
        from strom.deploy.spark.session import create_session

        settings = {k: v for k, v in options.items() if k.startswith("spark.")}
        settings.setdefault("spark.master", "local[2]")
        spark = create_session(Configuration(settings), f"strom-catalog-{name}")
        return cls(name, spark, options.get("default-database", "default"))

    def get_default_database(self) -> str:
        return self.default_database

    def list_databases(self) -> list[str]:
        return sorted(db.name for db in self.spark.catalog.listDatabases())

    def database_exists(self, database: str) -> bool:
        return bool(self.spark.catalog.databaseExists(database))

    def list_tables(self, database: str) -> list[str]:
        return sorted(t.name for t in self.spark.catalog.listTables(database) if not t.isTemporary)

    def get_table(self, database: str, name: str) -> CatalogTable | None:
        from strom.connectors.spark.catalog import describe_table

        qualified = f"{database}.{name}"
        described = describe_table(self.spark, qualified)
        if described is None:
            return None
        columns = tuple(
            CatalogColumn(c.name, _nullable(sql_type_of_arrow(c.arrow_type), c.nullable)) for c in described.columns
        )
        options = {"connector": "spark", "table": qualified}
        partition_keys = described.partition_columns
        return CatalogTable(columns, options, partition_keys=partition_keys)


def _nullable(data_type: DataType, nullable: bool) -> DataType:
    return data_type if nullable else data_type.not_null()


_OPTION = re.compile(r"'((?:[^']|'')*)'\s*=\s*'((?:[^']|'')*)'")
_CREATE = re.compile(r"^\s*CREATE\s+CATALOG\s+(`[^`]+`|\w+)\s+WITH\s*\((.*)\)\s*;?\s*$", re.IGNORECASE | re.DOTALL)


def create_catalog_statement(text: str) -> tuple[str, Catalog] | None:
    """``CREATE CATALOG name WITH ('type' = 'spark', …)`` → the catalog (None: not such a statement)."""
    found = _CREATE.match(text)
    if found is None:
        return None
    name = found[1].strip("`")
    options = {k.replace("''", "'"): v.replace("''", "'") for k, v in _OPTION.findall(found[2])}
    kind = options.get("type")
    if kind != "spark":
        raise ValidationException(
            f"Could not find any factory for identifier '{kind}' of catalog '{name}'; expected 'type' = 'spark' "
            "(the in-memory catalog is default_catalog)"
        )
    return name, SparkCatalog.from_options(name, options)
