"""BATCH aggregations and joins over Parquet on the Arrow batch operators (planner/batch_physical.py) against Flink
2.3's results (``tests/data/flink_sql/sqlbatch_facts.txt``, printed by ``sqlbatch_queries.py``), and against strom's
own row operators on generated data with NULLs."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from strom.table import EnvironmentSettings, TableEnvironment
from strom.table.planner.translator import Translator
from strom.table.table_result import TableResult

DATA = Path(__file__).parents[2] / "data" / "flink_sql"
_spec = importlib.util.spec_from_file_location("sqlbatch_queries", DATA / "sqlbatch_queries.py")
assert _spec is not None and _spec.loader is not None
queries = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(queries)

_ARROW = {"INT": pa.int32(), "BIGINT": pa.int64(), "DECIMAL(10, 2)": pa.decimal128(10, 2), "DOUBLE": pa.float64()}
_ARROW["STRING"] = pa.string()


def _facts() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    current: list[str] = []
    for line in (DATA / "sqlbatch_facts.txt").read_text().splitlines():
        if line.startswith("## "):
            current = out.setdefault(line[3:], [])
        elif line:
            current.append(line)
    return out


def _write(root: Path, name: str, columns: Any, rows: list[tuple[Any, ...]], files: int = 2) -> str:
    schema = pa.schema([(c, _ARROW[t]) for c, t in columns])
    path = root / name
    path.mkdir()
    per = max(1, len(rows) // files)
    for f in range(files):
        part = rows[f * per : None if f == files - 1 else (f + 1) * per]
        table = pa.table({c: pa.array([r[i] for r in part], schema.field(c).type) for i, (c, _) in enumerate(columns)})
        pq.write_table(table, path / f"part-{f}.parquet", row_group_size=4)
    return str(path)


def _t_env(root: Path, o_rows: list[tuple[Any, ...]], u_rows: list[tuple[Any, ...]]) -> TableEnvironment:
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("parallelism.default", "2")
    for name, columns, rows in (("o", queries.O_COLUMNS, o_rows), ("u", queries.U_COLUMNS, u_rows)):
        path = _write(root, name, columns, rows)
        ddl = ", ".join(f"{c} {t}" for c, t in columns)
        t_env.execute_sql(
            f"CREATE TABLE {name} ({ddl}) WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'parquet')"
        )
    return t_env


def _names(stream: Any) -> set[str]:
    seen, todo = set(), [stream.get_transformation()]
    while todo:
        t = todo.pop()
        seen.add(t.name)
        todo.extend(t.inputs)
    return seen


def _rows(t_env: TableEnvironment, query: str, *, batch: bool) -> tuple[list[str], set[str]]:
    plan = t_env.sql_query(query)._plan
    stream = Translator(t_env._new_stream_env(), batch=batch).translate(plan)

    def collected() -> Any:
        with stream.execute_and_collect("collect") as results:
            yield from results

    # BATCH's final table: the row operators' changelog materialized as TableResult does
    rows = sorted(repr(tuple(r)) for r in TableResult(plan.row_type, rows=collected, streaming=False).collect())
    return rows, _names(stream)


def test_flink_facts_over_parquet_on_the_arrow_operators(tmp_path: Path) -> None:
    facts = _facts()
    t_env = _t_env(tmp_path, queries.O_ROWS, queries.U_ROWS)
    for name, query in queries.QUERIES.items():
        got, names = _rows(t_env, query, batch=True)
        assert got == facts[name], f"{name}: expected Flink's {facts[name]}; got {got}"
        arrow = {n.split("(")[0] for n in names} & {"LocalHashAggregate", "HashAggregate", "HashJoin"}
        assert arrow, f"{name}: expected the Arrow batch operators in the plan; got {sorted(names)}"
    # through the TableEnvironment, too (its BATCH queries plan with the Arrow operators)
    joined = sorted(repr(tuple(r)) for r in t_env.execute_sql(queries.QUERIES["join_agg"]).collect())
    assert joined == facts["join_agg"]


def _generated(seed: int, n: int) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    from decimal import Decimal

    rnd = random.Random(seed)

    def maybe(value: Any) -> Any:
        return None if rnd.random() < 0.1 else value

    o_rows = [
        (
            i,
            maybe(rnd.randrange(60)),
            maybe(rnd.randrange(-100, 100)),
            maybe(Decimal(rnd.randrange(-999, 999)) / 100),
            maybe(rnd.randrange(-64, 64) / 4),
            maybe(rnd.choice("abcdefg")),
        )
        for i in range(n)
    ]
    u_rows = [(maybe(u), maybe(f"region-{u % 7}")) for u in range(50)] + [(3, "region-x")]
    return o_rows, u_rows


BENCH = "SELECT u.r, COUNT(*) AS n, SUM(o.amt) AS total FROM o JOIN u ON o.uid = u.uid GROUP BY u.r"


@pytest.mark.parametrize("query", [BENCH, *queries.QUERIES.values()], ids=["bench", *queries.QUERIES])
def test_arrow_operators_equal_the_row_operators(tmp_path: Path, query: str) -> None:
    t_env = _t_env(tmp_path, *_generated(7, 3000))
    arrow, names = _rows(t_env, query, batch=True)
    rows, row_names = _rows(t_env, query, batch=False)
    if query == queries.QUERIES["global_empty"]:
        # Flink's one row of a global aggregate over no rows (the facts); the streaming translation gives none
        assert (arrow, rows) == (["(0, None, None, None)"], [])
    else:
        assert arrow == rows
    if query == BENCH:
        assert {"LocalHashAggregate", "HashAggregate", "HashJoin"} <= {n.split("(")[0] for n in names}
        assert any("broadcast=[true]" in n for n in names), names
        assert not any(n.startswith(("GroupAggregate", "Join(")) for n in names)
        assert any(n.startswith("GroupAggregate") for n in row_names)


@pytest.mark.parametrize(
    "query",
    [
        "SELECT k, COUNT(DISTINCT amt) FROM o GROUP BY k",
        "SELECT o.id, u.r FROM o JOIN u ON o.uid = u.uid AND o.amt > u.uid",
        "SELECT k, SUM(amt) FROM o WHERE k LIKE 'a%' GROUP BY k",
    ],
    ids=["distinct", "residual", "like"],
)
def test_what_the_arrow_operators_do_not_take_stays_on_the_row_operators(tmp_path: Path, query: str) -> None:
    t_env = _t_env(tmp_path, queries.O_ROWS, queries.U_ROWS)
    arrow, names = _rows(t_env, query, batch=True)
    rows, _ = _rows(t_env, query, batch=False)
    assert arrow == rows
    assert not {n.split("(")[0] for n in names} & {"LocalHashAggregate", "HashAggregate", "HashJoin"}, names


@pytest.mark.parametrize(
    "query",
    [
        queries.QUERIES["join_agg"],
        queries.QUERIES["left"],
        "SELECT o.id, u.uid FROM o JOIN u ON o.k = u.r",  # a string key: hashed per row
        "SELECT u.r, COUNT(*) FROM u LEFT JOIN o ON u.r = o.k AND u.uid = o.uid GROUP BY u.r",
    ],
    ids=["join_agg", "left", "string_key", "two_keys"],
)
def test_hash_partitioned_joins(tmp_path: Path, query: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from strom.table.planner import batch_physical

    monkeypatch.setattr(batch_physical, "BROADCAST_THRESHOLD", -1)  # no side small enough: both hash-partitioned
    o_rows, u_rows = _generated(11, 500)
    u_rows += [(1, "a"), (2, "b"), (None, "c")]
    t_env = _t_env(tmp_path, o_rows, u_rows)
    arrow, names = _rows(t_env, query, batch=True)
    rows, _ = _rows(t_env, query, batch=False)
    assert arrow == rows
    assert any(n.startswith("HashJoin") and "broadcast" not in n for n in names), names
    assert any(n.startswith("Exchange(distribution=[hash") for n in names), names


def test_flink_facts_over_values_views_on_the_row_operators() -> None:
    """The same queries over VALUES views (as Flink ran them): BATCH's row operators give Flink's tables, also the
    one row of a global aggregate over no rows."""
    facts = _facts()
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("parallelism.default", "2")
    t_env.execute_sql(queries.values_view("o", queries.O_COLUMNS, queries.O_ROWS))
    t_env.execute_sql(queries.values_view("u", queries.U_COLUMNS, queries.U_ROWS))
    for name, query in queries.QUERIES.items():
        table = t_env.sql_query(query)
        names = {
            n.split("(")[0] for n in _names(Translator(t_env._new_stream_env(), batch=True).translate(table._plan))
        }
        assert not names & {"LocalHashAggregate", "HashAggregate", "HashJoin"}, f"{name}: {sorted(names)}"
        got = sorted(repr(tuple(r)) for r in table.execute().collect())
        assert got == facts[name], f"{name}: expected Flink's {facts[name]}; got {got}"
