"""The field conversions of the row formats (Flink's ``JsonRowDeserializationSchema``'s and
``CsvRowDeserializationSchema``'s runtime converters): from a JSON value or a CSV cell to the Python value of a
PyFlink ``TypeInformation`` (``Types.INT()``, ``Types.ROW_NAMED(...)``, ...), and from a ``Row`` back to JSON.

    >>> from strom.common import Types
    >>> json_converter(Types.ROW_NAMED(["id", "tags"], [Types.INT(), Types.LIST(Types.STRING())]))({"id": 1})
    Row(id=1, tags=None)
"""

from __future__ import annotations

import base64
import datetime
import decimal
from collections.abc import Callable
from typing import Any

from strom.api.row import Row
from strom.api.typeinfo import BasicTypeInfo, RowTypeInfo, SqlTimeTypeInfo, TypeInformation, _ElementsTypeInfo

__all__ = ["MissingFieldError", "json_converter", "json_ready", "row_type_of", "text_converter"]

Convert = Callable[[Any], Any]


class MissingFieldError(ValueError):
    """A field of the row type is not in the JSON object (``fail_on_missing_field``)."""


def row_type_of(type_info: Any, who: str) -> RowTypeInfo:
    if not isinstance(type_info, RowTypeInfo):
        raise TypeError(
            f"expected the row type of {who} (a RowTypeInfo); got {type_info!r:.80}; "
            "hint: Types.ROW([Types.INT(), Types.STRING()]) or Types.ROW_NAMED(['id', 'name'], [...])"
        )
    return type_info


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ValueError(f"{value!r} is not true or false")
    return text == "true"


def _to_bytes(value: Any) -> bytes:
    return value if isinstance(value, bytes) else base64.b64decode(value)


_BASIC: dict[str, Convert] = {
    "String": str,
    "Char": str,
    "Boolean": _to_bool,
    "Byte": int,
    "Short": int,
    "Integer": int,
    "Long": int,
    "BigInteger": int,
    "Float": float,
    "Double": float,
    "BigDecimal": lambda v: decimal.Decimal(str(v)),
}
_SQL: dict[str, Convert] = {
    "Date": datetime.date.fromisoformat,
    "Time": datetime.time.fromisoformat,
    "Timestamp": lambda v: datetime.datetime.fromisoformat(str(v).replace("Z", "+00:00")),
}


def _scalar(type_info: TypeInformation) -> Convert | None:
    if isinstance(type_info, BasicTypeInfo):
        return _BASIC.get(type_info.java_name, str)
    if isinstance(type_info, SqlTimeTypeInfo):
        return _SQL[type_info.java_name]
    return None


def _nullable(convert: Convert) -> Convert:
    return lambda v: None if v is None else convert(v)


def json_converter(type_info: TypeInformation, fail_on_missing_field: bool = False) -> Convert:
    """A parsed JSON value (``json.loads``) to the value of ``type_info``: objects to named ``Row``\\ s (a missing
    field is ``None``, or an error with ``fail_on_missing_field``), arrays to lists."""
    scalar = _scalar(type_info)
    if scalar is not None:
        return _nullable(scalar)
    if isinstance(type_info, RowTypeInfo):
        names = type_info.get_field_names()
        fields = [json_converter(t, fail_on_missing_field) for t in type_info.get_field_types()]
        pairs = list(zip(names, fields, strict=True))

        def row(value: Any) -> Row:
            if not isinstance(value, dict):
                raise ValueError(f"expected a JSON object for the row {names}; got {value!r:.60}")
            if fail_on_missing_field:
                missing = [n for n in names if n not in value]
                if missing:
                    raise MissingFieldError(f"expected the field(s) {missing} in the JSON object; got {sorted(value)}")
            out = Row(*[convert(value.get(name)) for name, convert in pairs])
            out.set_field_names(names)
            return out

        return _nullable(row)
    if isinstance(type_info, _ElementsTypeInfo):
        element_type = type_info.element_type
        if isinstance(element_type, BasicTypeInfo) and element_type.java_name == "Byte":
            return _nullable(_to_bytes)  # byte[]: base64, as Jackson writes it
        element = json_converter(element_type, fail_on_missing_field)
        return _nullable(lambda v: [element(e) for e in v])
    return lambda v: v  # a type without a JSON mapping of its own: the parsed value


def json_ready(value: Any) -> Any:
    """``value`` as ``json.dumps`` takes it: rows as objects of their field names (``f0``, ``f1``, ... for
    positional rows), dates and times in ISO 8601, decimals as numbers, bytes in base64 (as Flink's JSON format)."""
    if isinstance(value, Row):
        names = value.get_field_names() or [f"f{i}" for i in range(len(value))]
        return {n: json_ready(v) for n, v in zip(names, value, strict=True)}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return value


def text_converter(type_info: TypeInformation, array_element_delimiter: str, null_literal: str | None) -> Convert:
    """A CSV cell to the value of ``type_info`` (an array: cells split at ``array_element_delimiter``); the null
    literal (and an empty cell of a non-string type) is ``None``."""
    scalar = _scalar(type_info)
    is_string = isinstance(type_info, BasicTypeInfo) and type_info.java_name in ("String", "Char")
    if scalar is None:
        if not isinstance(type_info, _ElementsTypeInfo):
            raise TypeError(
                f"expected a CSV column type (a basic type, a SQL time type or an array of one); got {type_info!r}"
            )
        element = text_converter(type_info.element_type, array_element_delimiter, null_literal)
        scalar = lambda cell: [element(e) for e in cell.split(array_element_delimiter)]  # noqa: E731
    convert = scalar

    def cell(text: str) -> Any:
        if text == null_literal or (not text and not is_string):
            return None
        return convert(text)

    return cell
