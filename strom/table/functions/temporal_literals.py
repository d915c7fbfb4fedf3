"""SQL interval literals (``INTERVAL '1 02:03:04.5' DAY TO SECOND``) → Flink's interval type and strom's value.

As Flink's planner types them, every day-time literal is ``INTERVAL SECOND(3)`` (a ``datetime.timedelta``) and every
year-month literal ``INTERVAL MONTH`` (an ``int`` of months), whatever units the literal names.
"""

from __future__ import annotations

import datetime
import re

from strom.table.errors import ValidationException
from strom.table.logical_types import (
    DataType,
    DayTimeIntervalType,
    DayTimeResolution,
    YearMonthIntervalType,
    YearMonthResolution,
)

__all__ = ["parse_interval_literal"]

_UNITS = ("DAY", "HOUR", "MINUTE", "SECOND")
_MONTHS = YearMonthIntervalType(YearMonthResolution.MONTH)
_SECONDS_TYPE = DayTimeIntervalType(DayTimeResolution.SECOND, 2, 3)
_SECONDS = {"DAY": 86400, "HOUR": 3600, "MINUTE": 60, "SECOND": 1}


def _year_month(text: str, start: str, end: str | None) -> tuple[DataType, int]:
    s = text.strip()
    sign = -1 if s.startswith("-") else 1
    s = s.lstrip("+-")
    if end == "MONTH" and start == "YEAR":
        m = re.fullmatch(r"(\d+)-(\d+)", s)
        if m is None:
            raise ValidationException(f"INTERVAL: expected 'years-months'; got {text!r}")
        return _MONTHS, sign * (int(m[1]) * 12 + int(m[2]))
    if not s.isdigit():
        raise ValidationException(f"INTERVAL: expected a number of {start.lower()}s; got {text!r}")
    return _MONTHS, sign * int(s) * (12 if start == "YEAR" else 1)


def parse_interval_literal(text: str, start: str, end: str | None = None) -> tuple[DataType, int | datetime.timedelta]:
    """``('1 02', 'DAY', 'HOUR')`` → ``(INTERVAL DAY(2) TO HOUR, timedelta(days=1, hours=2))``."""
    start, end = start.upper(), end.upper() if end else None
    if start in ("YEAR", "MONTH"):
        return _year_month(text, start, end)
    if start not in _UNITS or (end is not None and (end not in _UNITS or _UNITS.index(end) <= _UNITS.index(start))):
        raise ValidationException(f"INTERVAL: expected DAY/HOUR/MINUTE/SECOND [TO a smaller unit]; got {start} {end}")
    s = text.strip()
    sign = -1 if s.startswith("-") else 1
    numbers = [p for p in re.split(r"[ :]", s.lstrip("+-")) if p]
    units = list(_UNITS[_UNITS.index(start) : _UNITS.index(end or start) + 1])
    if len(numbers) != len(units):
        raise ValidationException(f"INTERVAL: expected {' '.join(units)} fields; got {text!r}")
    total = datetime.timedelta()
    for unit, number in zip(units, numbers, strict=True):
        try:
            total += datetime.timedelta(seconds=_SECONDS[unit] * float(number) if unit == "SECOND" else 0)
            if unit != "SECOND":
                total += datetime.timedelta(seconds=_SECONDS[unit] * int(number))
        except ValueError:
            raise ValidationException(f"INTERVAL: expected numbers; got {text!r}") from None
    return _SECONDS_TYPE, sign * total
