"""The row formats of the Kafka connector (PyFlink's ``pyflink.datastream.formats.json`` / ``csv`` / ``avro``):
round trips through their builders, Flink's field names and null handling, failures and ``ignore_parse_errors``."""

from __future__ import annotations

import datetime
import decimal
import pickle

import cloudpickle
import pytest
from hypothesis import given
from hypothesis import strategies as st

from strom.common import Row, Types
from strom.common.serialization import RowFieldExtractorSchema
from strom.datastream.formats.avro import AvroRowDeserializationSchema, AvroRowSerializationSchema
from strom.datastream.formats.csv import CsvRowDeserializationSchema, CsvRowSerializationSchema
from strom.datastream.formats.json import JsonRowDeserializationSchema, JsonRowSerializationSchema
from strom.exceptions import InvalidProgramError

ROW = Types.ROW([Types.INT(), Types.STRING()])
NAMED = Types.ROW_NAMED(
    ["id", "price", "ok", "day", "tags", "inner"],
    [
        Types.LONG(),
        Types.BIG_DEC(),
        Types.BOOLEAN(),
        Types.SQL_DATE(),
        Types.LIST(Types.STRING()),
        Types.ROW_NAMED(["x"], [Types.DOUBLE()]),
    ],
)


def test_json_rows_round_trip_with_flink_s_field_names() -> None:
    ser = JsonRowSerializationSchema.Builder().with_type_info(ROW).build()
    de = JsonRowDeserializationSchema.Builder().type_info(ROW).build()
    assert ser.serialize((1, "hi")) == b'{"f0":1,"f1":"hi"}'
    back = de.deserialize(ser.serialize(Row(2, "hé")))
    assert list(back) == [2, "hé"] and back.get_field_names() == ["f0", "f1"]
    assert list(de.deserialize(b'{"f0":3}')) == [3, None]  # a missing field is null


def test_json_nested_types_and_a_json_schema() -> None:
    row = Row(7, decimal.Decimal("1.5"), True, datetime.date(2026, 11, 27), ["a", "b"], Row(x=2.5))
    data = JsonRowSerializationSchema.builder().with_type_info(NAMED).build().serialize(row)
    back = JsonRowDeserializationSchema.builder().type_info(NAMED).build().deserialize(data)
    assert list(back) == list(row) and back.as_dict()["inner"] == Row(x=2.5)
    schema = '{"type": "object", "properties": {"id": {"type": "integer"}, "at": {"type": "string", "format": "date"}}}'
    got = JsonRowDeserializationSchema.builder().json_schema(schema).build().deserialize(b'{"id":1,"at":"2026-01-02"}')
    assert got.as_dict() == {"id": 1, "at": datetime.date(2026, 1, 2)}


def test_json_failures_and_ignore_parse_errors() -> None:
    strict = JsonRowDeserializationSchema.builder().type_info(ROW).fail_on_missing_field().build()
    with pytest.raises(ValueError, match=r"expected the field\(s\) \['f1'\]"):
        strict.deserialize(b'{"f0": 1}')
    with pytest.raises(ValueError):
        strict.deserialize(b"not json")
    lenient = JsonRowDeserializationSchema.builder().type_info(ROW).ignore_parse_errors().build()
    assert lenient.deserialize(b"not json") is None
    assert lenient.deserialize(b'{"f0": "x"}') is None  # not an INT
    with pytest.raises(TypeError, match="Typeinfo should be set"):
        JsonRowSerializationSchema.builder().build()
    with pytest.raises(TypeError, match="a RowTypeInfo"):
        JsonRowDeserializationSchema.builder().type_info(Types.INT()).build()


def test_csv_rows_round_trip_with_quotes_arrays_and_nulls() -> None:
    row_type = Types.ROW([Types.INT(), Types.STRING(), Types.BASIC_ARRAY(Types.INT()), Types.DOUBLE()])
    ser = CsvRowSerializationSchema.Builder(row_type).build()
    de = CsvRowDeserializationSchema.Builder(row_type).build()
    data = ser.serialize(Row(1, 'say "hi", then', [1, 2], None))
    assert data == b'1,"say ""hi"", then",1;2,\n'
    assert list(de.deserialize(data)) == [1, 'say "hi", then', [1, 2], None]
    piped = CsvRowSerializationSchema.Builder(ROW).set_field_delimiter("|").set_line_delimiter("").build()
    assert piped.serialize((5, "a")) == b"5|a"
    nulls = CsvRowDeserializationSchema.Builder(ROW).set_field_delimiter("|").set_null_literal("NULL").build()
    assert list(nulls.deserialize(b"NULL|NULL")) == [None, None]


def test_csv_failures_and_ignore_parse_errors() -> None:
    de = CsvRowDeserializationSchema.Builder(ROW).build()
    with pytest.raises(ValueError, match="expected 2 CSV fields"):
        de.deserialize(b"1,a,extra")
    with pytest.raises(ValueError):
        de.deserialize(b"one,a")
    lenient = CsvRowDeserializationSchema.Builder(ROW).set_ignore_parse_errors(True).build()
    assert lenient.deserialize(b"one,a") is None
    with pytest.raises(TypeError, match="must not be None"):
        CsvRowSerializationSchema.Builder(None)  # type: ignore[arg-type]


AVRO = """{"type": "record", "name": "TestRecord", "fields": [
    {"name": "id", "type": "int"}, {"name": "name", "type": "string"},
    {"name": "inner", "type": ["null", {"type": "record", "name": "Inner", "fields": [{"name": "x", "type": "long"}]}],
     "default": null}]}"""


def test_avro_rows_round_trip_with_a_nested_record_and_pickle() -> None:
    ser = AvroRowSerializationSchema(avro_schema_string=AVRO)
    de = AvroRowDeserializationSchema(avro_schema_string=AVRO)
    assert de.deserialize(ser.serialize((1, "hi", None))) == Row(id=1, name="hi", inner=None)
    back = de.deserialize(ser.serialize(Row(2, "yo", Row(x=5))))
    assert back.as_dict(recursive=True) == {"id": 2, "name": "yo", "inner": {"x": 5}}
    for dumps in (pickle.dumps, cloudpickle.dumps):
        again = pickle.loads(dumps(de))
        assert list(again.deserialize(ser.serialize((3, "z", None)))) == [3, "z", None]
    with pytest.raises(InvalidProgramError, match="avro_schema_string"):
        AvroRowSerializationSchema(record_class="com.example.Rec")


@given(
    st.lists(
        st.tuples(st.integers(-(2**31), 2**31 - 1), st.text(st.characters(exclude_categories=("Cs",)))), max_size=20
    )
)
def test_every_row_format_reads_back_what_it_wrote(rows: list[tuple[int, str]]) -> None:
    schemas = [
        (
            JsonRowSerializationSchema.builder().with_type_info(ROW).build(),
            JsonRowDeserializationSchema.builder().type_info(ROW).build(),
        ),
        (CsvRowSerializationSchema.Builder(ROW).build(), CsvRowDeserializationSchema.Builder(ROW).build()),
    ]
    for ser, de in schemas:
        for i, s in rows:
            if "\r" in s or "\n" in s:
                continue  # a CSV line of one record: line breaks in a cell are quoted but the trailing one strips
            assert tuple(de.deserialize(ser.serialize((i, s)))) == (i, s)


def test_row_field_extractor_takes_a_bytes_field() -> None:
    assert RowFieldExtractorSchema(1).serialize(Row(b"k", b"v")) == b"v"
    assert RowFieldExtractorSchema(0).serialize(Row(None, b"v")) is None
    with pytest.raises(TypeError, match="expected bytes in field 0"):
        RowFieldExtractorSchema(0).serialize(Row("k", b"v"))
    with pytest.raises(ValueError, match="non-negative"):
        RowFieldExtractorSchema(-1)


def test_the_deserialization_schemas_give_their_row_type_to_the_kafka_source() -> None:
    assert JsonRowDeserializationSchema.builder().type_info(ROW).build().get_produced_type() is ROW
    assert CsvRowDeserializationSchema.Builder(ROW).build().get_produced_type() is ROW
    avro = AvroRowDeserializationSchema(avro_schema_string=AVRO).get_produced_type()
    assert repr(avro) == repr(
        Types.ROW_NAMED(["id", "name", "inner"], [Types.INT(), Types.STRING(), Types.ROW_NAMED(["x"], [Types.LONG()])])
    )
