"""Flink's ``JsonToRowDataConverters`` / ``RowDataToJsonConverters`` and their CSV twins: one value of a SQL type
from a parsed JSON node or a CSV cell, and back.

Python values per SQL type are the planner's (``INT`` → ``int``, ``DECIMAL`` → ``Decimal``, ``TIMESTAMP`` → naive
``datetime``, ``TIMESTAMP_LTZ`` → naive ``datetime`` in UTC, ``BYTES`` → ``bytes``, ``ARRAY`` → ``list``, ``MAP`` →
``dict``, ``ROW`` → ``Row``). Text forms are Flink's SQL standard ones: ``2024-01-02 03:04:05.5`` for a TIMESTAMP
(the fraction without trailing zeros), the same with ``Z`` for a TIMESTAMP_LTZ, ``ISO-8601`` with a ``T`` when
``timestamp-format.standard`` says so; BYTES are base64 in JSON.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
from collections.abc import Callable
from typing import Any

from strom.api.row import Row, _create_row
from strom.table.types import DataType, RowType

__all__ = [
    "decimal_text",
    "format_timestamp",
    "from_json_node",
    "from_text",
    "parse_timestamp",
    "to_json_node",
    "to_text",
]

Convert = Callable[[Any], Any]


def _root(data_type: DataType) -> str:
    return data_type.type_root.name


def parse_timestamp(text: str, *, ltz: bool) -> datetime.datetime:
    """``2024-01-02 03:04:05.123`` or ``2024-01-02T03:04:05.123`` (``Z`` or an offset for a TIMESTAMP_LTZ) as a
    naive datetime (in UTC for a TIMESTAMP_LTZ)."""
    value = datetime.datetime.fromisoformat(text.strip())
    if value.tzinfo is not None:
        value = value.astimezone(datetime.UTC).replace(tzinfo=None)
    return value


def _fraction(value: datetime.datetime | datetime.time) -> str:
    return f".{value.microsecond:06d}".rstrip("0") if value.microsecond else ""


def format_timestamp(value: datetime.datetime, *, ltz: bool, iso: bool = False) -> str:
    """Flink's ``SQL_TIMESTAMP_FORMAT`` (``ISO8601_TIMESTAMP_FORMAT`` when ``iso``); ``Z`` after a TIMESTAMP_LTZ."""
    text = value.strftime("%Y-%m-%dT%H:%M:%S" if iso else "%Y-%m-%d %H:%M:%S") + _fraction(value)
    return text + "Z" if ltz else text


def decimal_text(value: decimal.Decimal, *, plain: bool = False) -> str:
    """A DECIMAL as Jackson writes Flink's: trailing zeros stripped, scientific when ``BigDecimal.toString`` is
    (``12.30`` → ``12.3``, ``100.00`` → ``1E+2``), or plain digits."""
    stripped = value.normalize()
    return format(stripped, "f") if plain else str(stripped)


def _parse_bool(value: Any) -> bool:
    return value if isinstance(value, bool) else str(value).strip().lower() == "true"


def _parse_decimal(value: Any) -> decimal.Decimal:
    return value if isinstance(value, decimal.Decimal) else decimal.Decimal(str(value).strip())


def _node_text(value: Any) -> str:
    """Flink's ``JsonNode.asText()`` for a STRING column: a string as it is, any other node as JSON text."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | decimal.Decimal):
        return str(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def _scalar_from_json(root: str) -> Convert | None:
    converters: dict[str, Convert] = {
        "BOOLEAN": _parse_bool,
        "TINYINT": lambda v: int(v) if isinstance(v, int) else int(str(v).strip()),
        "FLOAT": float,
        "DOUBLE": float,
        "DECIMAL": _parse_decimal,
        "CHAR": _node_text,
        "VARCHAR": _node_text,
        "BINARY": lambda v: base64.b64decode(v),
        "VARBINARY": lambda v: base64.b64decode(v),
        "DATE": lambda v: datetime.date.fromisoformat(str(v).strip()),
        "TIME_WITHOUT_TIME_ZONE": lambda v: datetime.time.fromisoformat(str(v).strip()),
        "TIMESTAMP_WITHOUT_TIME_ZONE": lambda v: parse_timestamp(str(v), ltz=False),
        "TIMESTAMP_WITH_LOCAL_TIME_ZONE": lambda v: parse_timestamp(str(v), ltz=True),
    }
    for integral in ("SMALLINT", "INTEGER", "BIGINT"):
        converters[integral] = converters["TINYINT"]
    return converters.get(root)


def from_json_node(data_type: DataType) -> Convert:
    """A converter of a parsed JSON value (``json.loads`` with ``parse_float=Decimal``) to the type's value."""
    root = _root(data_type)
    scalar = _scalar_from_json(root)
    if scalar is not None:
        return lambda v: None if v is None else scalar(v)
    if root in ("ARRAY", "MULTISET"):
        element = from_json_node(data_type.children[0])
        return lambda v: None if v is None else [element(e) for e in v]
    if root == "MAP":
        key, value = (from_json_node(t) for t in data_type.children)
        return lambda v: None if v is None else {key(k): value(x) for k, x in v.items()}
    if root == "ROW":
        names = list(data_type.names) if isinstance(data_type, RowType) else []
        fields = [from_json_node(t) for t in data_type.children]

        def to_row(v: Any) -> Row | None:
            if v is None:
                return None
            return _create_row(None, [f(v.get(n)) for n, f in zip(names, fields, strict=True)])

        return to_row
    return lambda v: v


def to_json_node(data_type: DataType, *, iso: bool = False) -> Callable[[Any], str]:
    """A writer of the type's value as JSON text (DECIMAL as Jackson writes a BigDecimal node: ``1E+2``)."""
    root = _root(data_type)
    if root in ("CHAR", "VARCHAR"):
        return lambda v: "null" if v is None else json.dumps(v, ensure_ascii=False)
    if root == "BOOLEAN":
        return lambda v: "null" if v is None else ("true" if v else "false")
    if root in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT"):
        return lambda v: "null" if v is None else str(v)
    if root == "DECIMAL":
        return lambda v: "null" if v is None else decimal_text(v)
    if root in ("FLOAT", "DOUBLE"):
        return lambda v: "null" if v is None else json.dumps(float(v))
    if root in ("BINARY", "VARBINARY"):
        return lambda v: "null" if v is None else json.dumps(base64.b64encode(v).decode())
    if root in ("ARRAY", "MULTISET"):
        element = to_json_node(data_type.children[0], iso=iso)
        return lambda v: "null" if v is None else "[" + ",".join(element(e) for e in v) + "]"
    if root == "MAP":
        value = to_json_node(data_type.children[1], iso=iso)
        return lambda v: (
            "null" if v is None else "{" + ",".join(f"{json.dumps(str(k))}:{value(x)}" for k, x in v.items()) + "}"
        )
    if root == "ROW":
        names = tuple(data_type.names) if isinstance(data_type, RowType) else ()
        return object_writer(names, data_type.children, iso=iso)
    text = to_text(data_type, iso=iso)
    return lambda v: "null" if v is None else json.dumps(text(v))


def object_writer(
    names: tuple[str, ...], types: tuple[DataType, ...], *, iso: bool = False, ignore_nulls: bool = False
) -> Callable[[Any], str]:
    """A row (or sequence of values) as one JSON object of the fields in order."""
    keys = [json.dumps(n, ensure_ascii=False) + ":" for n in names]
    writers = [to_json_node(t, iso=iso) for t in types]
    pairs = list(zip(keys, writers, strict=True))

    def write(row: Any) -> str:
        if row is None:
            return "null"
        values = row._values if isinstance(row, Row) else row
        if ignore_nulls:
            return "{" + ",".join(k + w(v) for (k, w), v in zip(pairs, values, strict=True) if v is not None) + "}"
        return "{" + ",".join(k + w(v) for (k, w), v in zip(pairs, values, strict=True)) + "}"

    return write


def from_text(data_type: DataType, array_delimiter: str = ";") -> Convert:
    """A converter of a CSV cell (a string) to the type's value."""
    root = _root(data_type)
    if root in ("CHAR", "VARCHAR"):
        return str
    if root in ("BINARY", "VARBINARY"):
        return lambda v: base64.b64decode(v)
    if root in ("ARRAY", "MULTISET"):
        element = from_text(data_type.children[0], array_delimiter)
        return lambda v: [element(e) for e in v.split(array_delimiter)] if v else []
    scalar = _scalar_from_json(root)
    if scalar is None:
        return str
    return scalar


def to_text(data_type: DataType, *, iso: bool = False, array_delimiter: str = ";") -> Callable[[Any], str]:
    """A writer of the type's value as CSV text (None is written by the caller)."""
    root = _root(data_type)
    if root == "BOOLEAN":
        return lambda v: "true" if v else "false"
    if root == "TIMESTAMP_WITHOUT_TIME_ZONE":
        return lambda v: format_timestamp(v, ltz=False, iso=iso)
    if root == "TIMESTAMP_WITH_LOCAL_TIME_ZONE":
        return lambda v: format_timestamp(v, ltz=True, iso=iso)
    if root == "TIME_WITHOUT_TIME_ZONE":
        return lambda v: v.strftime("%H:%M:%S")
    if root in ("BINARY", "VARBINARY"):
        return lambda v: base64.b64encode(v).decode()
    if root in ("ARRAY", "MULTISET"):
        element = to_text(data_type.children[0], iso=iso)
        return lambda v: array_delimiter.join(element(e) for e in v)
    if root in ("FLOAT", "DOUBLE"):
        return lambda v: repr(float(v))
    return str
