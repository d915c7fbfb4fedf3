"""The table formats (``json``, ``csv``, ``raw``, ``avro``) of the Kafka tables: Flink's text forms of SQL values
(SQL-standard timestamps, DECIMAL digits, base64 BYTES), parse errors and their ``ignore-parse-errors``."""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path

import pytest

from strom.table.errors import ValidationException
from strom.table.formats.format_factory import create_format, format_option_keys
from strom.table.types import parse_type

NAMES = ["id", "price", "ts", "ltz", "tags", "raw", "ok"]
TYPES = [
    parse_type(t)
    for t in ("INT", "DECIMAL(10, 2)", "TIMESTAMP(3)", "TIMESTAMP_LTZ(3)", "ARRAY<STRING>", "BYTES", "BOOLEAN")
]
ROW = [
    7,
    decimal.Decimal("12.30"),
    datetime.datetime(2024, 1, 2, 3, 4, 5, 500000),
    datetime.datetime(2024, 1, 2, 3, 4, 5),
    ["a", "b"],
    b"\x00\x01",
    True,
]


def test_json_writes_flinks_sql_text_forms_and_reads_them_back() -> None:
    fmt = create_format("json", NAMES, TYPES, {})
    data = fmt.serialize(ROW)
    assert data == (
        b'{"id":7,"price":12.3,"ts":"2024-01-02 03:04:05.5","ltz":"2024-01-02 03:04:05Z",'
        b'"tags":["a","b"],"raw":"AAE=","ok":true}'
    )
    assert fmt.deserialize(data) == [ROW[0], decimal.Decimal("12.3"), *ROW[2:]]


def test_json_iso_timestamps_missing_fields_and_non_text_nodes_as_strings() -> None:
    fmt = create_format(
        "json",
        ["ts", "s"],
        [parse_type("TIMESTAMP(3)"), parse_type("STRING")],
        {"json.timestamp-format.standard": "ISO-8601"},
    )
    assert fmt.serialize([datetime.datetime(2024, 1, 2, 3, 4, 5, 120000), None]) == (
        b'{"ts":"2024-01-02T03:04:05.12","s":null}'
    )
    assert fmt.deserialize(b'{"ts": "2024-01-02T03:04:05.12", "s": {"a": 1}}') == [
        datetime.datetime(2024, 1, 2, 3, 4, 5, 120000),
        '{"a":1}',
    ]
    assert fmt.deserialize(b"{}") == [None, None]


def test_json_parse_errors_fail_unless_ignored() -> None:
    types = [parse_type("INT")]
    with pytest.raises(ValueError):
        create_format("json", ["id"], types, {}).deserialize(b"{not json")
    assert create_format("json", ["id"], types, {"json.ignore-parse-errors": "true"}).deserialize(b"{x") is None
    strict = create_format("json", ["id"], types, {"json.fail-on-missing-field": "true"})
    with pytest.raises(ValueError, match="Could not find field with name 'id'"):
        strict.deserialize(b"{}")


def test_csv_round_trip_with_nulls_quotes_and_the_null_literal() -> None:
    names, types = ["id", "name", "ts"], [parse_type("INT"), parse_type("STRING"), parse_type("TIMESTAMP(3)")]
    fmt = create_format("csv", names, types, {})
    row = [1, "a, b", datetime.datetime(2024, 1, 2, 3, 4, 5)]
    assert fmt.serialize(row) == b'1,"a, b","2024-01-02 03:04:05"'
    assert fmt.deserialize(b'1,"a, b","2024-01-02 03:04:05"') == row
    assert fmt.deserialize(b",,") == [None, "", None]
    nulls = create_format("csv", names, types, {"csv.null-literal": "n/a", "csv.field-delimiter": ";"})
    assert nulls.serialize([None, None, None]) == b"n/a;n/a;n/a"
    assert nulls.deserialize(b"n/a;n/a;n/a") == [None, None, None]
    assert create_format("csv", names, types, {"csv.ignore-parse-errors": "true"}).deserialize(b"x,1") is None


def test_raw_is_one_column_in_its_charset_or_big_endian() -> None:
    assert create_format("raw", ["v"], [parse_type("STRING")], {}).serialize(["hé"]) == "hé".encode()
    assert create_format("raw", ["v"], [parse_type("INT")], {}).serialize([258]) == b"\x00\x00\x01\x02"
    little = create_format("raw", ["v"], [parse_type("BIGINT")], {"raw.endianness": "little-endian"})
    assert little.deserialize(b"\x02\x01\x00\x00\x00\x00\x00\x00") == [258]
    assert create_format("raw", ["v"], [parse_type("STRING")], {}).serialize([None]) is None
    with pytest.raises(ValidationException, match="single physical column"):
        create_format("raw", ["a", "b"], [parse_type("INT"), parse_type("INT")], {})


def test_avro_derives_flinks_schema_and_round_trips() -> None:
    pytest.importorskip("fastavro")
    names = ["id", "name", "price", "ts"]
    types = [parse_type(t) for t in ("INT NOT NULL", "STRING", "DECIMAL(10, 2)", "TIMESTAMP(3)")]
    fmt = create_format("avro", names, types, {})
    schema = fmt.schema_json  # type: ignore[attr-defined]
    assert '"name": "record"' in schema and '"type": "int"}, {"name": "name", "type": ["null", "string"]' in schema
    row = [1, "a", decimal.Decimal("1.50"), datetime.datetime(2024, 1, 2, 3, 4, 5, 123000)]
    assert fmt.deserialize(fmt.serialize(row) or b"") == row


def test_unknown_format_and_format_option_keys() -> None:
    with pytest.raises(ValidationException, match="Could not find any format factory for identifier 'xml'"):
        create_format("xml", ["a"], [parse_type("INT")], {}, table="t")
    assert "value.json.ignore-parse-errors" in format_option_keys("json", "value.")


FACTS = Path(__file__).resolve().parents[2] / "data" / "flink_sql"
# the row tests/data/flink_sql/sqlconn_formats.py writes with Flink 2.3
FLINK_COLUMNS = [
    ("id", "INT", 7),
    ("price", "DECIMAL(10, 2)", decimal.Decimal("100.00")),
    ("ts", "TIMESTAMP(3)", datetime.datetime(2024, 1, 2, 3, 4, 5, 500000)),
    ("ts0", "TIMESTAMP(3)", datetime.datetime(2024, 1, 2, 3, 4, 5)),
    ("ltz", "TIMESTAMP_LTZ(3)", datetime.datetime(2024, 1, 2, 3, 4, 5, 120000)),
    ("d", "DATE", datetime.date(2024, 1, 2)),
    ("t", "TIME(0)", datetime.time(3, 4, 5)),
    ("b", "BYTES", b"\x00\x01"),
    ("ok", "BOOLEAN", True),
    ("tags", "ARRAY<STRING>", ["a", "b"]),
    ("m", "MAP<STRING, INT>", {"k": 1}),
    ("dbl", "DOUBLE", 1.5),
    ("n", "STRING", None),
]


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_a_row_is_written_as_flink_writes_it(fmt: str) -> None:
    columns = [c for c in FLINK_COLUMNS if not (fmt == "csv" and c[0] == "m")]  # Flink's csv has no MAP
    encoder = create_format(fmt, [c[0] for c in columns], [parse_type(c[1]) for c in columns], {})
    expected = (FACTS / f"sqlconn_{fmt}_write.txt").read_text().splitlines()
    assert [(encoder.serialize([c[2] for c in columns]) or b"").decode()] == expected


def test_json_lines_are_read_as_flink_reads_them() -> None:
    types = [parse_type(t) for t in ("STRING", "INT", "TIMESTAMP(3)", "TIMESTAMP_LTZ(3)")]
    decoder = create_format("json", ["s", "i", "ts", "ltz"], types, {})
    lines = [
        b'{"s": {"a": 1}, "i": "42", "ts": "2024-01-02 03:04:05.12", "ltz": "2024-01-02 03:04:05.12Z", "x": 5}',
        b'{"s": 12.50, "i": 3}',
    ]
    got = [decoder.deserialize(line) for line in lines]
    at = datetime.datetime(2024, 1, 2, 3, 4, 5, 120000)
    assert got == [['{"a":1}', 42, at, at], ["12.50", 3, None, None]]
    flink = (FACTS / "sqlconn_json_read.txt").read_text().splitlines()  # Flink printed the timestamps as strings
    assert flink == [
        "('{\"a\":1}', 42, '2024-01-02 03:04:05.120', '2024-01-02 03:04:05.120')",
        "('12.50', 3, None, None)",
    ]
