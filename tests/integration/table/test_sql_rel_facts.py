"""strom's relational SQL (ORDER BY, set operations, NOT IN / scalar / uncorrelated subqueries, LATERAL TABLE,
RANK / DENSE_RANK) against Flink 2.3's own output (tests/data/flink_sql/rel_*.txt, printed by PyFlink from
rel_queries.py): the exact changelog at parallelism 1 for one-input queries, the final table at parallelism 1 and 2
for queries over two sources (their interleaving is fixed by neither), Flink's refusals."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from flink_facts import FactProgram, final_rows

from strom.table import DataTypes, EnvironmentSettings, TableEnvironment
from strom.table.udf import udtf

DATA = Path(__file__).parents[2] / "data" / "flink_sql"


CSV_ROWS = {"CLICKS": "CLICK_ROWS", "ORDERS_CSV": "ORDER_ROWS", "PEOPLE_CSV": "PEOPLE_ROWS"}
PROGRAM = FactProgram("rel_queries.py", CSV_ROWS)
QUERIES = PROGRAM.queries
SETUP = PROGRAM.setup

EXACT = [
    "batch_order_by",
    "batch_order_by_limit",
    "batch_order_by_nulls",
    "order_by_limit",
    "order_by_limit_offset",
    "order_by_time",
    "order_by_time_then",
    "lateral",
    "lateral_join_on_true",
    "lateral_left",
    "unnest",
    "unnest_left",
]
TWO_INPUTS = [
    "union",
    "union_one_input",
    "intersect",
    "intersect_all",
    "except",
    "except_all",
    "batch_union",
    "batch_intersect_all",
    "batch_except_all",
    "batch_rank",
    "batch_dense_rank",
    "not_in",
    "not_in_null",
    "not_in_no_null",
    "scalar_select",
    "scalar_where",
    "exists_uncorrelated",
    "not_exists_uncorrelated",
    "scalar_correlated_count",
    "scalar_correlated_max",
    "scalar_correlated_where",
]
ERRORS = ["error_order_by", "error_order_by_time_desc", "rank", "dense_rank", "rank_no_number"]


@udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
def vowels(s: str) -> Iterator[tuple[str, int]]:
    for i, ch in enumerate(s):
        if ch in "ae":
            yield ch, i


def _env(parallelism: int, batch: bool) -> TableEnvironment:
    settings = EnvironmentSettings.in_batch_mode() if batch else EnvironmentSettings.in_streaming_mode()
    t_env = TableEnvironment.create(settings)
    t_env.get_config().set("parallelism.default", str(parallelism))
    t_env.create_temporary_function("vowels", vowels)
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
@pytest.mark.parametrize("name", EXACT)
def test_changelog_at_parallelism_1_is_flinks(name: str) -> None:
    assert _printed(name, 1) == (DATA / f"rel_{name}.txt").read_text()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", ["batch_order_by", "batch_order_by_limit", "order_by_time", "order_by_time_then"])
def test_sort_at_parallelism_2_is_flinks(name: str) -> None:
    """The sorts run at parallelism 1 (Flink's global sort), so their output order holds under a p=2 job."""
    assert _printed(name, 2) == (DATA / f"rel_{name}.txt").read_text()


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("name", "parallelism"), [(n, p) for n in TWO_INPUTS for p in (1, 2)])
def test_final_table_is_flinks(name: str, parallelism: int) -> None:
    expected = final_rows((DATA / f"rel_{name}.txt").read_text())
    assert final_rows(_printed(name, parallelism)) == expected


@pytest.mark.parametrize("name", ERRORS)
def test_refused_with_flinks_reason(name: str) -> None:
    t_env = _env(1, batch=False)
    with pytest.raises(Exception) as info:
        t_env.execute_sql(QUERIES[name])
    kind, reason = (DATA / f"rel_{name}.txt").read_text().strip().split(": ", 1)
    assert type(info.value).__name__ == kind.replace("org.apache.flink.table.api.", "")
    assert reason in str(info.value)  # Flink's reason; strom adds the position and what is supported


@pytest.mark.timeout(300)
def test_lateral_table_with_computed_arguments_at_parallelism_2() -> None:
    @udtf(result_types=[DataTypes.STRING()])
    def split(s: str, sep: str) -> Iterator[str]:
        yield from s.split(sep)

    t_env = _env(2, batch=False)
    t_env.create_temporary_function("split", split)
    query = "SELECT id, w FROM orders, LATERAL TABLE(split(UPPER(customer), 'L')) AS t(w) WHERE id < 5"
    rows = sorted(tuple(r) for r in t_env.execute_sql(query).collect())
    assert rows == [(1, "A"), (1, "ICE"), (2, "BOB"), (3, "A"), (3, "ICE"), (4, ""), (4, "CARO")]


BATCH_TOO = ["intersect", "except", "except_all", "not_in", "not_in_null", "scalar_select", "scalar_correlated_count"]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", [*BATCH_TOO, "unnest_left", "lateral_left"])
def test_batch_final_table_at_parallelism_2_is_flinks_streaming_final_table(name: str) -> None:
    """The same query in BATCH mode: Flink's final table (SQL's result does not depend on the mode)."""
    t_env = _env(2, batch=True)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        t_env.execute_sql(QUERIES[name]).print()
    assert final_rows(out.getvalue()) == final_rows((DATA / f"rel_{name}.txt").read_text())
