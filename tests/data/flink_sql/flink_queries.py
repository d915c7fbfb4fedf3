"""The program that produced the facts in this directory: run in PyFlink 2.3.0 (``python flink_queries.py``).

Each query's ``TableResult.print()`` output goes to ``<name>.txt`` beside this file, at parallelism 1 in STREAMING
mode (the exact changelog). Errors are written as ``<name>.txt`` holding the exception's class and message.
The JVM prints to the process's stdout, so the program runs itself as a child and splits the child's output.
"""

import os
import subprocess
import sys

from pyflink.table import EnvironmentSettings, TableEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
CLICKS = "/tmp/strom-flink-facts-clicks.csv"
CLICK_ROWS = [
    ("ann", "2024-01-01 00:00:00.100"),
    ("bob", "2024-01-01 00:00:00.500"),
    ("ann", "2024-01-01 00:00:01.200"),
    ("ann", "2024-01-01 00:00:01.300"),
    ("bob", "2024-01-01 00:00:02.900"),
    ("ann", "2024-01-01 00:00:04.000"),
]

SETUP = [
    "CREATE TEMPORARY VIEW orders AS SELECT * FROM (VALUES "
    "(1, 'alice', 'books', 12), (2, 'bob', 'games', 30), (3, 'alice', 'games', 7), "
    "(4, 'carol', 'books', 5), (5, 'bob', 'books', 30), (6, 'alice', 'books', 1)) "
    "AS t(id, customer, category, amount)",
    "CREATE TABLE gen (id INT, v BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', "
    "'fields.id.start' = '1', 'fields.id.end' = '5', 'fields.v.kind' = 'sequence', 'fields.v.start' = '10', "
    "'fields.v.end' = '14')",
    "CREATE TEMPORARY VIEW people AS SELECT * FROM (VALUES ('alice', 'Berlin'), ('bob', 'Paris'), "
    "('carol', 'Rome'), ('erin', 'Oslo')) AS t(name, city)",
    f"CREATE TABLE clicks (u STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ("
    f"'connector' = 'filesystem', 'path' = '{CLICKS}', 'format' = 'csv')",
    "CREATE TABLE print_sink (customer STRING, cnt BIGINT) WITH ('connector' = 'print')",
    "CREATE TABLE csv_sink (customer STRING, cnt BIGINT) WITH ('connector' = 'filesystem', "
    "'path' = '/tmp/strom-flink-facts-csv', 'format' = 'csv')",
]

QUERIES = {
    "project_filter": "SELECT id, customer, amount * 2 AS doubled FROM orders WHERE amount > 6",
    "group_agg": "SELECT customer, COUNT(*) AS cnt, SUM(amount) AS total, AVG(amount) AS avg_amount, "
    "MIN(amount) AS lo, MAX(amount) AS hi FROM orders GROUP BY customer",
    "group_agg_having": "SELECT category, COUNT(DISTINCT customer) AS customers FROM orders GROUP BY category "
    "HAVING SUM(amount) > 40",
    "nested_agg": "SELECT cnt, COUNT(*) AS customers FROM "
    "(SELECT customer, COUNT(*) AS cnt FROM orders GROUP BY customer) GROUP BY cnt",
    "same_value_no_update": "SELECT customer, MAX(amount) AS hi FROM orders GROUP BY customer",
    "global_agg": "SELECT COUNT(*) AS cnt, SUM(amount) AS total FROM orders",
    "union_all": "SELECT customer FROM orders WHERE id < 3 UNION ALL SELECT category FROM orders WHERE id > 4",
    "case_when": "SELECT id, CASE WHEN amount >= 30 THEN 'big' WHEN amount >= 7 THEN 'mid' ELSE 'small' END AS size "
    "FROM orders",
    "delete_empty_group": "SELECT cnt, COUNT(*) AS n FROM "
    "(SELECT category, COUNT(*) AS cnt FROM orders GROUP BY category) GROUP BY cnt",
    "datagen_sequence": "SELECT id, v, id + v AS s FROM gen",
    "print_sink": "INSERT INTO print_sink SELECT customer, COUNT(*) FROM orders GROUP BY customer",
    "error_append_only_sink": "INSERT INTO csv_sink SELECT customer, COUNT(*) FROM orders GROUP BY customer",
    "batch_group_agg": "SELECT customer, COUNT(*) AS cnt, SUM(amount) AS total FROM orders GROUP BY customer",
    "batch_project": "SELECT id, customer FROM orders WHERE amount > 6",
    "join_inner": "SELECT o.id, o.customer, p.city FROM orders o JOIN people p ON o.customer = p.name",
    "join_left": "SELECT o.id, p.city FROM orders o LEFT JOIN people p ON o.customer = p.name AND o.amount > 6",
    "join_full_agg": "SELECT p.name, a.n FROM (SELECT customer, COUNT(*) AS n FROM orders GROUP BY customer) a "
    "FULL JOIN people p ON a.customer = p.name",
    "top_n": "SELECT * FROM (SELECT id, customer, amount, ROW_NUMBER() OVER (PARTITION BY customer "
    "ORDER BY amount DESC) AS rn FROM orders) WHERE rn <= 2",
    "top_n_no_rank": "SELECT id, category, amount FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY category "
    "ORDER BY amount ASC) AS rn FROM orders) WHERE rn = 1",
    "in_subquery": "SELECT id FROM orders WHERE customer IN (SELECT name FROM people WHERE city <> 'Paris')",
    "window_tumble_agg": "SELECT window_start, window_end, u, COUNT(*) AS n FROM "
    "TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end, u",
    "window_hop_agg": "SELECT window_start, window_end, COUNT(*) AS n FROM "
    "TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '2' SECOND)) "
    "GROUP BY window_start, window_end",
    "over_rows": "SELECT u, ts, COUNT(*) OVER (PARTITION BY u ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) "
    "AS c FROM clicks",
    "over_range": "SELECT u, ts, COUNT(*) OVER (ORDER BY ts RANGE BETWEEN INTERVAL '1' SECOND PRECEDING AND "
    "CURRENT ROW) AS c FROM clicks",
    "window_join": "SELECT L.u, L.window_start, L.n, R.m FROM "
    "(SELECT u, window_start, window_end, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), "
    "INTERVAL '1' SECOND)) GROUP BY u, window_start, window_end) L JOIN "
    "(SELECT u, window_start, window_end, MAX(ts) AS m FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), "
    "INTERVAL '1' SECOND)) GROUP BY u, window_start, window_end) R "
    "ON L.u = R.u AND L.window_start = R.window_start AND L.window_end = R.window_end",
    "window_top_n": "SELECT * FROM (SELECT window_start, u, ts, ROW_NUMBER() OVER (PARTITION BY window_start, "
    "window_end ORDER BY ts DESC) AS rn FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '2' SECOND))) "
    "WHERE rn <= 2",
    "error_unknown_column": "SELECT nope FROM orders",
    "error_unknown_table": "SELECT a FROM missing_table",
    "error_parse": "SELECT id,\nFROM orders",
    "error_type_mismatch": "SELECT id FROM orders WHERE customer > 5 AND amount = 'x'",
}


MARK = "#### query "


def write_clicks(path: str = CLICKS) -> None:
    with open(path, "w") as f:
        f.writelines(f"{user},{ts}\n" for user, ts in CLICK_ROWS)


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
            if query.startswith("INSERT"):
                t_env.execute_sql(query).wait()
            else:
                t_env.execute_sql(query).print()
        except Exception as exc:  # the error is the fact
            lines = str(exc).splitlines()
            java = [line for line in lines if "org.apache.flink" in line and "Exception:" in line]
            print((java[0].lstrip(": ") if java else lines[0]), flush=True)
    print(MARK + "end", flush=True)


def main() -> None:
    write_clicks()
    if sys.argv[1:2] == ["--child"]:
        run_queries(sys.argv[2:])
        return
    out = subprocess.run([sys.executable, __file__, "--child", *sys.argv[1:]], capture_output=True, text=True).stdout
    name = None
    chunks: dict[str, list[str]] = {}
    for line in out.splitlines():
        if line.startswith(MARK):
            name = line[len(MARK) :]
            chunks[name] = []
        elif name is not None:
            chunks[name].append(line)
    for name, lines in chunks.items():
        if name != "end":
            with open(os.path.join(HERE, f"{name}.txt"), "w") as f:
                f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
