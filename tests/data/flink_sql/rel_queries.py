"""The program that produced the ``rel_*.txt`` facts beside it: run in PyFlink 2.3.0 (``python rel_queries.py``).

Relational constructs: ORDER BY (BATCH sort, streaming Top-N and temporal sort), UNION / INTERSECT / EXCEPT
[ALL], NOT IN, scalar and uncorrelated subqueries, UNNEST, LATERAL TABLE and RANK / DENSE_RANK. Each query's
``TableResult.print()`` output goes to ``rel_<name>.txt`` at parallelism 1 (STREAMING, or BATCH for the names
starting with ``batch_``); an error is written as its exception's class and message.
"""

import os
import subprocess
import sys

from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.udf import udtf

HERE = os.path.dirname(os.path.abspath(__file__))
CLICKS = "/tmp/strom-flink-rel-clicks.csv"
ORDERS_CSV = "/tmp/strom-flink-rel-orders.csv"
ORDER_ROWS = [(1, "alice", 12), (2, "bob", 30), (3, "alice", 7), (4, "carol", 5), (5, "bob", 30)]
PEOPLE_CSV = "/tmp/strom-flink-rel-people.csv"
PEOPLE_ROWS = [("alice", "Berlin"), ("bob", "Paris"), ("erin", "Oslo")]
CLICK_ROWS = [
    ("ann", "2024-01-01 00:00:01.200"),
    ("bob", "2024-01-01 00:00:00.500"),
    ("ann", "2024-01-01 00:00:00.100"),
    ("ann", "2024-01-01 00:00:03.300"),
    ("bob", "2024-01-01 00:00:02.900"),
    ("ann", "2024-01-01 00:00:04.000"),
]

SETUP = [
    "CREATE TEMPORARY VIEW orders AS SELECT * FROM (VALUES "
    "(1, 'alice', 'books', 12), (2, 'bob', 'games', 30), (3, 'alice', 'games', 7), "
    "(4, 'carol', 'books', 5), (5, 'bob', 'books', 30), (6, 'alice', 'books', 1), (7, 'dave', 'toys', 12)) "
    "AS t(id, customer, category, amount)",
    "CREATE TEMPORARY VIEW people AS SELECT * FROM (VALUES ('alice', 'Berlin'), ('bob', 'Paris'), "
    "('carol', 'Rome'), ('erin', 'Oslo')) AS t(name, city)",
    "CREATE TEMPORARY VIEW nums AS SELECT * FROM (VALUES (5), (CAST(NULL AS INT))) AS t(n)",
    "CREATE TEMPORARY VIEW bags AS SELECT * FROM (VALUES (1, ARRAY['a', 'b']), (2, ARRAY['c']), "
    "(3, CAST(NULL AS ARRAY<STRING>))) AS t(id, tags)",
    f"CREATE TABLE orders_fs (id INT, customer STRING, amount INT) WITH ('connector' = 'filesystem', "
    f"'path' = '{ORDERS_CSV}', 'format' = 'csv')",
    f"CREATE TABLE people_fs (name STRING, city STRING) WITH ('connector' = 'filesystem', "
    f"'path' = '{PEOPLE_CSV}', 'format' = 'csv')",
    f"CREATE TABLE clicks (u STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ("
    f"'connector' = 'filesystem', 'path' = '{CLICKS}', 'format' = 'csv')",
]

QUERIES = {
    "batch_order_by": "SELECT id, customer, amount FROM orders ORDER BY amount DESC, id",
    "batch_order_by_limit": "SELECT id, customer, amount FROM orders ORDER BY amount DESC, id LIMIT 3 OFFSET 1",
    "batch_order_by_nulls": "SELECT n FROM nums ORDER BY n",
    "order_by_limit": "SELECT id, customer, amount FROM orders ORDER BY amount DESC, id LIMIT 2",
    "order_by_limit_offset": "SELECT id, amount FROM orders ORDER BY amount, id LIMIT 2 OFFSET 1",
    "order_by_time": "SELECT u, ts FROM clicks ORDER BY ts",
    "order_by_time_then": "SELECT u, ts FROM clicks ORDER BY ts, u DESC",
    "error_order_by": "SELECT id FROM orders ORDER BY amount",
    "error_order_by_time_desc": "SELECT u, ts FROM clicks ORDER BY ts DESC",
    "union": "SELECT customer FROM orders UNION SELECT name FROM people",
    "union_one_input": "SELECT category FROM orders UNION SELECT category FROM orders",
    "intersect": "SELECT customer FROM orders INTERSECT SELECT name FROM people",
    "intersect_all": "SELECT category FROM orders INTERSECT ALL SELECT category FROM orders WHERE amount > 6",
    "except": "SELECT name FROM people EXCEPT SELECT customer FROM orders",
    "except_all": "SELECT category FROM orders EXCEPT ALL SELECT category FROM orders WHERE amount > 10",
    "batch_union": "SELECT customer FROM orders UNION SELECT name FROM people",
    "batch_intersect_all": "SELECT category FROM orders INTERSECT ALL SELECT category FROM orders WHERE amount > 6",
    "batch_except_all": "SELECT category FROM orders EXCEPT ALL SELECT category FROM orders WHERE amount > 10",
    "not_in": "SELECT id FROM orders WHERE customer NOT IN (SELECT name FROM people WHERE city <> 'Paris')",
    "not_in_null": "SELECT id FROM orders WHERE amount NOT IN (SELECT n FROM nums)",
    "not_in_no_null": "SELECT id FROM orders WHERE amount NOT IN (SELECT n FROM nums WHERE n IS NOT NULL)",
    "scalar_select": "SELECT id, amount, (SELECT MAX(amount) FROM orders) AS hi FROM orders",
    "scalar_where": "SELECT id, amount FROM orders WHERE amount > (SELECT AVG(amount) FROM orders)",
    "scalar_correlated": "SELECT id, (SELECT COUNT(*) FROM orders o2 WHERE o2.customer = o.customer) AS n "
    "FROM orders o",
    "scalar_correlated_count": "SELECT name, (SELECT COUNT(*) FROM orders_fs o WHERE o.customer = p.name) AS n "
    "FROM people_fs p",
    "scalar_correlated_max": "SELECT name, (SELECT MAX(amount) FROM orders_fs o WHERE o.customer = p.name "
    "AND o.amount < 30) AS hi FROM people_fs p",
    "scalar_correlated_where": "SELECT id, amount FROM orders_fs o WHERE amount >= "
    "(SELECT MAX(amount) FROM orders_fs o2 WHERE o2.customer = o.customer)",
    "exists_uncorrelated": "SELECT id FROM orders WHERE EXISTS (SELECT * FROM people WHERE city = 'Rome')",
    "not_exists_uncorrelated": "SELECT id FROM orders WHERE NOT EXISTS (SELECT * FROM people WHERE city = 'Rome')",
    "unnest": "SELECT id, x FROM bags CROSS JOIN UNNEST(tags) AS t(x)",
    "unnest_left": "SELECT id, x FROM bags LEFT JOIN UNNEST(tags) AS t(x) ON TRUE",
    "lateral": "SELECT name, ch, pos FROM people, LATERAL TABLE(vowels(name)) AS t(ch, pos)",
    "lateral_join_on_true": "SELECT name, ch, pos FROM people JOIN LATERAL TABLE(vowels(name)) AS t(ch, pos) ON TRUE",
    "lateral_left": "SELECT name, ch, pos FROM people LEFT JOIN LATERAL TABLE(vowels(name)) AS t(ch, pos) ON TRUE",
    "rank": "SELECT * FROM (SELECT id, category, amount, RANK() OVER (PARTITION BY category ORDER BY amount DESC) "
    "AS r FROM orders) WHERE r <= 2",
    "dense_rank": "SELECT * FROM (SELECT id, category, amount, DENSE_RANK() OVER (PARTITION BY category "
    "ORDER BY amount DESC) AS r FROM orders) WHERE r <= 2",
    "rank_no_number": "SELECT id, category, amount FROM (SELECT *, RANK() OVER (PARTITION BY category "
    "ORDER BY amount DESC) AS r FROM orders) WHERE r <= 1",
    "batch_rank": "SELECT * FROM (SELECT id, category, amount, RANK() OVER (PARTITION BY category "
    "ORDER BY amount DESC) AS r FROM orders) WHERE r <= 2",
    "batch_dense_rank": "SELECT * FROM (SELECT id, category, amount, DENSE_RANK() OVER (PARTITION BY category "
    "ORDER BY amount DESC) AS r FROM orders) WHERE r <= 2",
}


MARK = "#### query "


@udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
def vowels(s):
    for i, ch in enumerate(s):
        if ch in "ae":
            yield ch, i


def write_clicks(path: str = CLICKS) -> None:
    with open(path, "w") as f:
        f.writelines(f"{user},{ts}\n" for user, ts in CLICK_ROWS)
    with open(ORDERS_CSV, "w") as f:
        f.writelines(f"{i},{c},{a}\n" for i, c, a in ORDER_ROWS)
    with open(PEOPLE_CSV, "w") as f:
        f.writelines(f"{n},{c}\n" for n, c in PEOPLE_ROWS)


def environment(settings: EnvironmentSettings) -> TableEnvironment:
    t_env = TableEnvironment.create(settings)
    t_env.get_config().set("parallelism.default", "1")
    t_env.create_temporary_function("vowels", vowels)
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
            with open(os.path.join(HERE, f"rel_{name}.txt"), "w") as f:
                f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
