"""How Flink prints values: ``TableResult.print()``'s tableau (Flink's ``TableauStyle`` with the printing cast rules)
and the ``+I[...]`` strings of the print connector (``Row.toString``).

- :func:`format_value` ``(value, data_type)``: one tableau cell — ``<NULL>``, ``TRUE``, ``1.50`` (DECIMAL at its
  scale), ``2024-01-01 12:00:00.000`` (TIMESTAMP(3)), TIMESTAMP_LTZ in the session time zone, ``[1, 2]``, ``{a=1}``,
  ``(1, a)``, bytes as ``x'0aff'``.
- :func:`print_table` ``(names, types, rows, *, changelog)``: the whole table. BATCH (``changelog=False``) sizes the
  columns by their content and ends with ``N rows in set``; STREAMING (``changelog=True``) adds the ``op`` column,
  sizes the columns by type, and ends with ``Received a total of N rows``. Cells wider than 30 are cut with ``...``;
  East Asian wide characters count two.
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
from strom.table.functions.cast_temporal import utc_to_local
from strom.table.functions.cast_to_string import (
    format_date,
    format_day_time_interval,
    format_decimal,
    format_double,
    format_float,
    format_time,
    format_timestamp,
    format_year_month_interval,
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
    root = t.type_root
    if root in (_R.CHAR, _R.VARCHAR):
        return str
    if root is _R.BOOLEAN:
        return lambda v: "TRUE" if v else "FALSE"
    if root in (_R.TINYINT, _R.SMALLINT, _R.INTEGER, _R.BIGINT):
        return str
    if root is _R.DOUBLE:
        return format_double
    if root is _R.FLOAT:
        return format_float
    if isinstance(t, DecimalType):
        scale = t.scale
        return lambda v: format_decimal(decimal.Decimal(v), scale)
    if root is _R.DATE:
        return format_date
    if root is _R.TIME_WITHOUT_TIME_ZONE:
        p = get_precision(t)
        return lambda v: format_time(v, p)
    if root is _R.TIMESTAMP_WITHOUT_TIME_ZONE:
        p = get_precision(t)
        return lambda v: format_timestamp(v, p)
    if root is _R.TIMESTAMP_WITH_LOCAL_TIME_ZONE:
        p, to_local = get_precision(t), utc_to_local(FunctionContext(local_time_zone=time_zone).zone)
        return lambda v: format_timestamp(to_local(v), p)
    if root in (_R.BINARY, _R.VARBINARY):
        return lambda v: "x'" + bytes(v).hex() + "'"
    if root is _R.INTERVAL_DAY_TIME:
        return lambda v: format_day_time_interval(v, 3)
    if root is _R.INTERVAL_YEAR_MONTH:
        return format_year_month_interval
    return _collection_formatter(t, time_zone)


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
    if changelog:
        widths = [max(len(n), _type_width(t), len(NULL_COLUMN)) for n, t in zip(names, column_types, strict=True)]
        widths = [min(w, max_column_width) if w > max_column_width else w for w in widths]
        names = ["op", *names]
        widths = [2, *widths]
        cells = [[kind.short_string(), *row] for (kind, _), row in zip(rows, cells, strict=True)]
    else:
        widths = [display_width(n) for n in names]
        for row in cells:
            widths = [max(w, display_width(c)) for w, c in zip(widths, row, strict=True)]
        widths = [min(w, max_column_width) for w in widths]
    if not rows and not changelog:
        return "Empty set\n"
    border = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    lines = [border, _line(names, widths), border]
    lines += [_line(row, widths) for row in cells]
    if rows or changelog:
        lines.append(border)
    n = len(rows)
    if changelog:
        lines.append("Received a total of " + (f"{n} rows" if n != 1 else "1 row"))
    else:
        lines.append(f"{n} rows in set" if n != 1 else "1 row in set")
    return "\n".join(lines) + "\n"


def _line(values: Sequence[str], widths: Sequence[int]) -> str:
    parts = []
    for text, width in zip(values, widths, strict=True):
        cut = _truncate(text, width)
        parts.append(" " * (width - display_width(cut)) + cut)
    return "| " + " | ".join(parts) + " |"


def _java_string(value: Any) -> str:
    """Java's ``toString`` of the external object Flink's Row holds for *value*."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format_double(value)
    if isinstance(value, decimal.Decimal):
        return str(value) if "E" not in str(value) else format(value, "f")
    if isinstance(value, datetime.datetime):
        text = value.isoformat()
        return text[:-3] if text.endswith(":00") and value.microsecond == 0 else text
    if isinstance(value, datetime.time):
        text = value.isoformat()
        return text[:-3] if text.endswith(":00") and value.microsecond == 0 else text
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, bytes | bytearray):
        return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in bytes(value)) + "]"
    if isinstance(value, list):
        return "[" + ", ".join(_java_string(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_java_string(k)}={_java_string(v)}" for k, v in value.items()) + "}"
    if isinstance(value, Row):
        return row_to_string(value)
    return str(value)


def row_to_string(row: Row, data_types: Sequence[DataType] | None = None) -> str:
    """Flink's ``Row.toString``: ``+I[1, Alice, null]`` (the print connector's line, without its prefix)."""
    del data_types  # the Java objects' toString depends on the value only
    return f"{row.get_row_kind().short_string()}[" + ", ".join(_java_string(v) for v in row) + "]"
