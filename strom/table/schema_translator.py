"""Flink's ``SchemaTranslator`` for ``from_data_stream(stream, schema)``: a DataStream's fields as the physical
columns, then the ``Schema``'s declared columns (physical ones by name, computed ones by their SQL expression) and
its watermark (the rowtime attribute), as Flink derives the table of a DataStream with a schema.

The stream's type gives the physical columns (a row type's fields, else one column ``f0``); Java's ``Instant``
(``Types.INSTANT()``) is a ``TIMESTAMP_LTZ(9)`` whose values arrive as :class:`~strom.api.time.Instant` or
``datetime`` and become naive UTC datetimes (SQL's value of a TIMESTAMP_LTZ).
"""

from __future__ import annotations

import datetime
from typing import Any

from strom.api.row import Row, _create_row
from strom.api.time import Instant
from strom.table.errors import ValidationException
from strom.table.planner.ddl import _watermark
from strom.table.planner.expression_converter import ExpressionConverter
from strom.table.planner.logical import Calc, DataStreamScan, RelNode, RowType
from strom.table.planner.rex import RexInputRef, RexNode
from strom.table.planner.scope import Scope
from strom.table.sql.parser import parse_expression
from strom.table.types import DataType, parse_type

__all__ = ["from_data_stream_with_schema", "sql_type_of"]

_EPOCH = datetime.datetime(1970, 1, 1)
_TYPES = {
    "String": "STRING",
    "Boolean": "BOOLEAN",
    "Byte": "TINYINT",
    "Short": "SMALLINT",
    "Integer": "INT",
    "Long": "BIGINT",
    "Float": "FLOAT",
    "Double": "DOUBLE",
    "BigDecimal": "DECIMAL(38, 18)",
    "Instant": "TIMESTAMP_LTZ(9)",
}


def sql_type_of(type_info: Any) -> DataType:
    """The SQL type of a DataStream field's type information (Flink's ``TypeInfoDataTypeConverter``)."""
    java = getattr(type_info, "java_name", None)
    if java in _TYPES:
        return parse_type(_TYPES[java])
    text = str(type_info).upper()
    for key, sql in (("LONG", "BIGINT"), ("INT", "INT"), ("DOUBLE", "DOUBLE"), ("FLOAT", "FLOAT"), ("BOOL", "BOOLEAN")):
        if key in text:
            return parse_type(sql)
    return parse_type("STRING")


def _utc(value: Any) -> Any:
    if isinstance(value, Instant):
        return _EPOCH + datetime.timedelta(seconds=value.seconds, microseconds=value.nanos // 1000)
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        return value.astimezone(datetime.UTC).replace(tzinfo=None)
    return value


class _ToRow:
    """A stream record as a row of the physical columns (Instants at ``instants`` as UTC datetimes)."""

    def __init__(self, instants: tuple[int, ...]) -> None:
        self.instants = instants

    def __call__(self, value: Any) -> Row:
        if isinstance(value, Row):
            values = list(value._values)
        elif isinstance(value, tuple | list):
            values = list(value)
        else:
            values = [value]
        for i in self.instants:
            values[i] = _utc(values[i])
        return _create_row(None, values)


def from_data_stream_with_schema(stream: Any, schema: Any) -> RelNode:
    type_info = stream.get_type() if hasattr(stream, "get_type") else None
    field_types = list(getattr(type_info, "get_field_types", lambda: [])() or [])
    names = list(getattr(type_info, "get_field_names", lambda: [])() or [])
    if not field_types:
        field_types, names = [type_info], ["f0"]
    types = tuple(sql_type_of(t) for t in field_types)
    instants = tuple(i for i, t in enumerate(field_types) if getattr(t, "java_name", None) == "Instant")
    physical = RowType(tuple(names), types)
    rel: RelNode = DataStreamScan(physical, stream.map(_ToRow(instants)), False)
    declared = [c for c in schema.columns if c.metadata is None]
    if declared:
        converter = ExpressionConverter(Scope.of(physical))
        projection: list[RexNode] = []
        for column in declared:
            if column.expression is not None:
                projection.append(converter.convert(parse_expression(column.expression)))
                continue
            index = physical.index_of(column.name)
            if index is None:
                raise ValidationException(
                    f"Unable to find a field named '{column.name}' in the physical data type derived from the given "
                    f"type information; expected one of: {', '.join(physical.names)}"
                )
            projection.append(RexInputRef(index, physical.types[index], column.name))
        row_type = RowType(tuple(c.name for c in declared), tuple(p.type for p in projection))
        rel = Calc(row_type, rel, tuple(projection), None)
    if schema.watermark is not None:
        rel = _watermark("*anonymous_datastream_source*", rel, schema.watermark)
    return rel
