"""GROUPING SETS / ROLLUP / CUBE, GROUPING() and GROUPING_ID() against Flink 2.3 (tests/data/flink_sql/gsets_*.txt,
printed by PyFlink from gsets_queries.py): the exact changelog at parallelism 1 in STREAMING (the order of each
input row's expanded rows is Calcite's order of the grouping sets), the final table at parallelism 2 in STREAMING
and BATCH (where the empty grouping set over no input gives a row only when it is the only set)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
from flink_facts import FactProgram, final_rows

from strom.table import EnvironmentSettings, TableEnvironment

DATA = Path(__file__).parents[2] / "data" / "flink_sql"
FILES = {"G_CSV": "G_ROWS", "W_CSV": "W_ROWS"}


PROGRAM = FactProgram("gsets_queries.py", FILES)
QUERIES = PROGRAM.queries
SETUP = PROGRAM.setup
NAMES = [*QUERIES, *("batch_" + n for n in PROGRAM.batch)]


def _fact(name: str) -> str:
    return (DATA / f"gsets_{name}.txt").read_text()


def _printed(name: str, parallelism: int) -> str:
    settings = (
        EnvironmentSettings.in_batch_mode() if name.startswith("batch_") else EnvironmentSettings.in_streaming_mode()
    )
    t_env = TableEnvironment.create(settings)
    t_env.get_config().set("parallelism.default", str(parallelism))
    t_env.get_config().set("table.local-time-zone", "UTC")
    for statement in SETUP:
        t_env.execute_sql(statement)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        t_env.execute_sql(QUERIES[name.removeprefix("batch_")]).print()
    return out.getvalue()


def _is_error(name: str) -> bool:
    return "Exception" in _fact(name).splitlines()[-1]


# Changelogs whose order at parallelism 1 is not fixed: two branches of one source, or one window's keys.
INTERLEAVED = {
    "dup_sets": "a repeated grouping set is a second aggregate in a UNION ALL (Calcite's rewrite)",
    "win_rollup": "the keys of one window fire in Flink's timer-heap order",
    "win_sets": "the keys of one window fire in Flink's timer-heap order",
}
STREAMING = [n for n in QUERIES if not _is_error(n) and n not in INTERLEAVED]
TABLES = [n for n in NAMES if not _is_error(n)]
ERRORS = [n for n in NAMES if _is_error(n)]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", STREAMING)
def test_changelog_at_parallelism_1_is_flinks(name: str) -> None:
    assert _printed(name, 1) == _fact(name)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", sorted(INTERLEAVED))
def test_final_table_at_parallelism_1_where_the_order_is_not_fixed(name: str) -> None:
    assert final_rows(_printed(name, 1)) == final_rows(_fact(name))


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", TABLES)
def test_final_table_at_parallelism_2_is_flinks(name: str) -> None:
    got = _printed(name, 2)
    assert got.splitlines()[:3] == _fact(name).splitlines()[:3]  # the same columns and types (widths)
    assert final_rows(got) == final_rows(_fact(name))


@pytest.mark.parametrize("name", ERRORS)
def test_refused_as_flink(name: str) -> None:
    reason = _fact(name).strip().splitlines()[-1].split("Exception: ", 1)[-1].strip()
    with pytest.raises(Exception) as info, contextlib.redirect_stdout(io.StringIO()):
        _printed(name, 1)
    assert reason in str(info.value)
