"""The program that produced the ``gsets_*.txt`` facts beside it: run in PyFlink 2.3.0 (``python gsets_queries.py``).

GROUPING SETS / ROLLUP / CUBE (alone and beside plain GROUP BY columns), GROUPING() and GROUPING_ID() in SELECT and
HAVING, COUNT(DISTINCT) under ROLLUP, expression keys, the order Flink gives the grouping sets, and the empty grouping
set over an empty input. Each query's ``TableResult.print()`` output goes to ``gsets_<name>.txt`` at parallelism 1:
in STREAMING, and in BATCH for the names starting with ``batch_`` (the query of the name without the prefix).
An error is written as its exception's class and message. NULL cells are ``null`` in the csv file.
"""

import os
import sys

from fact_programs import print_failure, write_facts
from pyflink.table import EnvironmentSettings, TableEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
MARK = "@@gsets@@ "
G_CSV = "/tmp/strom-flink-gsets-g.csv"
G_ROWS = [
    ("x", "p", 1, 10),
    ("x", "q", 2, 20),
    ("y", "p", 1, 30),
    ("x", "p", 2, 40),
    ("null", "q", 1, 50),
    ("y", "null", 2, 60),
]
W_CSV = "/tmp/strom-flink-gsets-w.csv"
W_ROWS = [
    ("2024-01-01 00:00:01", "x", "p", 1),
    ("2024-01-01 00:00:03", "y", "p", 2),
    ("2024-01-01 00:00:04", "x", "q", 3),
    ("2024-01-01 00:00:12", "x", "p", 4),
    ("2024-01-01 00:00:13", "null", "q", 5),
    ("2024-01-01 00:00:25", "y", "null", 6),
]

SETUP = [
    f"CREATE TABLE g (a STRING, b STRING, c INT, v INT) WITH ("
    f"'connector' = 'filesystem', 'path' = '{G_CSV}', 'format' = 'csv', 'csv.null-literal' = 'null')",
    f"CREATE TABLE w (ts TIMESTAMP(3), a STRING, b STRING, v INT, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ("
    f"'connector' = 'filesystem', 'path' = '{W_CSV}', 'format' = 'csv', 'csv.null-literal' = 'null')",
]

QUERIES = {
    "basic": "SELECT a, b, SUM(v) AS sv, COUNT(*) AS n FROM g GROUP BY GROUPING SETS ((a, b), (a), ())",
    "grouping_fns": "SELECT a, b, GROUPING(a) AS ga, GROUPING(b) AS gb, GROUPING_ID(a, b) AS gid, "
    "GROUPING_ID(b, a) AS gid2, COUNT(*) AS n FROM g GROUP BY CUBE (a, b)",
    "having_grouping": "SELECT a, b, SUM(v) AS sv FROM g GROUP BY ROLLUP (a, b) HAVING GROUPING(b) = 1",
    "mixed": "SELECT a, b, c, COUNT(*) AS n, GROUPING_ID(a, b, c) AS gid FROM g GROUP BY a, ROLLUP (b, c)",
    "distinct_rollup": "SELECT a, b, COUNT(DISTINCT c) AS dc, SUM(v) AS sv FROM g GROUP BY ROLLUP (a, b)",
    "order": "SELECT a, b, COUNT(*) AS n FROM g GROUP BY GROUPING SETS ((b), (a), (a, b))",
    "keys_not_selected": "SELECT SUM(v) AS sv, GROUPING_ID(a, b) AS gid FROM g GROUP BY CUBE (a, b)",
    "expr_keys": "SELECT UPPER(a) AS ua, c, SUM(v) AS sv FROM g GROUP BY GROUPING SETS ((UPPER(a)), (c))",
    "empty_sets": "SELECT a, COUNT(*) AS n, SUM(v) AS sv FROM g WHERE v < 0 GROUP BY GROUPING SETS ((a), ())",
    "empty_rollup": "SELECT a, b, COUNT(*) AS n FROM g WHERE v < 0 GROUP BY ROLLUP (a, b)",
    "empty_only": "SELECT COUNT(*) AS n, SUM(v) AS sv FROM g WHERE v < 0 GROUP BY GROUPING SETS (())",
    "rollup_filter_agg": "SELECT a, MAX(v) AS mv, MIN(b) AS mb, COUNT(b) AS cb FROM g WHERE c = 1 GROUP BY ROLLUP (a)",
    "dup_sets": "SELECT a, SUM(v) AS sv FROM g GROUP BY GROUPING SETS ((a), (a), ())",
    "agg_of_key": "SELECT a, b, COUNT(b) AS cb, MAX(a) AS ma FROM g GROUP BY ROLLUP (a, b)",
    "grouping_plain": "SELECT a, GROUPING(a) AS ga, COUNT(*) AS n FROM g GROUP BY a",
    "grouping_not_key": "SELECT a, GROUPING(b) AS gb FROM g GROUP BY a",
    "cube_three": "SELECT a, b, c, SUM(v) AS sv, GROUPING_ID(c, a) AS gid FROM g GROUP BY CUBE (a, b, c)",
    "cube_and_rollup": "SELECT a, b, c, COUNT(*) AS n FROM g GROUP BY CUBE (a), ROLLUP (b, c)",
    "sets_with_rollup": "SELECT a, b, c, COUNT(*) AS n FROM g GROUP BY GROUPING SETS ((a, b), ROLLUP (c))",
    "group_by_empty": "SELECT COUNT(*) AS n, SUM(v) AS sv FROM g WHERE v < 0 GROUP BY ()",
    "group_by_tuple": "SELECT a, b, COUNT(*) AS n FROM g GROUP BY (a, b), ()",
    "win_rollup": "SELECT window_start, window_end, a, b, SUM(v) AS sv, GROUPING_ID(a, b) AS gid "
    "FROM TABLE(TUMBLE(TABLE w, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
    "GROUP BY window_start, window_end, ROLLUP (a, b)",
    "win_sets": "SELECT a, window_start, COUNT(*) AS n FROM TABLE(HOP(TABLE w, DESCRIPTOR(ts), INTERVAL '5' SECOND, "
    "INTERVAL '10' SECOND)) GROUP BY GROUPING SETS ((window_start, window_end, a), (window_start, window_end))",
}
BATCH = list(QUERIES)


def write_files() -> None:
    for path, rows in ((G_CSV, G_ROWS), (W_CSV, W_ROWS)):
        with open(path, "w") as f:
            f.write("".join(",".join(str(v) for v in row) + "\n" for row in rows))


def run_queries(names: list[str]) -> None:
    streaming = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    batch = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    for t_env in (streaming, batch):
        t_env.get_config().set("parallelism.default", "1")
        t_env.get_config().set("table.local-time-zone", "UTC")
        for statement in SETUP:
            t_env.execute_sql(statement)
    for name in names or [*QUERIES, *("batch_" + n for n in BATCH)]:
        print(MARK + name, flush=True)
        t_env = batch if name.startswith("batch_") else streaming
        try:
            t_env.execute_sql(QUERIES[name.removeprefix("batch_")]).print()
        except Exception as exc:  # the error is the fact
            print_failure(exc)
    print(MARK + "end", flush=True)


def main() -> None:
    write_files()
    if sys.argv[1:2] == ["--child"]:
        run_queries(sys.argv[2:])
        return
    write_facts(__file__, sys.argv[1:], "gsets_", MARK)


if __name__ == "__main__":
    main()
