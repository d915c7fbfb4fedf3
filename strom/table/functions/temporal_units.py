"""Time units of EXTRACT, FLOOR/CEIL(t TO unit), TIMESTAMPADD and TIMESTAMPDIFF (Flink's ``TimeUnit``s).

EXTRACT returns BIGINT: YEAR, QUARTER, MONTH, WEEK (ISO week), DAY, DOW (1 = Sunday), ISODOW (1 = Monday), DOY,
HOUR, MINUTE, SECOND, MILLISECOND, MICROSECOND, EPOCH, DECADE, CENTURY, MILLENNIUM, ISOYEAR; from a day-time
interval, its DAY/HOUR/MINUTE/SECOND fields.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from typing import Any

from strom.table.errors import ValidationException
from strom.table.functions.arithmetic import add_months
from strom.table.functions.bound_function import BoundFunction, FunctionContext, nullable_if_any, strict
from strom.table.functions.cast_temporal import local_to_utc, utc_to_local
from strom.table.logical_types import BigIntType, DataType, LogicalTypeFamily, LogicalTypeRoot

__all__ = ["ceil_to", "extract", "floor_to", "months_between", "unit_delta"]

_R = LogicalTypeRoot
_EPOCH = datetime.datetime(1970, 1, 1)
_DELTAS = {
    "WEEK": datetime.timedelta(weeks=1),
    "DAY": datetime.timedelta(days=1),
    "HOUR": datetime.timedelta(hours=1),
    "MINUTE": datetime.timedelta(minutes=1),
    "SECOND": datetime.timedelta(seconds=1),
    "MILLISECOND": datetime.timedelta(milliseconds=1),
    "MICROSECOND": datetime.timedelta(microseconds=1),
}

_FIELDS: dict[str, Callable[[datetime.datetime], int]] = {
    "YEAR": lambda v: v.year,
    "QUARTER": lambda v: (v.month - 1) // 3 + 1,
    "MONTH": lambda v: v.month,
    "WEEK": lambda v: v.isocalendar()[1],
    "DAY": lambda v: v.day,
    "DOW": lambda v: v.isoweekday() % 7 + 1,
    "ISODOW": lambda v: v.isoweekday(),
    "DOY": lambda v: v.timetuple().tm_yday,
    "HOUR": lambda v: v.hour,
    "MINUTE": lambda v: v.minute,
    "SECOND": lambda v: v.second,
    "MILLISECOND": lambda v: v.microsecond // 1000,
    "MICROSECOND": lambda v: v.microsecond,
    "EPOCH": lambda v: (v - _EPOCH) // datetime.timedelta(seconds=1),
    "DECADE": lambda v: v.year // 10,
    "CENTURY": lambda v: (v.year + 99) // 100,
    "MILLENNIUM": lambda v: (v.year + 999) // 1000,
    "ISOYEAR": lambda v: v.isocalendar()[0],
}


def unit_delta(unit: str) -> datetime.timedelta:
    if unit not in _DELTAS:
        raise ValidationException(f"expected a time unit of {', '.join(_DELTAS)}, YEAR, QUARTER or MONTH; got {unit!r}")
    return _DELTAS[unit]


def months_between(a: datetime.datetime, b: datetime.datetime) -> int:
    """Whole months from *a* to *b* (b ≥ a): counted as Flink's, day and time of day included."""
    months = (b.year - a.year) * 12 + b.month - a.month
    if add_months(a, months) > b:
        months -= 1
    return months


def _interval_field(unit: str) -> Callable[[datetime.timedelta], int]:
    def field(v: datetime.timedelta) -> int:
        micros = v // datetime.timedelta(microseconds=1)
        sign, micros = (-1 if micros < 0 else 1), abs(micros)
        seconds = micros // 1_000_000
        parts = {"DAY": seconds // 86400, "HOUR": seconds // 3600 % 24, "MINUTE": seconds // 60 % 60,
                 "SECOND": seconds % 60, "MILLISECOND": micros // 1000 % 60000, "EPOCH": seconds}  # fmt: skip
        return sign * parts[unit]

    return field


def extract(name: str, unit: str, t: DataType, ctx: FunctionContext) -> BoundFunction:
    """EXTRACT(unit FROM t) and YEAR(t) …: BIGINT, strict."""
    result = nullable_if_any(BigIntType(), [t])
    if t.has_family(LogicalTypeFamily.INTERVAL):
        if t.type_root is _R.INTERVAL_YEAR_MONTH:
            ym = {"YEAR": lambda m: int(m / 12), "MONTH": lambda m: m - int(m / 12) * 12}
            if unit not in ym:
                raise ValidationException(f"{name}: expected YEAR or MONTH of a year-month interval; got {unit}")
            return BoundFunction(name, result, strict(ym[unit], 1))
        return BoundFunction(name, result, strict(_interval_field(unit), 1))
    if unit not in _FIELDS or not t.has_family(LogicalTypeFamily.DATETIME):
        raise ValidationException(f"{name}: expected a unit of {', '.join(_FIELDS)} and a date-time; got {unit} of {t}")
    field = _FIELDS[unit]
    if t.type_root is _R.TIMESTAMP_WITH_LOCAL_TIME_ZONE:
        to_local = utc_to_local(ctx.zone)
        return BoundFunction(name, result, strict(lambda v: field(to_local(v)), 1))
    if t.type_root is _R.DATE:
        return BoundFunction(name, result, strict(lambda v: field(datetime.datetime(v.year, v.month, v.day)), 1))
    if t.type_root is _R.TIME_WITHOUT_TIME_ZONE:
        return BoundFunction(name, result, strict(lambda v: field(datetime.datetime.combine(_EPOCH.date(), v)), 1))
    return BoundFunction(name, result, strict(field, 1))


def floor_to(v: datetime.datetime, unit: str) -> datetime.datetime:
    """*v* truncated to the start of its *unit* (WEEK starts on Sunday, as Calcite's)."""
    if unit == "YEAR":
        return datetime.datetime(v.year, 1, 1)
    if unit == "QUARTER":
        return datetime.datetime(v.year, (v.month - 1) // 3 * 3 + 1, 1)
    if unit == "MONTH":
        return datetime.datetime(v.year, v.month, 1)
    if unit == "WEEK":
        day = datetime.datetime(v.year, v.month, v.day)
        return day - datetime.timedelta(days=v.isoweekday() % 7)
    step = unit_delta(unit)
    return _EPOCH + (v - _EPOCH) // step * step


def ceil_to(v: datetime.datetime, unit: str) -> datetime.datetime:
    """*v* rounded up to the next start of its *unit* (unchanged when already at one)."""
    low = floor_to(v, unit)
    if low == v:
        return v
    if unit in ("YEAR", "QUARTER", "MONTH"):
        return add_months(low, {"YEAR": 12, "QUARTER": 3, "MONTH": 1}[unit])  # type: ignore[no-any-return]
    return low + unit_delta(unit)


def bind_floor_ceil(name: str, types: Sequence[DataType], unit: str, ctx: FunctionContext) -> BoundFunction:
    """FLOOR / CEIL (t TO unit) on DATE, TIMESTAMP, TIMESTAMP_LTZ (in the session zone): the type of t."""
    t = types[0]
    fn = ceil_to if name.startswith("CEIL") else floor_to
    if t.type_root is _R.DATE:
        call: Callable[[Any], Any] = lambda v: fn(datetime.datetime(v.year, v.month, v.day), unit).date()  # noqa: E731
    elif t.type_root is _R.TIMESTAMP_WITH_LOCAL_TIME_ZONE:
        to_local, to_utc = utc_to_local(ctx.zone), local_to_utc(ctx.zone)
        call = lambda v: to_utc(fn(to_local(v), unit))  # noqa: E731
    else:
        call = lambda v: fn(v, unit)  # noqa: E731
    return BoundFunction(name, t, lambda v, *_: None if v is None else call(v))
