"""Flink's ``*ToStringCastRule``s: how each type's value reads as a string (CAST to STRING, ``||``, printing).

``to_string_function(t, context)`` returns a callable for non-NULL values of type *t*, chosen once per type. The
formats are Java's: ``Double.toString`` (``1.0``, ``1.0E7``, ``1.0E-4``), ``Float.toString`` over the float's own
shortest digits, ``BigDecimal.toPlainString`` at the type's scale (``1.50``), ``TRUE``/``FALSE``, ISO dates,
timestamps with exactly *p* fractional digits (``2024-01-15 10:20:30.000`` for TIMESTAMP(3)), TIMESTAMP_LTZ in the
session time zone, intervals as ``+1 02:03:04.500`` / ``+1-02``, collections as ``[1, 2]`` / ``{a=1}`` / ``(1, a)``.
"""

from __future__ import annotations

import datetime
import decimal
import math
import struct
from collections.abc import Callable
from typing import Any

from strom.table.functions.bound_function import DEFAULT_CONTEXT, FunctionContext
from strom.table.logical_constructed_types import ArrayType, MapType, MultisetType, RowType
from strom.table.logical_types import (
    DataType,
    DayTimeIntervalType,
    DecimalType,
    LogicalTypeRoot,
    YearMonthIntervalType,
)

__all__ = [
    "format_date",
    "format_day_time_interval",
    "format_decimal",
    "format_double",
    "format_float",
    "format_time",
    "format_timestamp",
    "format_year_month_interval",
    "to_string_function",
]

_R = LogicalTypeRoot
_EPOCH = datetime.datetime(1970, 1, 1)


def _java_decimal_notation(digits: str, exponent: int, negative: bool) -> str:
    """Java's ``Double.toString`` layout for the significant *digits* × 10^*exponent* (d.ddd × 10^exponent)."""
    sign = "-" if negative else ""
    if -3 <= exponent < 7:
        if exponent >= 0:
            whole = digits[: exponent + 1].ljust(exponent + 1, "0")
            frac = digits[exponent + 1 :] or "0"
        else:
            whole, frac = "0", "0" * (-exponent - 1) + digits
        return f"{sign}{whole}.{frac}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"


def _shortest_digits(text: str) -> tuple[str, int]:
    """The significant digits and decimal exponent of a float's shortest repr (``'1.5e-05'`` → ``('15', -5)``)."""
    mantissa, _, exp = text.partition("e")
    exponent = int(exp) if exp else 0
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    lead_zeros = len(whole + frac) - len((whole + frac).lstrip("0"))
    exponent += len(whole) - 1 - lead_zeros
    return digits.rstrip("0") or "0", exponent


def format_double(value: float) -> str:
    """Java's ``Double.toString``: ``1.0``, ``0.001``, ``1.0E7``, ``1.0E-4``, ``NaN``, ``-Infinity``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    digits, exponent = _shortest_digits(repr(abs(value)))
    return _java_decimal_notation(digits, exponent, value < 0)


def _float32(value: float) -> float:
    return float(struct.unpack("f", struct.pack("f", value))[0])


def format_float(value: float) -> str:
    """Java's ``Float.toString``: the shortest digits that read back as the same 32-bit float."""
    if math.isnan(value) or math.isinf(value) or value == 0:
        return format_double(value)
    target = _float32(value)
    for precision in range(1, 10):
        text = f"{abs(target):.{precision}g}"
        if _float32(float(text)) == abs(target):
            break
    digits, exponent = _shortest_digits(text.replace("E", "e"))
    return _java_decimal_notation(digits, exponent, target < 0)


def format_decimal(value: decimal.Decimal, scale: int) -> str:
    """``BigDecimal.toPlainString`` at *scale* digits: ``1.50``, ``0.00000100``, ``-3``."""
    return f"{value:.{scale}f}"


def format_date(value: datetime.date) -> str:
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"


def _fraction(microseconds: int, precision: int, nanos: int = 0) -> str:
    if precision == 0:
        return ""
    digits = f"{microseconds:06d}{nanos:03d}"
    return "." + digits[:precision]


def format_time(value: datetime.time, precision: int) -> str:
    """Flink's ``unixTimeToString``: ``12:34:56``; with a precision, milliseconds without trailing zeros but at
    least one digit (``12:34:56.5``, ``12:34:56.0``, ``12:34:56.789``)."""
    text = f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
    if precision <= 0:
        return text
    digits, ms = [], value.microsecond // 1000
    while precision > 0:
        digits.append(str(ms // 100))
        ms = ms % 100 * 10
        if ms == 0:
            break
        precision -= 1
    return text + "." + "".join(digits)


def format_timestamp(value: datetime.datetime, precision: int) -> str:
    """``2024-01-15 10:20:30.000`` — exactly *precision* fractional digits (``nanosecond`` attribute if any)."""
    nanos = int(getattr(value, "nanosecond", 0)) % 1000
    return f"{format_date(value)} {value.hour:02d}:{value.minute:02d}:{value.second:02d}" + _fraction(
        value.microsecond, precision, nanos
    )


def format_day_time_interval(value: datetime.timedelta, fractional_precision: int = 3) -> str:
    """Flink's ``INTERVAL DAY TO SECOND`` string: ``+1 02:03:04.500`` (sign, days, time, millis)."""
    micros = value // datetime.timedelta(microseconds=1)
    sign = "-" if micros < 0 else "+"
    micros = abs(micros)
    seconds, micro = divmod(micros, 1_000_000)
    minutes, second = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    days, hour = divmod(hours, 24)
    frac = _fraction(micro, fractional_precision)
    return f"{sign}{days} {hour:02d}:{minute:02d}:{second:02d}{frac}"


def format_year_month_interval(months: int) -> str:
    """Flink's ``INTERVAL YEAR TO MONTH`` string: ``+1-02``."""
    sign = "-" if months < 0 else "+"
    years, month = divmod(abs(months), 12)
    return f"{sign}{years}-{month:02d}"


def _ltz_formatter(precision: int, context: FunctionContext) -> Callable[[Any], str]:
    zone = context.zone
    utc = datetime.UTC

    def fmt(value: datetime.datetime) -> str:
        local = value.replace(tzinfo=utc).astimezone(zone).replace(tzinfo=None)
        return format_timestamp(local, precision)

    return fmt


def to_string_function(t: DataType, context: FunctionContext = DEFAULT_CONTEXT) -> Callable[[Any], str]:
    """A callable turning a non-NULL value of *t* into Flink's string for it."""
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
        return lambda v: format_decimal(v, scale)
    if root is _R.DATE:
        return format_date
    precision = int(getattr(t, "precision", 0))
    if root is _R.TIME_WITHOUT_TIME_ZONE:
        return lambda v: format_time(v, precision)
    if root is _R.TIMESTAMP_WITHOUT_TIME_ZONE:
        return lambda v: format_timestamp(v, precision)
    if root is _R.TIMESTAMP_WITH_LOCAL_TIME_ZONE:
        return _ltz_formatter(precision, context)
    if isinstance(t, DayTimeIntervalType):
        return lambda v: format_day_time_interval(v, 3)
    if isinstance(t, YearMonthIntervalType):
        return format_year_month_interval
    if root in (_R.BINARY, _R.VARBINARY):
        return lambda v: bytes(v).decode("utf-8", errors="replace")
    return _constructed_to_string(t, context)


def _nullable_to_string(t: DataType, context: FunctionContext) -> Callable[[Any], str]:
    fmt = to_string_function(t, context)
    return lambda v: "NULL" if v is None else fmt(v)


def _constructed_to_string(t: DataType, context: FunctionContext) -> Callable[[Any], str]:
    if isinstance(t, MultisetType):
        element = _nullable_to_string(t.element_type, context)
        return lambda v: "{" + ", ".join(f"{element(k)}={n}" for k, n in v.items()) + "}"
    if isinstance(t, ArrayType):
        element = _nullable_to_string(t.element_type, context)
        return lambda v: "[" + ", ".join(element(e) for e in v) + "]"
    if isinstance(t, MapType):
        key, val = _nullable_to_string(t.key_type, context), _nullable_to_string(t.value_type, context)
        return lambda v: "{" + ", ".join(f"{key(k)}={val(x)}" for k, x in v.items()) + "}"
    if isinstance(t, RowType):
        fields = [_nullable_to_string(f, context) for f in t.field_types()]
        return lambda v: "(" + ", ".join(f(x) for f, x in zip(fields, v, strict=True)) + ")"
    return str
