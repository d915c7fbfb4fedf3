"""The filesystem connector's csv and json lines: values written as Flink 2.3's formats write them (the cells of
``tests/data/flink_sql/fs/fs_partitions.txt`` and of sqlconn's Flink facts: ``1E+2``, a TIMESTAMP_LTZ with ``Z``,
bytes in base64, csv cells with a space quoted) and read back to the same Python values."""

from __future__ import annotations

import datetime
import decimal

import pytest

from strom.api.row import Row
from strom.table.connectors.filesystem import _LineFormatter, _LineParser
from strom.table.types import DataTypes

NAMES = ("id", "price", "ts", "ltz", "b", "dbl", "name", "ok", "n")
TYPES = (
    DataTypes.BIGINT(),
    DataTypes.DECIMAL(10, 2),
    DataTypes.TIMESTAMP(3),
    DataTypes.TIMESTAMP_LTZ(3),
    DataTypes.BYTES(),
    DataTypes.DOUBLE(),
    DataTypes.STRING(),
    DataTypes.BOOLEAN(),
    DataTypes.INT(),
)
VALUES = [
    7,
    decimal.Decimal("100.00"),
    datetime.datetime(2024, 1, 2, 3, 4, 5, 500000),
    datetime.datetime(2024, 1, 2, 3, 4, 5, 120000),
    b"\x00\x01",
    1.5,
    'a "b", c',
    True,
    None,
]
LINES = {
    "csv": '7,1E+2,"2024-01-02 03:04:05.5","2024-01-02 03:04:05.12Z",AAE=,1.5,"a ""b"", c",true,',
    "json": '{"id":7,"price":1E+2,"ts":"2024-01-02 03:04:05.5","ltz":"2024-01-02 03:04:05.12Z","b":"AAE=",'
    '"dbl":1.5,"name":"a \\"b\\", c","ok":true,"n":null}',
}


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_lines_are_written_as_flink_writes_them_and_read_back(fmt: str) -> None:
    line = _LineFormatter(fmt, NAMES, ",", tuple(range(len(NAMES))), TYPES)(Row(*VALUES))
    assert line == LINES[fmt]
    assert _LineParser(fmt, NAMES, TYPES, ",", None).values(line) == VALUES


def test_partition_columns_stay_out_of_the_line() -> None:
    formatter = _LineFormatter("csv", ("id", "name"), ",", (0, 2), (DataTypes.BIGINT(), DataTypes.STRING()))
    assert formatter(Row(1, "2024-01-01", "x")) == "1,x"
