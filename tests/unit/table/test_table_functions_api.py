"""The function-binding API of contract §4: resolve_function / resolve_operator / cast_function."""

from __future__ import annotations

import datetime
import decimal

import pytest

from strom.table.errors import TableRuntimeException, ValidationException
from strom.table.functions import (
    BoundFunction,
    FunctionContext,
    case_result_type,
    cast_function,
    function_names,
    resolve_function,
    resolve_operator,
)
from strom.table.types import DataTypes, parse_type

INT, STRING, BOOL = DataTypes.INT(), DataTypes.STRING(), DataTypes.BOOLEAN()


def test_bound_function_is_frozen_with_result_type_and_call() -> None:
    bound = resolve_operator("+", [INT, DataTypes.BIGINT(False)])
    assert isinstance(bound, BoundFunction)
    assert str(bound.result_type) == "BIGINT" and bound.call(1, 2) == 3 and bound.call(None, 2) is None
    with pytest.raises(AttributeError):
        bound.name = "x"  # type: ignore[misc]


def test_unknown_function_and_wrong_arguments_say_expected_got() -> None:
    with pytest.raises(ValidationException, match=r"NO_SUCH: expected a built-in function.*got NO_SUCH\(INT\)"):
        resolve_function("NO_SUCH", [INT])
    with pytest.raises(ValidationException, match=r"UPPER: expected UPPER\(STRING\); got UPPER\(INT\)"):
        resolve_function("upper", [INT])
    with pytest.raises(ValidationException, match=r"\+: expected numeric operands"):
        resolve_operator("+", [STRING, INT])
    with pytest.raises(ValidationException, match="implicit type conversion between VARCHAR and INTEGER"):
        resolve_operator("=", [STRING, INT])
    with pytest.raises(ValidationException, match=r"CAST: expected a target type .*got CAST\(DATE AS TIME\(0\)\)"):
        cast_function(DataTypes.DATE(), DataTypes.TIME())


def test_three_valued_logic() -> None:
    and_, or_, not_ = (resolve_operator(op, [BOOL, BOOL][: 1 if op == "NOT" else 2]) for op in ("AND", "OR", "NOT"))
    table = [(True, None), (False, None), (None, None), (True, False)]
    assert [and_.call(a, b) for a, b in table] == [None, False, None, False]
    assert [or_.call(a, b) for a, b in table] == [True, None, None, True]
    assert [not_.call(v) for v in (True, None)] == [False, None]
    assert resolve_operator("AND", [BOOL, BOOL, BOOL]).call(True, None, False) is False


def test_like_and_in_with_values_known_only_at_run_time() -> None:
    like = resolve_operator("LIKE", [STRING, STRING])
    assert [like.call("abc", "a%"), like.call("abc", "_b_"), like.call("a", None)] == [True, True, None]
    escaped = resolve_operator("NOT LIKE", [STRING, STRING, STRING])
    assert escaped.call("a%", "a!%", "!") is False
    in_ = resolve_operator("IN", [INT, INT, INT])
    assert [in_.call(1, 1, 2), in_.call(3, 1, None), in_.call(3, 1, 2)] == [True, None, False]
    literal_in = resolve_operator("IN", [INT, INT, INT], literals=[None, 1, 2])
    assert [literal_in.call(2), literal_in.call(3)] == [True, False]


def test_cast_and_try_cast() -> None:
    to_int = cast_function(STRING, INT)
    assert to_int(" 42 ") == 42 and to_int(None) is None
    with pytest.raises(TableRuntimeException, match="use TRY_CAST"):
        to_int("abc")
    assert cast_function(STRING, INT, try_cast=True)("abc") is None
    to_dec = cast_function(DataTypes.DOUBLE(), DataTypes.DECIMAL(10, 2))
    assert to_dec(1.005) == decimal.Decimal("1.01")
    ltz = cast_function(
        DataTypes.TIMESTAMP(3), DataTypes.TIMESTAMP_LTZ(3), context=FunctionContext(local_time_zone="Asia/Shanghai")
    )
    assert ltz(datetime.datetime(2024, 1, 1, 8)) == datetime.datetime(2024, 1, 1, 0)


def test_case_result_type_and_session_time_zone() -> None:
    assert str(case_result_type([INT.not_null(), DataTypes.DECIMAL(2, 1).not_null()])) == "DECIMAL(11, 1) NOT NULL"
    assert str(case_result_type([INT.not_null()], has_else=False)) == "INT"
    fixed = datetime.datetime(2024, 1, 1, 23, 30)
    ctx = FunctionContext(local_time_zone="Asia/Shanghai", now=lambda: fixed)
    today = resolve_function("CURRENT_DATE", [], context=ctx)
    assert today.call() == datetime.date(2024, 1, 2) and not today.deterministic
    hour = resolve_function("HOUR", [DataTypes.TIMESTAMP_LTZ(3)], context=ctx)
    assert hour.call(fixed) == 7


def test_function_names_cover_the_families() -> None:
    names = set(function_names())
    assert {"UPPER", "ROUND", "COALESCE", "DATE_FORMAT", "JSON_VALUE", "CARDINALITY", "UUID", "FLOOR"} <= names


def test_decimal_arithmetic_overflow_is_null() -> None:
    big = parse_type("DECIMAL(38, 0)")
    mul = resolve_operator("*", [big, big])
    assert str(mul.result_type) == "DECIMAL(38, 0)"
    assert mul.call(decimal.Decimal(10) ** 37, decimal.Decimal(10)) is None


def test_sql_literal_types_are_flinks() -> None:
    from strom.table.functions.sql_literals import (
        binary_literal,
        numeric_literal,
        parse_interval_literal,
        string_literal,
        temporal_literal,
    )

    assert [str(numeric_literal(t)[0]) for t in ("1", "2147483648", "-2147483648", "1.50", "1e3")] == [
        "INT NOT NULL",
        "BIGINT NOT NULL",
        "INT NOT NULL",
        "DECIMAL(3, 2) NOT NULL",
        "DOUBLE NOT NULL",
    ]
    assert str(string_literal("abc")[0]) == "CHAR(3) NOT NULL" and str(string_literal("")[0]) == "CHAR(0) NOT NULL"
    assert binary_literal("0aff") == (DataTypes.BINARY(2, False), b"\x0a\xff")
    assert str(temporal_literal("TIMESTAMP", "2024-01-01 12:00:00.123")[0]) == "TIMESTAMP(3) NOT NULL"
    assert str(temporal_literal("TIME", "10:11:12")[0]) == "TIME(0) NOT NULL"
    interval_type, value = parse_interval_literal("1 02:03:04.5", "DAY", "SECOND")
    assert (str(interval_type), value) == ("INTERVAL SECOND(3)", datetime.timedelta(days=1, seconds=7384.5))
    assert parse_interval_literal("1-2", "YEAR", "MONTH")[1] == 14
    with pytest.raises(ValidationException, match="DATE literal: expected a valid date"):
        temporal_literal("DATE", "2024-02-30")
