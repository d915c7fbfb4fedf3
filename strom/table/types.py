"""The Table API's data types: PyFlink's ``pyflink.table.types`` module (``DataTypes`` and the type classes).

``DataTypes.INT()``, ``DataTypes.DECIMAL(10, 2).not_null()``, ``DataTypes.ROW([DataTypes.FIELD("a",
DataTypes.STRING())])`` build immutable :class:`DataType` objects (the classes live in
:mod:`strom.table.logical_types`); ``str(t)`` is Flink's summary string and :func:`parse_type` reads it — and every
type Flink's SQL DDL accepts — back. This API is stable: the planner, functions and window operators use it.

>>> str(DataTypes.ROW([DataTypes.FIELD("a", DataTypes.INT().not_null())]))
'ROW<`a` INT NOT NULL>'
>>> parse_type("TIMESTAMP(3) WITH LOCAL TIME ZONE") == DataTypes.TIMESTAMP_LTZ(3)
True
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from strom.api.row import Row, RowKind
from strom.table.errors import ValidationException
from strom.table.logical_constructed_types import ArrayType, MapType, MultisetType, RowField, RowType
from strom.table.logical_type_parser import parse_type
from strom.table.logical_types import (
    MAX_LENGTH,
    AtomicType,
    BigIntType,
    BinaryType,
    BooleanType,
    CharType,
    DataType,
    DateType,
    DayTimeIntervalType,
    DayTimeResolution,
    DecimalType,
    DoubleType,
    FloatType,
    FractionalType,
    IntegralType,
    IntType,
    LocalZonedTimestampType,
    LogicalTypeFamily,
    LogicalTypeRoot,
    NullType,
    NumericType,
    SmallIntType,
    TimestampKind,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
    YearMonthIntervalType,
    YearMonthResolution,
    ZonedTimestampType,
    get_precision,
    get_scale,
)

__all__ = [
    "MAX_LENGTH",
    "ArrayType",
    "AtomicType",
    "BigIntType",
    "BinaryType",
    "BooleanType",
    "CharType",
    "DataType",
    "DataTypes",
    "DateType",
    "DayTimeIntervalType",
    "DayTimeResolution",
    "DecimalType",
    "DoubleType",
    "FloatType",
    "FractionalType",
    "IntType",
    "IntegralType",
    "LocalZonedTimestampType",
    "LogicalTypeFamily",
    "LogicalTypeRoot",
    "MapType",
    "MultisetType",
    "NullType",
    "NumericType",
    "Resolution",
    "Row",
    "RowField",
    "RowKind",
    "RowType",
    "SmallIntType",
    "TimeType",
    "TimestampKind",
    "TimestampType",
    "TinyIntType",
    "VarBinaryType",
    "VarCharType",
    "YearMonthIntervalType",
    "YearMonthResolution",
    "ZonedTimestampType",
    "get_precision",
    "get_scale",
    "parse_type",
]


class Resolution:
    """The resolution of one end of an INTERVAL type (``DataTypes.DAY(3)``, ``DataTypes.SECOND(3)``)."""

    class IntervalUnit(enum.Enum):
        SECOND = 0
        MINUTE = 1
        HOUR = 2
        DAY = 3
        MONTH = 4
        YEAR = 5

    def __init__(self, unit: Resolution.IntervalUnit, precision: int = -1) -> None:
        self._unit = unit
        self._precision = precision

    @property
    def unit(self) -> Resolution.IntervalUnit:
        return self._unit

    @property
    def precision(self) -> int:
        return self._precision

    def __str__(self) -> str:
        return f"{self._unit}({self._precision})"


def _interval(upper: Resolution, lower: Resolution | None) -> DataType:
    unit = Resolution.IntervalUnit
    names = {unit.YEAR: "YEAR", unit.MONTH: "MONTH", unit.DAY: "DAY", unit.HOUR: "HOUR", unit.MINUTE: "MINUTE"}
    names[unit.SECOND] = "SECOND"
    up = names[upper.unit]
    low = None if lower is None else names[lower.unit]
    if up in ("YEAR", "MONTH"):
        if low not in (None, "MONTH") or (up == "MONTH" and low is not None):
            raise ValidationException(f"expected INTERVAL YEAR [TO MONTH] or INTERVAL MONTH; got {up} TO {low}")
        precision = upper.precision if upper.precision >= 0 else YearMonthIntervalType.DEFAULT_PRECISION
        resolution = YearMonthResolution.YEAR_TO_MONTH if low else YearMonthResolution[up]
        return YearMonthIntervalType(resolution, precision)
    order = ("DAY", "HOUR", "MINUTE", "SECOND")
    if low is not None and (low not in order or order.index(low) <= order.index(up)):
        raise ValidationException(f"expected a day-time interval from a larger to a smaller unit; got {up} TO {low}")
    day_precision = upper.precision if up == "DAY" and upper.precision >= 0 else 2
    seconds = lower if low == "SECOND" else upper if up == "SECOND" else None
    fractional = seconds.precision if seconds is not None and seconds.precision >= 0 else 6
    name = up if low is None else f"{up}_TO_{low}"
    return DayTimeIntervalType(DayTimeResolution[name], day_precision, fractional)


class DataTypes:
    """Builds every data type of the Table API and SQL (PyFlink's ``DataTypes``)."""

    @staticmethod
    def NULL() -> NullType:
        return NullType()

    @staticmethod
    def CHAR(length: int, nullable: bool = True) -> CharType:
        return CharType(length, nullable)

    @staticmethod
    def VARCHAR(length: int, nullable: bool = True) -> VarCharType:
        return VarCharType(length, nullable)

    @staticmethod
    def STRING(nullable: bool = True) -> VarCharType:
        return VarCharType(MAX_LENGTH, nullable)

    @staticmethod
    def BOOLEAN(nullable: bool = True) -> BooleanType:
        return BooleanType(nullable)

    @staticmethod
    def BINARY(length: int, nullable: bool = True) -> BinaryType:
        return BinaryType(length, nullable)

    @staticmethod
    def VARBINARY(length: int, nullable: bool = True) -> VarBinaryType:
        return VarBinaryType(length, nullable)

    @staticmethod
    def BYTES(nullable: bool = True) -> VarBinaryType:
        return VarBinaryType(MAX_LENGTH, nullable)

    @staticmethod
    def DECIMAL(precision: int, scale: int, nullable: bool = True) -> DecimalType:
        return DecimalType(precision, scale, nullable)

    @staticmethod
    def TINYINT(nullable: bool = True) -> TinyIntType:
        return TinyIntType(nullable)

    @staticmethod
    def SMALLINT(nullable: bool = True) -> SmallIntType:
        return SmallIntType(nullable)

    @staticmethod
    def INT(nullable: bool = True) -> IntType:
        return IntType(nullable)

    @staticmethod
    def BIGINT(nullable: bool = True) -> BigIntType:
        return BigIntType(nullable)

    @staticmethod
    def FLOAT(nullable: bool = True) -> FloatType:
        return FloatType(nullable)

    @staticmethod
    def DOUBLE(nullable: bool = True) -> DoubleType:
        return DoubleType(nullable)

    @staticmethod
    def DATE(nullable: bool = True) -> DateType:
        return DateType(nullable)

    @staticmethod
    def TIME(precision: int = 0, nullable: bool = True) -> TimeType:
        return TimeType(precision, nullable)

    @staticmethod
    def TIMESTAMP(precision: int = 6, nullable: bool = True) -> TimestampType:
        return TimestampType(precision, nullable)

    @staticmethod
    def TIMESTAMP_WITH_LOCAL_TIME_ZONE(precision: int = 6, nullable: bool = True) -> LocalZonedTimestampType:
        return LocalZonedTimestampType(precision, nullable)

    @staticmethod
    def TIMESTAMP_LTZ(precision: int = 6, nullable: bool = True) -> LocalZonedTimestampType:
        return LocalZonedTimestampType(precision, nullable)

    @staticmethod
    def ARRAY(element_type: DataType, nullable: bool = True) -> ArrayType:
        return ArrayType(element_type, nullable)

    @staticmethod
    def MAP(key_type: DataType, value_type: DataType, nullable: bool = True) -> MapType:
        return MapType(key_type, value_type, nullable)

    @staticmethod
    def MULTISET(element_type: DataType, nullable: bool = True) -> MultisetType:
        return MultisetType(element_type, nullable)

    @staticmethod
    def ROW(row_fields: Sequence[RowField] = (), nullable: bool = True) -> RowType:
        return RowType(row_fields, nullable)

    @staticmethod
    def FIELD(name: str, data_type: DataType, description: str | None = None) -> RowField:
        return RowField(name, data_type, description)

    @staticmethod
    def SECOND(precision: int = DayTimeIntervalType.DEFAULT_FRACTIONAL_PRECISION) -> Resolution:
        return Resolution(Resolution.IntervalUnit.SECOND, precision)

    @staticmethod
    def MINUTE() -> Resolution:
        return Resolution(Resolution.IntervalUnit.MINUTE)

    @staticmethod
    def HOUR() -> Resolution:
        return Resolution(Resolution.IntervalUnit.HOUR)

    @staticmethod
    def DAY(precision: int = DayTimeIntervalType.DEFAULT_DAY_PRECISION) -> Resolution:
        return Resolution(Resolution.IntervalUnit.DAY, precision)

    @staticmethod
    def MONTH() -> Resolution:
        return Resolution(Resolution.IntervalUnit.MONTH)

    @staticmethod
    def YEAR(precision: int = YearMonthIntervalType.DEFAULT_PRECISION) -> Resolution:
        return Resolution(Resolution.IntervalUnit.YEAR, precision)

    @staticmethod
    def INTERVAL(upper_resolution: Resolution, lower_resolution: Resolution | None = None) -> DataType:
        """``DataTypes.INTERVAL(DataTypes.DAY(), DataTypes.SECOND(3))`` → ``INTERVAL DAY(2) TO SECOND(3)``."""
        return _interval(upper_resolution, lower_resolution)
