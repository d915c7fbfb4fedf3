"""Flink's result-type rules (``LogicalTypeMerging``, ``LogicalTypeCasts``): arithmetic, common types, casts.

- :func:`arithmetic_result_type`: ``+ - * / %`` over numeric types — the wider integer type (``INT + BIGINT`` is
  ``BIGINT``), ``FLOAT``/``DOUBLE`` when either side is approximate, and Flink's DECIMAL precision/scale rules
  (``findAdditionDecimalType`` … ``findModuloDecimalType`` with ``adjustPrecisionScale``).
- :func:`find_common_type`: the type ``CASE``, ``COALESCE``, ``IN``, ``UNION`` and comparisons use.
- :func:`supports_implicit_cast` / :func:`supports_explicit_cast`: what Flink coerces silently / what CAST accepts.
"""

from __future__ import annotations

from collections.abc import Sequence

from strom.table.logical_constructed_types import ArrayType, MapType, MultisetType, RowField, RowType
from strom.table.logical_types import (
    MAX_LENGTH,
    BigIntType,
    BinaryType,
    CharType,
    DataType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    LocalZonedTimestampType,
    LogicalTypeFamily,
    LogicalTypeRoot,
    NullType,
    SmallIntType,
    TimestampKind,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
    get_precision,
    get_scale,
)

__all__ = [
    "arithmetic_result_type",
    "decimal_of",
    "find_common_type",
    "is_numeric",
    "is_string",
    "supports_explicit_cast",
    "supports_implicit_cast",
]

_R = LogicalTypeRoot
_F = LogicalTypeFamily
MINIMUM_ADJUSTED_SCALE = 6
_INTEGER_ORDER = [_R.TINYINT, _R.SMALLINT, _R.INTEGER, _R.BIGINT]
_INTEGER_TYPES: dict[LogicalTypeRoot, type[DataType]] = {
    _R.TINYINT: TinyIntType,
    _R.SMALLINT: SmallIntType,
    _R.INTEGER: IntType,
    _R.BIGINT: BigIntType,
}


def is_numeric(t: DataType) -> bool:
    return t.has_family(_F.NUMERIC)


def is_string(t: DataType) -> bool:
    return t.has_family(_F.CHARACTER_STRING)


def _nullable(types: Sequence[DataType]) -> bool:
    return any(t.is_nullable for t in types)


def decimal_of(t: DataType) -> DecimalType:
    """An exact numeric type as the DECIMAL that holds it (``INT`` → ``DECIMAL(10, 0)``)."""
    if isinstance(t, DecimalType):
        return t
    return DecimalType(get_precision(t), get_scale(t))


def adjust_precision_scale(precision: int, scale: int) -> DecimalType:
    """Flink's ``adjustPrecisionScale``: beyond 38 digits keep the integer digits, cut the scale (not below 6)."""
    if precision <= DecimalType.MAX_PRECISION:
        return DecimalType(max(precision, 1), scale)
    digits = precision - scale
    min_scale = min(scale, MINIMUM_ADJUSTED_SCALE)
    return DecimalType(DecimalType.MAX_PRECISION, max(DecimalType.MAX_PRECISION - digits, min_scale))


def _decimal_result(op: str, a: DecimalType, b: DecimalType) -> DecimalType:
    p1, s1, p2, s2 = a.precision, a.scale, b.precision, b.scale
    if op in ("+", "-"):
        scale = max(s1, s2)
        return adjust_precision_scale(max(p1 - s1, p2 - s2) + scale + 1, scale)
    if op == "*":
        return adjust_precision_scale(p1 + p2 + 1, s1 + s2)
    if op == "/":
        scale = max(MINIMUM_ADJUSTED_SCALE, s1 + p2 + 1)
        return adjust_precision_scale(p1 - s1 + s2 + scale, scale)
    scale = max(s1, s2)  # %
    return adjust_precision_scale(min(p1 - s1, p2 - s2) + scale, scale)


def arithmetic_result_type(op: str, left: DataType, right: DataType) -> DataType | None:
    """The result type of ``left op right`` for numeric operands (``None`` if not both numeric)."""
    if not (is_numeric(left) and is_numeric(right)):
        return None
    nullable = left.is_nullable or right.is_nullable
    roots = {left.type_root, right.type_root}
    if op == "%" and not (left.has_family(_F.EXACT_NUMERIC) and right.has_family(_F.EXACT_NUMERIC)):
        return None  # Calcite: '<EXACT_NUMERIC> % <EXACT_NUMERIC>' only
    approximate = [t for t in (left, right) if t.has_family(_F.APPROXIMATE_NUMERIC)]
    if approximate:
        # Calcite's FLOAT is a double too: FLOAT op DOUBLE keeps the left one; FLOAT op DECIMAL is DOUBLE
        if len(approximate) == 2 or approximate[0].type_root is _R.DOUBLE or _R.DECIMAL in roots:
            return (FloatType if approximate[0].type_root is _R.FLOAT and len(approximate) == 2 else DoubleType)(
                nullable
            )
        return FloatType(nullable)
    if _R.DECIMAL in roots:
        return _decimal_result(op, decimal_of(left), decimal_of(right)).copy(nullable=nullable)
    if op == "%":
        return right.copy(nullable=nullable)
    wider = max(_INTEGER_ORDER.index(left.type_root), _INTEGER_ORDER.index(right.type_root))
    return _INTEGER_TYPES[_INTEGER_ORDER[wider]](nullable)


def _common_two(a: DataType, b: DataType) -> DataType | None:
    if isinstance(a, NullType):
        return b.nullable()
    if isinstance(b, NullType):
        return a.nullable()
    nullable = a.is_nullable or b.is_nullable
    if a.copy(nullable=nullable) == b.copy(nullable=nullable):
        return a.copy(nullable=nullable)
    if is_numeric(a) and is_numeric(b):
        return _common_numeric(a, b, nullable)
    if is_string(a) and is_string(b):
        return _common_length(a, b, CharType, VarCharType, nullable)
    if a.has_family(_F.BINARY_STRING) and b.has_family(_F.BINARY_STRING):
        return _common_length(a, b, BinaryType, VarBinaryType, nullable)
    if (a.has_family(_F.TIMESTAMP) and b.has_family(_F.TIMESTAMP)) or {a.type_root, b.type_root} == {_R.DATE}:
        return _common_timestamp(a, b, nullable)
    if a.type_root is b.type_root is _R.TIME_WITHOUT_TIME_ZONE:
        return TimeType(max(get_precision(a), get_precision(b)), nullable)
    if {a.type_root, b.type_root} <= {_R.DATE, _R.TIMESTAMP_WITHOUT_TIME_ZONE, _R.TIMESTAMP_WITH_LOCAL_TIME_ZONE}:
        return _common_timestamp(a, b, nullable)
    return _common_constructed(a, b, nullable)


def _common_numeric(a: DataType, b: DataType, nullable: bool) -> DataType:
    roots = {a.type_root, b.type_root}
    if _R.DOUBLE in roots or (_R.FLOAT in roots and _R.DECIMAL in roots):
        return DoubleType(nullable)
    if _R.FLOAT in roots:
        return FloatType(nullable)
    if _R.DECIMAL in roots:
        da, db = decimal_of(a), decimal_of(b)
        scale = max(da.scale, db.scale)
        digits = max(da.precision - da.scale, db.precision - db.scale)
        return adjust_precision_scale(digits + scale, scale).copy(nullable=nullable)
    wider = max(_INTEGER_ORDER.index(a.type_root), _INTEGER_ORDER.index(b.type_root))
    return _INTEGER_TYPES[_INTEGER_ORDER[wider]](nullable)


def _length(t: DataType) -> int:
    return int(getattr(t, "length", MAX_LENGTH))


def _common_length(
    a: DataType, b: DataType, fixed: type[CharType | BinaryType], var: type[VarCharType | VarBinaryType], nullable: bool
) -> DataType:
    length = max(_length(a), _length(b))
    if isinstance(a, fixed) and isinstance(b, fixed) and _length(a) == _length(b):
        return fixed(length, nullable)  # CHAR(1) and CHAR(2) meet in VARCHAR(2), as Flink's
    return var(length, nullable)


def _common_timestamp(a: DataType, b: DataType, nullable: bool) -> DataType:
    precision = max(get_precision(t) if t.type_root is not _R.DATE else 0 for t in (a, b))
    if _R.TIMESTAMP_WITH_LOCAL_TIME_ZONE in (a.type_root, b.type_root):
        return LocalZonedTimestampType(precision, nullable)
    return TimestampType(precision, nullable)


def _common_constructed(a: DataType, b: DataType, nullable: bool) -> DataType | None:
    if type(a) is not type(b):
        return None
    if isinstance(a, ArrayType) and isinstance(b, ArrayType):
        element = _common_two(a.element_type, b.element_type)
        if element is None:
            return None
        return (MultisetType if isinstance(a, MultisetType) else ArrayType)(element, nullable)
    if isinstance(a, MapType) and isinstance(b, MapType):
        key, value = _common_two(a.key_type, b.key_type), _common_two(a.value_type, b.value_type)
        return None if key is None or value is None else MapType(key, value, nullable)
    if isinstance(a, RowType) and isinstance(b, RowType) and len(a) == len(b):
        fields = []
        for fa, fb in zip(a.fields, b.fields, strict=True):
            common = _common_two(fa.data_type, fb.data_type)
            if common is None:
                return None
            fields.append(RowField(fa.name, common, fa.description))
        return RowType(fields, nullable)
    return None


def find_common_type(types: Sequence[DataType]) -> DataType | None:
    """Flink's ``LogicalTypeMerging.findCommonType``: the type all *types* widen to, or ``None``."""
    if not types:
        return None
    result: DataType | None = types[0]
    for t in types[1:]:
        if result is None:
            return None
        result = _common_two(result, t)
    if isinstance(result, TimestampType | LocalZonedTimestampType) and result.kind is not TimestampKind.REGULAR:
        result = result.with_kind(TimestampKind.REGULAR)
    return result


def supports_implicit_cast(source: DataType, target: DataType) -> bool:
    """Whether Flink widens *source* to *target* without a CAST (``LogicalTypeCasts.supportsImplicitCast``)."""
    if isinstance(source, NullType):
        return True
    s, t = source.type_root, target.type_root
    if s is t:
        return True
    if is_numeric(source) and is_numeric(target):
        order = [*_INTEGER_ORDER, _R.DECIMAL, _R.FLOAT, _R.DOUBLE]
        return order.index(s) <= order.index(t)
    if is_string(source) and is_string(target):
        return True
    if source.has_family(_F.BINARY_STRING) and target.has_family(_F.BINARY_STRING):
        return True
    return (s, t) in {
        (_R.DATE, _R.TIMESTAMP_WITHOUT_TIME_ZONE),
        (_R.TIMESTAMP_WITHOUT_TIME_ZONE, _R.TIMESTAMP_WITH_LOCAL_TIME_ZONE),
        (_R.TIMESTAMP_WITH_LOCAL_TIME_ZONE, _R.TIMESTAMP_WITHOUT_TIME_ZONE),
    }


_EXPLICIT_FROM_STRING = {
    _R.BOOLEAN, _R.TINYINT, _R.SMALLINT, _R.INTEGER, _R.BIGINT, _R.FLOAT, _R.DOUBLE, _R.DECIMAL, _R.DATE,
    _R.TIME_WITHOUT_TIME_ZONE, _R.TIMESTAMP_WITHOUT_TIME_ZONE, _R.TIMESTAMP_WITH_LOCAL_TIME_ZONE, _R.BINARY,
    _R.VARBINARY, _R.CHAR, _R.VARCHAR,
}  # fmt: skip


def supports_explicit_cast(source: DataType, target: DataType) -> bool:
    """Whether ``CAST(source AS target)`` is valid in Flink 2.x (``LogicalTypeCasts.supportsExplicitCast``)."""
    if supports_implicit_cast(source, target) or is_string(target):
        return True
    s, t = source.type_root, target.type_root
    if is_string(source):
        return t in _EXPLICIT_FROM_STRING
    if is_numeric(source) and (is_numeric(target) or t is _R.BOOLEAN):
        return True
    if s is _R.BOOLEAN and is_numeric(target):
        return True
    # numbers ↔ TIMESTAMP / TIMESTAMP_LTZ are refused, as Flink 2.x (use TO_TIMESTAMP_LTZ / UNIX_TIMESTAMP)
    if source.has_family(_F.DATETIME) and target.has_family(_F.DATETIME):
        return not (
            (s is _R.DATE and t is _R.TIME_WITHOUT_TIME_ZONE) or (s is _R.TIME_WITHOUT_TIME_ZONE and t is _R.DATE)
        )
    if isinstance(source, ArrayType) and isinstance(target, ArrayType) and type(source) is type(target):
        return supports_explicit_cast(source.element_type, target.element_type)
    if isinstance(source, MapType) and isinstance(target, MapType):
        return supports_explicit_cast(source.key_type, target.key_type) and supports_explicit_cast(
            source.value_type, target.value_type
        )
    if isinstance(source, RowType) and isinstance(target, RowType) and len(source) == len(target):
        return all(supports_explicit_cast(a, b) for a, b in zip(source.children, target.children, strict=True))
    return False
