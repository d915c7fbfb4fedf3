"""Window SQL planned end to end (``TableEnvironment.execute_sql``) against Flink 2.3's results of the same queries
(``tests/data/flink_window``, written by ``flink_window_facts.py`` in PyFlink): session windows, window
deduplication and interval joins, at parallelism 1 and as a set at parallelism 2. Two-input queries compare as sets
(their inputs interleave in an order neither Flink nor strom fixes)."""

from __future__ import annotations

import datetime
import decimal
import json
from pathlib import Path
from typing import Any

import pytest

from strom.table import EnvironmentSettings, TableEnvironment
from strom.table.errors import TableException

DATA = Path(__file__).parents[2] / "data" / "flink_window"


def _env(parallelism: int = 1) -> TableEnvironment:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", str(parallelism))
    for name, second in (("bids", "amount INT"), ("clicks", "page STRING")):
        t_env.execute_sql(
            f"CREATE TABLE {name} (`user` STRING, {second}, ts TIMESTAMP(3), "
            "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'filesystem', "
            f"'path' = '{DATA / (name + '.csv')}', 'format' = 'csv')"
        )
    return t_env


def _plain(value: Any) -> Any:
    if isinstance(value, datetime.datetime | datetime.date | datetime.time | decimal.Decimal):
        return str(value)
    return value


def _facts(name: str) -> tuple[str, list[str]]:
    lines = (DATA / f"{name}.txt").read_text().splitlines()
    return lines[0][3:], [json.dumps(json.loads(line)) for line in lines[1:]]


def _run(query: str, parallelism: int = 1) -> list[str]:
    rows = list(_env(parallelism).execute_sql(query).collect())
    return [json.dumps({"kind": str(r.get_row_kind()), "values": [_plain(v) for v in r]}) for r in rows]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", ["agg_tumble", "dedup_first", "dedup_last", "agg_session", "tvf_session"])
def test_one_input_window_query_is_flinks_in_flinks_order(name: str) -> None:
    query, expected = _facts(name)
    assert _run(query) == expected


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", ["interval_join_inner", "interval_join_left", "interval_join_full"])
def test_interval_join_is_flinks(name: str) -> None:
    query, expected = _facts(name)
    assert sorted(_run(query)) == sorted(expected)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", ["agg_session", "tvf_session", "dedup_last", "interval_join_full"])
def test_results_at_parallelism_2_are_flinks(name: str) -> None:
    query, expected = _facts(name)
    assert sorted(_run(query, parallelism=2)) == sorted(expected)


def test_session_aggregate_grouped_by_other_keys_than_its_partition_is_refused() -> None:
    query = (
        "SELECT window_start, window_end, COUNT(*) FROM TABLE(SESSION(TABLE bids PARTITION BY `user`, "
        "DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end"
    )
    with pytest.raises(TableException, match="expected GROUP BY window_start, window_end, user"):
        _run(query)


def test_right_interval_join_with_the_inputs_swapped_is_flinks_left_join() -> None:
    query = (
        "SELECT b.`user`, b.amount, c.page, b.ts, c.ts FROM clicks c RIGHT JOIN bids b ON c.`user` = b.`user` "
        "AND c.ts + INTERVAL '3' SECOND >= b.ts AND c.ts - INTERVAL '2' SECOND <= b.ts"
    )
    _, expected = _facts("interval_join_left")
    assert "IntervalJoin(joinType=[RIGHT], windowBounds=[isRowTime=true, leftLowerBound=-3000" in (
        _env().sql_query(query).explain()
    )
    assert sorted(_run(query)) == sorted(expected)
