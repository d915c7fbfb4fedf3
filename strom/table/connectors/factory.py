"""Flink's ``FactoryUtil``: the table connectors by their ``'connector'`` option."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from strom.table.connectors import (
    blackhole,
    datagen,
    filesystem,
    jdbc_table,
    kafka_table,
    print_sink,
    redis_table,
    spark_table,
)
from strom.table.connectors.base import DynamicTableSink, DynamicTableSource
from strom.table.errors import ValidationException

if TYPE_CHECKING:
    from strom.table.catalog.catalog_manager import CatalogTable
    from strom.table.planner.logical import RowType

__all__ = ["create_sink", "create_source"]


def _factories() -> dict[str, tuple[Callable[..., DynamicTableSource] | None, Callable[..., DynamicTableSink] | None]]:
    return {
        "datagen": (datagen.DataGenTableSource.create, None),
        "print": (None, print_sink.PrintTableSink.create),
        "blackhole": (None, blackhole.BlackHoleTableSink.create),
        "filesystem": (filesystem.FileSystemTableSource.create, filesystem.FileSystemTableSink.create),
        "kafka": (kafka_table.KafkaDynamicSource.create, kafka_table.KafkaDynamicSink.create),
        "upsert-kafka": (kafka_table.KafkaDynamicSource.create_upsert, kafka_table.KafkaDynamicSink.create_upsert),
        "redis": (redis_table.RedisDynamicSource.create, redis_table.RedisDynamicSink.create),
        "spark": (spark_table.SparkDynamicSource.create, spark_table.SparkDynamicSink.create),
        "jdbc": (jdbc_table.JdbcTableSource.create, jdbc_table.JdbcTableSink.create),
    }


def _factory(name: str, table: CatalogTable, index: int) -> Any:
    connector = table.options.get("connector")
    if connector is None:
        raise ValidationException(
            f"Table options do not contain an option key 'connector' for table '{name}'; "
            "hint: WITH ('connector' = 'datagen' | 'print' | 'blackhole' | 'filesystem')"
        )
    factories = _factories()
    if connector not in factories:
        raise ValidationException(
            f"Could not find any factory for identifier '{connector}' for table '{name}'; "
            f"expected one of: {', '.join(sorted(factories))}"
        )
    factory = factories[connector][index]
    if factory is None:
        role, other = ("source", "sink") if index == 0 else ("sink", "source")
        raise ValidationException(
            f"Connector '{connector}' can only be used as a {other}; got it as a {role} ('{name}')"
        )
    return factory


def create_source(name: str, table: CatalogTable, row_type: RowType) -> DynamicTableSource:
    source: DynamicTableSource = _factory(name, table, 0)(name, table, row_type)
    return source


def create_sink(name: str, table: CatalogTable, row_type: RowType) -> DynamicTableSink:
    sink: DynamicTableSink = _factory(name, table, 1)(name, table, row_type)
    return sink
