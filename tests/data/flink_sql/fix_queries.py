"""The program that produced the ``fix_*.txt`` facts beside it: run in PyFlink 2.3.0 (``python fix_queries.py``).

NULL join keys (regular, semi / anti, decorrelated subqueries, set operations, GROUP BY, interval and window
joins), a scalar subquery returning more than one row, and joins without an equality (CROSS JOIN, ``ON a < b``,
comma joins) in STREAMING and BATCH. Each query's ``TableResult.print()`` output goes to ``fix_<name>.txt`` at
parallelism 1 (STREAMING, or BATCH for the names starting with ``batch_``); ``explain_<name>`` writes
``explain_sql``'s physical plan; an error is written as its exception's class and message (a failed job's root
cause after it). NULL cells are ``null``.
"""

import os
import sys

from fact_programs import print_failure, write_facts
from pyflink.table import EnvironmentSettings, TableEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
L_CSV = "/tmp/strom-flink-fix-l.csv"
L_ROWS = [(1, 1, "a"), (2, "null", "b"), (3, 2, "c"), (4, "null", "d")]
R_CSV = "/tmp/strom-flink-fix-r.csv"
R_ROWS = [(1, "x"), ("null", "y"), (3, "z"), ("null", "u")]
LE_CSV = "/tmp/strom-flink-fix-le.csv"
LE_ROWS = [(1, 1, "2024-01-01 00:00:01"), (2, "null", "2024-01-01 00:00:02"), (3, 2, "2024-01-01 00:00:03")]
RE_CSV = "/tmp/strom-flink-fix-re.csv"
RE_ROWS = [(1, "x", "2024-01-01 00:00:02"), ("null", "y", "2024-01-01 00:00:03"), (2, "z", "2024-01-01 00:00:30")]
RV_CSV = "/tmp/strom-flink-fix-rv.csv"
RV_ROWS = [(1, "x", "2024-01-01 00:00:00"), ("null", "y", "2024-01-01 00:00:00"), (2, "z", "2024-01-01 00:00:00")]

SETUP = [
    f"CREATE TABLE l_fs (id INT, k INT, v STRING) WITH ('connector' = 'filesystem', 'path' = '{L_CSV}', "
    "'format' = 'csv', 'csv.null-literal' = 'null')",
    f"CREATE TABLE r_fs (k INT, w STRING) WITH ('connector' = 'filesystem', 'path' = '{R_CSV}', 'format' = 'csv', "
    "'csv.null-literal' = 'null')",
    f"CREATE TABLE l_ev (id INT, k INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ("
    f"'connector' = 'filesystem', 'path' = '{LE_CSV}', 'format' = 'csv', 'csv.null-literal' = 'null')",
    f"CREATE TABLE r_ev (k INT, w STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ("
    f"'connector' = 'filesystem', 'path' = '{RE_CSV}', 'format' = 'csv', 'csv.null-literal' = 'null')",
    f"CREATE TABLE r_ev0 (k INT, w STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ("
    f"'connector' = 'filesystem', 'path' = '{RV_CSV}', 'format' = 'csv', 'csv.null-literal' = 'null')",
    "CREATE TEMPORARY VIEW r_versions AS SELECT k, w, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k "
    "ORDER BY ts DESC) AS rn FROM r_ev0) WHERE rn = 1",
]

QUERIES = {
    "join_inner_null": "SELECT id, l.k, w FROM l_fs l JOIN r_fs r ON l.k = r.k",
    "join_left_null": "SELECT id, l.k, w FROM l_fs l LEFT JOIN r_fs r ON l.k = r.k",
    "join_full_null": "SELECT id, r.k, w FROM l_fs l FULL JOIN r_fs r ON l.k = r.k",
    "in_null": "SELECT id FROM l_fs WHERE k IN (SELECT k FROM r_fs)",
    "exists_null": "SELECT id FROM l_fs l WHERE EXISTS (SELECT * FROM r_fs r WHERE r.k = l.k)",
    "not_exists_null": "SELECT id FROM l_fs l WHERE NOT EXISTS (SELECT * FROM r_fs r WHERE r.k = l.k)",
    "scalar_count_null": "SELECT id, (SELECT COUNT(*) FROM r_fs r WHERE r.k = l.k) AS n FROM l_fs l",
    "scalar_max_null": "SELECT id, (SELECT MAX(w) FROM r_fs r WHERE r.k = l.k) AS m FROM l_fs l",
    "intersect_null": "SELECT k FROM l_fs INTERSECT SELECT k FROM r_fs",
    "except_null": "SELECT k FROM l_fs EXCEPT SELECT k FROM r_fs",
    "group_null": "SELECT k, COUNT(*) AS n FROM l_fs GROUP BY k",
    "interval_null": "SELECT id, w FROM l_ev l JOIN r_ev r ON l.k = r.k "
    "AND l.ts BETWEEN r.ts - INTERVAL '5' SECOND AND r.ts + INTERVAL '5' SECOND",
    "interval_left_null": "SELECT id, w FROM l_ev l LEFT JOIN r_ev r ON l.k = r.k "
    "AND l.ts BETWEEN r.ts - INTERVAL '5' SECOND AND r.ts + INTERVAL '5' SECOND",
    "window_join_null": "SELECT l.id, r.w FROM (SELECT * FROM TABLE(TUMBLE(TABLE l_ev, DESCRIPTOR(ts), "
    "INTERVAL '10' SECOND))) l JOIN (SELECT * FROM TABLE(TUMBLE(TABLE r_ev, DESCRIPTOR(ts), "
    "INTERVAL '10' SECOND))) r ON l.window_start = r.window_start AND l.window_end = r.window_end AND l.k = r.k",
    "window_left_join_null": "SELECT l.id, r.w FROM (SELECT * FROM TABLE(TUMBLE(TABLE l_ev, DESCRIPTOR(ts), "
    "INTERVAL '10' SECOND))) l LEFT JOIN (SELECT * FROM TABLE(TUMBLE(TABLE r_ev, DESCRIPTOR(ts), "
    "INTERVAL '10' SECOND))) r ON l.window_start = r.window_start AND l.window_end = r.window_end AND l.k = r.k",
    "temporal_null": "SELECT id, w FROM l_ev l JOIN r_versions FOR SYSTEM_TIME AS OF l.ts AS r ON l.k = r.k",
    "temporal_left_null": "SELECT id, w FROM l_ev l LEFT JOIN r_versions FOR SYSTEM_TIME AS OF l.ts AS r ON l.k = r.k",
    "batch_join_left_null": "SELECT id, l.k, w FROM l_fs l LEFT JOIN r_fs r ON l.k = r.k",
    "batch_exists_null": "SELECT id FROM l_fs l WHERE EXISTS (SELECT * FROM r_fs r WHERE r.k = l.k)",
    "batch_scalar_count_null": "SELECT id, (SELECT COUNT(*) FROM r_fs r WHERE r.k = l.k) AS n FROM l_fs l",
    "batch_intersect_null": "SELECT k FROM l_fs INTERSECT SELECT k FROM r_fs",
    "scalar_many": "SELECT id, (SELECT w FROM r_fs) AS w FROM l_fs",
    "scalar_many_where": "SELECT id FROM l_fs WHERE k = (SELECT k FROM r_fs WHERE k IS NOT NULL)",
    "scalar_one": "SELECT id, (SELECT w FROM r_fs WHERE k = 3) AS w FROM l_fs",
    "batch_scalar_many": "SELECT id, (SELECT w FROM r_fs) AS w FROM l_fs",
    "cross": "SELECT id, w FROM l_fs CROSS JOIN r_fs",
    "comma": "SELECT id, w FROM l_fs, r_fs",
    "comma_where": "SELECT id, w FROM l_fs l, r_fs r WHERE l.id > r.k",
    "comma_equi": "SELECT id, w FROM l_fs l, r_fs r WHERE l.k = r.k",
    "comma_three": "SELECT l.id, r.w, m.v FROM l_fs l, r_fs r, l_fs m WHERE l.k = r.k AND m.id = l.id + 1 "
    "AND r.w <> 'q' AND m.v > 'a'",
    "comma_interval": "SELECT id, w FROM l_ev l, r_ev r WHERE l.k = r.k "
    "AND l.ts BETWEEN r.ts - INTERVAL '5' SECOND AND r.ts + INTERVAL '5' SECOND",
    "explain_comma_interval": "SELECT id, w FROM l_ev l, r_ev r WHERE l.k = r.k "
    "AND l.ts BETWEEN r.ts - INTERVAL '5' SECOND AND r.ts + INTERVAL '5' SECOND",
    "non_equi": "SELECT id, w FROM l_fs l JOIN r_fs r ON l.id < r.k",
    "non_equi_left": "SELECT id, w FROM l_fs l LEFT JOIN r_fs r ON l.id < r.k",
    "non_equi_full": "SELECT id, r.k, w FROM l_fs l FULL JOIN r_fs r ON l.id < r.k",
    "batch_cross": "SELECT id, w FROM l_fs CROSS JOIN r_fs",
    "batch_non_equi_left": "SELECT id, w FROM l_fs l LEFT JOIN r_fs r ON l.id < r.k",
    "batch_non_equi_full": "SELECT id, r.k, w FROM l_fs l FULL JOIN r_fs r ON l.id < r.k",
    "explain_cross": "SELECT id, w FROM l_fs CROSS JOIN r_fs",
    "explain_non_equi_left": "SELECT id, w FROM l_fs l LEFT JOIN r_fs r ON l.id < r.k",
    "explain_scalar_many": "SELECT id, (SELECT w FROM r_fs) AS w FROM l_fs",
}

MARK = "#### query "


def write_files() -> None:
    for path, rows in ((L_CSV, L_ROWS), (R_CSV, R_ROWS), (LE_CSV, LE_ROWS), (RE_CSV, RE_ROWS), (RV_CSV, RV_ROWS)):
        with open(path, "w") as f:
            f.writelines(",".join(str(v) for v in row) + "\n" for row in rows)


def environment(settings: EnvironmentSettings) -> TableEnvironment:
    t_env = TableEnvironment.create(settings)
    t_env.get_config().set("parallelism.default", "1")
    for statement in SETUP:
        t_env.execute_sql(statement)
    return t_env


def run_queries(only: list[str]) -> None:
    streaming = environment(EnvironmentSettings.in_streaming_mode())
    batch = environment(EnvironmentSettings.in_batch_mode())
    for name, query in QUERIES.items():
        if only and name not in only:
            continue
        print(MARK + name, flush=True)
        t_env = batch if name.startswith("batch_") else streaming
        try:
            if name.startswith("explain_"):
                print(t_env.explain_sql(query), flush=True)
            else:
                t_env.execute_sql(query).print()
        except Exception as exc:  # the error is the fact
            print_failure(exc)
    print(MARK + "end", flush=True)


def main() -> None:
    write_files()
    if sys.argv[1:2] == ["--child"]:
        run_queries(sys.argv[2:])
        return
    write_facts(__file__, sys.argv[1:], "fix_", MARK)


if __name__ == "__main__":
    main()
