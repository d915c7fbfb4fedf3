"""Flink's arithmetic operators ``+ - * / %`` and unary minus, over numbers, intervals and date-times.

Integer arithmetic wraps on overflow as Java's (``2147483647 + 1 = -2147483648``); ``/`` on integers truncates toward
zero and an integer division by zero fails the job; DOUBLE follows IEEE (``1.0 / 0 = Infinity``); FLOAT results are
rounded to 32 bits; DECIMAL results are rounded HALF_UP to the result scale of Flink's type rules
(:mod:`.type_inference`) and are NULL when they overflow the precision. ``ts ± INTERVAL`` and ``INTERVAL ± INTERVAL``
follow Flink's date-time arithmetic (months clamp to the month's last day).
"""

from __future__ import annotations

import ctypes
import datetime
import decimal
import math
from collections.abc import Callable
from typing import Any

from strom.table.errors import TableRuntimeException
from strom.table.functions.type_inference import arithmetic_result_type
from strom.table.logical_types import (
    DataType,
    DecimalType,
    LogicalTypeFamily,
    LogicalTypeRoot,
)

__all__ = ["add_months", "arithmetic", "decimal_rounder", "negate", "wrap_integer"]

_R = LogicalTypeRoot
_F = LogicalTypeFamily
_BITS = {_R.TINYINT: 8, _R.SMALLINT: 16, _R.INTEGER: 32, _R.BIGINT: 64}
_DECIMAL_CONTEXT = decimal.Context(prec=80, rounding=decimal.ROUND_HALF_UP)
_c_float = ctypes.c_float


def wrap_integer(root: LogicalTypeRoot) -> Callable[[int], int]:
    """Java's two's-complement overflow for the integer type *root*."""
    bits = _BITS[root]
    low, high, span = -(1 << (bits - 1)), (1 << (bits - 1)) - 1, 1 << bits

    def wrap(value: int) -> int:
        if low <= value <= high:
            return value
        return (value - low) % span + low

    return wrap


def float32(value: float) -> float:
    """*value* rounded to a 32-bit float, as Java's ``float`` arithmetic gives (beyond the range ``±Infinity``)."""
    return _c_float(value).value


def _operand(t: DataType) -> Callable[[Any], Any]:
    """A numeric operand as a Python float: a FLOAT one rounded to 32 bits first (Java's ``float`` value)."""
    return float32 if t.type_root is _R.FLOAT else float


def decimal_rounder(t: DecimalType) -> Callable[[decimal.Decimal], decimal.Decimal | None]:
    """Round HALF_UP to *t*'s scale; NULL when the result needs more than *t*'s precision (Flink's DecimalData)."""
    quantum = decimal.Decimal(1).scaleb(-t.scale)
    limit = decimal.Decimal(10) ** (t.precision - t.scale)

    def rnd(value: decimal.Decimal) -> decimal.Decimal | None:
        result = value.quantize(quantum, context=_DECIMAL_CONTEXT)
        return result if abs(result) < limit else None

    return rnd


def strict_integer_op(op: str, root: LogicalTypeRoot) -> Callable[[Any, Any], Any] | None:
    """``+ - *`` on integers as one closure with the NULL check and Java's overflow inlined (the per-record path)."""
    bits = _BITS[root]
    low, high, span = -(1 << (bits - 1)), (1 << (bits - 1)) - 1, 1 << bits

    def add(a: Any, b: Any) -> Any:
        if a is None or b is None:
            return None
        r = a + b
        return r if low <= r <= high else (r - low) % span + low

    def sub(a: Any, b: Any) -> Any:
        if a is None or b is None:
            return None
        r = a - b
        return r if low <= r <= high else (r - low) % span + low

    def mul(a: Any, b: Any) -> Any:
        if a is None or b is None:
            return None
        r = a * b
        return r if low <= r <= high else (r - low) % span + low

    return {"+": add, "-": sub, "*": mul}.get(op)


def _int_div(a: int, b: int) -> int:
    if b == 0:
        raise TableRuntimeException("/ by zero: expected a non-zero integer divisor; got 0; use a DECIMAL or DOUBLE")
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def _int_mod(a: int, b: int) -> int:
    if b == 0:
        raise TableRuntimeException("/ by zero: expected a non-zero integer divisor for %; got 0")
    return a - b * _int_div(a, b)


def _double_div(a: float, b: float) -> float:
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _double_mod(a: float, b: float) -> float:
    return math.nan if b == 0 else math.fmod(a, b)


def _decimal_div(a: decimal.Decimal, b: decimal.Decimal) -> decimal.Decimal:
    if b == 0:
        raise TableRuntimeException("Division by zero: expected a non-zero DECIMAL divisor; got 0")
    return _DECIMAL_CONTEXT.divide(a, b)


def _decimal_mod(a: decimal.Decimal, b: decimal.Decimal) -> decimal.Decimal:
    if b == 0:
        raise TableRuntimeException("Division by zero: expected a non-zero DECIMAL divisor for %; got 0")
    return _DECIMAL_CONTEXT.remainder(a, b)


_INT_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": _int_div,
    "%": _int_mod,
}
_FLOAT_OPS: dict[str, Callable[[Any, Any], Any]] = {**_INT_OPS, "/": _double_div, "%": _double_mod}
_DECIMAL_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: _DECIMAL_CONTEXT.add(a, b),
    "-": lambda a, b: _DECIMAL_CONTEXT.subtract(a, b),
    "*": lambda a, b: _DECIMAL_CONTEXT.multiply(a, b),
    "/": _decimal_div,
    "%": _decimal_mod,
}


def _to_decimal(t: DataType) -> Callable[[Any], decimal.Decimal]:
    if t.type_root is _R.DECIMAL:
        return lambda v: v
    return decimal.Decimal


def numeric_arithmetic(op: str, left: DataType, right: DataType) -> tuple[DataType, Callable[[Any, Any], Any]] | None:
    """``(result type, call over two non-NULL values)`` for numeric operands (``None``: not defined, e.g. DOUBLE %)."""
    result = arithmetic_result_type(op, left, right)
    if result is None:
        return None
    root = result.type_root
    if root in _BITS:
        fn, wrap = _INT_OPS[op], wrap_integer(root)
        return result, lambda a, b: wrap(fn(a, b))
    if root is _R.DOUBLE:
        fn, la, lb = _FLOAT_OPS[op], _operand(left), _operand(right)
        return result, lambda a, b: fn(la(a), lb(b))
    if root is _R.FLOAT:
        fn, la, lb = _FLOAT_OPS[op], _operand(left), _operand(right)
        return result, lambda a, b: float32(fn(la(a), lb(b)))
    assert isinstance(result, DecimalType)
    fn, rnd = _DECIMAL_OPS[op], decimal_rounder(result)
    la, lb = _to_decimal(left), _to_decimal(right)
    return result, lambda a, b: rnd(fn(la(a), lb(b)))


def negate(t: DataType) -> Callable[[Any], Any]:
    """Unary minus over a non-NULL value of numeric or interval type *t* (integers wrap: -MIN = MIN)."""
    if t.type_root in _BITS:
        wrap = wrap_integer(t.type_root)
        return lambda v: wrap(-v)
    if t.type_root is _R.INTERVAL_DAY_TIME or t.type_root is _R.INTERVAL_YEAR_MONTH:
        return lambda v: -v
    return lambda v: -v


def add_months(value: datetime.date, months: int) -> Any:
    """*value* plus *months* months, the day clamped to the target month's last day (Flink's ``addMonths``)."""
    total = value.year * 12 + value.month - 1 + months
    year, month = divmod(total, 12)
    month += 1
    next_month = datetime.date(year + (month == 12), month % 12 + 1, 1)
    last_day = (next_month - datetime.timedelta(days=1)).day
    return value.replace(year=year, month=month, day=min(value.day, last_day))


def _temporal_plus(left: DataType, right: DataType, sign: int) -> Callable[[Any, Any], Any] | None:
    lr, rr = left.type_root, right.type_root
    if rr is _R.INTERVAL_YEAR_MONTH and left.has_family(_F.DATETIME) and lr is not _R.TIME_WITHOUT_TIME_ZONE:
        return lambda a, b: add_months(a, sign * b)
    if rr is _R.INTERVAL_DAY_TIME and lr is _R.DATE:
        return lambda a, b: a + datetime.timedelta(days=(sign * b).days)
    if rr is _R.INTERVAL_DAY_TIME and lr is _R.TIME_WITHOUT_TIME_ZONE:
        base = datetime.datetime(2000, 1, 1)
        return lambda a, b: (datetime.datetime.combine(base, a) + sign * b).time()
    if rr is _R.INTERVAL_DAY_TIME and left.has_family(_F.TIMESTAMP):
        return lambda a, b: a + sign * b
    if lr is rr and lr in (_R.INTERVAL_DAY_TIME, _R.INTERVAL_YEAR_MONTH):
        return lambda a, b: a + sign * b
    return None


def temporal_arithmetic(op: str, left: DataType, right: DataType) -> tuple[DataType, Callable[[Any, Any], Any]] | None:
    """``datetime ± interval``, ``interval ± datetime`` (for +), ``interval ± interval``, ``interval * number``."""
    nullable = left.is_nullable or right.is_nullable
    if op in ("+", "-"):
        fn = _temporal_plus(left, right, 1 if op == "+" else -1)
        if fn is not None:
            return left.copy(nullable=nullable), fn
        if op == "+" and (swapped := _temporal_plus(right, left, 1)) is not None:
            return right.copy(nullable=nullable), lambda a, b: swapped(b, a)
        return None
    if op in ("*", "/") and left.has_family(_F.INTERVAL) and right.has_family(_F.NUMERIC):
        if left.type_root is _R.INTERVAL_YEAR_MONTH:
            return left.copy(nullable=nullable), ((lambda a, b: int(a * b)) if op == "*" else (lambda a, b: int(a / b)))
        return left.copy(nullable=nullable), ((lambda a, b: a * float(b)) if op == "*" else (lambda a, b: a / float(b)))
    if op == "*" and right.has_family(_F.INTERVAL) and left.has_family(_F.NUMERIC):
        inner = temporal_arithmetic(op, right, left)
        if inner is None:
            return None
        rtype, fn2 = inner
        return rtype, lambda a, b: fn2(b, a)
    return None


def arithmetic(op: str, left: DataType, right: DataType) -> tuple[DataType, Callable[[Any, Any], Any]] | None:
    """The result type and the call over two non-NULL values of ``left op right``, or ``None`` if not defined."""
    if left.has_family(_F.NUMERIC) and right.has_family(_F.NUMERIC):
        return numeric_arithmetic(op, left, right)
    return temporal_arithmetic(op, left, right)
