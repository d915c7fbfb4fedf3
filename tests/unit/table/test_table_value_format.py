"""value_format prints what PyFlink 2.3 prints: TableResult.print() tables and the print connector's rows.

``tests/data/flink_types/print_output.txt`` is PyFlink's output of ``probe_print.py`` (beside it), with the result
column types in ``print_queries.json``; the rows below are the values of those queries as strom holds them.
"""

from __future__ import annotations

import datetime
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from strom.api.row import Row, RowKind
from strom.table.types import DataType, DataTypes, parse_type
from strom.table.value_format import format_value, print_table, row_to_string

DATA = Path(__file__).parents[2] / "data" / "flink_types"
ZONE = "Asia/Shanghai"  # the probe's table.local-time-zone
INS, UB, UA = RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER

VALUES = [
    (INS, [1, "Alice", Decimal("1.50"), True, 2.5, datetime.date(2024, 1, 1)]),
    (INS, [22, "Bob with a much longer name than thirty chars", Decimal("-12.25"), False, 1.0e10,
         datetime.date(2024, 12, 31)]),
    (INS, [None] * 6),
]  # fmt: skip
TYPES_ROW = [
    1, 2, 3, 1.5, datetime.datetime(2024, 1, 1, 12), datetime.datetime(2024, 1, 1, 12),
    datetime.datetime(2024, 1, 1, 12, 0, 0, 123456), datetime.datetime(2024, 1, 1, 4),  # LTZ: 12:00 in Shanghai
    datetime.time(10, 11, 12), datetime.time(10, 11, 12, 500000), b"\x0a\xff", b"abc", [1, 2], ["x", None],
    {"k": 1}, Row(1, "a"), datetime.timedelta(days=1, hours=2, minutes=3, seconds=4.5), 14, "ab  ", "中文字符",
    1.0, 0.1,
]  # fmt: skip
ROWS: dict[str, list[tuple[RowKind, list[Any]]]] = {
    "values": VALUES,
    "types": [(INS, TYPES_ROW)],
    "empty": [],
    "one": [(INS, [1])],
}
BATCH_AGG = [(INS, ["a", 2, 4]), (INS, ["b", 1, 2])]
STREAMING_AGG = [(INS, ["a", 1, 1]), (INS, ["b", 1, 2]), (UB, ["a", 1, 1]), (UA, ["a", 2, 4])]


def _flink_output() -> dict[str, str]:
    blocks: dict[str, list[str]] = {}
    name = ""
    for line in (DATA / "print_output.txt").read_text().splitlines():
        if line.startswith("### "):
            name = line[4:]
            blocks[name] = []
        else:
            blocks[name].append(line)
    return {k: "\n".join(v) + "\n" for k, v in blocks.items()}


FLINK = _flink_output()
QUERIES = json.loads((DATA / "print_queries.json").read_text())


def _columns(key: str) -> tuple[list[str], list[DataType]]:
    columns = QUERIES[key]["columns"]
    return [c for c, _ in columns], [parse_type(t) for _, t in columns]


@pytest.mark.parametrize("mode", ["batch", "streaming"])
@pytest.mark.parametrize("query", ["values", "types", "agg", "empty", "one"])
def test_print_table_is_flinks_tableau(mode: str, query: str) -> None:
    names, types = _columns(f"{mode}/{query}")
    rows = ROWS.get(query) or (BATCH_AGG if mode == "batch" else STREAMING_AGG) if query == "agg" else ROWS[query]
    text = print_table(names, types, rows, changelog=mode == "streaming", time_zone=ZONE)
    ours, flinks = text.splitlines(), FLINK[f"{mode}/{query}"].splitlines()
    # header and footer exactly; the rows of a BATCH result come in any order (parallel sources)
    assert (ours[:3], ours[-2:]) == (flinks[:3], flinks[-2:])
    body_ours, body_flink = ours[3:-2], flinks[3:-2]
    assert (body_ours if mode == "streaming" else sorted(body_ours)) == (
        body_flink if mode == "streaming" else sorted(body_flink)
    )


@pytest.mark.parametrize("query", ["values", "types", "agg"])
def test_row_to_string_is_the_print_connectors_line(query: str) -> None:
    names, types = _columns(f"print/{query}")
    all_names, _ = _columns(f"streaming/{query}")
    rows = STREAMING_AGG if query == "agg" else ROWS[query]
    keep = [all_names.index(n) for n in names]
    lines = [row_to_string(Row.of_kind(kind, *[values[i] for i in keep]), types) for kind, values in rows]
    assert sorted(lines) == sorted(FLINK[f"print/{query}"].splitlines())


def test_format_value_of_single_cells() -> None:
    assert format_value(None, DataTypes.INT()) == "<NULL>"
    assert format_value(True, DataTypes.BOOLEAN()) == "TRUE"
    assert format_value(Decimal("1.5"), DataTypes.DECIMAL(10, 2)) == "1.50"
    assert format_value(datetime.datetime(2024, 1, 1, 12), DataTypes.TIMESTAMP(3)) == "2024-01-01 12:00:00.000"
    ltz = format_value(datetime.datetime(2024, 1, 1, 4), DataTypes.TIMESTAMP_LTZ(3), time_zone=ZONE)
    assert ltz == "2024-01-01 12:00:00.000"
    assert format_value([1, None], DataTypes.ARRAY(DataTypes.INT())) == "[1, NULL]"
    assert format_value(b"\x0a\xff", DataTypes.BYTES()) == "x'0aff'"
