"""Flink's built-in math functions: ABS, MOD, POWER, SQRT, EXP, LN, LOG*, ROUND, TRUNCATE, FLOOR, CEIL, SIGN,
PI, E, RAND, RAND_INTEGER, the trigonometric functions, DEGREES, RADIANS, BIN, HEX.

Result types as Flink's: ABS/SIGN keep the argument's type; the transcendental functions return DOUBLE; ROUND,
TRUNCATE, FLOOR and CEIL on DECIMAL(p, s) follow ``LogicalTypeMerging.findRoundDecimalType``; MOD as ``%``.
Domain errors give NaN/Infinity as Java's ``Math`` (``SQRT(-1)`` is NaN, ``LN(0)`` is -Infinity).
"""

from __future__ import annotations

import decimal
import math
import random
from collections.abc import Callable, Sequence
from typing import Any

from strom.table.errors import TableRuntimeException
from strom.table.functions.arithmetic import decimal_rounder, numeric_arithmetic, wrap_integer
from strom.table.functions.bound_function import (
    BoundFunction,
    FunctionContext,
    Resolver,
    arity,
    nullable_if_any,
    strict,
    validation_error,
)
from strom.table.functions.type_inference import is_string
from strom.table.logical_types import (
    MAX_LENGTH,
    DataType,
    DecimalType,
    DoubleType,
    IntType,
    LogicalTypeFamily,
    LogicalTypeRoot,
    NullType,
    VarCharType,
)

__all__ = ["FUNCTIONS", "round_half_up"]

_R = LogicalTypeRoot
_F = LogicalTypeFamily
STRING = VarCharType(MAX_LENGTH)
DOUBLE = DoubleType()


def _numeric_args(name: str, types: Sequence[DataType], low: int, high: int | None = None) -> None:
    arity(name, types, low, high)
    if not all(t.has_family(_F.NUMERIC) or isinstance(t, NullType) for t in types):
        raise validation_error(name, "numeric arguments", types)


def _java_log(x: float) -> float:
    if math.isnan(x) or x < 0:
        return math.nan
    return -math.inf if x == 0 else math.log(x)


def _safe(fn: Callable[[float], float]) -> Callable[[Any], float]:
    def call(x: Any) -> float:
        try:
            return fn(float(x))
        except (ValueError, OverflowError):
            return math.nan if fn is not math.exp else math.inf

    return call


def _double_fn(fn: Callable[..., float], n_args: int = 1) -> Resolver:
    def resolve(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
        _numeric_args(name, types, n_args)
        call = _safe(fn) if n_args == 1 else (lambda *a: fn(*(float(x) for x in a)))
        return BoundFunction(name, nullable_if_any(DOUBLE, types), strict(call, n_args))

    return resolve


def _log10(x: float) -> float:
    """Java's ``Math.log10``: the correctly rounded result (C's ``log10`` is one ulp off for some, e.g. 11)."""
    if math.isinf(x):
        return x
    with decimal.localcontext() as ctx:
        ctx.prec = 40
        return float(decimal.Decimal(x).log10())


def _log(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    _numeric_args(name, types, 1, 2)
    if len(types) == 1:
        return BoundFunction(name, nullable_if_any(DOUBLE, types), strict(lambda x: _java_log(float(x)), 1))
    return BoundFunction(
        name,
        nullable_if_any(DOUBLE, types),
        strict(lambda b, x: _java_log(float(x)) / _java_log(float(b)), 2),
    )


def _power(base: Any, exponent: Any) -> float:
    try:
        return math.pow(float(base), float(exponent))
    except (ValueError, ZeroDivisionError):
        return math.nan
    except OverflowError:
        return math.inf


def _same_type(fn_int: Callable[[Any], Any], fn_other: Callable[[Any], Any]) -> Resolver:
    """ABS / SIGN: the argument's type."""

    def resolve(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
        _numeric_args(name, types, 1)
        t = types[0]
        if t.has_family(_F.INTEGER_NUMERIC):
            wrap = wrap_integer(t.type_root)  # Java: Math.abs(Integer.MIN_VALUE) is MIN_VALUE
            return BoundFunction(name, t, strict(lambda v: wrap(fn_int(v)), 1))
        return BoundFunction(name, t, strict(fn_other, 1))

    return resolve


def _sign(v: Any) -> Any:
    if isinstance(v, float):
        return math.copysign(1.0, v) if v != 0 and not math.isnan(v) else v
    if isinstance(v, decimal.Decimal):
        return decimal.Decimal((v > 0) - (v < 0)).quantize(decimal.Decimal(1).scaleb(v.as_tuple().exponent))  # type: ignore[arg-type]
    return (v > 0) - (v < 0)


def round_half_up(value: Any, digits: int, t: DataType) -> Any:
    """Flink's ROUND: HALF_UP at *digits* (negative: left of the point) for every numeric type."""
    if t.has_family(_F.INTEGER_NUMERIC):
        if digits >= 0:
            return value
        step = 10 ** (-digits)
        q, r = divmod(abs(value), step)
        rounded = (q + (1 if r * 2 >= step else 0)) * step
        return rounded if value >= 0 else -rounded
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return value
        d = decimal.Decimal(repr(value)).quantize(decimal.Decimal(1).scaleb(-digits), rounding=decimal.ROUND_HALF_UP)
        return float(d)
    return value.quantize(decimal.Decimal(1).scaleb(-digits), rounding=decimal.ROUND_HALF_UP)


def truncate_digits(value: Any, digits: int, t: DataType) -> Any:
    """Flink's TRUNCATE: toward zero at *digits*."""
    if t.has_family(_F.INTEGER_NUMERIC):
        if digits >= 0:
            return value
        step = 10 ** (-digits)
        q = abs(value) // step * step
        return q if value >= 0 else -q
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return value
        d = decimal.Decimal(repr(value)).quantize(decimal.Decimal(1).scaleb(-digits), rounding=decimal.ROUND_DOWN)
        return float(d)
    return value.quantize(decimal.Decimal(1).scaleb(-digits), rounding=decimal.ROUND_DOWN)


def find_round_decimal_type(precision: int, scale: int, digits: int) -> DecimalType:
    """Flink's ``LogicalTypeMerging.findRoundDecimalType``."""
    if digits >= scale:
        return DecimalType(precision, scale)
    if digits < 0:
        return DecimalType(min(DecimalType.MAX_PRECISION, 1 + precision - scale), 0)
    return DecimalType(1 + precision - scale + digits, digits)


def _rounding(fn: Callable[[Any, int, DataType], Any]) -> Resolver:
    def resolve(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
        arity(name, types, 1, 2)
        t = types[0]
        if not t.has_family(_F.NUMERIC) or (len(types) == 2 and not types[1].has_family(_F.INTEGER_NUMERIC)):
            raise validation_error(name, f"{name}(NUMERIC[, INT])", types)
        digits = int(literals[1]) if len(literals) > 1 and literals[1] is not None else 0
        result: DataType = t
        if isinstance(t, DecimalType):
            result = find_round_decimal_type(t.precision, t.scale, digits)
            rnd = decimal_rounder(result)
            call: Callable[..., Any] = (
                (lambda v: rnd(fn(v, 0, t))) if len(types) == 1 else (lambda v, d: rnd(fn(v, d, t)))
            )
        else:
            call = (lambda v: fn(v, 0, t)) if len(types) == 1 else (lambda v, d: fn(v, d, t))
        return BoundFunction(name, nullable_if_any(result, types), strict(call, len(types)))

    return resolve


def _floor_ceil(name: str, types: Sequence[DataType], up: bool) -> BoundFunction:
    _numeric_args(name, types, 1)
    t = types[0]
    if t.has_family(_F.INTEGER_NUMERIC):
        return BoundFunction(name, t, strict(lambda v: v, 1))
    if isinstance(t, DecimalType):
        result = DecimalType(t.precision, 0)  # Flink keeps the precision: FLOOR(DECIMAL(10, 2)) is DECIMAL(10, 0)
        mode = decimal.ROUND_CEILING if up else decimal.ROUND_FLOOR
        return BoundFunction(
            name,
            result.copy(nullable=t.is_nullable),
            strict(lambda v: v.quantize(decimal.Decimal(1), rounding=mode), 1),
        )
    fn = math.ceil if up else math.floor

    def java(v: float) -> float:  # Java's Math.ceil/floor keep the sign of a zero result: CEIL(-0.5) is -0.0
        return v if math.isnan(v) or math.isinf(v) else math.copysign(float(fn(v)), v)

    return BoundFunction(name, t, strict(java, 1))


def numeric_floor(name: str, types: Sequence[DataType]) -> BoundFunction:
    return _floor_ceil(name, types, up=False)


def numeric_ceil(name: str, types: Sequence[DataType]) -> BoundFunction:
    return _floor_ceil(name, types, up=True)


def _mod(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 2)
    if not all(t.has_family(_F.EXACT_NUMERIC) for t in types):
        raise validation_error(name, "MOD(EXACT_NUMERIC, EXACT_NUMERIC)", types)
    bound = numeric_arithmetic("%", types[0], types[1])
    if bound is None:
        raise validation_error(name, "MOD(EXACT_NUMERIC, EXACT_NUMERIC)", types)
    return BoundFunction(name, bound[0], strict(bound[1], 2))


class JavaRandom:
    """``java.util.Random``'s generator, so RAND(seed) / RAND_INTEGER(seed, n) give Flink's sequence."""

    _MULTIPLIER, _MASK = 0x5DEECE66D, (1 << 48) - 1

    def __init__(self, seed: int) -> None:
        self._seed = (seed ^ self._MULTIPLIER) & self._MASK

    def _next(self, bits: int) -> int:
        self._seed = (self._seed * self._MULTIPLIER + 0xB) & self._MASK
        value = self._seed >> (48 - bits)
        return value - (1 << 32) if bits == 32 and value >= 1 << 31 else value

    def next_double(self) -> float:
        return ((self._next(26) << 27) + self._next(27)) * 2.0**-53

    def next_int(self, bound: int) -> int:
        if bound <= 0:
            raise TableRuntimeException(f"RAND_INTEGER: expected a positive bound; got {bound}")
        r, m = self._next(31), bound - 1
        if bound & m == 0:
            return (bound * r) >> 31
        u = r
        while True:
            r = u % bound
            if -(1 << 31) <= u - r + m < 1 << 31:  # Java: stop unless u - r + m overflows int
                return r
            u = self._next(31)


def _rand(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 0, 1)
    if literals and literals[0] is not None:
        java = JavaRandom(int(literals[0]))
        return BoundFunction(name, DoubleType(False), lambda *_: java.next_double(), deterministic=False)
    rng = random.Random()
    return BoundFunction(name, DoubleType(False), lambda *_: rng.random(), deterministic=False)


def _rand_integer(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
    arity(name, types, 1, 2)
    if len(types) == 2 and literals and literals[0] is not None:
        java = JavaRandom(int(literals[0]))
        return BoundFunction(name, IntType(False), lambda _s, n: java.next_int(n), deterministic=False)
    rng = random.Random()
    if len(types) == 2:
        return BoundFunction(name, IntType(False), lambda _s, n: rng.randrange(n), deterministic=False)
    return BoundFunction(name, IntType(False), lambda n: rng.randrange(n), deterministic=False)


def _constant(value: float) -> Resolver:
    def resolve(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
        arity(name, types, 0)
        return BoundFunction(name, DoubleType(False), lambda: value)

    return resolve


def _bin(v: int) -> str:
    return format(v & 0xFFFFFFFFFFFFFFFF if v < 0 else v, "b")


def _hex(v: Any) -> str:
    if isinstance(v, str):
        return v.encode("utf-8").hex().upper()
    if isinstance(v, bytes | bytearray):
        return bytes(v).hex().upper()
    return format(int(v) & 0xFFFFFFFFFFFFFFFF if v < 0 else int(v), "X")


def _to_string_fn(fn: Callable[[Any], str], kinds: str) -> Resolver:
    def resolve(name: str, types: Sequence[DataType], literals: Sequence[Any], ctx: FunctionContext) -> BoundFunction:
        arity(name, types, 1)
        t = types[0]
        ok = t.has_family(_F.INTEGER_NUMERIC) or (kinds == "is" and (is_string(t) or t.has_family(_F.BINARY_STRING)))
        if not ok and not isinstance(t, NullType):
            raise validation_error(name, f"{name}(INTEGER{' or STRING' if kinds == 'is' else ''})", types)
        return BoundFunction(name, nullable_if_any(STRING, types), strict(fn, 1))

    return resolve


def _cosh(x: float) -> float:
    """fdlibm's ``cosh`` (Java's ``StrictMath.cosh``), whose last digit can differ from the C library's."""
    ax = abs(x)
    if ax < 0.5 * math.log(2):
        t = math.expm1(ax)
        return 1.0 + (t * t) / (2.0 * (1.0 + t))
    if ax < 22:
        t = math.exp(ax)
        return 0.5 * t + 0.5 / t
    try:
        return 0.5 * math.exp(ax)
    except OverflowError:
        return math.inf


def _sinh(x: float) -> float:
    """fdlibm's ``sinh`` (Java's ``StrictMath.sinh``)."""
    ax, h = abs(x), math.copysign(0.5, x)
    if ax < 22:
        t = math.expm1(ax)
        return h * (2.0 * t - t * t / (t + 1.0)) if ax < 1 else h * (t + t / (t + 1.0))
    try:
        return h * math.exp(ax)
    except OverflowError:
        return math.copysign(math.inf, x)


def _cot(x: float) -> float:
    t = math.tan(x)
    return math.inf if t == 0 else 1.0 / t


FUNCTIONS: dict[str, Resolver] = {
    "ABS": _same_type(abs, abs),
    "SIGN": _same_type(_sign, _sign),
    "MOD": _mod,
    "POWER": _double_fn(_power, 2),
    "SQRT": _double_fn(lambda x: math.sqrt(x) if x >= 0 else math.nan),
    "EXP": _double_fn(math.exp),
    "LN": _double_fn(_java_log),
    "LOG": _log,
    "LOG10": _double_fn(lambda x: _log10(x) if x > 0 else _java_log(x)),
    "LOG2": _double_fn(lambda x: _java_log(x) / math.log(2) if x > 0 else _java_log(x)),
    "ROUND": _rounding(round_half_up),
    "TRUNCATE": _rounding(truncate_digits),
    "PI": _constant(math.pi),
    "E": _constant(math.e),
    "RAND": _rand,
    "RAND_INTEGER": _rand_integer,
    "SIN": _double_fn(math.sin),
    "COS": _double_fn(math.cos),
    "TAN": _double_fn(math.tan),
    "COT": _double_fn(_cot),
    "ASIN": _double_fn(math.asin),
    "ACOS": _double_fn(math.acos),
    "ATAN": _double_fn(math.atan),
    "ATAN2": _double_fn(math.atan2, 2),
    "SINH": _double_fn(_sinh),
    "COSH": _double_fn(_cosh),
    "TANH": _double_fn(math.tanh),
    "DEGREES": _double_fn(math.degrees),
    "RADIANS": _double_fn(math.radians),
    "BIN": _to_string_fn(_bin, "i"),
    "HEX": _to_string_fn(_hex, "is"),
}
