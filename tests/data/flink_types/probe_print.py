"""Captures how PyFlink 2.3.0 prints results: ``TableResult.print()`` (tableau, BATCH and STREAMING) and the
``print`` connector's ``+I[...]`` rows, for value_format's tests.

    /work/pyflink-venv/bin/python tests/data/flink_types/probe_print.py > /tmp/print_output.txt

The JVM writes to this process's stdout (a file); each query is preceded by a ``### <name>`` marker line, and at the
end the output is copied to ``print_output.txt`` and ``print_queries.json`` (the queries and their result column
types) is written beside this program. strom's tests read both.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from pyflink.table import EnvironmentSettings, TableEnvironment

VALUES = (
    "SELECT * FROM (VALUES "
    "(1, 'Alice', CAST(1.5 AS DECIMAL(10, 2)), TRUE, CAST(2.5 AS DOUBLE), DATE '2024-01-01'),"
    "(22, 'Bob with a much longer name than thirty chars', CAST(-12.25 AS DECIMAL(10, 2)), FALSE, "
    "CAST(1.0E10 AS DOUBLE), DATE '2024-12-31'),"
    "(CAST(NULL AS INT), CAST(NULL AS STRING), CAST(NULL AS DECIMAL(10, 2)), CAST(NULL AS BOOLEAN), "
    "CAST(NULL AS DOUBLE), CAST(NULL AS DATE))"
    ") AS t(id, name, amount, flag, ratio, d)"
)
TYPES = (
    "SELECT CAST(1 AS TINYINT) AS ti, CAST(2 AS SMALLINT) AS si, CAST(3 AS BIGINT) AS bi, CAST(1.5 AS FLOAT) AS f, "
    "TIMESTAMP '2024-01-01 12:00:00' AS ts0, CAST('2024-01-01 12:00:00' AS TIMESTAMP(3)) AS ts3, "
    "CAST('2024-01-01 12:00:00.123456' AS TIMESTAMP(6)) AS ts6, "
    "CAST('2024-01-01 12:00:00' AS TIMESTAMP_LTZ(3)) AS ltz, TIME '10:11:12' AS t0, "
    "CAST('10:11:12.5' AS TIME(3)) AS t3, x'0aff' AS b, CAST('abc' AS BYTES) AS b2, ARRAY[1, 2] AS arr, "
    "ARRAY['x', CAST(NULL AS STRING)] AS sarr, MAP['k', 1] AS m, ROW(1, 'a') AS r, "
    "INTERVAL '1 02:03:04.5' DAY TO SECOND AS dts, INTERVAL '1-2' YEAR TO MONTH AS ym, "
    "CAST('ab' AS CHAR(4)) AS c4, '中文字符' AS cjk, CAST(1.0 AS DOUBLE) AS d1, CAST(0.1 AS FLOAT) AS f01"
)
AGG = (
    "SELECT name, COUNT(*) AS cnt, SUM(v) AS total FROM (VALUES ('a', 1), ('b', 2), ('a', 3)) AS t(name, v) "
    "GROUP BY name"
)
EMPTY = "SELECT * FROM (VALUES (1)) AS t(x) WHERE x > 5"
ONE = "SELECT 1 AS x"
QUERIES = {"values": VALUES, "types": TYPES, "agg": AGG, "empty": EMPTY, "one": ONE}


def schema_of(t_env: TableEnvironment, query: str) -> list[list[str]]:
    schema = t_env.sql_query(query)._j_table.getResolvedSchema()
    return [[c.getName(), c.getDataType().getLogicalType().asSummaryString()] for c in schema.getColumns()]


def _captured() -> str:
    """This process's stdout so far, when it is a file (run with ``> file``); else empty."""
    try:
        return Path(f"/proc/{os.getpid()}/fd/1").read_text()
    except OSError:
        return ""


def main() -> None:
    meta: dict[str, object] = {}
    for mode in ("batch", "streaming"):
        settings = EnvironmentSettings.in_batch_mode() if mode == "batch" else EnvironmentSettings.in_streaming_mode()
        t_env = TableEnvironment.create(settings)
        t_env.get_config().set("parallelism.default", "1")
        t_env.get_config().set("table.local-time-zone", "Asia/Shanghai")
        for name, query in QUERIES.items():
            meta[f"{mode}/{name}"] = {"query": query, "columns": schema_of(t_env, query)}
            print(f"### {mode}/{name}", flush=True)
            t_env.execute_sql(query).print()
            sys.stdout.flush()
        if mode == "streaming":
            for name in ("values", "types", "agg"):
                # DDL has no INTERVAL column types: the print sink gets the other columns
                columns = [(c, t) for c, t in meta[f"{mode}/{name}"]["columns"] if "INTERVAL" not in t]  # type: ignore[index]
                cols = ", ".join(f"`{c}` {t.replace(' NOT NULL', '')}" for c, t in columns)
                t_env.execute_sql(f"CREATE TEMPORARY TABLE sink_{name} ({cols}) WITH ('connector' = 'print')")
                meta[f"print/{name}"] = {"columns": columns}
                select = ", ".join(f"`{c}`" for c, _ in columns)
                print(f"### print/{name}", flush=True)
                t_env.execute_sql(f"INSERT INTO sink_{name} SELECT {select} FROM ({QUERIES[name]})").wait()
                sys.stdout.flush()
    print("### end", flush=True)
    Path(__file__).with_name("print_queries.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n")
    Path(__file__).with_name("print_output.txt").write_text(_captured())


if __name__ == "__main__":
    main()
