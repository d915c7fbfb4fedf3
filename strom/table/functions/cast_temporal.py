"""CAST rules of dates, times and timestamps (Flink's string-to-date-time and date-time cast rules).

STRING → DATE ``yyyy-[m]m-[d]d`` (a time after a space is ignored); → TIME ``HH:mm[:ss[.f…]]``; → TIMESTAMP
``yyyy-MM-dd[ HH:mm:ss[.f…]]`` (no ``T``, seconds required, as Flink's; trimmed; fractions beyond the precision
cut); → TIMESTAMP_LTZ reads the text as a wall-clock time in the session time zone. TIMESTAMP ↔ TIMESTAMP_LTZ go
through the session time zone; a precision cut truncates; numbers ↔ timestamps are refused, as Flink 2.x
(TO_TIMESTAMP_LTZ, UNIX_TIMESTAMP instead). Values are Python ``date``/``time``/naive ``datetime`` (TIMESTAMP_LTZ in
UTC), so precisions beyond 6 (nanoseconds) are kept only to the microsecond.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from typing import Any

from strom.table.functions.bound_function import FunctionContext, cast_error
from strom.table.logical_types import DataType, LogicalTypeFamily, LogicalTypeRoot

__all__ = ["from_string", "temporal_converter", "truncate_micros"]

_R = LogicalTypeRoot
_F = LogicalTypeFamily
_DATE = r"(\d{1,4})-(\d{1,2})-(\d{1,2})"
_TIME = r"(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{0,9}))?)?"
_DATE_RE = re.compile(_DATE + r"(?: .*)?")
_TIME_RE = re.compile(_TIME)
_TIMESTAMP_RE = re.compile(_DATE + r"(?: (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{0,9}))?)?")
_EPOCH = datetime.datetime(1970, 1, 1)
Converter = Callable[[Any], Any]


def truncate_micros(precision: int) -> int:
    """The microsecond step of a fractional *precision* (3 → 1000)."""
    return int(10 ** max(0, 6 - precision))


def _micros(fraction: str | None, precision: int) -> int:
    if not fraction:
        return 0
    micros = int(fraction[:6].ljust(6, "0"))
    step = truncate_micros(precision)
    return micros - micros % step


def parse_date(text: str, target: DataType) -> datetime.date:
    m = _DATE_RE.fullmatch(text.strip())
    try:
        if m is None:
            raise ValueError(text)
        return datetime.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        raise cast_error("a date string 'yyyy-MM-dd'", text, target) from None


def parse_time(text: str, target: DataType, precision: int) -> datetime.time:
    m = _TIME_RE.fullmatch(text.strip())
    try:
        if m is None:
            raise ValueError(text)
        return datetime.time(int(m[1]), int(m[2]), int(m[3] or 0), _micros(m[4], precision))
    except ValueError:
        raise cast_error("a time string 'HH:mm:ss'", text, target) from None


def parse_timestamp(text: str, target: DataType, precision: int) -> datetime.datetime:
    m = _TIMESTAMP_RE.fullmatch(text.strip())
    try:
        if m is None:
            raise ValueError(text)
        hour, minute, second = int(m[4] or 0), int(m[5] or 0), int(m[6] or 0)
        return datetime.datetime(int(m[1]), int(m[2]), int(m[3]), hour, minute, second, _micros(m[7], precision))
    except ValueError:
        raise cast_error("a timestamp string 'yyyy-MM-dd HH:mm:ss[.fff]'", text, target) from None


def local_to_utc(zone: datetime.tzinfo) -> Callable[[datetime.datetime], datetime.datetime]:
    """A wall-clock time in *zone* → the naive UTC instant (TIMESTAMP → TIMESTAMP_LTZ)."""
    utc = datetime.UTC
    return lambda v: v.replace(tzinfo=zone).astimezone(utc).replace(tzinfo=None)


def utc_to_local(zone: datetime.tzinfo) -> Callable[[datetime.datetime], datetime.datetime]:
    """A naive UTC instant → the wall-clock time in *zone* (TIMESTAMP_LTZ → TIMESTAMP)."""
    utc = datetime.UTC
    return lambda v: v.replace(tzinfo=utc).astimezone(zone).replace(tzinfo=None)


def from_string(target: DataType, ctx: FunctionContext) -> Converter:
    """STRING → DATE, TIME, TIMESTAMP or TIMESTAMP_LTZ."""
    root = target.type_root
    precision = int(getattr(target, "precision", 0))
    if root is _R.DATE:
        return lambda v: parse_date(v, target)
    if root is _R.TIME_WITHOUT_TIME_ZONE:
        return lambda v: parse_time(v, target, precision)
    if root is _R.TIMESTAMP_WITHOUT_TIME_ZONE:
        return lambda v: parse_timestamp(v, target, precision)
    to_utc = local_to_utc(ctx.zone)
    return lambda v: to_utc(parse_timestamp(v, target, precision))


def _truncate(precision: int) -> Converter:
    step = truncate_micros(precision)
    if step == 1:
        return lambda v: v
    return lambda v: v.replace(microsecond=v.microsecond - v.microsecond % step)


def temporal_converter(source: DataType, target: DataType, ctx: FunctionContext) -> Converter:
    """Between DATE, TIME, TIMESTAMP and TIMESTAMP_LTZ."""
    s, t = source.type_root, target.type_root
    precision = int(getattr(target, "precision", 0))
    trunc = _truncate(precision)
    if s is _R.DATE:
        midnight: Converter = lambda v: datetime.datetime(v.year, v.month, v.day)  # noqa: E731
        return _chain(midnight, local_to_utc(ctx.zone)) if t is _R.TIMESTAMP_WITH_LOCAL_TIME_ZONE else midnight
    to_local = utc_to_local(ctx.zone) if s is _R.TIMESTAMP_WITH_LOCAL_TIME_ZONE else (lambda v: v)
    if t is _R.DATE:
        return lambda v: to_local(v).date()
    if t is _R.TIME_WITHOUT_TIME_ZONE:
        if s is _R.TIME_WITHOUT_TIME_ZONE:
            return trunc
        return lambda v: trunc(to_local(v).time())
    if t is _R.TIMESTAMP_WITH_LOCAL_TIME_ZONE and s is _R.TIMESTAMP_WITHOUT_TIME_ZONE:
        return _chain(trunc, local_to_utc(ctx.zone))
    if t is _R.TIMESTAMP_WITHOUT_TIME_ZONE:
        return _chain(to_local, trunc)
    return trunc


def _chain(first: Converter, second: Converter) -> Converter:
    return lambda v: second(first(v))
