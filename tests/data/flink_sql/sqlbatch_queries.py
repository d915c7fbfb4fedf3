"""BATCH aggregations and joins over two small tables with NULLs (sqlbatch: the Arrow batch operators' facts).
Run with PyFlink 2.3:
    python sqlbatch_queries.py OUT.txt
writes, per query, ``## name`` and the final table at parallelism 2 (rows as ``repr(tuple(row))``, sorted).
Flink reads the rows from VALUES views (PyFlink 2.3 ships no parquet format jar); the strom test writes the same rows
as Parquet files and reads them through the filesystem connector. Importing this module does not import pyflink."""

from __future__ import annotations

import sys
from decimal import Decimal

O_COLUMNS = (
    ("id", "INT"),
    ("uid", "BIGINT"),
    ("amt", "INT"),
    ("price", "DECIMAL(10, 2)"),
    ("x", "DOUBLE"),
    ("k", "STRING"),
)
U_COLUMNS = (("uid", "BIGINT"), ("r", "STRING"))
O_ROWS = [
    (1, 1, 10, Decimal("1.10"), 1.5, "a"),
    (2, 1, -7, Decimal("2.25"), None, "a"),
    (3, 2, None, None, 2.25, "a"),
    (4, 2, 3, Decimal("0.05"), -0.5, "b"),
    (5, None, 5, Decimal("9.99"), 4.0, "b"),
    (6, 3, -3, Decimal("-1.00"), 0.25, None),
    (7, 3, None, Decimal("3.00"), None, None),
    (8, 4, 8, None, 8.0, "c"),
    (9, 9, 1, Decimal("1.00"), 1.0, "c"),
    (10, None, None, None, None, "d"),
    (11, 1, 2, Decimal("0.01"), 0.5, "a"),
    (12, 2, -5, Decimal("5.55"), -2.0, "b"),
]
U_ROWS = [(1, "north"), (2, "south"), (3, "north"), (3, "east"), (None, "west"), (7, "east")]
QUERIES = {
    "group": "SELECT k, COUNT(*), COUNT(amt), SUM(amt), MIN(amt), MAX(amt), AVG(amt), SUM(price), MIN(price), "
    "MAX(x), SUM(x), AVG(x) FROM o GROUP BY k",
    "global": "SELECT COUNT(*), COUNT(k), SUM(amt), AVG(amt), SUM(price), AVG(x), MIN(k), MAX(k) FROM o",
    "global_empty": "SELECT COUNT(*), SUM(amt), AVG(amt), MAX(k) FROM o WHERE amt > 1000",
    "group_empty": "SELECT k, COUNT(*) FROM o WHERE amt > 1000 GROUP BY k",
    "multi_key": "SELECT k, uid, COUNT(*), MAX(price), MIN(k) FROM o GROUP BY k, uid",
    "filter": "SELECT k, SUM(amt * 2), COUNT(*) FROM o WHERE amt > 0 AND x IS NOT NULL GROUP BY k",
    "join_agg": "SELECT u.r, COUNT(*) AS n, SUM(o.amt) AS total, AVG(o.amt) FROM o JOIN u ON o.uid = u.uid "
    "GROUP BY u.r",
    "join": "SELECT o.id, o.uid, u.r FROM o JOIN u ON o.uid = u.uid",
    "left": "SELECT o.id, u.r FROM o LEFT JOIN u ON o.uid = u.uid",
    "right": "SELECT o.id, u.uid, u.r FROM o RIGHT JOIN u ON o.uid = u.uid",
    "full": "SELECT o.id, u.uid, u.r FROM o FULL JOIN u ON o.uid = u.uid",
    "left_agg": "SELECT u.r, COUNT(o.id), SUM(o.price), MAX(o.x) FROM u LEFT JOIN o ON u.uid = o.uid GROUP BY u.r",
}


def _literal(value: object, sql_type: str) -> str:
    if value is None:
        return f"CAST(NULL AS {sql_type})"
    if isinstance(value, str):
        return f"CAST('{value}' AS {sql_type})"
    return f"CAST({value} AS {sql_type})"


def values_view(name: str, columns: tuple[tuple[str, str], ...], rows: list[tuple[object, ...]]) -> str:
    body = ", ".join(
        "(" + ", ".join(_literal(v, t) for v, (_, t) in zip(row, columns, strict=True)) + ")" for row in rows
    )
    return f"CREATE TEMPORARY VIEW {name} AS SELECT * FROM (VALUES {body}) AS t({', '.join(c for c, _ in columns)})"


def main(out: str) -> None:
    from pyflink.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("parallelism.default", "2")
    t_env.execute_sql(values_view("o", O_COLUMNS, O_ROWS))
    t_env.execute_sql(values_view("u", U_COLUMNS, U_ROWS))
    lines = []
    for name, query in QUERIES.items():
        with t_env.execute_sql(query).collect() as results:
            rows = sorted(repr(tuple(r)) for r in results)
        lines += [f"## {name}", *rows]
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
