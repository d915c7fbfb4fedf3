"""Type information (Flink's ``TypeInformation``, PyFlink's ``Types``): what a stream, a key or a state holds.

A stream without a declared type carries pickled Python objects, as PyFlink's ``PICKLED_BYTE_ARRAY`` streams do.
A declared type means what it means in PyFlink, where values cross into the Java side and back:

- **conversion** (:meth:`TypeInformation.converter`): ``Types.FLOAT()`` rounds to 32 bits, ``Types.INT()`` is a
  32-bit integer, ``Types.ROW_NAMED`` gives :class:`~strom.api.row.Row`\\ s whose fields are attributes, a
  ``Types.TUPLE`` a tuple of its converted fields; a value that does not fit raises ``ValueError`` or
  ``TypeError`` saying what was expected and what came;
- **text** (:meth:`TypeInformation.formatter`): how Flink's Java side prints the value (``Tuple.toString`` gives
  ``(a,5)``, ``Double.toString`` gives ``1.0E10``, ``Boolean`` gives ``true``), used by ``print()`` and
  ``SimpleStringEncoder``.

Both are built once per type as closures over the field converters, not looked up per record.

    >>> Types.TUPLE([Types.STRING(), Types.FLOAT()]).converter()(("a", 1.1))
    ('a', 1.100000023841858)
    >>> Types.TUPLE([Types.STRING(), Types.FLOAT(), Types.BOOLEAN()]).formatter()(("a", 1.100000023841858, True))
    '(a,1.1,true)'
"""

from __future__ import annotations

import datetime
import decimal
import math
import struct
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, cast

from strom.api.row import Row
from strom.api.time import Instant  # PyFlink's Instant: PyFlink's programs give Types.INSTANT() values as Instants

__all__ = [
    "BasicArrayTypeInfo",
    "BasicTypeInfo",
    "ListTypeInfo",
    "MapTypeInfo",
    "ObjectArrayTypeInfo",
    "PickledBytesTypeInfo",
    "PrimitiveArrayTypeInfo",
    "RowTypeInfo",
    "SqlTimeTypeInfo",
    "TupleTypeInfo",
    "TypeInformation",
    "Types",
    "batch_converter",
    "converting",
    "fast_converter",
    "java_double_string",
    "java_float_string",
]

Converter = Callable[[Any], Any]
Formatter = Callable[[Any], str]


class TypeInformation(ABC):
    """The type of the values of a stream, key or state (Flink's ``TypeInformation``)."""

    @abstractmethod
    def converter(self) -> Converter:
        """A function giving each value as PyFlink gives it back after its Java round trip, or raising
        ``ValueError``/``TypeError`` when the value does not fit this type."""

    @abstractmethod
    def formatter(self) -> Formatter:
        """A function printing a converted value as Flink's Java side does (``toString``)."""

    def is_pickled(self) -> bool:
        """Whether values of this type are opaque pickled Python objects (no conversion)."""
        return False

    def fits_expr(self, var: str) -> str | None:
        """A Python expression over ``var`` that is true only when ``converter()(var)`` would return a value equal
        to ``var`` and as immutable (it fits as it is); ``None`` when no such cheap test exists. The fast path of
        :func:`batch_converter`."""
        return None

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(self)))


def _fail(expected: str, value: Any) -> TypeError:
    return TypeError(f"expected {expected}; got {value!r:.80} ({type(value).__name__})")


# --- Java's number formatting ------------------------------------------------------------------------


def _java_decimal_string(digits: str, exponent: int, negative: bool) -> str:
    """Java's ``Double.toString`` layout for the shortest ``digits`` of a value ``0.d1d2... x 10^exponent``."""
    sign = "-" if negative else ""
    point = exponent  # position of the decimal point after the first `point` digits
    if -3 < point <= 7:  # 1e-3 <= |x| < 1e7: plain notation, at least one digit after the point
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return f"{sign}{digits}{'0' * (point - len(digits))}.0"
        return f"{sign}{digits[:point]}.{digits[point:]}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{point - 1}"


def _shortest(value: float, text: str) -> str:
    """Java's layout of ``value`` whose shortest round-tripping decimal is ``text``."""
    if value != value:
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign, digit_tuple, exponent = decimal.Decimal(text).as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple))
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    return _java_decimal_string(stripped, len(stripped) + exponent, bool(sign))


def java_double_string(value: float) -> str:
    """Java's ``Double.toString``: the shortest digits that read back as ``value``.

    >>> [java_double_string(v) for v in (110.1, 1e10, 1e-4, 0.001, 1234567.0, 12345678.0, -0.0)]
    ['110.1', '1.0E10', '1.0E-4', '0.001', '1234567.0', '1.2345678E7', '-0.0']
    """
    return _shortest(value, repr(value))


def _float32(value: float) -> float:
    result: float = struct.unpack("<f", struct.pack("<f", value))[0]
    return result


def java_float_string(value: float) -> str:
    """Java's ``Float.toString`` of a 32-bit float held in a Python float.

    >>> java_float_string(_float32(110.1)), java_float_string(_float32(1e10)), java_float_string(_float32(0.1))
    ('110.1', '1.0E10', '0.1')
    """
    if value != value or math.isinf(value) or value == 0:
        return java_double_string(value)
    for precision in range(1, 10):
        text = f"{value:.{precision}g}"
        if _float32(float(text)) == value:
            return _shortest(value, text)
    return _shortest(value, repr(value))


# --- basic types -------------------------------------------------------------------------------------------


def _int_converter(name: str, bits: int) -> Converter:
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def convert(value: Any) -> Any:
        if value is None:
            return None
        if type(value) is not int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise _fail(f"an int for {name}", value)
            value = int(value)
        if not low <= value <= high:
            raise ValueError(
                f"expected an int in [{low}, {high}] for {name}; got {value}; hint: Types.LONG() or "
                "Types.BIG_INT() hold larger numbers"
            )
        return value

    return convert


def _float_converter(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, float | int):
        raise _fail("a float for FLOAT", value)
    try:
        return _float32(value)
    except OverflowError:
        raise ValueError(f"expected a float within 32 bits for FLOAT; got {value!r}; hint: Types.DOUBLE()") from None


def _double_converter(value: Any) -> Any:
    if value is None or type(value) is float:
        return value
    if isinstance(value, bool) or not isinstance(value, float | int):
        raise _fail("a float for DOUBLE", value)
    return float(value)


def _instance_converter(kind: type | tuple[type, ...], expected: str) -> Converter:
    def convert(value: Any) -> Any:
        if value is None or isinstance(value, kind):
            return value
        raise _fail(expected, value)

    return convert


def _instant_converter(value: Any) -> Any:
    if value is None or isinstance(value, datetime.datetime | Instant):
        return value
    raise _fail("a datetime or an Instant for INSTANT", value)


def _instant_string(value: Any) -> str:
    return value.isoformat() if isinstance(value, datetime.datetime) else repr(value)


def _string_converter(value: Any) -> Any:
    if value is None or type(value) is str:
        return value
    raise _fail("a str for STRING", value)


def _char_converter(value: Any) -> Any:
    if value is None or (type(value) is str and len(value) == 1):
        return value
    raise _fail("a str of one character for CHAR", value)


def _bool_converter(value: Any) -> Any:
    if value is None or type(value) is bool:
        return value
    raise _fail("a bool for BOOLEAN", value)


def _decimal_converter(value: Any) -> Any:
    if value is None or isinstance(value, decimal.Decimal):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return decimal.Decimal(value)
    raise _fail("a decimal.Decimal for BIG_DEC", value)


def _java_bool(value: Any) -> str:
    return "null" if value is None else ("true" if value else "false")


def _nullable(fmt: Formatter) -> Formatter:
    def format_(value: Any) -> str:
        return "null" if value is None else fmt(value)

    return format_


def _java_timestamp(value: datetime.datetime) -> str:
    nanos = f"{value.microsecond * 1000:09d}".rstrip("0") or "0"
    return f"{value:%Y-%m-%d %H:%M:%S}.{nanos}"


_BASIC: dict[str, tuple[Converter, Formatter]] = {
    "String": (_string_converter, _nullable(str)),
    "Byte": (_int_converter("BYTE", 8), _nullable(str)),
    "Boolean": (_bool_converter, _java_bool),
    "Short": (_int_converter("SHORT", 16), _nullable(str)),
    "Integer": (_int_converter("INT", 32), _nullable(str)),
    "Long": (_int_converter("LONG", 64), _nullable(str)),
    "Float": (_float_converter, _nullable(java_float_string)),
    "Double": (_double_converter, _nullable(java_double_string)),
    "Char": (_char_converter, _nullable(str)),
    "BigInteger": (_instance_converter(int, "an int for BIG_INT"), _nullable(str)),
    "BigDecimal": (_decimal_converter, _nullable(str)),  # Python's and Java's to-scientific-string agree
    "Instant": (_instant_converter, _nullable(_instant_string)),
}


_INT_BITS = {"Byte": 8, "Short": 16, "Integer": 32, "Long": 64}
_FITS = {  # the values the converters return unchanged (None aside: it takes the converter's path)
    "String": "type({v}) is str",
    "Boolean": "type({v}) is bool",
    "Double": "type({v}) is float",
    "Char": "(type({v}) is str and len({v}) == 1)",
}


class BasicTypeInfo(TypeInformation):
    """A Java basic type: ``String``, ``Integer``, ``Float``, ... (PyFlink's ``BasicTypeInfo``)."""

    def __init__(self, java_name: str) -> None:
        if java_name not in _BASIC:
            raise ValueError(f"expected one of {sorted(_BASIC)}; got {java_name!r}")
        self.java_name = java_name

    def converter(self) -> Converter:
        return _BASIC[self.java_name][0]

    def fits_expr(self, var: str) -> str | None:
        bits = _INT_BITS.get(self.java_name)
        if bits is not None:
            return f"(type({var}) is int and {-(1 << (bits - 1))} <= {var} <= {(1 << (bits - 1)) - 1})"
        return _FITS.get(self.java_name, "").format(v=var) or None

    def formatter(self) -> Formatter:
        return _BASIC[self.java_name][1]

    def __repr__(self) -> str:
        return f"BasicTypeInfo({self.java_name})"


_SQL: dict[str, tuple[Converter, Formatter]] = {
    "Date": (_instance_converter(datetime.date, "a datetime.date for SQL_DATE"), _nullable(lambda v: v.isoformat())),
    "Time": (
        _instance_converter(datetime.time, "a datetime.time for SQL_TIME"),
        _nullable(lambda v: f"{v:%H:%M:%S}"),
    ),
    "Timestamp": (
        _instance_converter(datetime.datetime, "a datetime.datetime for SQL_TIMESTAMP"),
        _nullable(_java_timestamp),
    ),
}


class SqlTimeTypeInfo(TypeInformation):
    """``java.sql.Date``/``Time``/``Timestamp`` as Python ``date``/``time``/``datetime``."""

    def __init__(self, java_name: str) -> None:
        self.java_name = java_name

    def converter(self) -> Converter:
        return _SQL[self.java_name][0]

    def formatter(self) -> Formatter:
        return _SQL[self.java_name][1]

    def __repr__(self) -> str:
        return f"SqlTimeTypeInfo({self.java_name})"


class PickledBytesTypeInfo(TypeInformation):
    """Any picklable Python object (PyFlink's ``PICKLED_BYTE_ARRAY``): no conversion; printed with ``str()``."""

    def converter(self) -> Converter:
        return _identity

    def formatter(self) -> Formatter:
        return _python_str

    def is_pickled(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "PickledByteArrayTypeInfo"


def _identity(value: Any) -> Any:
    return value


def _python_str(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


# --- composite types -------------------------------------------------------------------------------------


def _fields_of(value: Any, arity: int, what: str) -> Sequence[Any]:
    if not isinstance(value, tuple | list) or len(value) != arity:
        raise _fail(f"a {what} of {arity} fields", value)
    return value


class TupleTypeInfo(TypeInformation):
    """A Java ``TupleN`` as a Python tuple; printed ``(a,5)`` as ``Tuple.toString``."""

    def __init__(self, field_types: Sequence[TypeInformation]) -> None:
        _check_types(field_types, "TUPLE")
        self.field_types = list(field_types)

    def get_field_types(self) -> list[TypeInformation]:
        return list(self.field_types)

    def converter(self) -> Converter:
        fields = [t.converter() for t in self.field_types]
        arity = len(fields)

        def convert(value: Any) -> tuple[Any, ...]:
            values = _fields_of(value, arity, "tuple")
            try:
                return tuple([f(v) for f, v in zip(fields, values, strict=True)])
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"{exc} in the tuple {value!r:.80}") from None

        return convert

    def fits_expr(self, var: str) -> str | None:
        fields = [t.fits_expr(f"{var}[{i}]") for i, t in enumerate(self.field_types)]
        if any(f is None for f in fields):
            return None
        return f"(type({var}) is tuple and len({var}) == {len(fields)} and " + " and ".join(map(str, fields)) + ")"

    def formatter(self) -> Formatter:
        fields = [t.formatter() for t in self.field_types]

        def format_(value: Any) -> str:
            return "(" + ",".join([f(v) for f, v in zip(fields, value, strict=True)]) + ")"

        return _nullable(format_)

    def __repr__(self) -> str:
        return f"TupleTypeInfo({', '.join(map(repr, self.field_types))})"


class RowTypeInfo(TypeInformation):
    """A ``Row`` of typed fields, optionally named (``Types.ROW_NAMED``); printed as PyFlink's ``print()`` does:
    the row kind, then the fields' ``str()`` joined by commas (``+I[1,ann]``)."""

    def __init__(self, field_types: Sequence[TypeInformation], field_names: Sequence[str] | None = None) -> None:
        _check_types(field_types, "ROW")
        if field_names is not None and (
            len(field_names) != len(field_types) or not all(isinstance(n, str) for n in field_names)
        ):
            raise ValueError(
                f"expected one str name per field ({len(field_types)}); got {field_names!r}; "
                'hint: Types.ROW_NAMED(["id", "name"], [Types.INT(), Types.STRING()])'
            )
        self.field_types = list(field_types)
        self.field_names = list(field_names) if field_names is not None else [f"f{i}" for i in range(len(field_types))]

    def get_field_names(self) -> list[str]:
        return list(self.field_names)

    def get_field_types(self) -> list[TypeInformation]:
        return list(self.field_types)

    def get_field_index(self, name: str) -> int:
        return self.field_names.index(name) if name in self.field_names else -1

    def converter(self) -> Converter:
        fields = [t.converter() for t in self.field_types]
        arity = len(fields)
        names = self.field_names  # Types.ROW's fields are f0, f1, ... (PyFlink's rows carry them)

        def convert(value: Any) -> Row:
            if isinstance(value, Row):
                kind = value.get_row_kind()
                values: Sequence[Any] = tuple(value)
            else:
                kind = None
                values = value
            values = _fields_of(values, arity, "row")
            try:
                converted = [f(v) for f, v in zip(fields, values, strict=True)]
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"{exc} in the row {value!r:.80}") from None
            row = Row(*converted)
            row.set_field_names(names)
            if kind is not None:
                row.set_row_kind(kind)
            return row

        return convert

    def formatter(self) -> Formatter:
        def format_(value: Any) -> str:
            return f"{value.get_row_kind()}[{','.join([str(v) for v in value])}]"

        return _nullable(format_)

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}: {t!r}" for n, t in zip(self.field_names, self.field_types, strict=True))
        return f"RowTypeInfo({fields})"


class _ElementsTypeInfo(TypeInformation):
    """A sequence of one element type, as a Python list; printed ``[1, 2]`` (``List``/``Arrays.toString``)."""

    kind = "LIST"

    def __init__(self, element_type: TypeInformation) -> None:
        _check_types([element_type], self.kind)
        self.element_type = element_type

    def converter(self) -> Converter:
        element = self.element_type.converter()
        kind = self.kind

        def convert(value: Any) -> Any:
            if value is None:
                return None
            if not isinstance(value, list | tuple):
                raise _fail(f"a list for {kind}", value)
            return [element(v) for v in value]

        return convert

    def formatter(self) -> Formatter:
        element = self.element_type.formatter()

        def format_(value: Any) -> str:
            return "[" + ", ".join([element(v) for v in value]) + "]"

        return _nullable(format_)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.element_type!r})"


class ListTypeInfo(_ElementsTypeInfo):
    kind = "LIST"


class PrimitiveArrayTypeInfo(_ElementsTypeInfo):
    """``PRIMITIVE_ARRAY(BYTE())`` is Java's ``byte[]``: Python ``bytes``, as in PyFlink."""

    kind = "PRIMITIVE_ARRAY"

    def converter(self) -> Converter:
        if not (isinstance(self.element_type, BasicTypeInfo) and self.element_type.java_name == "Byte"):
            return super().converter()
        elements = super().converter()

        def convert(value: Any) -> Any:
            return bytes(value) if isinstance(value, bytes | bytearray) else elements(value)

        return convert


class BasicArrayTypeInfo(_ElementsTypeInfo):
    kind = "BASIC_ARRAY"


class ObjectArrayTypeInfo(_ElementsTypeInfo):
    kind = "OBJECT_ARRAY"


class MapTypeInfo(TypeInformation):
    """A ``Map`` as a Python dict; printed ``{a=1, b=2}`` (``AbstractMap.toString``, in the dict's order)."""

    def __init__(self, key_type: TypeInformation, value_type: TypeInformation) -> None:
        _check_types([key_type, value_type], "MAP")
        self.key_type = key_type
        self.value_type = value_type

    def converter(self) -> Converter:
        key, val = self.key_type.converter(), self.value_type.converter()

        def convert(value: Any) -> Any:
            if value is None:
                return None
            if not isinstance(value, dict):
                raise _fail("a dict for MAP", value)
            return {key(k): val(v) for k, v in value.items()}

        return convert

    def formatter(self) -> Formatter:
        key, val = self.key_type.formatter(), self.value_type.formatter()

        def format_(value: Any) -> str:
            return "{" + ", ".join([f"{key(k)}={val(v)}" for k, v in value.items()]) + "}"

        return _nullable(format_)

    def __repr__(self) -> str:
        return f"MapTypeInfo({self.key_type!r}, {self.value_type!r})"


def _check_types(types: Sequence[Any], what: str) -> None:
    if not isinstance(types, list | tuple) or not all(isinstance(t, TypeInformation) for t in types):
        raise TypeError(
            f"expected the field types of {what} as a list of TypeInformation; got {types!r:.80}; "
            "hint: Types.TUPLE([Types.STRING(), Types.INT()])"
        )


class Types:
    """PyFlink's ``Types``: the type information of the common types.

    >>> Types.ROW_NAMED(["id", "name"], [Types.INT(), Types.STRING()]).converter()((1, "ann")).name
    'ann'
    """

    @staticmethod
    def STRING() -> TypeInformation:
        return BasicTypeInfo("String")

    @staticmethod
    def BYTE() -> TypeInformation:
        return BasicTypeInfo("Byte")

    @staticmethod
    def BOOLEAN() -> TypeInformation:
        return BasicTypeInfo("Boolean")

    @staticmethod
    def SHORT() -> TypeInformation:
        return BasicTypeInfo("Short")

    @staticmethod
    def INT() -> TypeInformation:
        return BasicTypeInfo("Integer")

    @staticmethod
    def LONG() -> TypeInformation:
        return BasicTypeInfo("Long")

    @staticmethod
    def FLOAT() -> TypeInformation:
        return BasicTypeInfo("Float")

    @staticmethod
    def DOUBLE() -> TypeInformation:
        return BasicTypeInfo("Double")

    @staticmethod
    def CHAR() -> TypeInformation:
        return BasicTypeInfo("Char")

    @staticmethod
    def BIG_INT() -> TypeInformation:
        return BasicTypeInfo("BigInteger")

    @staticmethod
    def BIG_DEC() -> TypeInformation:
        return BasicTypeInfo("BigDecimal")

    @staticmethod
    def INSTANT() -> TypeInformation:
        return BasicTypeInfo("Instant")

    @staticmethod
    def SQL_DATE() -> TypeInformation:
        return SqlTimeTypeInfo("Date")

    @staticmethod
    def SQL_TIME() -> TypeInformation:
        return SqlTimeTypeInfo("Time")

    @staticmethod
    def SQL_TIMESTAMP() -> TypeInformation:
        return SqlTimeTypeInfo("Timestamp")

    @staticmethod
    def PICKLED_BYTE_ARRAY() -> TypeInformation:
        return PickledBytesTypeInfo()

    @staticmethod
    def ROW(field_types: list[TypeInformation]) -> RowTypeInfo:
        return RowTypeInfo(field_types)

    @staticmethod
    def ROW_NAMED(field_names: list[str], field_types: list[TypeInformation]) -> RowTypeInfo:
        return RowTypeInfo(field_types, field_names)

    @staticmethod
    def TUPLE(field_types: list[TypeInformation]) -> TupleTypeInfo:
        return TupleTypeInfo(field_types)

    @staticmethod
    def PRIMITIVE_ARRAY(element_type: TypeInformation) -> TypeInformation:
        return PrimitiveArrayTypeInfo(element_type)

    @staticmethod
    def BASIC_ARRAY(element_type: TypeInformation) -> TypeInformation:
        return BasicArrayTypeInfo(element_type)

    @staticmethod
    def OBJECT_ARRAY(element_type: TypeInformation) -> TypeInformation:
        return ObjectArrayTypeInfo(element_type)

    @staticmethod
    def MAP(key_type_info: TypeInformation, value_type_info: TypeInformation) -> TypeInformation:
        return MapTypeInfo(key_type_info, value_type_info)

    @staticmethod
    def LIST(element_type_info: TypeInformation) -> TypeInformation:
        return ListTypeInfo(element_type_info)


def fast_converter(type_info: TypeInformation) -> Converter:
    """``type_info.converter()`` behind the test of :meth:`TypeInformation.fits_expr`: a value that fits as it is
    returns at once (a ``STRING`` key is one ``type()`` check)."""
    return _generated(type_info, "def convert_one(v):\n    return v if {fits} else convert(v)\n")


def batch_converter(type_info: TypeInformation) -> Callable[[list[Any]], list[Any]]:
    """A function converting a batch of values to ``type_info`` (raising as its ``converter()`` does). A batch whose
    values all fit as they are (the test of :meth:`TypeInformation.fits_expr`, generated inline; a tuple's fields
    unpacked once, its basic fields' exact types tested first, ints then against their bounds) is returned
    itself, no list built; a batch with one that does not is converted value by value, the fitting ones passing
    through."""
    fits = type_info.fits_expr("v")
    if fits is None:
        return cast(
            Callable[[list[Any]], list[Any]],
            _generated(type_info, "def convert_batch(batch):\n    return [convert(v) for v in batch]\n"),
        )
    check, names = _batch_check(type_info, fits)
    template = (
        "def convert_batch(batch):\n"
        "    try:\n"
        "        for v in batch:\n"
        f"{check}"
        "        else:\n"
        "            return batch\n"
        "    except ValueError:  # a tuple of another length\n"
        "        pass\n"
        "    return [v if {fits} else convert(v) for v in batch]\n"
    )
    return cast(Callable[[list[Any]], list[Any]], _generated(type_info, template, **names))


#: the Python type a value of a basic type has when it fits as it is (ints also within their bounds)
_EXACT = {"Long": int, "Integer": int, "Short": int, "Byte": int, "String": str, "Boolean": bool, "Double": float}


def _batch_check(type_info: TypeInformation, fits: str) -> tuple[str, dict[str, Any]]:
    """The loop body of :func:`batch_converter`'s test (``break`` on a value that does not fit; ``ValueError`` from
    a tuple of another arity) and the names it reads: a tuple's fields unpacked into locals once (cheaper than
    subscripting each field per test), the exact types of its basic fields tested before any bound (a chain of
    ``is`` tests costs fewer instructions than comparing a tuple of types)."""
    if not isinstance(type_info, TupleTypeInfo) or not type_info.field_types:
        return "            if not {fits}:\n                break\n".replace("{fits}", fits), {}
    names = [f"f{i}" for i in range(len(type_info.field_types))]
    exact: list[tuple[str, type]] = []
    tests: list[str] = []
    for t, n in zip(type_info.field_types, names, strict=True):
        kind = _EXACT.get(t.java_name) if isinstance(t, BasicTypeInfo) else None
        if kind is None:
            tests.append(str(t.fits_expr(n)))
            continue
        exact.append((n, kind))
        bits = _INT_BITS.get(cast(BasicTypeInfo, t).java_name)
        if bits is not None:
            tests.append(f"{-(1 << (bits - 1))} <= {n} <= {(1 << (bits - 1)) - 1}")
    tests[:0] = [f"type({n}) is {kind.__name__}" for n, kind in exact]  # the cheap tests first
    return (
        "            if type(v) is not tuple:\n                break\n"
        f"            {', '.join(names)}, = v\n"
        f"            if not ({' and '.join(tests)}):\n                break\n"
    ), {}


def converting(fn: Callable[[Any], Any], type_info: TypeInformation) -> Callable[[Any], Any]:
    """``fn`` whose results are converted to ``type_info``, as one function (one frame per call): a typed key
    selector is the user's selector and a ``type()`` check, not three calls."""
    return _generated(
        type_info,
        "def convert_result(value):\n    v = fn(value)\n    return v if {fits} else convert(v)\n",
        fn=fn,
    )


#: the file the generated converters' code names: strom's own, so that user tracebacks leave their frames out
_GENERATED_FILE = __file__.removesuffix(".py") + "_generated.py"


def _generated(type_info: TypeInformation, template: str, **names: Any) -> Callable[[Any], Any]:
    convert = type_info.converter()
    fits = type_info.fits_expr("v")
    if fits is None:
        fits = "False"
    # ``__file__``: cloudpickle ships these functions by value and keeps it; user tracebacks then skip their frames
    namespace: dict[str, Any] = {"convert": convert, "__file__": _GENERATED_FILE, **names}
    # the expression is built from type names and integer bounds only, never from user input
    exec(compile(template.format(fits=fits), _GENERATED_FILE, "exec"), namespace)
    [function] = [v for k, v in namespace.items() if k.startswith("convert_")]
    return cast(Callable[[Any], Any], function)
