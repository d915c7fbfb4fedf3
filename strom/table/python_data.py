"""Python data as tables (``from_elements``): PyFlink's type inference of Python values and row schemas."""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Sequence
from typing import Any

from strom.api.row import Row
from strom.table.errors import ValidationException
from strom.table.planner.logical import RowType
from strom.table.types import DataType, parse_type

__all__ = ["infer_type", "values_of"]


def infer_type(value: Any) -> DataType:
    """PyFlink's ``_infer_type``: int → BIGINT, float → DOUBLE, str → STRING, …"""
    if isinstance(value, bool):
        return parse_type("BOOLEAN")
    if isinstance(value, int):
        return parse_type("BIGINT")
    if isinstance(value, float):
        return parse_type("DOUBLE")
    if isinstance(value, str):
        return parse_type("STRING")
    if isinstance(value, bytes | bytearray):
        return parse_type("BYTES")
    if isinstance(value, decimal.Decimal):
        return parse_type("DECIMAL(38, 18)")
    if isinstance(value, datetime.datetime):
        return parse_type("TIMESTAMP(6)")
    if isinstance(value, datetime.date):
        return parse_type("DATE")
    if isinstance(value, datetime.time):
        return parse_type("TIME(0)")
    if value is None:
        return parse_type("NULL")
    raise ValidationException(f"from_elements: cannot infer a SQL type of a {type(value).__name__}: {value!r}")


def _as_tuple(element: Any) -> tuple[Any, ...]:
    if isinstance(element, Row):
        return tuple(element._values)
    if isinstance(element, tuple | list):
        return tuple(element)
    return (element,)


def values_of(elements: Sequence[Any], schema: Any) -> tuple[RowType, list[tuple[Any, ...]]]:
    rows = [_as_tuple(e) for e in elements]
    width = len(rows[0]) if rows else 0
    fields = getattr(schema, "fields", None)
    if fields is not None:  # DataTypes.ROW([...])
        names = tuple(f.name for f in fields)
        types = tuple(f.data_type for f in fields)
    else:
        names_given = list(schema) if isinstance(schema, list | tuple) else None
        if names_given is not None and names_given and not isinstance(names_given[0], str):
            raise ValidationException("from_elements: expected a list of column names or DataTypes.ROW([...]) schema")
        field_names = getattr(elements[0], "_fields", None) if elements and isinstance(elements[0], Row) else None
        names = tuple(names_given or field_names or [f"_{i + 1}" for i in range(width)])
        types = tuple(_column_type([r[i] for r in rows]) for i in range(width))
    if rows and len(names) != width:
        raise ValidationException(f"from_elements: expected {len(names)} values per element; got {width}")
    return RowType(names, types), rows


def _column_type(values: list[Any]) -> DataType:
    for value in values:
        if value is not None:
            return infer_type(value)
    return parse_type("STRING")
