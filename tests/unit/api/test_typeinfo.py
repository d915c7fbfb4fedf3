"""PyFlink's Types: values are converted as PyFlink's coders give them back, and printed as Flink's Java side
prints them (Tuple.toString, Double/Float.toString, Row as PyFlink's print)."""

from __future__ import annotations

import datetime
import decimal
import math

import pytest

from strom import Row
from strom.api.typeinfo import (
    TypeInformation,
    Types,
    batch_converter,
    fast_converter,
    java_double_string,
    java_float_string,
)
from strom.common import Types as CommonTypes
from strom.common.typeinfo import Types as TypeinfoTypes


def test_the_pyflink_paths_name_the_same_types() -> None:
    assert CommonTypes is Types is TypeinfoTypes
    assert Types.INT() == Types.INT() and Types.INT() != Types.LONG()
    assert Types.TUPLE([Types.STRING(), Types.INT()]) == Types.TUPLE([Types.STRING(), Types.INT()])
    assert isinstance(Types.ROW_NAMED(["a"], [Types.INT()]), TypeInformation)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (110.1, "110.1"),
        (1e10, "1.0E10"),
        (1e-4, "1.0E-4"),
        (0.001, "0.001"),
        (1234567.0, "1234567.0"),
        (12345678.0, "1.2345678E7"),
        (-1.5e-7, "-1.5E-7"),
        (100.0, "100.0"),
        (0.1 + 0.2, "0.30000000000000004"),
        (3.3333333333333335e9, "3.3333333333333335E9"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (math.inf, "Infinity"),
        (-math.inf, "-Infinity"),
        (math.nan, "NaN"),
    ],
)
def test_doubles_print_as_javas_double_to_string(value: float, text: str) -> None:
    assert java_double_string(value) == text


def test_floats_are_32_bits_and_print_as_javas_float_to_string() -> None:
    f = Types.FLOAT().converter()
    assert f(110.1) == 110.0999984741211 and f(2.25) == 2.25 and f(3) == 3.0
    assert [java_float_string(f(v)) for v in (110.1, 0.1, 1e10, 16777217.0)] == [
        "110.1",
        "0.1",
        "1.0E10",
        "1.6777216E7",
    ]
    with pytest.raises(ValueError, match="within 32 bits"):
        f(1e39)
    with pytest.raises(TypeError, match="expected a float for FLOAT; got 'x'"):
        f("x")


@pytest.mark.parametrize(
    ("kind", "low", "high"),
    [
        (Types.BYTE(), -128, 127),
        (Types.SHORT(), -(2**15), 2**15 - 1),
        (Types.INT(), -(2**31), 2**31 - 1),
        (Types.LONG(), -(2**63), 2**63 - 1),
    ],
)
def test_integer_types_hold_their_java_range_and_nothing_else(kind: TypeInformation, low: int, high: int) -> None:
    convert = kind.converter()
    assert convert(low) == low and convert(high) == high
    for outside in (low - 1, high + 1):
        with pytest.raises(ValueError, match=r"expected an int in \["):
            convert(outside)
    with pytest.raises(TypeError, match="expected an int"):
        convert(1.5)
    with pytest.raises(TypeError, match="expected an int"):
        convert(True)


def test_tuples_convert_their_fields_and_print_as_flinks_tuple() -> None:
    t = Types.TUPLE([Types.STRING(), Types.INT(), Types.FLOAT(), Types.BOOLEAN(), Types.DOUBLE()])
    value = t.converter()(["a", 5, 1.1, True, 2])
    assert value == ("a", 5, 1.100000023841858, True, 2.0) and type(value) is tuple
    assert t.formatter()(value) == "(a,5,1.1,true,2.0)"
    with pytest.raises(TypeError, match="a tuple of 5 fields"):
        t.converter()(("a", 5))
    with pytest.raises(TypeError, match="in the tuple"):
        t.converter()(("a", "five", 1.0, True, 2.0))


def test_named_rows_give_rows_with_attributes_and_print_as_pyflinks_print() -> None:
    t = Types.ROW_NAMED(["id", "name", "score"], [Types.INT(), Types.STRING(), Types.FLOAT()])
    row = t.converter()((1, "ann", 1.1))
    assert isinstance(row, Row) and row.id == 1 and row.name == "ann" and row.score == 1.100000023841858
    assert t.formatter()(row) == "+I[1,ann,1.100000023841858]"
    assert t.get_field_names() == ["id", "name", "score"]
    positional = Types.ROW([Types.STRING(), Types.LIST(Types.INT())]).converter()(Row("x", (1, 2)))
    assert tuple(positional) == ("x", [1, 2])
    assert str(positional) == "Row(f0='x', f1=[1, 2])"  # PyFlink's rows of Types.ROW carry the names f0, f1, ...
    keyword = Row(name="a", n=5)  # PyFlink 2.x keeps the order of the keywords
    assert keyword.as_dict() == {"name": "a", "n": 5} and tuple(keyword) == ("a", 5)
    assert Types.ROW_NAMED(["name", "n"], [Types.STRING(), Types.INT()]).converter()(keyword) == keyword
    with pytest.raises(ValueError, match="one str name per field"):
        Types.ROW_NAMED(["a"], [Types.INT(), Types.INT()])


def test_collections_decimals_and_times() -> None:
    m = Types.MAP(Types.STRING(), Types.LONG())
    assert m.formatter()(m.converter()({"a": 1, "b": 2})) == "{a=1, b=2}"
    arrays = [Types.LIST(Types.INT()), Types.PRIMITIVE_ARRAY(Types.INT()), Types.BASIC_ARRAY(Types.INT())]
    assert {a.formatter()(a.converter()((1, 2))) for a in arrays} == {"[1, 2]"}
    d = Types.BIG_DEC()
    assert d.formatter()(d.converter()(decimal.Decimal("0.125"))) == "0.125"
    assert d.formatter()(decimal.Decimal("1E+3")) == "1E+3"  # BigDecimal.toString of unscaled 1, scale -3
    ts = Types.SQL_TIMESTAMP()
    assert ts.formatter()(datetime.datetime(2021, 1, 1)) == "2021-01-01 00:00:00.0"
    assert ts.formatter()(datetime.datetime(2021, 1, 1, 1, 2, 3, 450000)) == "2021-01-01 01:02:03.45"
    assert Types.SQL_DATE().formatter()(datetime.date(2021, 2, 3)) == "2021-02-03"
    assert Types.PICKLED_BYTE_ARRAY().converter()({"any": object}) == {"any": object}
    with pytest.raises(TypeError, match="expected a str for STRING"):
        Types.STRING().converter()(5)


def test_batch_and_fast_converters_agree_with_the_converter() -> None:
    t = Types.TUPLE([Types.LONG(), Types.STRING(), Types.INT(), Types.BOOLEAN(), Types.DOUBLE()])
    assert t.fits_expr("v") is not None  # a tuple of basic types is tested without converting
    convert, batch = t.converter(), batch_converter(t)
    values = [(1, "a", 2, True, 0.5), [1, "a", 2, False, 1], (None, None, None, None, None), (1, "a", 2, True, 3)]
    assert (
        batch(values)
        == [convert(v) for v in values]
        == [
            (1, "a", 2, True, 0.5),
            (1, "a", 2, False, 1.0),
            (None, None, None, None, None),
            (1, "a", 2, True, 3.0),
        ]
    )
    assert type(batch(values)[3][4]) is float  # an int for DOUBLE takes the converter's path
    for wrong in [(1, "a", 2**31, True, 0.5), (1, "a", True, True, 0.5), (1, "a", 2, 1, 0.5), (1, "a", 2, True)]:
        with pytest.raises((TypeError, ValueError)):
            batch([wrong])
    floats = Types.TUPLE([Types.STRING(), Types.FLOAT()])
    assert floats.fits_expr("v") is None  # FLOAT rounds to 32 bits: always converted
    assert batch_converter(floats)([("a", 1.1)]) == [("a", 1.100000023841858)]
    key = fast_converter(Types.STRING())
    assert key("k1") == "k1" and key(None) is None
    with pytest.raises(TypeError, match="a str for STRING"):
        key(1)


def test_a_batch_that_fits_passes_as_itself_and_one_that_does_not_is_converted_or_refused() -> None:
    t = Types.TUPLE([Types.LONG(), Types.STRING(), Types.TUPLE([Types.INT(), Types.BOOLEAN()]), Types.DOUBLE()])
    batch = batch_converter(t)
    fitting = [(1, "a", (2, True), 0.5), (-(2**63), "", (-(2**31), False), -1.0)]
    assert batch(fitting) is fitting
    assert batch([(1, "a", [2, True], 0.5)]) == [(1, "a", (2, True), 0.5)]  # a list field: converted
    assert batch([(None, None, (None, True), 3)]) == [(None, None, (None, True), 3.0)]
    for wrong in [
        (2**63, "a", (2, True), 0.5),  # beyond LONG
        (True, "a", (2, True), 0.5),  # a bool for LONG
        (1, 2, (2, True), 0.5),  # an int for STRING
        (1, "a", (2**31, True), 0.5),  # beyond INT, nested
        (1, "a", (2, True)),  # one field short
        (1, "a", (2, True), 0.5, 6),  # one field too many
        "abcd",  # not a tuple, four characters
    ]:
        with pytest.raises((TypeError, ValueError)):
            batch([*fitting, wrong])


def test_a_typed_key_selector_is_one_function_carrying_its_key_type() -> None:
    from strom.api.datastream import typed_key_selector
    from strom.runtime.state.state_backend import key_type_of

    selector = typed_key_selector(lambda v: v[0], Types.STRING())
    assert selector(("k", 1)) == "k" and selector((None, 1)) is None
    assert key_type_of(selector) == Types.STRING()
    with pytest.raises(TypeError, match="a str for STRING"):
        selector((1, 1))
    untyped = lambda v: v[0]  # noqa: E731
    assert typed_key_selector(untyped, None) is untyped


def test_a_key_that_does_not_fit_its_type_leaves_the_generated_frames_out_of_the_users_traceback() -> None:
    import cloudpickle

    from strom.api.datastream import typed_key_selector
    from strom.runtime.operators.user_traceback import format_user_traceback

    shipped = cloudpickle.loads(cloudpickle.dumps(typed_key_selector(lambda v: v[0], Types.STRING())))
    with pytest.raises(TypeError) as info:
        shipped((1, 1))
    text = format_user_traceback(info.value)
    assert "typeinfo_generated" not in text and "dynamic-code" not in text, text
    assert "expected a str for STRING" in text
