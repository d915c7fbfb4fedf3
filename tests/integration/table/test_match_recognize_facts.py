"""MATCH_RECOGNIZE planned end to end against Flink 2.3's results of the same queries
(``tests/data/flink_sql/match_*.txt``, written by ``temporal/temporal_facts.py`` in PyFlink) over
``temporal/ticks.csv``: quantifiers greedy and reluctant, optional and bounded, the skip strategies, WITHIN,
navigation and aggregates in MEASURES and DEFINE, MATCH_ROWTIME(); Flink's refusals (PREV, a greedy quantifier
last, a reluctant optional) with Flink's message. Rows compare as sets at parallelism 1 and 2 (partitions emit in
an order the watermark's timing decides)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest

from strom.table import EnvironmentSettings, TableEnvironment
from strom.table.errors import TableException, ValidationException

DATA = Path(__file__).parents[2] / "data" / "flink_sql"
NAMES = sorted(p.stem for p in DATA.glob("match_*.txt") if not p.stem.endswith(("_batch", "_then_window")))


def _env(parallelism: int = 1, batch: bool = False) -> TableEnvironment:
    settings = EnvironmentSettings.in_batch_mode() if batch else EnvironmentSettings.in_streaming_mode()
    t_env = TableEnvironment.create(settings)
    t_env.get_config().set("parallelism.default", str(parallelism))
    t_env.execute_sql(
        "CREATE TABLE ticks (sym STRING, price INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
        f"WITH ('connector' = 'filesystem', 'format' = 'csv', 'path' = '{DATA / 'temporal' / 'ticks.csv'}')"
    )
    return t_env


def _plain(value: Any) -> Any:
    return str(value) if isinstance(value, datetime.datetime) else value


def _facts(name: str) -> tuple[str, list[str], list[str] | None, str | None]:
    lines = (DATA / f"{name}.txt").read_text().splitlines()
    body = [json.loads(line) for line in lines[1:] if not line.startswith("-- p=2 ")]
    if body and "error" in body[0]:
        return lines[0][3:], [], None, str(body[0]["error"])
    final = [json.dumps(json.loads(r)) for r in json.loads(lines[-1][len("-- p=2 ") :])]
    return lines[0][3:], [json.dumps(b) for b in body], final, None


def _run(query: str, parallelism: int = 1) -> list[str]:
    rows = list(_env(parallelism).execute_sql(query).collect())
    return [json.dumps({"kind": str(r.get_row_kind()), "values": [_plain(v) for v in r]}) for r in rows]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", NAMES)
def test_match_recognize_is_flinks(name: str) -> None:
    query, expected, _, error = _facts(name)
    if error is not None:
        message = error.split("Exception: ", 1)[1].rstrip(".")
        expected = message.split(". ")[0].replace("(", r"\(").replace(")", r"\)")
        with pytest.raises((TableException, ValidationException), match=expected):
            _run(query)
        return
    assert sorted(_run(query)) == sorted(expected)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", ["match_v_shape", "match_measures", "match_star_range"])
def test_match_recognize_at_parallelism_2_is_flinks(name: str) -> None:
    query, _, final, _ = _facts(name)
    assert final is not None
    assert sorted(_run(query, parallelism=2)) == sorted(final)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", ["match_v_shape", "match_default_skip"])
def test_match_recognize_in_batch_mode_is_flinks(name: str) -> None:
    lines = (DATA / f"{name}_batch.txt").read_text().splitlines()
    rows = list(_env(batch=True).execute_sql(lines[0][3:]).collect())
    got = [json.dumps({"kind": str(r.get_row_kind()), "values": [_plain(v) for v in r]}) for r in rows]
    assert sorted(got) == sorted(json.dumps(json.loads(line)) for line in lines[1:])


@pytest.mark.parametrize(
    ("clause", "message"),
    [
        ("ORDER BY price", "You must specify either rowtime or proctime for order by as the first one"),
        ("ORDER BY ts MEASURES CLASSIFIER() AS c", r"CLASSIFIER\(\) in MATCH_RECOGNIZE"),
        ("ORDER BY ts MEASURES A.price AS p ALL ROWS PER MATCH", "ALL ROWS PER MATCH"),
        ("ORDER BY ts MEASURES A.price AS p AFTER MATCH SKIP TO LAST X", "names no pattern variable"),
    ],
)
def test_unsupported_clauses_are_refused_with_their_position(clause: str, message: str) -> None:
    query = f"SELECT * FROM ticks MATCH_RECOGNIZE (PARTITION BY sym {clause} PATTERN (A B) DEFINE A AS A.price > 1)"
    with pytest.raises(
        (TableException, ValidationException), match=f"{message}.*line 1, column|line 1, column.*{message}"
    ):
        _run(query)


@pytest.mark.timeout(120)
def test_match_state_on_rocksdb_at_parallelism_2() -> None:
    query, _, final, _ = _facts("match_skip_to_first")
    t_env = _env(parallelism=2)
    t_env.get_config().set("state.backend.type", "rocksdb")
    rows = list(t_env.execute_sql(query).collect())
    got = [json.dumps({"kind": str(r.get_row_kind()), "values": [_plain(v) for v in r]}) for r in rows]
    assert final is not None and sorted(got) == sorted(final)


def test_an_updating_input_is_refused_as_flink_does() -> None:
    query = (
        "SELECT * FROM (SELECT sym, MAX(price) AS price, MAX(ts) AS ts FROM ticks GROUP BY sym) MATCH_RECOGNIZE ("
        "PARTITION BY sym ORDER BY ts MEASURES A.price AS p PATTERN (A B) DEFINE A AS A.price > 1)"
    )
    with pytest.raises(TableException, match="Match Recognize doesn't support consuming update changes"):
        _run(query)


@pytest.mark.timeout(120)
def test_a_window_over_match_rowtime_is_flinks() -> None:
    t_env = _env()
    t_env.execute_sql(
        "CREATE TEMPORARY VIEW matched AS SELECT * FROM ticks MATCH_RECOGNIZE (PARTITION BY sym ORDER BY ts "
        "MEASURES A.price AS a, MATCH_ROWTIME() AS mt PATTERN (A B) DEFINE A AS A.price < 20, B AS B.price > A.price) "
        "AS T"
    )
    query, expected, _, _ = _facts("match_then_window")
    rows = list(t_env.execute_sql(query).collect())
    got = [json.dumps({"kind": str(r.get_row_kind()), "values": [_plain(v) for v in r]}) for r in rows]
    assert sorted(got) == sorted(expected)
