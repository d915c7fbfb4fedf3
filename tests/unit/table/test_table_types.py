"""DataTypes, their Flink summary strings, and parse_type over Flink's DDL forms (strom.table.types)."""

from __future__ import annotations

import pickle

import pytest

from strom.table.errors import TableException, ValidationException
from strom.table.types import (
    DataType,
    DataTypes,
    DayTimeIntervalType,
    DayTimeResolution,
    DecimalType,
    LocalZonedTimestampType,
    LogicalTypeFamily,
    LogicalTypeRoot,
    RowType,
    TimestampKind,
    TimestampType,
    YearMonthResolution,
    get_precision,
    get_scale,
    parse_type,
)

SUMMARIES = [
    (DataTypes.TINYINT(), "TINYINT"),
    (DataTypes.SMALLINT(), "SMALLINT"),
    (DataTypes.INT(), "INT"),
    (DataTypes.BIGINT(nullable=False), "BIGINT NOT NULL"),
    (DataTypes.FLOAT(), "FLOAT"),
    (DataTypes.DOUBLE(), "DOUBLE"),
    (DataTypes.DECIMAL(10, 2), "DECIMAL(10, 2)"),
    (DataTypes.CHAR(5), "CHAR(5)"),
    (DataTypes.VARCHAR(10), "VARCHAR(10)"),
    (DataTypes.STRING(), "STRING"),
    (DataTypes.BOOLEAN(), "BOOLEAN"),
    (DataTypes.BINARY(4), "BINARY(4)"),
    (DataTypes.VARBINARY(7), "VARBINARY(7)"),
    (DataTypes.BYTES(), "BYTES"),
    (DataTypes.DATE(), "DATE"),
    (DataTypes.TIME(), "TIME(0)"),
    (DataTypes.TIME(3), "TIME(3)"),
    (DataTypes.TIMESTAMP(), "TIMESTAMP(6)"),
    (DataTypes.TIMESTAMP(3), "TIMESTAMP(3)"),
    (DataTypes.TIMESTAMP_LTZ(3), "TIMESTAMP_LTZ(3)"),
    (DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(), "TIMESTAMP_LTZ(6)"),
    (DataTypes.TIMESTAMP(3).with_kind(TimestampKind.ROWTIME), "TIMESTAMP(3) *ROWTIME*"),
    (
        DataTypes.TIMESTAMP_LTZ(3, nullable=False).with_kind(TimestampKind.PROCTIME),
        "TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*",
    ),
    (DataTypes.ARRAY(DataTypes.INT()), "ARRAY<INT>"),
    (DataTypes.ARRAY(DataTypes.INT().not_null()), "ARRAY<INT NOT NULL>"),
    (DataTypes.MAP(DataTypes.STRING(), DataTypes.INT()), "MAP<STRING, INT>"),
    (DataTypes.MULTISET(DataTypes.STRING()), "MULTISET<STRING>"),
    (
        DataTypes.ROW([DataTypes.FIELD("a", DataTypes.INT()), DataTypes.FIELD("b", DataTypes.STRING())]),
        "ROW<`a` INT, `b` STRING>",
    ),
    (DataTypes.ROW([DataTypes.FIELD("a", DataTypes.INT(), "the a")]), "ROW<`a` INT 'the a'>"),
    (DataTypes.ROW(), "ROW<>"),
    (DataTypes.NULL(), "NULL"),
    (DataTypes.INTERVAL(DataTypes.DAY(), DataTypes.SECOND(3)), "INTERVAL DAY(2) TO SECOND(3)"),
    (DataTypes.INTERVAL(DataTypes.SECOND(3)), "INTERVAL SECOND(3)"),
    (DataTypes.INTERVAL(DataTypes.HOUR(), DataTypes.MINUTE()), "INTERVAL HOUR TO MINUTE"),
    (DataTypes.INTERVAL(DataTypes.YEAR(4)), "INTERVAL YEAR(4)"),
    (DataTypes.INTERVAL(DataTypes.YEAR(), DataTypes.MONTH()), "INTERVAL YEAR(2) TO MONTH"),
    (DataTypes.INTERVAL(DataTypes.MONTH()), "INTERVAL MONTH"),
]


@pytest.mark.parametrize(("data_type", "summary"), SUMMARIES, ids=[s for _, s in SUMMARIES])
def test_summary_string_and_parse_round_trip(data_type: DataType, summary: str) -> None:
    assert str(data_type) == summary
    assert parse_type(summary) == data_type
    # the serializable string drops the time-attribute marker, as Flink's does
    regular = (
        data_type.with_kind(TimestampKind.REGULAR)
        if isinstance(data_type, TimestampType | LocalZonedTimestampType)
        else data_type
    )
    assert parse_type(data_type.as_serializable_string()) == regular


DDL_FORMS = [
    ("INTEGER", "INT"),
    ("int not null", "INT NOT NULL"),
    ("INT NULL", "INT"),
    ("DECIMAL", "DECIMAL(10, 0)"),
    ("DEC(5)", "DECIMAL(5, 0)"),
    ("NUMERIC(38,18)", "DECIMAL(38, 18)"),
    ("DECIMAL(10, 2) NOT NULL", "DECIMAL(10, 2) NOT NULL"),
    ("CHAR", "CHAR(1)"),
    ("CHARACTER(3)", "CHAR(3)"),
    ("VARCHAR", "STRING"),  # Flink's DDL, unlike its LogicalTypeParser (VARCHAR(1))
    ("CHARACTER VARYING(4)", "VARCHAR(4)"),
    ("VARCHAR(2147483647)", "STRING"),
    ("BINARY", "BINARY(1)"),
    ("VARBINARY", "BYTES"),
    ("VARBINARY(2147483647)", "BYTES"),
    ("DOUBLE PRECISION", "DOUBLE"),
    ("TIME WITHOUT TIME ZONE", "TIME(0)"),
    ("TIMESTAMP", "TIMESTAMP(6)"),
    ("TIMESTAMP(9) WITHOUT TIME ZONE", "TIMESTAMP(9)"),
    ("TIMESTAMP(3) WITH LOCAL TIME ZONE", "TIMESTAMP_LTZ(3)"),
    ("TIMESTAMP WITH LOCAL TIME ZONE", "TIMESTAMP_LTZ(6)"),
    ("TIMESTAMP_LTZ", "TIMESTAMP_LTZ(6)"),
    ("TIMESTAMP(3) WITH TIME ZONE", "TIMESTAMP(3) WITH TIME ZONE"),
    ("ARRAY<INT NOT NULL>", "ARRAY<INT NOT NULL>"),
    ("INT ARRAY", "ARRAY<INT>"),
    ("INT NOT NULL ARRAY NOT NULL", "ARRAY<INT NOT NULL> NOT NULL"),
    ("STRING MULTISET", "MULTISET<STRING>"),
    ("MAP<STRING, ARRAY<INT>>", "MAP<STRING, ARRAY<INT>>"),
    ("ROW<a INT, b STRING>", "ROW<`a` INT, `b` STRING>"),
    ("ROW(a INT, b STRING)", "ROW<`a` INT, `b` STRING>"),
    ("ROW<a INT NOT NULL 'the a', `b c` ARRAY<STRING>>", "ROW<`a` INT NOT NULL 'the a', `b c` ARRAY<STRING>>"),
    ("ROW<`it``s` INT 'it''s'>", "ROW<`it``s` INT 'it''s'>"),
    ("ROW<r ROW<x DOUBLE>> NOT NULL", "ROW<`r` ROW<`x` DOUBLE>> NOT NULL"),
    ("INTERVAL DAY", "INTERVAL DAY(2)"),
    ("INTERVAL DAY(3) TO HOUR", "INTERVAL DAY(3) TO HOUR"),
    ("INTERVAL DAY TO SECOND", "INTERVAL DAY(2) TO SECOND(6)"),
    ("INTERVAL HOUR TO SECOND(3)", "INTERVAL HOUR TO SECOND(3)"),
    ("INTERVAL MINUTE TO SECOND", "INTERVAL MINUTE TO SECOND(6)"),
    ("INTERVAL SECOND", "INTERVAL SECOND(6)"),
    ("INTERVAL YEAR TO MONTH", "INTERVAL YEAR(2) TO MONTH"),
    ("  bigint  ", "BIGINT"),
]


@pytest.mark.parametrize(("ddl", "summary"), DDL_FORMS, ids=[d for d, _ in DDL_FORMS])
def test_parse_ddl_forms(ddl: str, summary: str) -> None:
    assert str(parse_type(ddl)) == summary


@pytest.mark.parametrize(
    ("text", "position"),
    [("INTT", 0), ("DECIMAL(10, 2", 13), ("ARRAY<INT", 9), ("MAP<INT>", 7), ("INT NOT", 4), ("REAL", 0), ("INT %", 4)],
)
def test_parse_errors_name_the_position(text: str, position: int) -> None:
    with pytest.raises(ValidationException, match=f"position {position}: expected"):
        parse_type(text)


@pytest.mark.parametrize(
    "build",
    [
        lambda: DataTypes.DECIMAL(39, 0),
        lambda: DataTypes.DECIMAL(5, 6),
        lambda: DataTypes.TIMESTAMP(10),
        lambda: DataTypes.VARCHAR(0),
        lambda: DataTypes.INTERVAL(DataTypes.SECOND(), DataTypes.DAY()),
        lambda: DataTypes.INTERVAL(DataTypes.MONTH(), DataTypes.MONTH()),
        lambda: DataTypes.ROW([DataTypes.FIELD("a", DataTypes.INT()), DataTypes.FIELD("a", DataTypes.INT())]),
    ],
)
def test_invalid_parameters_raise(build: object) -> None:
    with pytest.raises(ValidationException, match="expected"):
        build()  # type: ignore[operator]


def test_attributes_the_planner_reads() -> None:
    dec = parse_type("DECIMAL(12, 3) NOT NULL")
    assert isinstance(dec, DecimalType)
    assert (dec.type_root, dec.precision, dec.scale, dec.is_nullable) == (LogicalTypeRoot.DECIMAL, 12, 3, False)
    assert dec.has_family(LogicalTypeFamily.EXACT_NUMERIC) and not dec.has_family(LogicalTypeFamily.INTEGER_NUMERIC)
    assert parse_type("VARCHAR(9)").length == 9  # type: ignore[attr-defined]
    assert parse_type("TIMESTAMP_LTZ(3)").precision == 3  # type: ignore[attr-defined]
    assert parse_type("ARRAY<BIGINT>").element_type == DataTypes.BIGINT()  # type: ignore[attr-defined]
    m = parse_type("MAP<STRING, INT NOT NULL>")
    assert m.children == (DataTypes.STRING(), DataTypes.INT(False))
    row = parse_type("ROW<a INT, b STRING>")
    assert isinstance(row, RowType)
    assert row.field_names() == ["a", "b"] and row.field_types() == [DataTypes.INT(), DataTypes.STRING()]
    assert row["b"].data_type == DataTypes.STRING() and row[0].name == "a" and len(row) == 2
    assert row.field_index("b") == 1
    with pytest.raises(ValidationException, match=r"expected one of the fields \['a', 'b'\]; got 'c'"):
        row.field_index("c")
    assert DataTypes.TIMESTAMP(3).has_family(LogicalTypeFamily.TIMESTAMP)
    assert DataTypes.TIME().has_family(LogicalTypeFamily.TIME)
    assert DataTypes.DOUBLE().has_family(LogicalTypeFamily.APPROXIMATE_NUMERIC)
    assert DataTypes.CHAR(2).has_family(LogicalTypeFamily.CHARACTER_STRING)
    assert DataTypes.MULTISET(DataTypes.INT()).has_family(LogicalTypeFamily.COLLECTION)
    interval = parse_type("INTERVAL DAY(3) TO SECOND(2)")
    assert isinstance(interval, DayTimeIntervalType)
    assert (interval.resolution, interval.day_precision, interval.fractional_precision) == (
        DayTimeResolution.DAY_TO_SECOND,
        3,
        2,
    )
    assert parse_type("INTERVAL YEAR(3)").resolution is YearMonthResolution.YEAR  # type: ignore[attr-defined]


def test_precision_and_scale_of_exact_numerics() -> None:
    assert [get_precision(parse_type(t)) for t in ("TINYINT", "SMALLINT", "INT", "BIGINT", "DECIMAL(7, 2)")] == [
        3,
        5,
        10,
        19,
        7,
    ]
    assert get_scale(DataTypes.INT()) == 0 and get_scale(DataTypes.DECIMAL(7, 2)) == 2
    assert get_precision(DataTypes.TIMESTAMP(3)) == 3
    with pytest.raises(ValidationException, match="expected an exact numeric type; got DOUBLE"):
        get_scale(DataTypes.DOUBLE())


def test_nullability_equality_and_hash() -> None:
    t = DataTypes.INT()
    assert t.not_null() != t and t.not_null().nullable() == t
    assert not t.not_null().is_nullable and t.is_nullable
    assert hash(parse_type("ARRAY<INT>")) == hash(DataTypes.ARRAY(DataTypes.INT()))
    assert DataTypes.VARCHAR(3) != DataTypes.CHAR(3)
    assert DataTypes.TIMESTAMP(3) != DataTypes.TIMESTAMP(3).with_kind(TimestampKind.ROWTIME)
    assert len({DataTypes.STRING(), parse_type("STRING"), parse_type("VARCHAR(2147483647)")}) == 1
    with pytest.raises(TableException, match="always nullable"):
        DataTypes.NULL().not_null()


def test_types_pickle_and_repr() -> None:
    t = parse_type("ROW<a DECIMAL(10, 2) NOT NULL, b MAP<STRING, TIMESTAMP_LTZ(3)>>")
    assert pickle.loads(pickle.dumps(t)) == t
    assert repr(DataTypes.INT()) == "IntType('INT')"
    assert DataTypes.INT.__name__ == "INT" and DataTypes.INT().type_name() == "INT"
