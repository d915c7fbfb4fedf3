"""How Flink shows a row as text: ``+I[alice, 1]`` (``Row.toString``, the print connector) and the values in
``TableResult.print()``'s tableau (``PrintStyle``)."""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Sequence
from typing import Any

from strom.api.row import Row

__all__ = ["row_to_string", "value_to_string"]


def value_to_string(value: Any, data_type: Any = None) -> str:
    """A value as Flink prints it (``TRUE``/``FALSE`` in tableau form, ``<NULL>`` for NULL is the caller's)."""
    formatter = _sqltypes_formatter()
    if formatter is not None and data_type is not None:
        return str(formatter(value, data_type))
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return _java_double(value)
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, datetime.datetime):
        precision = int(getattr(data_type, "precision", 6)) if data_type is not None else 6
        text = value.strftime("%Y-%m-%d %H:%M:%S")
        return f"{text}.{value.microsecond:06d}"[: 20 + precision] if precision > 0 else text
    if isinstance(value, Row):
        return "(" + ", ".join(value_to_string(v) for v in value._values) + ")"
    return str(value)


def row_to_string(row: Row, types: Sequence[Any] = ()) -> str:
    """``+I[alice, 1]`` (Flink's ``Row.toString``: NULL as ``null``, booleans lower case)."""
    parts = []
    for i, value in enumerate(row._values):
        if value is None:
            parts.append("null")
        elif isinstance(value, bool):
            parts.append("true" if value else "false")
        else:
            parts.append(value_to_string(value, types[i] if i < len(types) else None))
    return f"{row.get_row_kind()}[{', '.join(parts)}]"


def _java_double(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    magnitude = abs(value)
    if magnitude != 0 and (magnitude >= 1e7 or magnitude < 1e-3):
        mantissa, exponent = f"{value:.17E}".split("E")
        digits = repr(float(f"{value:.17g}"))
        mantissa = f"{float(mantissa):.17g}"
        if "." not in mantissa:
            mantissa += ".0"
        del digits
        return f"{mantissa}E{int(exponent)}"
    text = repr(value)
    return text if "." in text or "e" in text else text + ".0"


def _sqltypes_formatter() -> Any:
    import importlib

    try:
        module = importlib.import_module("strom.table.value_format")
    except ImportError:
        return None
    return getattr(module, "format_value", None)
