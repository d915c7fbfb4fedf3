"""The Flink dialect parses what Flink's parser accepts and sqlglot's base dialect does not."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from strom.table.sql.flink_dialect import Descriptor, FlinkDialect, FlinkType, MetadataColumn, PartitionedTable


def parse(sql: str) -> exp.Expr:
    return sqlglot.parse_one(sql, read=FlinkDialect)


def test_create_table_with_watermark_computed_columns_primary_key_and_options() -> None:
    create = parse(
        "CREATE TABLE t (a INT, `b` STRING COMMENT 'x', m ROW<x INT, y STRING>, s BIGINT NOT NULL, c AS a + 1, "
        "ts TIMESTAMP(3) METADATA FROM 'timestamp' VIRTUAL, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND, "
        "PRIMARY KEY (a) NOT ENFORCED) WITH ('connector' = 'datagen', 'number-of-rows' = '10')"
    )
    schema = create.this
    columns = [e for e in schema.expressions if isinstance(e, exp.ColumnDef)]
    kinds = {c.name: c.args["kind"].this for c in columns if isinstance(c.args.get("kind"), FlinkType)}
    assert kinds == {
        "a": "INT",
        "b": "STRING",
        "m": "ROW<x INT, y STRING>",
        "s": "BIGINT NOT NULL",
        "ts": "TIMESTAMP(3)",
    }
    computed = next(c for c in columns if c.name == "c")
    assert computed.find(exp.ComputedColumnConstraint) is not None
    assert next(c for c in columns if c.name == "ts").find(MetadataColumn).args["virtual"]
    watermark = schema.find(exp.WatermarkColumnConstraint)
    assert watermark.this.name == "ts" and isinstance(watermark.expression, exp.Sub)
    primary = schema.find(exp.PrimaryKey)
    assert [e.name for e in primary.expressions] == ["a"]
    options = {p.name: p.args["value"].name for p in create.args["properties"].expressions}
    assert options == {"connector": "datagen", "number-of-rows": "10"}


def test_window_table_valued_function_with_table_and_descriptor_arguments() -> None:
    select = parse("SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND))")
    assert select.find(Descriptor) is not None
    named = parse("SELECT * FROM TABLE(HOP(DATA => TABLE t, TIMECOL => DESCRIPTOR(ts), SLIDE => INTERVAL '1' MINUTE))")
    kwargs = {k.this.name: k.expression for k in named.find_all(exp.Kwarg)}
    assert isinstance(kwargs["DATA"], exp.Table) and isinstance(kwargs["TIMECOL"], Descriptor)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM o JOIN r FOR SYSTEM_TIME AS OF o.ts AS r2 ON o.k = r2.k",
        "SELECT INTERVAL '1' DAY, INTERVAL '2 10:00:00' DAY TO SECOND, INTERVAL '10' MINUTE(3)",
        "SELECT CAST(a AS ROW<x INT>), TRY_CAST(b AS DECIMAL(10, 2) NOT NULL) FROM t",
        "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY a ORDER BY b DESC) AS rn FROM t) WHERE rn <= 3",
        "WITH x AS (SELECT 1 AS a) SELECT a FROM x UNION ALL SELECT 2",
        "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS t(x, y)",
        "CREATE TEMPORARY VIEW v AS SELECT a FROM t",
        "INSERT INTO s SELECT a FROM t",
    ],
)
def test_flink_queries_parse(sql: str) -> None:
    assert parse(sql) is not None


@pytest.mark.parametrize(("keys", "names"), [("`user`", ["user"]), ("(a, b)", ["a", "b"])])
def test_session_table_argument_with_partition_keys(keys: str, names: list[str]) -> None:
    sql = f"SELECT * FROM TABLE(SESSION(TABLE bids PARTITION BY {keys}, DESCRIPTOR(ts), INTERVAL '5' SECOND))"
    call = parse(sql).find(exp.Anonymous, bfs=False)
    session = call.expressions[0] if call is not None else None
    assert isinstance(session, exp.Anonymous) and str(session.this) == "SESSION"
    table, descriptor, _gap = session.expressions
    assert isinstance(table, PartitionedTable) and table.this.name == "bids"
    assert [k.name for k in table.expressions] == names and isinstance(descriptor, Descriptor)
    assert parse(sql).sql(dialect=FlinkDialect) == sql


def test_cast_keeps_flink_type_text() -> None:
    cast = parse("SELECT CAST(a AS MAP<STRING, INT>) FROM t").find(exp.Cast)
    assert isinstance(cast.args["to"], FlinkType) and cast.args["to"].this == "MAP<STRING, INT>"
