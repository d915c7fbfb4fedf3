"""DataStream ↔ Table (PyFlink's ``from_data_stream`` / ``to_data_stream`` / ``to_changelog_stream``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from strom.api.row import Row, RowKind, _create_row
from strom.table.errors import TableException
from strom.table.planner.changelog import is_insert_only
from strom.table.planner.logical import DataStreamScan, RelNode, RowType
from strom.table.planner.translator import Translator
from strom.table.types import parse_type

if TYPE_CHECKING:
    from strom.table.table import Table
    from strom.table.table_environment import TableEnvironment

__all__ = ["from_data_stream", "to_data_stream", "to_retract_stream"]

_new = object.__new__


class _ToRow:
    def __call__(self, value: Any) -> Row:
        if isinstance(value, Row):
            return value
        if isinstance(value, tuple | list):
            return _create_row(None, list(value))
        return _create_row(None, [value])


class _Named:
    def __init__(self, names: list[str]) -> None:
        self.names = names

    def __call__(self, row: Row) -> Row:  # per row: _create_row's body inline (one Python call less)
        named: Row = _new(Row)
        named._values = [*row._values]
        named._fields = self.names
        named._row_kind = row._row_kind
        return named


def from_data_stream(stream: Any, fields: Sequence[Any], changelog: bool = False) -> RelNode:
    from strom.table.table_descriptor import Schema

    if len(fields) == 1 and isinstance(fields[0], Schema) and not changelog:
        from strom.table.schema_translator import from_data_stream_with_schema

        return from_data_stream_with_schema(stream, fields[0])
    type_info = stream.get_type() if hasattr(stream, "get_type") else None
    names = [str((getattr(f, "_node", None) and f._node.name) or f) for f in fields] or list(
        getattr(type_info, "get_field_names", lambda: [])() or []
    )
    types_info = list(getattr(type_info, "get_field_types", lambda: [])() or [])
    if not names:
        names = ["f0"]
    types = tuple(_sql_type(types_info[i]) if i < len(types_info) else parse_type("STRING") for i in range(len(names)))
    return DataStreamScan(RowType(tuple(names), types), stream.map(_ToRow()), changelog)


def _sql_type(type_info: Any) -> Any:
    text = str(type_info).upper()
    for key, sql in (
        ("BIG_INT", "BIGINT"),
        ("LONG", "BIGINT"),
        ("INT", "INT"),
        ("DOUBLE", "DOUBLE"),
        ("FLOAT", "FLOAT"),
        ("BOOLEAN", "BOOLEAN"),
    ):
        if key in text:
            return parse_type(sql)
    return parse_type("STRING")


def to_data_stream(t_env: TableEnvironment, table: Table, changelog: bool) -> Any:
    plan = table._plan
    if not changelog and not is_insert_only(plan):
        raise TableException(
            "Table sink '*anonymous_datastream_sink*' doesn't support consuming update changes; "
            "hint: to_changelog_stream(table) for an updating table"
        )
    stream = Translator(t_env._new_stream_env()).translate(plan)
    return stream.map(_Named(list(plan.row_type.names)))


class _Retract:
    def __call__(self, row: Row) -> tuple[bool, Row]:
        kind = row._row_kind
        plain = _create_row(row.get_field_names(), row._values)
        return (kind is RowKind.INSERT or kind is RowKind.UPDATE_AFTER, plain)


def to_retract_stream(t_env: TableEnvironment, table: Table) -> Any:
    return to_data_stream(t_env, table, changelog=True).map(_Retract())
