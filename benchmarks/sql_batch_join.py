"""BATCH SQL: a GROUP BY + join over generated Parquet files — strom vs DuckDB vs Spark SQL (``local[2]``), the
same files, results checked equal (issue 34, "Measure").

    python benchmarks/sql_batch_join.py --rows 1000000 [--spark] [--rounds 2]

``orders`` (order_id, user_id, amount; ``--rows`` rows in 4 files, row groups of 65 536) and ``users`` (user_id,
region; 1 000 rows) as Parquet; the query: ``SELECT u.region, COUNT(*), SUM(o.amount) FROM orders o JOIN users u ON
o.user_id = u.user_id GROUP BY u.region``. strom reads the files with the DataStream ``FileSource``
(``ParquetColumnarRowInputFormat``) and ``from_data_stream`` — the ``parquet`` table format is another part's work
— in BATCH mode at parallelism 2; its time is ``execute().collect()``'s wall time (TaskManager start included).
DuckDB (``bench`` extra) reads the files with ``read_parquet``; Spark's session is started before the clock.
"""

from __future__ import annotations

import argparse
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


def strom_run(orders: Path, users: Path, parallelism: int) -> list[tuple[str, int, int]]:
    from strom import Configuration, StreamExecutionEnvironment, WatermarkStrategy
    from strom.api.typeinfo import Types
    from strom.connectors.file_system import FileSource
    from strom.formats import ParquetColumnarRowInputFormat
    from strom.table import EnvironmentSettings, StreamTableEnvironment
    from strom.table.expressions import col

    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"taskmanager.numberOfTaskSlots": 1}))
    env.set_parallelism(parallelism)
    t_env = StreamTableEnvironment.create(env, EnvironmentSettings.in_batch_mode())

    def table(path: Path, names: list[str], types: list[Any]) -> Any:
        source = FileSource.for_bulk_file_format(ParquetColumnarRowInputFormat(names), str(path)).build()
        stream = env.from_source(source, WatermarkStrategy.no_watermarks(), path.name)
        typed = stream.map(_Positional(len(names)), output_type=Types.ROW_NAMED(names, types))
        return t_env.from_data_stream(typed, *(col(n) for n in names))

    t_env.create_temporary_view("orders", table(orders, ["order_id", "user_id", "amount"], [Types.LONG()] * 3))
    t_env.create_temporary_view("users", table(users, ["user_id", "region"], [Types.LONG(), Types.STRING()]))
    return sorted((r[0], r[1], r[2]) for r in t_env.sql_query(QUERY).execute().collect())


class _Positional:
    """A named Parquet row as a positional Row of its first ``n`` fields (the typed stream ``from_data_stream``
    reads)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __call__(self, row: Any) -> Any:
        from strom.api.row import _create_row

        return _create_row(None, row._values[: self.n])


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


def timed(fn: Any) -> tuple[float, Any]:
    t = time.monotonic()
    out = fn()
    return time.monotonic() - t, out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--parallelism", type=int, default=2)
    ap.add_argument("--spark", action="store_true")
    args = ap.parse_args()
    want = expected(args.rows)
    spark = spark_session() if args.spark else None
    walls: dict[str, list[float]] = {}
    ok = True
    with tempfile.TemporaryDirectory(prefix="strom-sql-batch-") as tmp:
        orders, users = write_files(Path(tmp), args.rows)
        runs: dict[str, Any] = {
            f"strom BATCH SQL p={args.parallelism}": lambda: strom_run(orders, users, args.parallelism),
            "DuckDB": lambda: duckdb_run(orders, users),
        }
        if spark is not None:
            runs["Spark SQL local[2]"] = lambda: spark_run(spark, orders, users)
        for r in range(args.rounds):
            for name, fn in runs.items():
                wall, got = timed(fn)
                walls.setdefault(name, []).append(wall)
                same = got == want
                ok = ok and same
                print(f"round {r + 1} {name}: {wall:.2f} s, {'equal' if same else f'DIFFERS {got}'}", flush=True)
    for name, ws in walls.items():
        print(f"{name}: median {statistics.median(ws):.2f} s (min {min(ws):.2f}) over {len(ws)} rounds")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
