"""Flink's logical types (``org.apache.flink.table.types.logical``), as PyFlink's ``DataType`` classes.

Users build these with :class:`strom.table.types.DataTypes` and import them from :mod:`strom.table.types`
(PyFlink's module); this module holds the classes. ``DataTypes.INT()``, ``DataTypes.DECIMAL(10, 2).not_null()``
build immutable :class:`DataType` objects. Each has Flink's logical-type attributes the planner reads —
:attr:`DataType.type_root` (:class:`LogicalTypeRoot`), :meth:`DataType.has_family`, :attr:`DataType.is_nullable`,
``length`` / ``precision`` / ``scale`` / ``element_type`` / ``key_type`` / ``value_type`` / ``fields`` — and prints as
Flink's summary string (``str(DataTypes.DECIMAL(10, 2).not_null()) == "DECIMAL(10, 2) NOT NULL"``).
Python values per type: see ``docs/sql/types.md``. This API is stable: the SQL planner, the functions and the
window operators are written against it.
"""

from __future__ import annotations

import copy
import enum
from abc import ABC, abstractmethod
from typing import ClassVar, Self

from strom.table.errors import TableException, ValidationException

__all__ = [
    "MAX_LENGTH",
    "AtomicType",
    "BigIntType",
    "BinaryType",
    "BooleanType",
    "CharType",
    "DataType",
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
    "NullType",
    "NumericType",
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
]

MAX_LENGTH = 2147483647
"""The length of ``STRING`` (= ``VARCHAR(MAX_LENGTH)``) and ``BYTES`` (= ``VARBINARY(MAX_LENGTH)``)."""


class LogicalTypeFamily(enum.Enum):
    """Flink's ``LogicalTypeFamily``: groups of roots the type rules talk about."""

    PREDEFINED = "PREDEFINED"
    CONSTRUCTED = "CONSTRUCTED"
    CHARACTER_STRING = "CHARACTER_STRING"
    BINARY_STRING = "BINARY_STRING"
    NUMERIC = "NUMERIC"
    INTEGER_NUMERIC = "INTEGER_NUMERIC"
    EXACT_NUMERIC = "EXACT_NUMERIC"
    APPROXIMATE_NUMERIC = "APPROXIMATE_NUMERIC"
    DATETIME = "DATETIME"
    TIME = "TIME"
    TIMESTAMP = "TIMESTAMP"
    INTERVAL = "INTERVAL"
    COLLECTION = "COLLECTION"
    EXTENSION = "EXTENSION"


_F = LogicalTypeFamily
_INTEGRAL = (_F.PREDEFINED, _F.NUMERIC, _F.INTEGER_NUMERIC, _F.EXACT_NUMERIC)


class LogicalTypeRoot(enum.Enum):
    """Flink's ``LogicalTypeRoot``: the kind of a type without its parameters; ``families`` as Flink's."""

    CHAR = (_F.PREDEFINED, _F.CHARACTER_STRING)
    VARCHAR = (_F.PREDEFINED, _F.CHARACTER_STRING, None)
    BOOLEAN = (_F.PREDEFINED,)
    BINARY = (_F.PREDEFINED, _F.BINARY_STRING)
    VARBINARY = (_F.PREDEFINED, _F.BINARY_STRING, None)
    DECIMAL = (_F.PREDEFINED, _F.NUMERIC, _F.EXACT_NUMERIC)
    TINYINT = (*_INTEGRAL, 1)
    SMALLINT = (*_INTEGRAL, 2)
    INTEGER = (*_INTEGRAL, 3)
    BIGINT = (*_INTEGRAL, 4)
    FLOAT = (_F.PREDEFINED, _F.NUMERIC, _F.APPROXIMATE_NUMERIC)
    DOUBLE = (_F.PREDEFINED, _F.NUMERIC, _F.APPROXIMATE_NUMERIC, None)
    DATE = (_F.PREDEFINED, _F.DATETIME)
    TIME_WITHOUT_TIME_ZONE = (_F.PREDEFINED, _F.DATETIME, _F.TIME)
    TIMESTAMP_WITHOUT_TIME_ZONE = (_F.PREDEFINED, _F.DATETIME, _F.TIMESTAMP)
    TIMESTAMP_WITH_TIME_ZONE = (_F.PREDEFINED, _F.DATETIME, _F.TIMESTAMP, None)
    TIMESTAMP_WITH_LOCAL_TIME_ZONE = (_F.PREDEFINED, _F.DATETIME, _F.TIMESTAMP, None, None)
    INTERVAL_YEAR_MONTH = (_F.PREDEFINED, _F.INTERVAL)
    INTERVAL_DAY_TIME = (_F.PREDEFINED, _F.INTERVAL, None)
    ARRAY = (_F.CONSTRUCTED, _F.COLLECTION)
    MULTISET = (_F.CONSTRUCTED, _F.COLLECTION, None)
    MAP = (_F.CONSTRUCTED,)
    ROW = (_F.CONSTRUCTED, None)
    NULL = (_F.EXTENSION,)

    @property
    def families(self) -> frozenset[LogicalTypeFamily]:
        return frozenset(f for f in self.value if isinstance(f, LogicalTypeFamily))


class TimestampKind(enum.Enum):
    """Flink's ``TimestampKind``: a time attribute shows as ``TIMESTAMP(3) *ROWTIME*`` / ``*PROCTIME*``."""

    REGULAR = "REGULAR"
    ROWTIME = "ROWTIME"
    PROCTIME = "PROCTIME"


class DataType(ABC):
    """A logical type with its nullability (PyFlink's ``DataType``; immutable, compared by value)."""

    __slots__ = ("_nullable",)
    type_root: ClassVar[LogicalTypeRoot]

    def __init__(self, nullable: bool = True) -> None:
        self._nullable = nullable

    @property
    def is_nullable(self) -> bool:
        return self._nullable

    def not_null(self) -> Self:
        """This type without NULL (``INT NOT NULL``)."""
        return self.copy(nullable=False)

    def nullable(self) -> Self:
        """This type with NULL (the default)."""
        return self.copy(nullable=True)

    def copy(self, *, nullable: bool | None = None) -> Self:
        """A copy, with the given nullability if not ``None`` (Flink's ``LogicalType.copy(boolean)``)."""
        cp = copy.copy(self)
        if nullable is not None:
            cp._nullable = nullable
        return cp

    def has_family(self, family: LogicalTypeFamily) -> bool:
        return family in self.type_root.families

    @property
    def children(self) -> tuple[DataType, ...]:
        """The element / key and value / field types (empty for atomic types)."""
        return ()

    @classmethod
    def type_name(cls) -> str:
        """PyFlink's class-level type name (``IntType.type_name() == "INT"``)."""
        return cls.__name__[:-4].upper()

    def _params(self) -> tuple[object, ...]:
        return ()

    @abstractmethod
    def _summary(self) -> str:
        """Flink's summary string without nullability (``INT``, ``VARCHAR(10)``)."""

    def _serializable(self) -> str:
        return self._summary()

    def _with_nullability(self, text: str) -> str:
        return text if self._nullable else text + " NOT NULL"

    def as_summary_string(self) -> str:
        """Flink's ``asSummaryString()`` (also ``str()``): ``STRING``, ``TIMESTAMP_LTZ(3)``, ``ROW<`a` INT>``."""
        return self._with_nullability(self._summary())

    def as_serializable_string(self) -> str:
        """Flink's ``asSerializableString()``: ``VARCHAR(2147483647)``, ``TIMESTAMP(3) WITH LOCAL TIME ZONE``."""
        return self._with_nullability(self._serializable())

    def __str__(self) -> str:
        return self.as_summary_string()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.as_summary_string()!r})"

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and isinstance(other, DataType)
            and other._nullable == self._nullable
            and other._params() == self._params()
        )

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._nullable, self._params()))


class AtomicType(DataType):
    """Every type that is not an ARRAY, MAP, MULTISET or ROW."""

    __slots__ = ()


class NullType(AtomicType):
    """The type of an untyped ``NULL`` literal; always nullable."""

    __slots__ = ()
    type_root = LogicalTypeRoot.NULL

    def __init__(self) -> None:
        super().__init__(True)

    def copy(self, *, nullable: bool | None = None) -> Self:
        if nullable is False:
            raise TableException("expected a nullable type; got NULL NOT NULL; the NULL type is always nullable")
        return self

    def _summary(self) -> str:
        return "NULL"


class NumericType(AtomicType):
    __slots__ = ()


class IntegralType(NumericType):
    __slots__ = ()


class FractionalType(NumericType):
    __slots__ = ()


def _check_range(what: str, value: int, low: int, high: int) -> int:
    if not isinstance(value, int) or not low <= value <= high:
        raise ValidationException(f"expected {what} between {low} and {high} (both inclusive); got {value!r}")
    return value


class _LengthType(AtomicType):
    __slots__ = ("_length",)
    _keyword: ClassVar[str]
    _max_alias: ClassVar[str | None] = None

    def __init__(self, length: int = 1, nullable: bool = True) -> None:
        super().__init__(nullable)
        self._length = _check_range(f"{self._keyword} length", length, 0 if self._max_alias is None else 1, MAX_LENGTH)

    @property
    def length(self) -> int:
        return self._length

    def _params(self) -> tuple[object, ...]:
        return (self._length,)

    def _summary(self) -> str:
        if self._max_alias is not None and self._length == MAX_LENGTH:
            return self._max_alias
        return f"{self._keyword}({self._length})"

    def _serializable(self) -> str:
        return f"{self._keyword}({self._length})"


class CharType(_LengthType):
    """``CHAR(n)``: fixed-length character string (Python ``str``)."""

    __slots__ = ()
    type_root = LogicalTypeRoot.CHAR
    _keyword = "CHAR"


class VarCharType(_LengthType):
    """``VARCHAR(n)``; ``STRING`` is ``VARCHAR(2147483647)`` (Python ``str``)."""

    __slots__ = ()
    type_root = LogicalTypeRoot.VARCHAR
    _keyword = "VARCHAR"
    _max_alias = "STRING"


class BinaryType(_LengthType):
    """``BINARY(n)``: fixed-length byte string (Python ``bytes``)."""

    __slots__ = ()
    type_root = LogicalTypeRoot.BINARY
    _keyword = "BINARY"


class VarBinaryType(_LengthType):
    """``VARBINARY(n)``; ``BYTES`` is ``VARBINARY(2147483647)`` (Python ``bytes``)."""

    __slots__ = ()
    type_root = LogicalTypeRoot.VARBINARY
    _keyword = "VARBINARY"
    _max_alias = "BYTES"


class _KeywordType(AtomicType):
    __slots__ = ()
    _keyword: ClassVar[str]

    def _summary(self) -> str:
        return self._keyword


class BooleanType(_KeywordType):
    __slots__ = ()
    type_root = LogicalTypeRoot.BOOLEAN
    _keyword = "BOOLEAN"


class TinyIntType(IntegralType, _KeywordType):
    __slots__ = ()
    type_root = LogicalTypeRoot.TINYINT
    _keyword = "TINYINT"


class SmallIntType(IntegralType, _KeywordType):
    __slots__ = ()
    type_root = LogicalTypeRoot.SMALLINT
    _keyword = "SMALLINT"


class IntType(IntegralType, _KeywordType):
    __slots__ = ()
    type_root = LogicalTypeRoot.INTEGER
    _keyword = "INT"


class BigIntType(IntegralType, _KeywordType):
    __slots__ = ()
    type_root = LogicalTypeRoot.BIGINT
    _keyword = "BIGINT"


class FloatType(FractionalType, _KeywordType):
    __slots__ = ()
    type_root = LogicalTypeRoot.FLOAT
    _keyword = "FLOAT"


class DoubleType(FractionalType, _KeywordType):
    __slots__ = ()
    type_root = LogicalTypeRoot.DOUBLE
    _keyword = "DOUBLE"


class DateType(_KeywordType):
    """``DATE`` (Python ``datetime.date``)."""

    __slots__ = ()
    type_root = LogicalTypeRoot.DATE
    _keyword = "DATE"


class DecimalType(FractionalType):
    """``DECIMAL(p, s)``: 1 ≤ p ≤ 38, 0 ≤ s ≤ p (Python ``decimal.Decimal``)."""

    __slots__ = ("_precision", "_scale")
    type_root = LogicalTypeRoot.DECIMAL
    MIN_PRECISION: ClassVar[int] = 1
    MAX_PRECISION: ClassVar[int] = 38
    DEFAULT_PRECISION: ClassVar[int] = 10

    def __init__(self, precision: int = 10, scale: int = 0, nullable: bool = True) -> None:
        super().__init__(nullable)
        self._precision = _check_range("DECIMAL precision", precision, 1, 38)
        self._scale = _check_range("DECIMAL scale", scale, 0, precision)

    @property
    def precision(self) -> int:
        return self._precision

    @property
    def scale(self) -> int:
        return self._scale

    def _params(self) -> tuple[object, ...]:
        return (self._precision, self._scale)

    def _summary(self) -> str:
        return f"DECIMAL({self._precision}, {self._scale})"


class _PrecisionType(AtomicType):
    __slots__ = ("_precision",)
    _default_precision: ClassVar[int]

    def __init__(self, precision: int | None = None, nullable: bool = True) -> None:
        super().__init__(nullable)
        p = self._default_precision if precision is None else precision
        self._precision = _check_range(f"{self._summary_keyword()} precision", p, 0, 9)

    @classmethod
    def _summary_keyword(cls) -> str:
        return cls.type_root.name.split("_")[0]

    @property
    def precision(self) -> int:
        return self._precision

    def _params(self) -> tuple[object, ...]:
        return (self._precision,)


class _TimestampBase(_PrecisionType):
    """A timestamp: precision plus its :class:`TimestampKind` (a time attribute or not)."""

    __slots__ = ("_kind",)

    def __init__(
        self, precision: int | None = None, nullable: bool = True, *, kind: TimestampKind | None = None
    ) -> None:
        super().__init__(precision, nullable)
        self._kind = TimestampKind.REGULAR if kind is None else kind

    @property
    def kind(self) -> TimestampKind:
        """REGULAR, or ROWTIME / PROCTIME for a time attribute."""
        return self._kind

    def with_kind(self, kind: TimestampKind) -> Self:
        cp = copy.copy(self)
        cp._kind = kind
        return cp

    def _params(self) -> tuple[object, ...]:
        return (self._precision, self._kind)

    def as_summary_string(self) -> str:
        """``TIMESTAMP(3)``; a time attribute adds its kind after the nullability: ``TIMESTAMP(3) *ROWTIME*``."""
        kind = "" if self._kind is TimestampKind.REGULAR else f" *{self._kind.value}*"
        return self._with_nullability(self._summary()) + kind


class TimeType(_PrecisionType):
    """``TIME(p)``, 0 ≤ p ≤ 9, default 0 (Python ``datetime.time``)."""

    __slots__ = ()
    type_root = LogicalTypeRoot.TIME_WITHOUT_TIME_ZONE
    _default_precision = 0

    def _summary(self) -> str:
        return f"TIME({self._precision})"


class TimestampType(_TimestampBase):
    """``TIMESTAMP(p)`` without time zone, default p = 6 (Python naive ``datetime.datetime``)."""

    __slots__ = ()
    type_root = LogicalTypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE
    _default_precision = 6

    def _summary(self) -> str:
        return f"TIMESTAMP({self._precision})"


class LocalZonedTimestampType(_TimestampBase):
    """``TIMESTAMP_LTZ(p)`` = ``TIMESTAMP(p) WITH LOCAL TIME ZONE`` (Python naive ``datetime`` in UTC)."""

    __slots__ = ()
    type_root = LogicalTypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE
    _default_precision = 6

    def _summary(self) -> str:
        return f"TIMESTAMP_LTZ({self._precision})"

    def _serializable(self) -> str:
        return f"TIMESTAMP({self._precision}) WITH LOCAL TIME ZONE"


class ZonedTimestampType(_TimestampBase):
    """``TIMESTAMP(p) WITH TIME ZONE`` (parsed and printed; Flink's runtime does not support it either)."""

    __slots__ = ()
    type_root = LogicalTypeRoot.TIMESTAMP_WITH_TIME_ZONE
    _default_precision = 6

    def _summary(self) -> str:
        return f"TIMESTAMP({self._precision}) WITH TIME ZONE"


class YearMonthResolution(enum.Enum):
    YEAR = 1
    MONTH = 2
    YEAR_TO_MONTH = 3


class DayTimeResolution(enum.Enum):
    DAY = 1
    DAY_TO_HOUR = 2
    DAY_TO_MINUTE = 3
    DAY_TO_SECOND = 4
    HOUR = 5
    HOUR_TO_MINUTE = 6
    HOUR_TO_SECOND = 7
    MINUTE = 8
    MINUTE_TO_SECOND = 9
    SECOND = 10


_YearMonthResolution = YearMonthResolution  # the classes below re-export the enums under PyFlink's nested names
_DayTimeResolution = DayTimeResolution


class YearMonthIntervalType(AtomicType):
    """``INTERVAL YEAR(p) [TO MONTH]`` / ``INTERVAL MONTH`` (Python ``int``: the number of months)."""

    __slots__ = ("_precision", "_resolution")
    type_root = LogicalTypeRoot.INTERVAL_YEAR_MONTH
    YearMonthResolution: ClassVar[type[_YearMonthResolution]] = _YearMonthResolution
    DEFAULT_PRECISION: ClassVar[int] = 2

    def __init__(self, resolution: _YearMonthResolution, precision: int = 2, nullable: bool = True) -> None:
        super().__init__(nullable)
        self._resolution = resolution
        self._precision = _check_range("year precision", precision, 1, 4)

    @property
    def resolution(self) -> _YearMonthResolution:
        return self._resolution

    @property
    def precision(self) -> int:
        return self._precision

    def _params(self) -> tuple[object, ...]:
        return (self._resolution, self._precision)

    def _summary(self) -> str:
        if self._resolution is _YearMonthResolution.MONTH:
            return "INTERVAL MONTH"
        to = " TO MONTH" if self._resolution is _YearMonthResolution.YEAR_TO_MONTH else ""
        return f"INTERVAL YEAR({self._precision}){to}"


_DAY_TIME_FORMATS = {
    DayTimeResolution.DAY: "INTERVAL DAY({d})",
    DayTimeResolution.DAY_TO_HOUR: "INTERVAL DAY({d}) TO HOUR",
    DayTimeResolution.DAY_TO_MINUTE: "INTERVAL DAY({d}) TO MINUTE",
    DayTimeResolution.DAY_TO_SECOND: "INTERVAL DAY({d}) TO SECOND({f})",
    DayTimeResolution.HOUR: "INTERVAL HOUR",
    DayTimeResolution.HOUR_TO_MINUTE: "INTERVAL HOUR TO MINUTE",
    DayTimeResolution.HOUR_TO_SECOND: "INTERVAL HOUR TO SECOND({f})",
    DayTimeResolution.MINUTE: "INTERVAL MINUTE",
    DayTimeResolution.MINUTE_TO_SECOND: "INTERVAL MINUTE TO SECOND({f})",
    DayTimeResolution.SECOND: "INTERVAL SECOND({f})",
}


class DayTimeIntervalType(AtomicType):
    """``INTERVAL DAY(p1) TO SECOND(p2)`` and its nine narrower forms (Python ``datetime.timedelta``)."""

    __slots__ = ("_day_precision", "_fractional_precision", "_resolution")
    type_root = LogicalTypeRoot.INTERVAL_DAY_TIME
    DayTimeResolution: ClassVar[type[_DayTimeResolution]] = _DayTimeResolution
    DEFAULT_DAY_PRECISION: ClassVar[int] = 2
    DEFAULT_FRACTIONAL_PRECISION: ClassVar[int] = 6

    def __init__(
        self,
        resolution: _DayTimeResolution,
        day_precision: int = 2,
        fractional_precision: int = 6,
        nullable: bool = True,
    ) -> None:
        super().__init__(nullable)
        self._resolution = resolution
        self._day_precision = _check_range("day precision", day_precision, 1, 6)
        self._fractional_precision = _check_range("fractional precision", fractional_precision, 0, 9)

    @property
    def resolution(self) -> _DayTimeResolution:
        return self._resolution

    @property
    def day_precision(self) -> int:
        return self._day_precision

    @property
    def fractional_precision(self) -> int:
        return self._fractional_precision

    def _params(self) -> tuple[object, ...]:
        return (self._resolution, self._day_precision, self._fractional_precision)

    def _summary(self) -> str:
        return _DAY_TIME_FORMATS[self._resolution].format(d=self._day_precision, f=self._fractional_precision)


def get_precision(data_type: DataType) -> int:
    """Flink's ``LogicalTypeChecks.getPrecision``: digits of an exact number, fractional digits of a time."""
    if isinstance(data_type, DecimalType | _PrecisionType | YearMonthIntervalType):
        return data_type.precision
    if isinstance(data_type, DayTimeIntervalType):
        return data_type.fractional_precision
    integral = {"TINYINT": 3, "SMALLINT": 5, "INTEGER": 10, "BIGINT": 19}
    if data_type.type_root.name in integral:
        return integral[data_type.type_root.name]
    raise ValidationException(f"expected a type with a precision; got {data_type}")


def get_scale(data_type: DataType) -> int:
    """Flink's ``LogicalTypeChecks.getScale``: DECIMAL's scale, 0 for the integer types."""
    if isinstance(data_type, DecimalType):
        return data_type.scale
    if data_type.has_family(LogicalTypeFamily.INTEGER_NUMERIC):
        return 0
    raise ValidationException(f"expected an exact numeric type; got {data_type}")
