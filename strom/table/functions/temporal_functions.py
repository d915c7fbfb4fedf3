"""Flink's temporal functions: CURRENT_DATE/TIME/TIMESTAMP, LOCALTIME(STAMP), NOW, DATE_FORMAT, TO_TIMESTAMP,
TO_TIMESTAMP_LTZ, TO_DATE, UNIX_TIMESTAMP, FROM_UNIXTIME, EXTRACT, YEAR … DAYOFYEAR, FLOOR/CEIL(t TO unit),
TIMESTAMPADD, TIMESTAMPDIFF, CONVERT_TZ.

Units arrive as string literals: ``EXTRACT(DAY FROM t)`` is ``EXTRACT('DAY', t)``, ``FLOOR(t TO HOUR)`` is
``FLOOR(t, 'HOUR')``, ``TIMESTAMPADD(DAY, n, t)`` is ``TIMESTAMPADD('DAY', n, t)``. TIMESTAMP_LTZ values are naive
UTC datetimes; the functions that show wall-clock fields read them in the session time zone (``context``).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from typing import Any
from zoneinfo import ZoneInfo

from strom.table.functions import temporal_units
from strom.table.functions.arithmetic import add_months
from strom.table.functions.bound_function import (
    BoundFunction,
    FunctionContext,
    Resolver,
    arity,
    nullable_if_any,
    strict,
    validation_error,
)
from strom.table.functions.cast_temporal import local_to_utc, parse_timestamp, utc_to_local
from strom.table.functions.temporal_format import java_formatter, java_parser
from strom.table.functions.type_inference import is_string
from strom.table.logical_types import (
    MAX_LENGTH,
    BigIntType,
    DataType,
    DateType,
    IntType,
    LocalZonedTimestampType,
    LogicalTypeFamily,
    LogicalTypeRoot,
    TimestampKind,
    TimestampType,
    TimeType,
    VarCharType,
)

__all__ = ["FUNCTIONS"]

_R = LogicalTypeRoot
_F = LogicalTypeFamily
STRING = VarCharType(MAX_LENGTH)
_EPOCH = datetime.datetime(1970, 1, 1)
_DEFAULT_FORMAT = "yyyy-MM-dd HH:mm:ss"


def _now(ctx: FunctionContext) -> datetime.datetime:
    if ctx.now is not None:
        return ctx.now()  # type: ignore[no-any-return]
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def _current(kind: str) -> Resolver:
    def resolve(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
        arity(name, types, 0)
        to_local = utc_to_local(ctx.zone)
        calls: dict[str, tuple[DataType, Callable[[], Any]]] = {
            "DATE": (DateType(False), lambda: to_local(_now(ctx)).date()),
            "TIME": (TimeType(0, False), lambda: to_local(_now(ctx)).time().replace(microsecond=0)),
            "LTZ": (LocalZonedTimestampType(3, False), lambda: _millis(_now(ctx))),
            "LOCAL": (TimestampType(3, False), lambda: _millis(to_local(_now(ctx)))),
        }
        result, fn = calls[kind]
        return BoundFunction(name, result, fn, deterministic=False)

    return resolve


def _proctime(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    """``PROCTIME()``: the wall clock as a processing-time attribute, ``TIMESTAMP_LTZ(3) *PROCTIME* NOT NULL``."""
    arity(name, types, 0)
    result = LocalZonedTimestampType(3, False, kind=TimestampKind.PROCTIME)
    return BoundFunction(name, result, lambda: _millis(_now(ctx)), deterministic=False)


def _millis(v: datetime.datetime) -> datetime.datetime:
    return v.replace(microsecond=v.microsecond // 1000 * 1000)


def _wall_clock(t: DataType, ctx: FunctionContext) -> Callable[[Any], datetime.datetime]:
    """A DATE / TIMESTAMP / TIMESTAMP_LTZ / STRING value as a naive wall-clock datetime."""
    if t.type_root is _R.TIMESTAMP_WITH_LOCAL_TIME_ZONE:
        return utc_to_local(ctx.zone)
    if t.type_root is _R.DATE:
        return lambda v: datetime.datetime(v.year, v.month, v.day)
    if is_string(t):
        return lambda v: parse_timestamp(v, STRING, 9)
    if t.type_root is _R.TIME_WITHOUT_TIME_ZONE:
        return lambda v: datetime.datetime.combine(datetime.date(1970, 1, 1), v)
    return lambda v: v


def _date_format(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 2)
    if not (types[0].has_family(_F.TIMESTAMP) or is_string(types[0])) or not is_string(types[1]):
        raise validation_error(name, "DATE_FORMAT(TIMESTAMP or STRING, STRING)", types)
    wall = _wall_clock(types[0], ctx)

    def call(v: Any, pattern: str) -> str | None:
        try:
            return java_formatter(pattern)(wall(v))
        except ValueError:
            return None

    return BoundFunction(name, nullable_if_any(STRING, types).nullable(), strict(call, 2))


def _parse_with(pattern_type: int, types: Sequence[DataType]) -> Callable[..., datetime.datetime | None]:
    if len(types) == 1:
        return lambda s: java_parser(_DEFAULT_FORMAT)(s) or _lenient_timestamp(s)
    return lambda s, p: java_parser(p)(s)


def _lenient_timestamp(s: str) -> datetime.datetime | None:
    try:
        return parse_timestamp(s, STRING, 9)
    except ValueError:
        return None


def _to_timestamp(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 1, 2)
    if not all(is_string(t) for t in types):
        raise validation_error(name, "TO_TIMESTAMP(STRING[, STRING])", types)
    parse = _parse_with(0, types)
    return BoundFunction(name, TimestampType(3), strict(parse, len(types)))


def _to_date(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 1, 2)
    if not all(is_string(t) for t in types):
        raise validation_error(name, "TO_DATE(STRING[, STRING])", types)
    pattern = "yyyy-MM-dd"
    if len(types) == 1:
        return BoundFunction(name, DateType(), strict(lambda s: _date_of(java_parser(pattern)(s)), 1))
    return BoundFunction(name, DateType(), strict(lambda s, p: _date_of(java_parser(p)(s)), 2))


def _date_of(v: datetime.datetime | None) -> datetime.date | None:
    return None if v is None else v.date()


def _to_timestamp_ltz(
    name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext
) -> BoundFunction:
    arity(name, types, 1, 3)
    if is_string(types[0]):
        to_utc = local_to_utc(ctx.zone)
        if len(types) == 1:
            return BoundFunction(
                name, LocalZonedTimestampType(3), strict(lambda s: _utc_or_none(to_utc, _lenient_timestamp(s)), 1)
            )
        return BoundFunction(
            name,
            LocalZonedTimestampType(3),
            strict(lambda s, p, *_: _utc_or_none(to_utc, java_parser(p)(s)), len(types)),
        )
    if not types[0].has_family(_F.NUMERIC):
        raise validation_error(name, "TO_TIMESTAMP_LTZ(NUMERIC[, INT]) or TO_TIMESTAMP_LTZ(STRING[, STRING])", types)
    precision = int(literals[1]) if len(literals) > 1 and literals[1] is not None else 3
    unit = datetime.timedelta(seconds=10**-precision) if precision else datetime.timedelta(seconds=1)

    def call(v: Any, *_: Any) -> datetime.datetime:
        return _EPOCH + unit * float(v) if not isinstance(v, int) else _EPOCH + unit * v

    return BoundFunction(name, LocalZonedTimestampType(3), strict(call, len(types)))


def _utc_or_none(
    to_utc: Callable[[datetime.datetime], datetime.datetime], v: datetime.datetime | None
) -> datetime.datetime | None:
    return None if v is None else to_utc(v)


def _unix_timestamp(
    name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext
) -> BoundFunction:
    arity(name, types, 0, 2)
    if not types:
        return BoundFunction(
            name, BigIntType(False), lambda: (_now(ctx) - _EPOCH) // datetime.timedelta(seconds=1), deterministic=False
        )
    to_utc = local_to_utc(ctx.zone)

    def seconds(v: datetime.datetime | None) -> int | None:
        return None if v is None else (to_utc(v) - _EPOCH) // datetime.timedelta(seconds=1)

    result = nullable_if_any(BigIntType(), types)
    if len(types) == 1:
        return BoundFunction(name, result, strict(lambda s: seconds(java_parser(_DEFAULT_FORMAT)(s)), 1))
    return BoundFunction(name, result, strict(lambda s, p: seconds(java_parser(p)(s)), 2))


def _from_unixtime(
    name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext
) -> BoundFunction:
    arity(name, types, 1, 2)
    to_local = utc_to_local(ctx.zone)

    def call(v: int, pattern: str = _DEFAULT_FORMAT) -> str:
        return java_formatter(pattern)(to_local(_EPOCH + datetime.timedelta(seconds=int(v))))

    return BoundFunction(name, STRING, strict(call, len(types)))


def _convert_tz(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 3)

    def call(s: str, src: str, dst: str) -> str:
        v = parse_timestamp(s, STRING, 9).replace(tzinfo=ZoneInfo(src)).astimezone(ZoneInfo(dst))
        return java_formatter(_DEFAULT_FORMAT)(v.replace(tzinfo=None))

    return BoundFunction(name, STRING, strict(call, 3))


def _extract(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 2)
    unit = str(literals[0]).upper() if literals and literals[0] is not None else ""
    bound = temporal_units.extract(name, unit, types[1], ctx)
    field = bound.call
    return BoundFunction(name, bound.result_type, lambda _unit, v: field(v))


def _part(unit: str) -> Resolver:
    def resolve(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
        arity(name, types, 1)
        return temporal_units.extract(name, unit, types[0], ctx)

    return resolve


def _timestampadd(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 3)
    unit = str(literals[0]).upper()
    t = types[2]
    if not t.has_family(_F.DATETIME) or not types[1].has_family(_F.INTEGER_NUMERIC):
        raise validation_error(name, "TIMESTAMPADD(unit, INT, DATE or TIMESTAMP)", types[1:])
    months = {"YEAR": 12, "QUARTER": 3, "MONTH": 1}.get(unit)
    if months is not None:
        return BoundFunction(name, nullable_if_any(t, types), strict(lambda _u, n, v: add_months(v, n * months), 3))
    step = temporal_units.unit_delta(unit)
    if t.type_root is _R.DATE and step < datetime.timedelta(days=1):
        result: DataType = TimestampType(3)
        return BoundFunction(
            name,
            nullable_if_any(result, types),
            strict(lambda _u, n, v: datetime.datetime(v.year, v.month, v.day) + n * step, 3),
        )
    return BoundFunction(name, nullable_if_any(t, types), strict(lambda _u, n, v: v + n * step, 3))


def _timestampdiff(
    name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext
) -> BoundFunction:
    arity(name, types, 3)
    unit = str(literals[0]).upper()
    wa, wb = _wall_clock(types[1], ctx), _wall_clock(types[2], ctx)
    months = {"YEAR": 12, "QUARTER": 3, "MONTH": 1}.get(unit)
    if months is not None:
        return BoundFunction(
            name,
            nullable_if_any(IntType(), types[1:]),
            strict(
                lambda _u, a, b: (
                    temporal_units.months_between(wa(a), wb(b)) // months
                    if wb(b) >= wa(a)
                    else -(temporal_units.months_between(wb(b), wa(a)) // months)
                ),
                3,
            ),
        )
    step = temporal_units.unit_delta(unit)

    def diff(_u: Any, a: Any, b: Any) -> int:
        delta = wb(b) - wa(a)
        q = abs(delta) // step
        return q if delta >= datetime.timedelta() else -q

    return BoundFunction(name, nullable_if_any(IntType(), types[1:]), strict(diff, 3))


FUNCTIONS: dict[str, Resolver] = {
    "CURRENT_DATE": _current("DATE"),
    "CURRENT_TIME": _current("TIME"),
    "LOCALTIME": _current("TIME"),
    "CURRENT_TIMESTAMP": _current("LTZ"),
    "NOW": _current("LTZ"),
    "PROCTIME": _proctime,
    "CURRENT_ROW_TIMESTAMP": _current("LTZ"),
    "LOCALTIMESTAMP": _current("LOCAL"),
    "DATE_FORMAT": _date_format,
    "TO_TIMESTAMP": _to_timestamp,
    "TO_TIMESTAMP_LTZ": _to_timestamp_ltz,
    "TO_DATE": _to_date,
    "UNIX_TIMESTAMP": _unix_timestamp,
    "FROM_UNIXTIME": _from_unixtime,
    "CONVERT_TZ": _convert_tz,
    "EXTRACT": _extract,
    "YEAR": _part("YEAR"),
    "QUARTER": _part("QUARTER"),
    "MONTH": _part("MONTH"),
    "WEEK": _part("WEEK"),
    "DAYOFYEAR": _part("DOY"),
    "DAYOFMONTH": _part("DAY"),
    "DAYOFWEEK": _part("DOW"),
    "HOUR": _part("HOUR"),
    "MINUTE": _part("MINUTE"),
    "SECOND": _part("SECOND"),
    "TIMESTAMPADD": _timestampadd,
    "TIMESTAMPDIFF": _timestampdiff,
}
