"""Column types of the file formats until PyFlink's ``Types``/``DataTypes`` land: a Python type or a SQL name
(``"BIGINT"``, ``"DOUBLE"``, ``"STRING"``, ...), each with the converter from text a CSV column uses."""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["ColumnType", "column_type"]


def _to_bool(text: str) -> bool:
    value = _BOOLS.get(text.strip().lower())
    if value is None:
        raise ValueError(f"{text!r} is not true or false")
    return value


_BOOLS = {"true": True, "false": False}


@dataclass(frozen=True, slots=True)
class ColumnType:
    """A column's type: its SQL ``name``, the Python type of its values and the converter from a text cell."""

    name: str
    python_type: type
    from_text: Callable[[str], Any]


_STRING = ColumnType("STRING", str, str)
_BIGINT = ColumnType("BIGINT", int, int)
_DOUBLE = ColumnType("DOUBLE", float, float)
_BOOLEAN = ColumnType("BOOLEAN", bool, _to_bool)
_DECIMAL = ColumnType("DECIMAL", decimal.Decimal, decimal.Decimal)
_DATE = ColumnType("DATE", datetime.date, datetime.date.fromisoformat)
_TIME = ColumnType("TIME", datetime.time, datetime.time.fromisoformat)
_TIMESTAMP = ColumnType("TIMESTAMP", datetime.datetime, datetime.datetime.fromisoformat)

_BY_NAME = {
    "STRING": _STRING,
    "VARCHAR": _STRING,
    "CHAR": _STRING,
    "BIGINT": _BIGINT,
    "INT": _BIGINT,
    "INTEGER": _BIGINT,
    "SMALLINT": _BIGINT,
    "TINYINT": _BIGINT,
    "LONG": _BIGINT,
    "DOUBLE": _DOUBLE,
    "FLOAT": _DOUBLE,
    "BOOLEAN": _BOOLEAN,
    "BOOL": _BOOLEAN,
    "DECIMAL": _DECIMAL,
    "DATE": _DATE,
    "TIME": _TIME,
    "TIMESTAMP": _TIMESTAMP,
}
_BY_PYTHON_TYPE: dict[type, ColumnType] = {
    str: _STRING,
    int: _BIGINT,
    float: _DOUBLE,
    bool: _BOOLEAN,
    decimal.Decimal: _DECIMAL,
    datetime.date: _DATE,
    datetime.time: _TIME,
    datetime.datetime: _TIMESTAMP,
}


def column_type(spec: Any, *, column: str) -> ColumnType:
    """``int``, ``"BIGINT"``, ``"DECIMAL(10, 2)"``, ... → its :class:`ColumnType`."""
    if isinstance(spec, ColumnType):
        return spec
    if isinstance(spec, type) and spec in _BY_PYTHON_TYPE:
        return _BY_PYTHON_TYPE[spec]
    if isinstance(spec, str):
        found = _BY_NAME.get(spec.split("(")[0].strip().upper())
        if found is not None:
            return found
    raise ValueError(
        f"expected the type of column '{column}' as a Python type (str, int, float, bool, Decimal, date, "
        f"datetime) or a SQL name ({', '.join(sorted(_BY_NAME))}); got {spec!r}"
    )
