"""How Flink prints values: ``TableResult.print()``'s tableau (Flink's ``TableauStyle`` with the printing cast rules)
and the ``+I[...]`` strings of the print connector (``Row.toString``).

- :func:`format_value` ``(value, data_type)``: one tableau cell — ``<NULL>``, ``TRUE``, ``1.50`` (DECIMAL at its
  scale), ``2024-01-01 12:00:00.000`` (TIMESTAMP(3)), TIMESTAMP_LTZ in the session time zone, ``[1, 2]``, ``{a=1}``,
  ``(1, a)``, bytes as ``x'0aff'``.
- :func:`print_table` ``(names, types, rows, *, changelog)``: the whole table, columns sized by their type (INT 11,
  BIGINT 20, DECIMAL(p, s) p + 2, TIMESTAMP(3) 23, …, others 30, at least the name and ``<NULL>``); cells wider are
  cut with ``...``, East Asian wide characters count two; a STREAMING result (``changelog=True``) has the ``op``
  column first. The table ends with ``N rows in set`` (``1 row in set``); an empty result prints ``Empty set``.
- :func:`row_to_string` ``(row, types)``: ``+I[1, Alice, 2024-01-01T12:00]`` as the print connector writes.
"""

from __future__ import annotations

import datetime
import decimal
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from strom.api.row import Row, RowKind
from strom.table.functions.bound_function import FunctionContext
from strom.table.functions.cast_to_string import (
    format_date,
    format_decimal,
    format_double,
    format_float,
    to_string_function,
)
from strom.table.logical_constructed_types import ArrayType, MapType, MultisetType, RowType
from strom.table.logical_types import DataType, DecimalType, LogicalTypeRoot, get_precision

__all__ = ["NULL_COLUMN", "format_value", "print_table", "row_to_string", "value_formatter"]

NULL_COLUMN = "<NULL>"
MAX_COLUMN_WIDTH = 30
_R = LogicalTypeRoot


def value_formatter(data_type: DataType, *, time_zone: str = "UTC", nested: bool = False) -> Callable[[Any], str]:
    """A formatter of values of *data_type* as a tableau cell (NULL as ``<NULL>``; inside collections ``NULL``)."""
    null = "NULL" if nested else NULL_COLUMN
    fmt = _non_null_formatter(data_type, time_zone)
    return lambda v: null if v is None else fmt(v)


def _non_null_formatter(t: DataType, time_zone: str) -> Callable[[Any], str]:
    """CAST(v AS STRING) but for bytes (``x'…'``), DECIMALs given as floats and NULLs inside collections."""
    root = t.type_root
    if root in (_R.BINARY, _R.VARBINARY):
        return lambda v: "x'" + bytes(v).hex() + "'"
    if isinstance(t, DecimalType):
        scale = t.scale
        return lambda v: format_decimal(decimal.Decimal(v), scale)
    if isinstance(t, (ArrayType, MapType, MultisetType, RowType)):
        return _collection_formatter(t, time_zone)
    return to_string_function(t, FunctionContext(local_time_zone=time_zone))


def _collection_formatter(t: DataType, time_zone: str) -> Callable[[Any], str]:
    if isinstance(t, MultisetType):
        elem = value_formatter(t.element_type, time_zone=time_zone, nested=True)
        return lambda v: "{" + ", ".join(f"{elem(k)}={n}" for k, n in v.items()) + "}"
    if isinstance(t, ArrayType):
        elem = value_formatter(t.element_type, time_zone=time_zone, nested=True)
        return lambda v: "[" + ", ".join(elem(x) for x in v) + "]"
    if isinstance(t, MapType):
        key = value_formatter(t.key_type, time_zone=time_zone, nested=True)
        val = value_formatter(t.value_type, time_zone=time_zone, nested=True)
        return lambda v: "{" + ", ".join(f"{key(k)}={val(x)}" for k, x in v.items()) + "}"
    if isinstance(t, RowType):
        fields = [value_formatter(f, time_zone=time_zone, nested=True) for f in t.field_types()]
        return lambda v: "(" + ", ".join(f(x) for f, x in zip(fields, v, strict=True)) + ")"
    return str


def format_value(value: Any, data_type: DataType, *, time_zone: str = "UTC") -> str:
    """One value as ``TableResult.print()`` shows it (``<NULL>`` for NULL)."""
    return value_formatter(data_type, time_zone=time_zone)(value)


def display_width(text: str) -> int:
    """Columns *text* takes in a terminal: East Asian wide and full-width characters count two."""
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def _truncate(text: str, width: int) -> str:
    if display_width(text) <= width:
        return text
    out, used = [], 0
    for ch in text:
        w = display_width(ch)
        if used + w > width - 3:
            break
        out.append(ch)
        used += w
    return "".join(out) + "..."


def _type_width(t: DataType) -> int:
    """Flink's ``TableauStyle.columnWidthsByType`` for one column (before the name and ``<NULL>``)."""
    root = t.type_root
    fixed = {_R.TINYINT: 4, _R.SMALLINT: 6, _R.INTEGER: 11, _R.BIGINT: 20, _R.BOOLEAN: 5, _R.DATE: 10}
    if root in fixed:
        return fixed[root]
    if isinstance(t, DecimalType):
        return t.precision + 2
    if root is _R.TIME_WITHOUT_TIME_ZONE:
        p = get_precision(t)
        return 8 if p == 0 else p + 9
    if root in (_R.TIMESTAMP_WITHOUT_TIME_ZONE, _R.TIMESTAMP_WITH_LOCAL_TIME_ZONE):
        p = get_precision(t)
        return 19 if p == 0 else p + 20
    return MAX_COLUMN_WIDTH


def _rows(rows: Iterable[Row | tuple[RowKind, Sequence[Any]]]) -> list[tuple[RowKind, Sequence[Any]]]:
    out: list[tuple[RowKind, Sequence[Any]]] = []
    for r in rows:
        if isinstance(r, Row):
            out.append((r.get_row_kind(), list(r)))
        else:
            out.append((r[0], r[1]))
    return out


def print_table(
    column_names: Sequence[str],
    column_types: Sequence[DataType],
    rows_with_kinds: Iterable[Row | tuple[RowKind, Sequence[Any]]],
    *,
    changelog: bool,
    time_zone: str = "UTC",
    max_column_width: int = MAX_COLUMN_WIDTH,
) -> str:
    """Flink's tableau output of a result, the closing line included, ending with a newline.

    *rows_with_kinds*: :class:`Row` objects (their kind) or ``(RowKind, values)`` pairs.
    """
    formatters = [value_formatter(t, time_zone=time_zone) for t in column_types]
    rows = _rows(rows_with_kinds)
    cells = [[f(v) for f, v in zip(formatters, values, strict=True)] for _, values in rows]
    names = list(column_names)
    widths = [
        max(display_width(n), min(_type_width(t), max_column_width), len(NULL_COLUMN))
        for n, t in zip(names, column_types, strict=True)
    ]
    if changelog:
        names = ["op", *names]
        widths = [2, *widths]
        cells = [[kind.short_string(), *row] for (kind, _), row in zip(rows, cells, strict=True)]
    if not rows:
        return "Empty set\n"
    border = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    lines = [border, _line(names, widths), border]
    lines += [_line(row, widths) for row in cells]
    lines.append(border)
    lines.append(f"{len(rows)} rows in set" if len(rows) != 1 else "1 row in set")
    return "\n".join(lines) + "\n"


def _line(values: Sequence[str], widths: Sequence[int]) -> str:
    parts = []
    for text, width in zip(values, widths, strict=True):
        cut = _truncate(text, width)
        parts.append(" " * (width - display_width(cut)) + cut)
    return "| " + " | ".join(parts) + " |"


def _java_time(value: datetime.time | datetime.datetime, *, always_seconds: bool = False) -> str:
    """Java's ``LocalTime.toString``: ``10:11``, ``10:11:12``, ``10:11:12.500``, ``10:11:12.123456``."""
    text = f"{value.hour:02d}:{value.minute:02d}"
    if value.second or value.microsecond or always_seconds:
        text += f":{value.second:02d}"
    if value.microsecond:
        text += f".{value.microsecond // 1000:03d}" if value.microsecond % 1000 == 0 else f".{value.microsecond:06d}"
    return text


def _java_string(value: Any, t: DataType | None = None) -> str:
    """Java's ``toString`` of the external object Flink's Row holds for *value* of type *t*."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format_float(value) if t is not None and t.type_root is _R.FLOAT else format_double(value)
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, datetime.datetime):
        if t is not None and t.type_root is _R.TIMESTAMP_WITH_LOCAL_TIME_ZONE:  # an Instant, always in UTC
            return f"{format_date(value)}T{_java_time(value, always_seconds=True)}Z"
        return f"{format_date(value)}T{_java_time(value)}"
    if isinstance(value, datetime.time):
        return _java_time(value)
    if isinstance(value, datetime.date):
        return format_date(value)
    if isinstance(value, bytes | bytearray):
        return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in bytes(value)) + "]"
    children = list(t.children) if t is not None else []
    if isinstance(value, list):
        elem = children[0] if children else None
        return "[" + ", ".join(_java_string(v, elem) for v in value) + "]"
    if isinstance(value, dict):
        key, val = (children[0], children[1]) if len(children) == 2 else (None, None)
        return "{" + ", ".join(f"{_java_string(k, key)}={_java_string(v, val)}" for k, v in value.items()) + "}"
    if isinstance(value, Row):
        return row_to_string(value, children or None)
    return str(value)


def row_to_string(row: Row, data_types: Sequence[DataType] | None = None) -> str:
    """Flink's ``Row.toString``: ``+I[1, Alice, null]`` (the print connector's line, without its prefix).

    With the column types, TIMESTAMP_LTZ values print as Java's ``Instant`` (``2024-01-01T04:00:00Z``) and FLOAT as
    ``Float.toString``; without them every timestamp prints as a ``LocalDateTime``.
    """
    types: Sequence[DataType | None] = data_types if data_types is not None else [None] * len(row)
    return (
        f"{row.get_row_kind().short_string()}["
        + ", ".join(_java_string(v, t) for v, t in zip(row, types, strict=True))
        + "]"
    )
