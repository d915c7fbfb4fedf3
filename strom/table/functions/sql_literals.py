"""The type and value of SQL literals, as Flink's planner types them (Calcite's literal rules).

``1`` is ``INT NOT NULL`` (``BIGINT`` beyond 32 bits; ``-2147483648`` is one INT literal), ``1.50`` is
``DECIMAL(3, 2) NOT NULL``, ``1e3`` is ``DOUBLE NOT NULL``, ``'abc'`` is ``CHAR(3) NOT NULL`` (``''`` is ``CHAR(0)``),
``x'0aff'`` is ``BINARY(2) NOT NULL``, ``TRUE`` is ``BOOLEAN NOT NULL``, ``NULL`` is the ``NULL`` type,
``DATE '2024-01-01'`` is ``DATE NOT NULL``, ``TIME '10:11:12.5'`` is ``TIME(1) NOT NULL``,
``TIMESTAMP '… 12:00:00.123'`` is ``TIMESTAMP(3) NOT NULL`` (the precision is the number of fractional digits
written), intervals are
``INTERVAL SECOND(3)`` / ``INTERVAL MONTH`` (:func:`parse_interval_literal`).
"""

from __future__ import annotations

import datetime
import decimal
from typing import Any

from strom.table.errors import ValidationException
from strom.table.functions.temporal_literals import parse_interval_literal
from strom.table.logical_types import (
    BigIntType,
    BinaryType,
    BooleanType,
    CharType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    IntType,
    NullType,
    TimestampType,
    TimeType,
)

__all__ = [
    "binary_literal",
    "boolean_literal",
    "null_literal",
    "numeric_literal",
    "parse_interval_literal",
    "string_literal",
    "temporal_literal",
]


def numeric_literal(text: str) -> tuple[DataType, Any]:
    """``'42'`` → (INT NOT NULL, 42); ``'1.50'`` → (DECIMAL(3, 2) NOT NULL, Decimal('1.50')); ``'1e3'`` → DOUBLE."""
    t = text.strip()
    if "e" in t.lower():
        return DoubleType(False), float(t)
    if "." in t:
        d = decimal.Decimal(t)
        exponent = d.as_tuple().exponent
        scale = -exponent if isinstance(exponent, int) else 0
        digits = len(d.as_tuple().digits)
        return DecimalType(max(digits, scale, 1), scale, False), d
    n = int(t)
    if -(2**31) <= n < 2**31:
        return IntType(False), n
    if -(2**63) <= n < 2**63:
        return BigIntType(False), n
    d = decimal.Decimal(n)
    return DecimalType(min(len(d.as_tuple().digits), DecimalType.MAX_PRECISION), 0, False), d


def string_literal(value: str) -> tuple[DataType, str]:
    """A character literal (already unquoted): ``CHAR(n) NOT NULL``."""
    return CharType(len(value), False), value


def binary_literal(hex_digits: str) -> tuple[DataType, bytes]:
    """``x'0aff'`` (the digits): ``BINARY(n) NOT NULL``."""
    data = bytes.fromhex(hex_digits)
    return BinaryType(max(len(data), 1), False), data


def boolean_literal(value: bool) -> tuple[DataType, bool]:
    return BooleanType(False), value


def null_literal() -> tuple[DataType, None]:
    return NullType(), None


def _fraction_digits(text: str) -> int:
    return len(text.rpartition(".")[2]) if "." in text else 0


def temporal_literal(kind: str, text: str) -> tuple[DataType, Any]:
    """``DATE '…'``, ``TIME '…'``, ``TIMESTAMP '…'`` → (type, value); precision = fractional digits written."""
    kind = kind.upper()
    try:
        if kind == "DATE":
            return DateType(False), datetime.date.fromisoformat(text.strip())
        digits = _fraction_digits(text)
        if kind == "TIME":
            return TimeType(min(digits, 9), False), datetime.time.fromisoformat(
                text.strip()[: len(text) - max(0, digits - 6)]
            )
        if kind == "TIMESTAMP":
            value = datetime.datetime.fromisoformat(text.strip()[: len(text.strip()) - max(0, digits - 6)])
            return TimestampType(min(digits, 9), False), value
    except ValueError:
        raise ValidationException(f"{kind} literal: expected a valid {kind.lower()}; got {text!r}") from None
    raise ValidationException(f"expected a DATE, TIME or TIMESTAMP literal; got {kind} {text!r}")
