"""The Table API, the connectors as tables and DataStream interop on the MiniCluster."""

from __future__ import annotations

from pathlib import Path

import pytest

from strom.api.environment import StreamExecutionEnvironment
from strom.api.row import RowKind
from strom.api.typeinfo import Types
from strom.table import DataTypes, EnvironmentSettings, StreamTableEnvironment, TableEnvironment, TableException
from strom.table.expressions import col, lit
from strom.table.table_result import materialize

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def t_env() -> TableEnvironment:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    return t_env


def rows(result: object) -> list[tuple[object, ...]]:
    return [tuple(r._values) for r in result.collect()]  # type: ignore[attr-defined]


def test_select_where_and_column_operations(t_env: TableEnvironment) -> None:
    table = t_env.from_elements([(1, "Hi", 2.5), (2, "Hello", 3.0), (3, "Hi", 1.0)], ["a", "b", "c"])
    assert [str(t) for t in table.get_schema().types] == ["BIGINT", "STRING", "DOUBLE"]
    assert rows(table.where(col("a") > 1).select(col("a") + 1, col("b").alias("bb")).execute()) == [
        (3, "Hello"),
        (4, "Hi"),
    ]
    shaped = (
        table.add_columns((col("a") * 10).alias("a10")).rename_columns(col("b").alias("word")).drop_columns(col("c"))
    )
    assert shaped.get_schema().names == ("a", "word", "a10")
    assert rows(shaped.execute()) == [(1, "Hi", 10), (2, "Hello", 20), (3, "Hi", 30)]
    assert rows(table.select(col("b")).distinct().execute()) == [("Hi",), ("Hello",)]
    assert len(rows(table.union_all(table).execute())) == 6
    assert rows(table.limit(2).execute()) == [(1, "Hi", 2.5), (2, "Hello", 3.0)]
    assert rows(t_env.sql_query(f"SELECT a FROM {table} LIMIT 1 OFFSET 2").execute()) == [(3,)]


def test_group_by_select_emits_the_changelog(t_env: TableEnvironment) -> None:
    table = t_env.from_elements([(1, "Hi"), (2, "Hello"), (3, "Hi")], ["a", "b"])
    result = table.group_by(col("b")).select(col("b"), col("a").sum.alias("s"), lit(1).count.alias("n")).execute()
    changes = [(r.get_row_kind(), tuple(r._values)) for r in result.collect()]
    assert changes == [
        (RowKind.INSERT, ("Hi", 1, 1)),
        (RowKind.INSERT, ("Hello", 2, 1)),
        (RowKind.UPDATE_BEFORE, ("Hi", 1, 1)),
        (RowKind.UPDATE_AFTER, ("Hi", 4, 2)),
    ]


def test_batch_mode_gives_the_final_rows() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    table = t_env.from_elements([(1, "Hi"), (2, "Hello"), (3, "Hi")], ["a", "b"])
    assert sorted(rows(table.group_by(col("b")).select(col("b"), col("a").sum).execute())) == [("Hello", 2), ("Hi", 4)]


def test_filesystem_csv_and_json_round_trip(t_env: TableEnvironment, tmp_path: Path) -> None:
    source = tmp_path / "in.csv"
    source.write_text("alice,3\nbob,5\nalice,4\n")
    t_env.execute_sql(
        f"CREATE TABLE src (name STRING, n INT) WITH ('connector' = 'filesystem', 'path' = '{source}', "
        "'format' = 'csv')"
    )
    out = tmp_path / "out"
    t_env.execute_sql(
        f"CREATE TABLE dst (name STRING, doubled BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}', "
        "'format' = 'json')"
    )
    t_env.execute_sql("INSERT INTO dst SELECT name, n * 2 FROM src WHERE n > 3").wait()
    written = sorted(
        line
        for f in out.rglob("*")
        if f.is_file() and not f.name.startswith(".")
        for line in f.read_text().splitlines()
    )
    assert written == ['{"name":"alice","doubled":8}', '{"name":"bob","doubled":10}']
    with pytest.raises(TableException, match="doesn't support consuming update changes"):
        t_env.execute_sql("INSERT INTO dst SELECT name, COUNT(*) FROM src GROUP BY name")


def test_datagen_blackhole_and_print_identifier(t_env: TableEnvironment, capfd: pytest.CaptureFixture[str]) -> None:
    t_env.execute_sql(
        "CREATE TABLE gen (id BIGINT, v INT) WITH ('connector' = 'datagen', 'number-of-rows' = '20', "
        "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '100', "
        "'fields.v.min' = '0', 'fields.v.max' = '9')"
    )
    values = rows(t_env.execute_sql("SELECT id, v FROM gen"))
    assert [v[0] for v in values] == list(range(1, 21)) and all(0 <= v[1] <= 9 for v in values)
    t_env.execute_sql("CREATE TABLE hole (id BIGINT, v INT) WITH ('connector' = 'blackhole')")
    t_env.execute_sql("INSERT INTO hole SELECT * FROM gen").wait()
    t_env.execute_sql("CREATE TABLE out (id BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'gen')")
    capfd.readouterr()
    t_env.execute_sql("INSERT INTO out SELECT id FROM gen WHERE id <= 2").wait()
    assert capfd.readouterr().out == "gen> +I[1]\ngen> +I[2]\n"


def test_data_stream_interop() -> None:
    env = StreamExecutionEnvironment()
    env.set_parallelism(1)
    t_env = StreamTableEnvironment.create(env)
    stream = env.from_collection([("a", 1), ("b", 2), ("a", 3)], Types.TUPLE([Types.STRING(), Types.INT()]))
    table = t_env.from_data_stream(stream, col("k"), col("v"))
    counts = t_env.sql_query(f"SELECT k, SUM(v) AS total FROM {table} GROUP BY k")
    with pytest.raises(TableException, match="update changes"):
        t_env.to_data_stream(counts)
    changelog = t_env.to_changelog_stream(counts)
    with changelog.execute_and_collect() as results:
        out = [(str(r.get_row_kind()), r["k"], r["total"]) for r in results]
    assert out == [("+I", "a", 1), ("+I", "b", 2), ("-U", "a", 1), ("+U", "a", 4)]
    assert [str(t) for t in table.get_schema().types] == [str(DataTypes.STRING()), str(DataTypes.INT())]


def test_exists_and_not_exists_are_semi_and_anti_joins(t_env: TableEnvironment) -> None:
    # Flink 2.3 refuses these over VALUES views ("unexpected correlate variable $cor0 in the plan"): no fact to store
    t_env.execute_sql(
        "CREATE TEMPORARY VIEW o AS SELECT * FROM (VALUES (1, 'ann'), (2, 'bob'), (3, 'eve')) AS t(id, c)"
    )
    t_env.execute_sql(
        "CREATE TEMPORARY VIEW p AS SELECT * FROM (VALUES ('ann', 'Rome'), ('bob', 'Oslo')) AS t(n, city)"
    )
    exists = "SELECT id FROM o WHERE EXISTS (SELECT 1 FROM p WHERE p.n = o.c AND p.city <> 'Oslo')"
    assert sorted(tuple(r._values) for r in materialize(iter(t_env.execute_sql(exists).collect()))) == [(1,)]
    not_exists = "SELECT id FROM o WHERE NOT EXISTS (SELECT 1 FROM p WHERE p.n = o.c)"
    assert sorted(tuple(r._values) for r in materialize(iter(t_env.execute_sql(not_exists).collect()))) == [(3,)]


def test_group_aggregation_state_on_rocksdb_at_parallelism_2() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "2")
    t_env.get_config().set("state.backend.type", "rocksdb")
    table = t_env.from_elements([(i % 7, i) for i in range(200)], ["k", "v"])
    counts = t_env.sql_query(f"SELECT k, COUNT(*) AS n, MAX(v) AS hi, SUM(DISTINCT v % 3) AS s FROM {table} GROUP BY k")
    final = sorted(tuple(r._values) for r in materialize(iter(counts.execute().collect())))
    expected = sorted((k, len(range(k, 200, 7)), max(range(k, 200, 7)), 3) for k in range(7))
    assert final == expected
