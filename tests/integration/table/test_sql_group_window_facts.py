"""The legacy SQL group window functions (``GROUP BY TUMBLE(ts, size)`` / ``HOP(ts, slide, size)`` /
``SESSION(ts, gap)`` with ``TUMBLE_START`` … in SELECT and HAVING) planned end to end against Flink 2.3's results of
the same queries (``tests/data/flink_sql/gw_*.txt``, written by ``gw_queries.py`` in PyFlink): the exact changelog
at parallelism 1, the rows as a set at parallelism 2, BATCH, and Flink's refusals with their line:column."""

from __future__ import annotations

import datetime
import decimal
import json
import re
from pathlib import Path
from typing import Any

import pytest

from strom.table import EnvironmentSettings, TableEnvironment
from strom.table.errors import ValidationException

DATA = Path(__file__).parents[2] / "data" / "flink_sql"
EXACT = [
    "tumble",
    "tumble_props",
    "tumble_no_window_in_select",
    "tumble_global",
    "tumble_having_where",
    "tumble_start_expr",
    "hop_having",
    "session",
    "nested",
]


def _env(parallelism: int = 1, streaming: bool = True) -> TableEnvironment:
    settings = EnvironmentSettings.in_streaming_mode() if streaming else EnvironmentSettings.in_batch_mode()
    t_env = TableEnvironment.create(settings)
    t_env.get_config().set("parallelism.default", str(parallelism))
    t_env.execute_sql(
        "CREATE TABLE bids (`user` STRING, amount INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) "
        f"WITH ('connector' = 'filesystem', 'path' = '{DATA / 'gw_bids.csv'}', 'format' = 'csv')"
    )
    return t_env


def _plain(value: Any) -> Any:
    if isinstance(value, datetime.datetime | datetime.date | datetime.time | decimal.Decimal):
        return str(value)
    return value


def _facts(file: str) -> tuple[str, list[str]]:
    lines = (DATA / file).read_text().splitlines()
    return lines[0][3:], [line if line.startswith("!!") else json.dumps(json.loads(line)) for line in lines[1:]]


def _run(query: str, parallelism: int = 1, streaming: bool = True) -> list[str]:
    rows = list(_env(parallelism, streaming).execute_sql(query).collect())
    return [json.dumps({"kind": str(r.get_row_kind()), "values": [_plain(v) for v in r]}) for r in rows]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", EXACT)
def test_group_window_changelog_is_flinks_in_flinks_order(name: str) -> None:
    query, expected = _facts(f"gw_{name}.txt")
    assert _run(query) == expected


@pytest.mark.timeout(120)
def test_hop_fires_flinks_windows_in_flinks_order() -> None:
    """Overlapping windows fire together; Flink orders the keys of one firing by its timer heap, strom by key
    arrival: the same windows in the same order, each window's rows as a set."""
    query, expected = _facts("gw_hop.txt")
    printed = _run(query)
    assert sorted(printed) == sorted(expected)

    def windows(rows: list[str]) -> list[Any]:
        return list(dict.fromkeys(tuple(json.loads(r)["values"][1:3]) for r in rows))

    assert windows(printed) == windows(expected)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", ["tumble", "hop", "session", "nested", "tumble_having_where"])
def test_group_window_rows_at_parallelism_2_are_flinks(name: str) -> None:
    query, expected = _facts(f"gw_{name}.txt")
    assert sorted(_run(query, parallelism=2)) == sorted(expected)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", ["tumble", "hop", "tumble_having_where"])
def test_group_window_rows_in_batch_are_flinks(name: str) -> None:
    query, expected = _facts(f"gw_batch_{name}.txt")
    assert sorted(_run(query, streaming=False)) == sorted(expected)


@pytest.mark.parametrize("name", ["error_start_without_window", "error_other_size"])
def test_an_auxiliary_function_without_its_group_window_is_refused_where_flink_refuses_it(name: str) -> None:
    query, (refusal,) = _facts(f"gw_{name}.txt")
    found = re.search(r"From line (\d+), column (\d+) .*?: (Call to auxiliary group function '\w+' must have)", refusal)
    assert found is not None
    line, column, message = found.groups()
    with pytest.raises(ValidationException, match=rf"at line {line}, column {column}: {message}"):
        _run(query)
