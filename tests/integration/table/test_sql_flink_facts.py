"""strom's SQL against Flink 2.3's own output (tests/data/flink_sql, printed by PyFlink from flink_queries.py):
the exact changelog at parallelism 1 via ``TableResult.print()``, the final table at parallelism 2, and Flink's
errors. The queries are read from the program that produced the facts, so both run the same text."""

from __future__ import annotations

import ast
import contextlib
import io
import tempfile
from pathlib import Path
from typing import Any

import pytest

from strom.table import EnvironmentSettings, TableEnvironment
from strom.table.table_result import materialize

DATA = Path(__file__).parents[2] / "data" / "flink_sql"


def _program() -> dict[str, Any]:
    tree = ast.parse((DATA / "flink_queries.py").read_text())
    values: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in ("QUERIES", "CLICK_ROWS", "CLICKS"):
                values[name] = ast.literal_eval(node.value)
            elif name == "SETUP":  # f-strings name the clicks file: evaluate them with CLICKS
                source = ast.unparse(node.value)
                values[name] = eval(source, {"CLICKS": values["CLICKS"]})  # our own test data
    return values


PROGRAM = _program()
CLICKS = Path(tempfile.mkdtemp(prefix="strom-sql-facts-")) / "clicks.csv"
CLICKS.write_text("".join(f"{user},{ts}\n" for user, ts in PROGRAM["CLICK_ROWS"]))
SETUP = [s.replace(PROGRAM["CLICKS"], str(CLICKS)) for s in PROGRAM["SETUP"]]
QUERIES: dict[str, str] = PROGRAM["QUERIES"]
# two sources interleave in an order neither Flink nor strom fixes: only the final table of a join or union is a fact
TWO_INPUTS = ["join_inner", "join_left", "join_full_agg", "in_subquery", "union_all"]
RESULTS = [
    n for n in QUERIES if not n.startswith("error_") and not QUERIES[n].startswith("INSERT") and n not in TWO_INPUTS
]


def _env(parallelism: int, batch: bool = False) -> TableEnvironment:
    settings = EnvironmentSettings.in_batch_mode() if batch else EnvironmentSettings.in_streaming_mode()
    t_env = TableEnvironment.create(settings)
    t_env.get_config().set("parallelism.default", str(parallelism))
    for statement in SETUP:
        if "filesystem" in statement:
            statement = statement.replace("/tmp/strom-flink-facts-csv", "/tmp/strom-flink-facts-csv-unused")
        t_env.execute_sql(statement)
    return t_env


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", RESULTS)
def test_changelog_at_parallelism_1_is_flinks(name: str) -> None:
    t_env = _env(1, batch=name.startswith("batch_"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        t_env.execute_sql(QUERIES[name]).print()
    assert out.getvalue() == (DATA / f"{name}.txt").read_text()


def _final_rows(text: str) -> list[tuple[str, ...]]:
    """The final table of a printed changelog (or of a printed batch result)."""
    from strom.api.row import Row, RowKind

    kinds = {"+I": RowKind.INSERT, "-U": RowKind.UPDATE_BEFORE, "+U": RowKind.UPDATE_AFTER, "-D": RowKind.DELETE}
    rows = []
    for line in text.splitlines():
        if not line.startswith("| ") or line.startswith("| op "):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] in kinds:
            rows.append(Row.of_kind(kinds[cells[0]], *cells[1:]))
        elif not any(c in ("customer", "id") for c in cells[:1]):
            rows.append(Row(*cells))
    return sorted(tuple(r._values) for r in materialize(iter(rows)))


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("name", "parallelism"),
    [
        *((n, 2) for n in ["group_agg", "nested_agg", "delete_empty_group", "group_agg_having"]),
        *((n, p) for n in TWO_INPUTS for p in (1, 2)),
    ],
)
def test_final_table_is_flinks(name: str, parallelism: int) -> None:
    t_env = _env(parallelism)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        t_env.execute_sql(QUERIES[name]).print()
    assert _final_rows(out.getvalue()) == _final_rows((DATA / f"{name}.txt").read_text())


def test_print_connector_prints_flinks_changelog(capfd: pytest.CaptureFixture[str]) -> None:
    t_env = _env(1)
    t_env.execute_sql(QUERIES["print_sink"]).wait()
    assert capfd.readouterr().out == (DATA / "print_sink.txt").read_text()


def test_updating_query_into_append_only_sink_is_refused_with_flinks_reason() -> None:
    t_env = _env(1)
    with pytest.raises(Exception) as info:
        t_env.execute_sql(QUERIES["error_append_only_sink"])
    expected = (DATA / "error_append_only_sink.txt").read_text().strip()
    assert f"{type(info.value).__name__}: {info.value}" == expected.replace("org.apache.flink.table.api.", "")
