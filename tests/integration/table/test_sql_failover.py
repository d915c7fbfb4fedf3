"""A SQL job with a window aggregation restarts from its checkpoint after a failure and writes exactly once into
the filesystem sink: the files hold each window's row once, as a failure-free run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from strom.table import DataTypes, EnvironmentSettings, TableEnvironment
from strom.table.udf import udf

pytestmark = pytest.mark.timeout(300)

ROWS = 6000


def _fails_once(marker: str) -> object:
    @udf(result_type=DataTypes.BOOLEAN())
    def keep(i: int) -> bool:
        path = Path(marker)
        if i == ROWS // 2 and not path.exists():
            path.write_text("failed once")
            raise RuntimeError("injected failure in the SQL job")
        return True

    return keep


WINDOW_AGGREGATION = (
    "INSERT INTO sink SELECT window_start, COUNT(*), SUM(id) FROM "
    "TABLE(TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '5' SECOND)) WHERE pass_row(id) "
    "GROUP BY window_start, window_end"
)
WINDOW_JOIN = (
    "INSERT INTO sink SELECT L.window_start, L.n, R.total FROM "
    "(SELECT window_start, window_end, COUNT(*) AS n FROM "
    "TABLE(TUMBLE(TABLE gen, DESCRIPTOR(ts), INTERVAL '5' SECOND)) "
    "WHERE pass_row(id) GROUP BY window_start, window_end) L JOIN "
    "(SELECT window_start, window_end, SUM(id) AS total FROM TABLE(TUMBLE(TABLE gen, DESCRIPTOR(ts), "
    "INTERVAL '5' SECOND)) GROUP BY window_start, window_end) R "
    "ON L.window_start = R.window_start AND L.window_end = R.window_end"
)


def _run(tmp_path: Path, name: str, inject: bool, query: str = WINDOW_AGGREGATION) -> list[dict[str, object]]:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    config = t_env.get_config()
    config.set("parallelism.default", "2")
    config.set("execution.checkpointing.interval", "200 ms")
    config.set("restart-strategy.type", "fixed-delay")
    config.set("restart-strategy.fixed-delay.attempts", "3")
    config.set("restart-strategy.fixed-delay.delay", "100 ms")
    t_env.create_temporary_function("pass_row", _fails_once(str(tmp_path / f"{name}.marker")) if inject else _always())
    t_env.execute_sql(
        "CREATE TABLE gen (id BIGINT, ts AS TO_TIMESTAMP_LTZ(id * 10, 3), WATERMARK FOR ts AS ts) WITH ("
        f"'connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '0', "
        f"'fields.id.end' = '{ROWS - 1}', 'rows-per-second' = '3000')"
    )
    out = tmp_path / name
    t_env.execute_sql(
        "CREATE TABLE sink (window_start TIMESTAMP(3), n BIGINT, total BIGINT) WITH ("
        f"'connector' = 'filesystem', 'path' = '{out}', 'format' = 'json')"
    )
    t_env.execute_sql(query).wait()
    lines = [
        line
        for f in out.rglob("*")
        if f.is_file() and not f.name.startswith(".")
        for line in f.read_text().splitlines()
    ]
    return sorted((json.loads(line) for line in lines), key=lambda r: str(r["window_start"]))


def _always() -> object:
    @udf(result_type=DataTypes.BOOLEAN())
    def keep(i: int) -> bool:
        return True

    return keep


def test_window_aggregation_survives_a_failure_with_exactly_once_output(tmp_path: Path) -> None:
    expected = _run(tmp_path, "clean", inject=False)
    assert len(expected) == ROWS * 10 // 5000 and sum(int(r["n"]) for r in expected) == ROWS  # type: ignore[call-overload]
    assert _run(tmp_path, "failing", inject=True) == expected
    assert (tmp_path / "failing.marker").exists()


def test_window_join_survives_a_failure_with_exactly_once_output(tmp_path: Path) -> None:
    expected = _run(tmp_path, "clean", inject=False)  # the join's rows: each window's count and sum
    assert _run(tmp_path, "failing-join", inject=True, query=WINDOW_JOIN) == expected
    assert (tmp_path / "failing-join.marker").exists()
