"""CAST rules between numbers, booleans and strings (Flink's numeric, boolean and string-to-number cast rules).

- STRING → integer: trimmed, optional sign, digits; a fractional part is dropped (``'4.5'`` → 4); anything else or
  a value out of range fails. STRING → FLOAT/DOUBLE: Java's ``parseDouble`` (``NaN``, ``Infinity``, ``1e3``).
  STRING → DECIMAL: trimmed, rounded HALF_UP; beyond the precision it fails (a number → DECIMAL gives NULL).
  STRING → BOOLEAN: ``true/t/yes/y/1`` and ``false/f/no/n/0``, any case, not trimmed.
- fractional → integer truncates toward zero; DOUBLE → INT/BIGINT saturates and NaN is 0 (Java's casts); integer
  narrowing wraps; numbers → DECIMAL round HALF_UP (a DOUBLE through its shortest decimal, as ``BigDecimal.valueOf``);
  numbers ↔ BOOLEAN: non-zero is TRUE, TRUE is 1.
"""

from __future__ import annotations

import decimal
import math
import re
from collections.abc import Callable
from typing import Any

from strom.table.functions.arithmetic import decimal_rounder, float32, wrap_integer
from strom.table.functions.bound_function import cast_error
from strom.table.logical_types import DataType, DecimalType, LogicalTypeRoot

__all__ = ["from_string", "numeric_converter"]

_R = LogicalTypeRoot
_INTEGERS = (_R.TINYINT, _R.SMALLINT, _R.INTEGER, _R.BIGINT)
_RANGE = {_R.TINYINT: 1 << 7, _R.SMALLINT: 1 << 15, _R.INTEGER: 1 << 31, _R.BIGINT: 1 << 63}
_INT_TEXT = re.compile(r"[+-]?\d+(\.\d*)?")
_FLOAT_TEXT = re.compile(r"[+-]?(NaN|Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[fFdD]?)")
_TRUE = frozenset({"true", "t", "yes", "y", "1"})
_FALSE = frozenset({"false", "f", "no", "n", "0"})
Converter = Callable[[Any], Any]


def _string_to_integer(target: DataType) -> Converter:
    bound = _RANGE[target.type_root]

    def convert(text: str) -> int:
        s = text.strip()
        m = _INT_TEXT.fullmatch(s)
        if m is None:  # Flink's NumberFormatException's words first
            raise cast_error(
                f"For input string: '{text}'. Invalid character found. Expected an integer string", text, target
            )
        value = int(s[: m.start(1)] if m.group(1) else s)
        if not -bound <= value < bound:
            raise cast_error(f"For input string: '{text}'. Overflow. Expected an integer string", text, target)
        return value

    return convert


def _string_to_double(target: DataType) -> Converter:
    def convert(text: str) -> float:
        s = text.strip()
        if _FLOAT_TEXT.fullmatch(s) is None:
            raise cast_error("a numeric string", text, target)
        value = float(s.rstrip("fFdD") if s[-1:] in "fFdD" and "Infinity" not in s else s.replace("Infinity", "inf"))
        return value

    return convert


def _string_to_decimal(target: DecimalType) -> Converter:
    rnd = decimal_rounder(target)

    def convert(text: str) -> decimal.Decimal | None:
        try:
            value = decimal.Decimal(text.strip())
        except decimal.InvalidOperation:
            raise cast_error("a decimal string", text, target) from None
        if not value.is_finite():
            raise cast_error("a decimal string", text, target)
        result = rnd(value)
        if result is None:
            raise cast_error("a decimal string", text, target)
        return result

    return convert


def _string_to_boolean(target: DataType) -> Converter:
    def convert(text: str) -> bool:
        s = text.lower()  # not trimmed, unlike the numbers (Flink: "Cannot parse ' false ' as BOOLEAN")
        if s in _TRUE:
            return True
        if s in _FALSE:
            return False
        raise cast_error("a boolean string (true/false/t/f/yes/no/y/n/1/0)", text, target)

    return convert


def from_string(target: DataType) -> Converter:
    """STRING → a number or BOOLEAN."""
    root = target.type_root
    if root in _INTEGERS:
        return _string_to_integer(target)
    if root in (_R.FLOAT, _R.DOUBLE):
        return _string_to_double(target)
    if isinstance(target, DecimalType):
        return _string_to_decimal(target)
    return _string_to_boolean(target)


def _to_integer(source: DataType, target: DataType) -> Converter:
    s, t = source.type_root, target.type_root
    wrap = wrap_integer(t)
    if s in _INTEGERS:
        if _INTEGERS.index(s) <= _INTEGERS.index(t):
            return lambda v: v
        return wrap
    if s is _R.BOOLEAN:
        return lambda v: 1 if v else 0
    if s is _R.DECIMAL:
        return lambda v: wrap(int(v))
    bound = _RANGE[_R.BIGINT if t is _R.BIGINT else _R.INTEGER]

    def from_double(v: float) -> int:  # Java: (long) d / (int) d saturate, NaN is 0; byte/short narrow from int
        if math.isnan(v):
            return 0
        n = (bound - 1 if v > 0 else -bound) if math.isinf(v) else max(-bound, min(bound - 1, int(v)))
        return wrap(n)

    return from_double


def _to_decimal(source: DataType, target: DecimalType) -> Converter:
    rnd = decimal_rounder(target)
    s = source.type_root
    if s is _R.BOOLEAN:
        return lambda v: rnd(decimal.Decimal(1 if v else 0))
    if s in (_R.FLOAT, _R.DOUBLE):

        def from_double(v: float) -> decimal.Decimal | None:
            if math.isnan(v) or math.isinf(v):
                raise cast_error("a finite number", v, target)
            return rnd(decimal.Decimal(repr(v)))

        return from_double
    if s is _R.DECIMAL:
        return rnd
    return lambda v: rnd(decimal.Decimal(v))


def numeric_converter(source: DataType, target: DataType) -> Converter:
    """Between numeric types and BOOLEAN (non-NULL values)."""
    t = target.type_root
    if t is _R.BOOLEAN:
        return lambda v: v != 0
    if t in _INTEGERS:
        return _to_integer(source, target)
    if isinstance(target, DecimalType):
        return _to_decimal(source, target)
    if t is _R.FLOAT and source.type_root is _R.DOUBLE:
        return lambda v: float32(v)
    return lambda v: float(v) + 0.0  # BigDecimal has no -0
