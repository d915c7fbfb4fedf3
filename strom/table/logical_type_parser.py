"""Flink's ``LogicalTypeParser``: a type string (SQL DDL form or summary string) → a :class:`DataType`.

Accepts every type Flink's ``CREATE TABLE`` accepts — ``INT``/``INTEGER``, ``DECIMAL``/``DEC``/``NUMERIC(p, s)``,
``CHAR``/``CHARACTER(n)``, ``VARCHAR(n)``/``CHARACTER VARYING`` (no length: ``STRING``, as Flink's DDL),
``STRING``, ``BYTES``, ``DOUBLE PRECISION``, ``TIME(p) [WITHOUT TIME ZONE]``, ``TIMESTAMP(p) [WITHOUT TIME ZONE |
WITH [LOCAL] TIME ZONE]``, ``TIMESTAMP_LTZ(p)``, ``ARRAY<t>`` / ``t ARRAY``, ``MULTISET<t>`` / ``t MULTISET``,
``MAP<k, v>``, ``ROW<a INT 'desc', …>`` / ``ROW(a INT, …)``, ``[NOT] NULL`` after any type — plus ``INTERVAL …``
types and the summary forms (``TIMESTAMP_LTZ(3) *ROWTIME*``, ``ROW<`a` INT>``), so ``parse_type(str(t)) == t``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from strom.table.errors import ValidationException
from strom.table.logical_constructed_types import ArrayType, MapType, MultisetType, RowField, RowType
from strom.table.logical_types import (
    MAX_LENGTH,
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
    IntType,
    LocalZonedTimestampType,
    NullType,
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
)

__all__ = ["parse_type"]

_TOKEN = re.compile(
    r"\s*(?:(?P<ident>[A-Za-z_$][A-Za-z0-9_$]*)|(?P<num>\d+)|`(?P<bq>(?:[^`]|``)*)`|'(?P<str>(?:[^']|'')*)'"
    r"|(?P<sym>[<>(),*]))"
)


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # "ident", "num", "bq", "str", "sym", "end"
    text: str
    pos: int

    @property
    def keyword(self) -> str:
        return self.text.upper() if self.kind == "ident" else ""


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.lastgroup is None:
            start = len(text) - len(text[pos:].lstrip())
            raise ValidationException(
                f"Could not parse type at position {start}: expected a type keyword, a number, a name or one of "
                f"'<>(),'; got {text[start]!r} in {text!r}"
            )
        value = m.group(m.lastgroup)
        if m.lastgroup == "bq":
            value = value.replace("``", "`")
        elif m.lastgroup == "str":
            value = value.replace("''", "'")
        tokens.append(_Token(m.lastgroup, value, m.start(m.lastgroup)))
        pos = m.end()
    tokens.append(_Token("end", "", len(text)))
    return tokens


_SIMPLE: dict[str, type[DataType]] = {
    "BOOLEAN": BooleanType,
    "TINYINT": TinyIntType,
    "SMALLINT": SmallIntType,
    "INT": IntType,
    "INTEGER": IntType,
    "BIGINT": BigIntType,
    "FLOAT": FloatType,
    "DATE": DateType,
}

_DAY_TIME_UNITS = ("DAY", "HOUR", "MINUTE", "SECOND")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0

    # -- token helpers -------------------------------------------------------------------------------------------
    def peek(self, offset: int = 0) -> _Token:
        return self.tokens[min(self.i + offset, len(self.tokens) - 1)]

    def next(self) -> _Token:
        tok = self.peek()
        self.i += 1
        return tok

    def fail(self, expected: str) -> ValidationException:
        tok = self.peek()
        got = "the end" if tok.kind == "end" else repr(tok.text)
        return ValidationException(
            f"Could not parse type at position {tok.pos}: expected {expected}; got {got} in {self.text!r}"
        )

    def accept(self, *keywords: str) -> bool:
        """Consume the keyword sequence (or symbol) if it is next."""
        for k, word in enumerate(keywords):
            tok = self.peek(k)
            if (tok.keyword if word[0].isalpha() else tok.text if tok.kind == "sym" else None) != word:
                return False
        self.i += len(keywords)
        return True

    def expect(self, symbol: str) -> None:
        if not self.accept(symbol):
            raise self.fail(repr(symbol))

    def number(self) -> int:
        tok = self.peek()
        if tok.kind != "num":
            raise self.fail("a number")
        self.i += 1
        return int(tok.text)

    def optional_number(self, default: int) -> int:
        if self.accept("("):
            value = self.number()
            self.expect(")")
            return value
        return default

    # -- grammar -------------------------------------------------------------------------------------------------
    def parse(self) -> DataType:
        data_type = self.type_with_suffixes()
        if self.peek().kind != "end":
            raise self.fail("the end of the type")
        return data_type

    def type_with_suffixes(self) -> DataType:
        data_type = self.nullability(self.base_type())
        while True:
            if self.accept("ARRAY"):
                data_type = self.nullability(ArrayType(data_type))
            elif self.accept("MULTISET"):
                data_type = self.nullability(MultisetType(data_type))
            else:
                return data_type

    def nullability(self, data_type: DataType) -> DataType:
        if self.accept("NOT", "NULL"):
            data_type = data_type.not_null()
        elif self.accept("NULL"):
            data_type = data_type.nullable()
        if self.accept("*"):
            kind = self.next().keyword
            if kind not in ("ROWTIME", "PROCTIME") or not isinstance(
                data_type, TimestampType | LocalZonedTimestampType
            ):
                self.i -= 1
                raise self.fail("ROWTIME or PROCTIME after a TIMESTAMP or TIMESTAMP_LTZ")
            self.expect("*")
            data_type = data_type.with_kind(TimestampKind[kind])
        return data_type

    def base_type(self) -> DataType:
        tok = self.peek()
        word = tok.keyword
        if word in _SIMPLE:
            self.i += 1
            return _SIMPLE[word]()
        method = getattr(self, f"parse_{word.lower()}", None) if word else None
        if method is None:
            raise self.fail("a type (INT, STRING, DECIMAL(p, s), TIMESTAMP(p), ARRAY<…>, ROW<…>, …)")
        self.i += 1
        result: DataType = method()
        return result

    def parse_null(self) -> DataType:
        return NullType()

    def parse_string(self) -> DataType:
        return VarCharType(MAX_LENGTH)

    def parse_bytes(self) -> DataType:
        return VarBinaryType(MAX_LENGTH)

    def parse_char(self) -> DataType:
        if self.accept("VARYING"):
            return self.parse_varchar()
        return CharType(self.optional_number(1))

    parse_character = parse_char

    def parse_varchar(self) -> DataType:
        return VarCharType(self.optional_number(MAX_LENGTH))  # Flink's DDL: VARCHAR without a length is STRING

    def parse_binary(self) -> DataType:
        if self.accept("VARYING"):
            return self.parse_varbinary()
        return BinaryType(self.optional_number(1))

    def parse_varbinary(self) -> DataType:
        return VarBinaryType(self.optional_number(MAX_LENGTH))  # Flink's DDL: VARBINARY without a length is BYTES

    def parse_decimal(self) -> DataType:
        precision, scale = DecimalType.DEFAULT_PRECISION, 0
        if self.accept("("):
            precision = self.number()
            if self.accept(","):
                scale = self.number()
            self.expect(")")
        return DecimalType(precision, scale)

    parse_dec = parse_numeric = parse_decimal

    def parse_double(self) -> DataType:
        self.accept("PRECISION")
        return DoubleType()

    def parse_time(self) -> DataType:
        precision = self.optional_number(0)
        self.accept("WITHOUT", "TIME", "ZONE")
        return TimeType(precision)

    def parse_timestamp(self) -> DataType:
        precision = self.optional_number(6)
        if self.accept("WITH", "LOCAL", "TIME", "ZONE"):
            return LocalZonedTimestampType(precision)
        if self.accept("WITH", "TIME", "ZONE"):
            return ZonedTimestampType(precision)
        self.accept("WITHOUT", "TIME", "ZONE")
        return TimestampType(precision)

    def parse_timestamp_ltz(self) -> DataType:
        return LocalZonedTimestampType(self.optional_number(6))

    def element(self) -> DataType:
        close = ">" if self.accept("<") else ")" if self.accept("(") else None
        if close is None:
            raise self.fail("'<'")
        element = self.type_with_suffixes()
        self.expect(close)
        return element

    def parse_array(self) -> DataType:
        return ArrayType(self.element())

    def parse_multiset(self) -> DataType:
        return MultisetType(self.element())

    def parse_map(self) -> DataType:
        close = ">" if self.accept("<") else ")" if self.accept("(") else None
        if close is None:
            raise self.fail("'<'")
        key = self.type_with_suffixes()
        self.expect(",")
        value = self.type_with_suffixes()
        self.expect(close)
        return MapType(key, value)

    def parse_row(self) -> DataType:
        close = ">" if self.accept("<") else ")" if self.accept("(") else None
        if close is None:
            raise self.fail("'<' or '('")
        fields: list[RowField] = []
        while not self.accept(close):
            if fields:
                self.expect(",")
            name = self.next()
            if name.kind not in ("ident", "bq"):
                self.i -= 1
                raise self.fail("a field name")
            data_type = self.type_with_suffixes()
            description = self.next().text if self.peek().kind == "str" else None
            fields.append(RowField(name.text, data_type, description))
        return RowType(fields)

    def parse_interval(self) -> DataType:
        unit = self.next().keyword
        if unit in ("YEAR", "MONTH"):
            precision = self.optional_number(2) if unit == "YEAR" else 2
            if unit == "YEAR" and self.accept("TO", "MONTH"):
                return YearMonthIntervalType(YearMonthResolution.YEAR_TO_MONTH, precision)
            return YearMonthIntervalType(YearMonthResolution[unit], precision)
        if unit not in _DAY_TIME_UNITS:
            self.i -= 1
            raise self.fail("YEAR, MONTH, DAY, HOUR, MINUTE or SECOND")
        day_precision = self.optional_number(2) if unit == "DAY" else 2
        fractional = self.optional_number(6) if unit == "SECOND" else 6
        end = unit
        if self.accept("TO"):
            end = self.next().keyword
            if end not in _DAY_TIME_UNITS or _DAY_TIME_UNITS.index(end) <= _DAY_TIME_UNITS.index(unit):
                self.i -= 1
                raise self.fail(f"a unit smaller than {unit}")
            if end == "SECOND":
                fractional = self.optional_number(6)
        name = unit if end == unit else f"{unit}_TO_{end}"
        return DayTimeIntervalType(DayTimeResolution[name], day_precision, fractional)


def parse_type(text: str) -> DataType:
    """The :class:`DataType` a type string denotes: ``parse_type("DECIMAL(10, 2) NOT NULL")``.

    Raises :class:`~strom.table.errors.ValidationException` naming the position of the first token it cannot read.
    """
    return _Parser(text).parse()
