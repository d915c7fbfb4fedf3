"""CAST and TRY_CAST with Flink 2.x semantics (Flink's ``CastRuleProvider`` and its rules), bound per type pair.

``cast_function(from_type, to_type)`` returns a callable over Python values, chosen once: NULL stays NULL; a
value that cannot be converted raises :class:`~strom.table.errors.TableRuntimeException` in CAST and gives NULL in
TRY_CAST. Rules as Flink's: strings are trimmed before parsing; DECIMAL rounds HALF_UP to its scale and a value
beyond its precision is NULL; fractional → integer truncates toward zero; integer narrowing wraps as Java's; CHAR(n)
pads, VARCHAR(n) / BINARY(n) / VARBINARY(n) truncate; TIMESTAMP_LTZ converts through the session time zone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from strom.api.row import _create_row
from strom.table.errors import TableRuntimeException, ValidationException
from strom.table.functions import cast_numeric, cast_temporal
from strom.table.functions.bound_function import DEFAULT_CONTEXT, FunctionContext
from strom.table.functions.cast_to_string import to_string_function
from strom.table.functions.type_inference import supports_explicit_cast
from strom.table.logical_constructed_types import ArrayType, MapType, MultisetType, RowType
from strom.table.logical_types import (
    MAX_LENGTH,
    DataType,
    LogicalTypeFamily,
    LogicalTypeRoot,
    NullType,
)

__all__ = ["cast_function"]

_R = LogicalTypeRoot
_F = LogicalTypeFamily
Converter = Callable[[Any], Any]


def cast_function(
    from_type: DataType, to_type: DataType, *, try_cast: bool = False, context: FunctionContext | None = None
) -> Callable[[Any], Any]:
    """The CAST (or TRY_CAST) of a value of *from_type* to *to_type*; raises ValidationException if Flink refuses it.

    >>> from strom.table.types import DataTypes
    >>> cast_function(DataTypes.STRING(), DataTypes.INT(), try_cast=True)("x") is None
    True
    """
    ctx = context or DEFAULT_CONTEXT
    if isinstance(from_type, NullType):
        return lambda v: None
    if not supports_explicit_cast(from_type, to_type):
        raise ValidationException(
            f"CAST: expected a target type {from_type} can be cast to; got CAST({from_type} AS {to_type}); "
            "see docs/sql/types.md for the casts Flink supports"
        )
    convert = converter(from_type, to_type, ctx)
    if try_cast:

        def try_call(value: Any) -> Any:
            if value is None:
                return None
            try:
                return convert(value)
            except (TableRuntimeException, ValueError, ArithmeticError, OverflowError):
                return None

        return try_call

    def call(value: Any) -> Any:
        return None if value is None else convert(value)

    return call


def converter(source: DataType, target: DataType, ctx: FunctionContext) -> Converter:
    """The conversion of a non-NULL value (may return NULL: DECIMAL overflow)."""
    s, t = source.type_root, target.type_root
    if target.has_family(_F.CHARACTER_STRING):
        return _to_character(source, target, ctx)
    if target.has_family(_F.BINARY_STRING):
        return _to_binary(source, target)
    if s is t and s not in (_R.DECIMAL, _R.TIME_WITHOUT_TIME_ZONE) and not source.has_family(_F.TIMESTAMP):
        if isinstance(source, ArrayType | MapType | RowType):
            return _constructed(source, target, ctx)
        return lambda v: v
    if source.has_family(_F.CHARACTER_STRING):
        return _from_string(target, ctx)
    if t is _R.BOOLEAN or s is _R.BOOLEAN or (source.has_family(_F.NUMERIC) and target.has_family(_F.NUMERIC)):
        return cast_numeric.numeric_converter(source, target)
    if source.has_family(_F.DATETIME) or target.has_family(_F.DATETIME):
        return cast_temporal.temporal_converter(source, target, ctx)
    return _constructed(source, target, ctx)


def _to_character(source: DataType, target: DataType, ctx: FunctionContext) -> Converter:
    to_string = to_string_function(source, ctx)
    length = int(getattr(target, "length", MAX_LENGTH))
    if target.type_root is _R.CHAR:
        if source.type_root is _R.CHAR and int(getattr(source, "length", 0)) == length:
            return to_string
        return lambda v: to_string(v)[:length].ljust(length)
    if length == MAX_LENGTH:
        return to_string
    return lambda v: to_string(v)[:length]


def _to_binary(source: DataType, target: DataType) -> Converter:
    length = int(getattr(target, "length", MAX_LENGTH))
    fixed = target.type_root is _R.BINARY
    if source.has_family(_F.CHARACTER_STRING):
        encode: Converter = lambda v: v.encode("utf-8")  # noqa: E731
    elif source.has_family(_F.BINARY_STRING):
        encode = bytes
    else:
        raise ValidationException(f"CAST: expected a string or binary source for {target}; got {source}")
    if fixed:
        return lambda v: encode(v)[:length].ljust(length, b"\x00")
    if length == MAX_LENGTH:
        return encode
    return lambda v: encode(v)[:length]


def _from_string(target: DataType, ctx: FunctionContext) -> Converter:
    t = target.type_root
    if target.has_family(_F.NUMERIC) or t is _R.BOOLEAN:
        return cast_numeric.from_string(target)
    if target.has_family(_F.DATETIME):
        return cast_temporal.from_string(target, ctx)
    raise ValidationException(f"CAST: expected a target type a STRING can be cast to; got {target}")


def _constructed(source: DataType, target: DataType, ctx: FunctionContext) -> Converter:
    if isinstance(source, MultisetType) and isinstance(target, MultisetType):
        elem = _nullable(converter(source.element_type, target.element_type, ctx))
        return lambda v: {elem(k): n for k, n in v.items()}
    if isinstance(source, ArrayType) and isinstance(target, ArrayType):
        elem = _nullable(converter(source.element_type, target.element_type, ctx))
        return lambda v: [elem(e) for e in v]
    if isinstance(source, MapType) and isinstance(target, MapType):
        key = _nullable(converter(source.key_type, target.key_type, ctx))
        val = _nullable(converter(source.value_type, target.value_type, ctx))
        return lambda v: {key(k): val(x) for k, x in v.items()}
    if isinstance(source, RowType) and isinstance(target, RowType):
        fields = [_nullable(converter(a, b, ctx)) for a, b in zip(source.children, target.children, strict=True)]
        return lambda v: _create_row(None, [f(x) for f, x in zip(fields, v, strict=True)])
    raise ValidationException(f"CAST: expected compatible types; got CAST({source} AS {target})")


def _nullable(convert: Converter) -> Converter:
    return lambda v: None if v is None else convert(v)
