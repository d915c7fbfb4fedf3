"""BATCH SQL: a GROUP BY + join over generated Parquet files — strom vs DuckDB vs Spark SQL (``local[2]``), the
same files, results checked equal (issue 34, "Measure").

    python benchmarks/sql_batch_join.py --rows 1000000 [--spark] [--rounds 2]

``orders`` (order_id, user_id, amount; ``--rows`` rows in 4 files, row groups of 65 536) and ``users`` (user_id,
region; 1 000 rows) as Parquet; the query: ``SELECT u.region, COUNT(*), SUM(o.amount) FROM orders o JOIN users u ON
o.user_id = u.user_id GROUP BY u.region``. strom reads the files as ``filesystem`` tables of format ``parquet`` in
BATCH mode at parallelism 2 (one-slot TaskManagers): by default on the Arrow batch operators
(``strom/table/planner/batch_physical.py``), with ``--row-path`` also on the row operators; its time is
``execute_sql().collect()``'s (TaskManager start included). DuckDB (``bench`` extra) reads the files with
``read_parquet``; Spark's session is started before the clock. Each run prints its wall time and its CPU time:
strom's and DuckDB's as this process's plus its ended children's (the TaskManagers), Spark's as its JVM's
(``/proc/<pid>/stat``).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

QUERY = (
    "SELECT u.region, COUNT(*) AS n, SUM(o.amount) AS total FROM orders o JOIN users u ON o.user_id = u.user_id "
    "GROUP BY u.region"
)
USERS, REGIONS, FILES = 1000, 10, 4


def write_files(root: Path, rows: int) -> tuple[Path, Path]:
    orders, users = root / "orders", root / "users"
    orders.mkdir()
    users.mkdir()
    per = rows // FILES
    for f in range(FILES):
        lo, hi = f * per, rows if f == FILES - 1 else (f + 1) * per
        ids = pa.array(range(lo, hi), pa.int64())
        table = pa.table(
            {
                "order_id": ids,
                "user_id": pa.array([(i * 7919) % USERS for i in range(lo, hi)], pa.int64()),
                "amount": pa.array([i % 100 for i in range(lo, hi)], pa.int64()),
            }
        )
        pq.write_table(table, orders / f"part-{f}.parquet", row_group_size=65_536)
    regions = [f"region-{u % REGIONS}" for u in range(USERS)]
    pq.write_table(
        pa.table({"user_id": pa.array(range(USERS), pa.int64()), "region": pa.array(regions, pa.string())}),
        users / "part-0.parquet",
    )
    return orders, users


def expected(rows: int) -> list[tuple[str, int, int]]:
    counts: dict[str, list[int]] = {}
    for i in range(rows):
        c = counts.setdefault(f"region-{((i * 7919) % USERS) % REGIONS}", [0, 0])
        c[0] += 1
        c[1] += i % 100
    return sorted((r, n, t) for r, (n, t) in counts.items())


def strom_run(orders: Path, users: Path, parallelism: int, *, arrow: bool = True) -> list[tuple[str, int, int]]:
    from strom.table import EnvironmentSettings, TableEnvironment
    from strom.table.planner import batch_physical

    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("parallelism.default", str(parallelism))
    t_env.get_config().set("taskmanager.numberOfTaskSlots", "1")
    for name, path, columns in (
        ("orders", orders, "order_id BIGINT, user_id BIGINT, amount BIGINT"),
        ("users", users, "user_id BIGINT, region STRING"),
    ):
        t_env.execute_sql(
            f"CREATE TABLE {name} ({columns}) WITH ('connector' = 'filesystem', 'path' = '{path}', "
            "'format' = 'parquet')"
        )
    planned = batch_physical.translate_batch
    if not arrow:  # the row operators (the streaming join and aggregation, changelog materialized)
        batch_physical.translate_batch = lambda translator, rel: None  # type: ignore[assignment]
    try:
        return sorted((r[0], r[1], r[2]) for r in t_env.execute_sql(QUERY).collect())
    finally:
        batch_physical.translate_batch = planned


def duckdb_run(orders: Path, users: Path) -> list[tuple[str, int, int]]:
    import duckdb

    con = duckdb.connect()
    con.execute(f"CREATE VIEW orders AS SELECT * FROM read_parquet('{orders}/*.parquet')")
    con.execute(f"CREATE VIEW users AS SELECT * FROM read_parquet('{users}/*.parquet')")
    return sorted((r, int(n), int(t)) for r, n, t in con.execute(QUERY).fetchall())


def spark_session() -> Any:
    from pyspark.sql import SparkSession

    return SparkSession.builder.master("local[2]").appName("strom-sql-batch").getOrCreate()


def spark_run(spark: Any, orders: Path, users: Path) -> list[tuple[str, int, int]]:
    spark.read.parquet(str(orders)).createOrReplaceTempView("orders")
    spark.read.parquet(str(users)).createOrReplaceTempView("users")
    return sorted((r[0], int(r[1]), int(r[2])) for r in spark.sql(QUERY).collect())


def _cpu(spark: Any) -> float:
    """CPU seconds of this process and its ended children, plus Spark's JVM's when there is one."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    total = me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime
    if spark is not None:
        pid = spark.sparkContext._gateway.proc.pid
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return total


def timed(fn: Any, spark: Any = None) -> tuple[float, float, Any]:
    t, c = time.monotonic(), _cpu(spark)
    out = fn()
    return time.monotonic() - t, _cpu(spark) - c, out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--parallelism", type=int, default=2)
    ap.add_argument("--spark", action="store_true")
    ap.add_argument("--row-path", action="store_true", help="strom on its row operators too")
    args = ap.parse_args()
    want = expected(args.rows)
    spark = spark_session() if args.spark else None
    walls: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    ok = True
    with tempfile.TemporaryDirectory(prefix="strom-sql-batch-") as tmp:
        orders, users = write_files(Path(tmp), args.rows)
        runs: dict[str, Any] = {
            f"strom BATCH SQL p={args.parallelism}": lambda: strom_run(orders, users, args.parallelism),
            "DuckDB": lambda: duckdb_run(orders, users),
        }
        if args.row_path:
            runs[f"strom BATCH SQL p={args.parallelism}, row operators"] = lambda: strom_run(
                orders, users, args.parallelism, arrow=False
            )
        if spark is not None:
            runs["Spark SQL local[2]"] = lambda: spark_run(spark, orders, users)
        for r in range(args.rounds):
            for name, fn in runs.items():
                wall, cpu, got = timed(fn, spark if name.startswith("Spark") else None)
                walls.setdefault(name, []).append(wall)
                cpus.setdefault(name, []).append(cpu)
                same = got == want
                ok = ok and same
                verdict = "equal" if same else f"DIFFERS {got}"
                print(f"round {r + 1} {name}: wall {wall:.2f} s, CPU {cpu:.2f} s, {verdict}", flush=True)
    for name, ws in walls.items():
        cs = cpus[name]
        print(
            f"{name}: wall median {statistics.median(ws):.2f} s (min {min(ws):.2f}), CPU median "
            f"{statistics.median(cs):.2f} s over {len(ws)} rounds; load average {os.getloadavg()[0]:.1f}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
