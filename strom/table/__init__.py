"""The Table API and SQL (PyFlink's ``pyflink.table``): Flink's dynamic tables planned onto strom's DataStream runtime.

``TableEnvironment.create(EnvironmentSettings.in_streaming_mode())`` runs SQL (``execute_sql``, ``sql_query``) and
the Table API (``from_elements(...).select(col('a') + 1)``) as strom jobs with Flink's changelog semantics.

The names load lazily (:mod:`strom.lazy_exports`): a TaskManager importing one operator module of ``strom.table``
(``strom.table.runtime.streaming_join``) runs neither the planner nor the connectors, and two task threads
importing two such modules at once cannot meet in this package's initialization.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from strom.lazy_exports import LazyExports

if TYPE_CHECKING:
    from strom.api.row import Row, RowKind
    from strom.table.environment_settings import EnvironmentSettings
    from strom.table.errors import SqlParserException, TableException, ValidationException
    from strom.table.explain_detail import ExplainDetail
    from strom.table.expression import Expression
    from strom.table.table import GroupedTable, Table
    from strom.table.table_config import TableConfig
    from strom.table.table_descriptor import FormatDescriptor, Schema, TableDescriptor
    from strom.table.table_environment import StatementSet, StreamTableEnvironment, TableEnvironment
    from strom.table.table_result import ResultKind, TableResult
    from strom.table.types import DataTypes

_LAZY = LazyExports(
    __name__,
    {
        "strom.api.row": ("Row", "RowKind"),
        "strom.table.environment_settings": ("EnvironmentSettings",),
        "strom.table.errors": ("SqlParserException", "TableException", "ValidationException"),
        "strom.table.explain_detail": ("ExplainDetail",),
        "strom.table.expression": ("Expression",),
        "strom.table.table": ("GroupedTable", "Table"),
        "strom.table.table_config": ("TableConfig",),
        "strom.table.table_descriptor": ("FormatDescriptor", "Schema", "TableDescriptor"),
        "strom.table.table_environment": ("StatementSet", "StreamTableEnvironment", "TableEnvironment"),
        "strom.table.table_result": ("ResultKind", "TableResult"),
        "strom.table.types": ("DataTypes",),
    },
)

__all__ = [
    "DataTypes",
    "EnvironmentSettings",
    "ExplainDetail",
    "Expression",
    "FormatDescriptor",
    "GroupedTable",
    "ResultKind",
    "Row",
    "RowKind",
    "Schema",
    "SqlParserException",
    "StatementSet",
    "StreamTableEnvironment",
    "Table",
    "TableConfig",
    "TableDescriptor",
    "TableEnvironment",
    "TableException",
    "TableResult",
    "ValidationException",
]


def __getattr__(name: str) -> object:
    return _LAZY.load(name)


def __dir__() -> list[str]:
    return _LAZY.dir(globals())
