"""NULL join keys, scalar subqueries of more than one row and joins without an equality, against Flink 2.3's own
output (tests/data/flink_sql/fix_*.txt, printed by PyFlink from fix_queries.py): the final table at parallelism 1
and 2 (two sources interleave as neither Flink nor strom fixes), the exact changelog where one input decides it,
and the job failure of a scalar subquery that returns a second row."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
from flink_facts import FactProgram, final_rows

from strom.table import EnvironmentSettings, TableEnvironment

DATA = Path(__file__).parents[2] / "data" / "flink_sql"
FILES = {"L_CSV": "L_ROWS", "R_CSV": "R_ROWS", "LE_CSV": "LE_ROWS", "RE_CSV": "RE_ROWS", "RV_CSV": "RV_ROWS"}


PROGRAM = FactProgram("fix_queries.py", FILES)
QUERIES = PROGRAM.queries
SETUP = PROGRAM.setup

NULL_KEYS = [
    "join_inner_null",
    "join_left_null",
    "join_full_null",
    "in_null",
    "exists_null",
    "not_exists_null",
    "scalar_count_null",
    "scalar_max_null",
    "intersect_null",
    "except_null",
    "interval_null",
    "interval_left_null",
    "window_join_null",
    "window_left_join_null",
    "temporal_null",  # Flink 2.3's event-time temporal join matches a NULL key with a NULL version key
    "temporal_left_null",
    "batch_join_left_null",
    "batch_exists_null",
    "batch_scalar_count_null",
    "batch_intersect_null",
]
NO_EQUALITY = [
    "cross",
    "comma",
    "comma_where",
    "comma_equi",
    "comma_three",
    "comma_interval",
    "non_equi",
    "non_equi_left",
    "non_equi_full",
    "batch_cross",
    "batch_non_equi_left",
    "batch_non_equi_full",
]
FAILING = ["scalar_many", "scalar_many_where", "batch_scalar_many"]


def _env(parallelism: int, batch: bool) -> TableEnvironment:
    settings = EnvironmentSettings.in_batch_mode() if batch else EnvironmentSettings.in_streaming_mode()
    t_env = TableEnvironment.create(settings)
    t_env.get_config().set("parallelism.default", str(parallelism))
    for statement in SETUP:
        t_env.execute_sql(statement)
    return t_env


def _printed(name: str, parallelism: int) -> str:
    t_env = _env(parallelism, batch=name.startswith("batch_"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        t_env.execute_sql(QUERIES[name]).print()
    return out.getvalue()


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("name", "parallelism"), [(n, p) for n in NULL_KEYS + NO_EQUALITY for p in (1, 2)])
def test_final_table_is_flinks(name: str, parallelism: int) -> None:
    expected = final_rows((DATA / f"fix_{name}.txt").read_text())
    assert expected, f"fix_{name}.txt holds no rows"
    assert final_rows(_printed(name, parallelism)) == expected


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", ["group_null"])
def test_changelog_at_parallelism_1_is_flinks(name: str) -> None:
    assert _printed(name, 1) == (DATA / f"fix_{name}.txt").read_text()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", FAILING)
def test_scalar_subquery_of_two_rows_fails_the_job_as_flink(name: str) -> None:
    expected = (DATA / f"fix_{name}.txt").read_text().splitlines()[-1]
    reason = expected.split("TableRuntimeException: ", 1)[1]
    t_env = _env(1, batch=name.startswith("batch_"))
    with pytest.raises(Exception) as info, contextlib.redirect_stdout(io.StringIO()):
        t_env.execute_sql(QUERIES[name]).print()
    text = str(info.value) + "".join(str(c) for c in _causes(info.value))
    assert reason in text
    assert "A scalar subquery at line 1, column" in text
    assert "expected at most one row; got a second row" in text


@pytest.mark.timeout(300)
def test_scalar_subquery_of_one_row_runs() -> None:
    expected = final_rows((DATA / "fix_scalar_one.txt").read_text())
    assert final_rows(_printed("scalar_one", 2)) == expected


def _causes(error: BaseException) -> list[BaseException]:
    found = []
    while error.__cause__ is not None or error.__context__ is not None:
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
        found.append(error)
    return found


def test_a_comma_join_with_rowtime_bounds_in_where_is_an_interval_join() -> None:
    from strom.table.planner.logical import IntervalJoin

    t_env = _env(1, batch=False)
    plan = t_env.sql_query(QUERIES["comma_interval"])._plan
    nodes = [plan]
    while nodes and not isinstance(nodes[-1], IntervalJoin) and nodes[-1].inputs:
        nodes.append(nodes[-1].inputs[0])
    assert isinstance(nodes[-1], IntervalJoin)
    assert "IntervalJoin" in (DATA / "fix_explain_comma_interval.txt").read_text()
