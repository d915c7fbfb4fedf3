"""The Table API and SQL (PyFlink's ``pyflink.table``): Flink's dynamic tables planned onto strom's DataStream runtime.

``TableEnvironment.create(EnvironmentSettings.in_streaming_mode())`` runs SQL (``execute_sql``, ``sql_query``) and
the Table API (``from_elements(...).select(col('a') + 1)``) as strom jobs with Flink's changelog semantics.
"""

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
