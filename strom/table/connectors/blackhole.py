"""The ``blackhole`` table connector (Flink's ``BlackHoleTableSinkFactory``): swallows every change."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from strom.table.connectors.base import DynamicTableSink, check_options

if TYPE_CHECKING:
    from strom.api.datastream import DataStream
    from strom.table.catalog.catalog_manager import CatalogTable
    from strom.table.planner.logical import RowType

__all__ = ["BlackHoleTableSink"]


def _discard(value: Any) -> None:
    return None


class BlackHoleTableSink(DynamicTableSink):
    accepts_updates = True

    @classmethod
    def create(cls, name: str, table: CatalogTable, row_type: RowType) -> BlackHoleTableSink:
        check_options(name, "blackhole", table.options, set())
        return cls()

    def consume(self, stream: DataStream[Any], row_type: RowType) -> None:
        stream.add_sink(_discard).name("Sink: blackhole")
