"""A TPC-H Q3-like two-stage aggregation + join over generated Parquet files, written with the DataStream API: strom
BATCH vs strom STREAMING vs Spark's own DataFrame job (``local[2]``) on the same files, every result checked equal
to a plain Python evaluation of the query (issue 29, "Measure").

The files (``--scale`` 1.0 = TPC-H's SF1 row counts: 150 000 customers, 1.5 M orders, ~6 M line items; written
once under ``--dir``, deterministic, reused while the scale matches): ``customer`` (c_custkey, c_mktsegment),
``orders`` (o_orderkey, o_custkey, o_orderdate, o_shippriority), ``lineitem`` (l_orderkey, l_extendedprice in
cents, l_discount in percent, l_shipdate), dates as Parquet ``date32``, row groups of 65 536. The query (Q3 with
integer money, so every engine's sums are exact)::

    SELECT l_orderkey, SUM(l_extendedprice * (100 - l_discount)) AS revenue, o_orderdate, o_shippriority
    FROM customer, orders, lineitem
    WHERE c_mktsegment = 'BUILDING' AND c_custkey = o_custkey AND l_orderkey = o_orderkey
      AND o_orderdate < DATE '1995-03-15' AND l_shipdate > DATE '1995-03-15'
    GROUP BY l_orderkey, o_orderdate, o_shippriority ORDER BY revenue DESC, o_orderdate, l_orderkey LIMIT 10

strom, p=2 on two one-slot TaskManagers: three ``FileSource`` s (``ParquetColumnarRowInputFormat``, only the
columns used) → filters → customer ⋈ orders on custkey (a ``KeyedCoProcessFunction``) and line items → (orderkey,
revenue) → ``key_by(orderkey).sum(1)`` (in BATCH: a combiner before the shuffle, then the final sums) → ⋈ the
joined orders on orderkey (a second ``KeyedCoProcessFunction``) → a top-10 sink at p=1 (the latest row per order:
STREAMING's sums arrive as running values, BATCH's once). Spark: ``spark.read.parquet`` → where → join → join →
groupBy().agg(sum) → orderBy → limit(10) → collect, its session started before the timing. Reported per engine: job
time (strom: ``execute()``, TaskManager start included), CPU time (strom: the TaskManager processes; Spark: its
JVM), median over ``--rounds`` (the order of the engines alternates).

    python benchmarks/batch_q3_parquet.py --scale 0.1 --rounds 3 [--no-spark] [--batch KEY=VALUE ...]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import resource
import statistics
import tempfile
import time
from collections.abc import Iterable
from typing import Any

import cloudpickle
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from strom import (
    Configuration,
    KeyedCoProcessFunction,
    ListStateDescriptor,
    StreamExecutionEnvironment,
    ValueStateDescriptor,
    WatermarkStrategy,
)
from strom.api.execution_mode import RuntimeExecutionMode
from strom.api.sink import Sink, SinkWriter, SinkWriterContext
from strom.connectors.file_system import FileSource
from strom.formats import ParquetColumnarRowInputFormat

SEGMENTS = ["AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"]
CUTOFF = datetime.date(1995, 3, 15)
FIRST_DAY = datetime.date(1992, 1, 1)
ORDER_DAYS = 2405  # 1992-01-01 .. 1998-08-02, as TPC-H's o_orderdate
ROW_GROUP = 65_536
FILES = {"customer": 1, "orders": 2, "lineitem": 4}

Q3Row = tuple[int, int, str, int]  # (orderkey, revenue, orderdate ISO, shippriority)


# -- the files ------------------------------------------------------------------------------------------------------
def _tables(scale: float) -> dict[str, pa.Table]:
    rng = np.random.default_rng(3)
    n_cust, n_orders = max(1, int(150_000 * scale)), max(1, int(1_500_000 * scale))
    custkey = np.arange(1, n_cust + 1, dtype=np.int64)
    segment = rng.integers(0, len(SEGMENTS), n_cust)
    orderkey = np.arange(1, n_orders + 1, dtype=np.int64)
    o_custkey = rng.integers(1, n_cust + 1, n_orders, dtype=np.int64)
    o_days = rng.integers(0, ORDER_DAYS, n_orders).astype(np.int32)
    epoch = (FIRST_DAY - datetime.date(1970, 1, 1)).days
    lines = rng.integers(1, 8, n_orders)
    l_orderkey = np.repeat(orderkey, lines)
    l_days = np.repeat(o_days, lines) + rng.integers(1, 122, len(l_orderkey)).astype(np.int32)
    return {
        "customer": pa.table(
            {"c_custkey": custkey, "c_mktsegment": pa.array(np.array(SEGMENTS, dtype=object)[segment], pa.string())}
        ),
        "orders": pa.table(
            {
                "o_orderkey": orderkey,
                "o_custkey": o_custkey,
                "o_orderdate": pa.array(o_days + epoch, pa.date32()),
                "o_shippriority": pa.array(rng.integers(0, 2, n_orders), pa.int32()),
            }
        ),
        "lineitem": pa.table(
            {
                "l_orderkey": l_orderkey,
                "l_extendedprice": rng.integers(90_000, 10_500_000, len(l_orderkey), dtype=np.int64),
                "l_discount": rng.integers(0, 11, len(l_orderkey), dtype=np.int64),
                "l_shipdate": pa.array(l_days + epoch, pa.date32()),
            }
        ),
    }


def write_files(directory: str, scale: float) -> dict[str, str]:
    """The three tables' directories (written unless a marker says they are there at this scale)."""
    marker = os.path.join(directory, f"_scale-{scale}")
    paths = {name: os.path.join(directory, name) for name in FILES}
    if os.path.exists(marker):
        return paths
    for name, table in _tables(scale).items():
        os.makedirs(paths[name], exist_ok=True)
        for old in os.listdir(paths[name]):
            os.remove(os.path.join(paths[name], old))
        per = -(-table.num_rows // FILES[name])
        for i in range(FILES[name]):
            part = table.slice(i * per, per)
            pq.write_table(part, os.path.join(paths[name], f"part-{i}.parquet"), row_group_size=ROW_GROUP)
    for old in os.listdir(directory):
        if old.startswith("_scale-"):
            os.remove(os.path.join(directory, old))
    open(marker, "w").close()  # an empty marker
    return paths


def top10(rows: Iterable[Q3Row]) -> list[Q3Row]:
    return sorted(rows, key=lambda r: (-r[1], r[2], r[0]))[:10]


def expected(paths: dict[str, str]) -> list[Q3Row]:
    """The query evaluated by a plain Python loop over the files."""
    cust = pq.read_table(paths["customer"]).to_pydict()
    building = {k for k, s in zip(cust["c_custkey"], cust["c_mktsegment"], strict=True) if s == "BUILDING"}
    o = pq.read_table(paths["orders"]).to_pydict()
    orders = {
        k: (d, p)
        for k, c, d, p in zip(o["o_orderkey"], o["o_custkey"], o["o_orderdate"], o["o_shippriority"], strict=True)
        if d < CUTOFF and c in building
    }
    li = pq.read_table(paths["lineitem"]).to_pydict()
    revenue: dict[int, int] = {}
    cols = (li["l_orderkey"], li["l_extendedprice"], li["l_discount"], li["l_shipdate"])
    for k, price, disc, ship in zip(*cols, strict=True):
        if ship > CUTOFF and k in orders:
            revenue[k] = revenue.get(k, 0) + price * (100 - disc)
    return top10((k, r, orders[k][0].isoformat(), orders[k][1]) for k, r in revenue.items())


# -- strom ----------------------------------------------------------------------------------------------------------
class CustomerOrders(KeyedCoProcessFunction):
    """customer ⋈ orders on custkey: a qualifying customer (input 1, once per key) lets its orders (input 2)
    through, the ones that came before it from a list."""

    def open(self, ctx: Any) -> None:
        self.known = ctx.get_state(ValueStateDescriptor("customer"))
        self.waiting = ctx.get_list_state(ListStateDescriptor("orders"))

    def process_element1(self, custkey: int, ctx: Any) -> Iterable[Any]:
        self.known.update(True)
        waiting = list(self.waiting.get())
        self.waiting.clear()
        return waiting

    def process_element2(self, order: tuple[int, Any, int], ctx: Any) -> Iterable[Any] | None:
        if self.known.value():
            return (order,)
        self.waiting.add(order)
        return None


class OrderRevenue(KeyedCoProcessFunction):
    """joined orders (input 1, once per key) ⋈ revenue per order (input 2: one final sum in BATCH, running sums in
    STREAMING) on orderkey: a row whenever both sides are known."""

    def open(self, ctx: Any) -> None:
        self.order = ctx.get_state(ValueStateDescriptor("order"))
        self.revenue = ctx.get_state(ValueStateDescriptor("revenue"))

    def process_element1(self, order: tuple[int, Any, int], ctx: Any) -> Iterable[Any] | None:
        self.order.update(order)
        revenue = self.revenue.value()
        return None if revenue is None else ((order[0], revenue, order[1], order[2]),)

    def process_element2(self, sums: tuple[int, int], ctx: Any) -> Iterable[Any] | None:
        self.revenue.update(sums[1])
        order = self.order.value()
        return None if order is None else ((order[0], sums[1], order[1], order[2]),)


class _Top10Writer(SinkWriter[Any]):
    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir
        self.latest: dict[int, Any] = {}

    def write(self, element: Any) -> None:
        self.latest[element[0]] = element

    def write_batch(self, elements: list[Any]) -> None:
        self.latest.update(zip(map(_first, elements), elements, strict=True))

    def close(self) -> None:
        rows = top10((k, r, d.isoformat(), p) for k, r, d, p in self.latest.values())
        with open(os.path.join(self.out_dir, f"top10-{os.getpid()}-{id(self)}.json"), "w") as f:
            json.dump(rows, f)


def _first(t: Any) -> Any:
    return t[0]


class Top10Sink(Sink[Any]):
    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir

    def create_writer(self, context: SinkWriterContext) -> SinkWriter[Any]:
        return _Top10Writer(self.out_dir)


def _parquet(env: StreamExecutionEnvironment, path: str, columns: list[str]) -> Any:
    source = FileSource.for_bulk_file_format(ParquetColumnarRowInputFormat(columns), path).build()
    return env.from_source(source, WatermarkStrategy.no_watermarks(), os.path.basename(path))


def build_job(env: StreamExecutionEnvironment, paths: dict[str, str], out_dir: str) -> None:
    cutoff = CUTOFF
    customers = (
        _parquet(env, paths["customer"], ["c_custkey", "c_mktsegment"])
        .filter(lambda c: c[1] == "BUILDING")
        .map(lambda c: c[0])
    )
    orders = (
        _parquet(env, paths["orders"], ["o_orderkey", "o_custkey", "o_orderdate", "o_shippriority"])
        .filter(lambda o: o[2] < cutoff)
        .map(lambda o: (o[1], (o[0], o[2], o[3])))
    )
    joined = customers.connect(orders).key_by(lambda c: c, lambda o: o[0]).process(_Unwrap(CustomerOrders()))
    revenue = (
        _parquet(env, paths["lineitem"], ["l_orderkey", "l_extendedprice", "l_discount", "l_shipdate"])
        .filter(lambda li: li[3] > cutoff)
        .map(lambda li: (li[0], li[1] * (100 - li[2])))
        .key_by(_first)
        .sum(1)
    )
    (
        joined.connect(revenue)
        .key_by(_first, _first)
        .process(OrderRevenue())
        .sink_to(Top10Sink(out_dir))
        .set_parallelism(1)
    )


class _Unwrap(KeyedCoProcessFunction):
    """Hands the orders side its (orderkey, date, priority) without the custkey it was keyed by."""

    def __init__(self, inner: CustomerOrders) -> None:
        self.inner = inner

    def open(self, ctx: Any) -> None:
        self.inner.open(ctx)

    def process_element1(self, value: Any, ctx: Any) -> Iterable[Any]:
        return self.inner.process_element1(value, ctx)

    def process_element2(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        return self.inner.process_element2(value[1], ctx)


def strom_run(
    mode: RuntimeExecutionMode, paths: dict[str, str], extra: dict[str, Any]
) -> tuple[float, float, list[Q3Row]]:
    with tempfile.TemporaryDirectory(prefix="batch-q3-") as out_dir:
        config = {"taskmanager.numberOfTaskSlots": 1, "minicluster.number-of-taskmanagers": 2, **extra}
        env = StreamExecutionEnvironment.get_execution_environment(Configuration(config))
        env.set_parallelism(2)
        env.set_runtime_mode(mode)
        build_job(env, paths, out_dir)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        env.execute(f"q3 {mode.value}")
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        files = [os.path.join(out_dir, n) for n in os.listdir(out_dir)]
        if len(files) != 1:
            raise SystemExit(f"expected one top-10 file from the sink at p=1; got {len(files)}")
        with open(files[0]) as f:
            rows = [(int(k), int(r), str(d), int(p)) for k, r, d, p in json.load(f)]
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, rows


# -- Spark ----------------------------------------------------------------------------------------------------------
def _jvm_cpu() -> float:
    import psutil

    total = 0.0
    for p in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):  # a child that exited while we looked counts nothing
            if "java" in p.name():
                t = p.cpu_times()
                total += t.user + t.system
    return total


def spark_run(spark: Any, paths: dict[str, str]) -> tuple[float, float, list[Q3Row]]:
    from pyspark.sql import functions as F

    before = _jvm_cpu()
    start = time.perf_counter()
    c = spark.read.parquet(paths["customer"]).where(F.col("c_mktsegment") == "BUILDING")
    o = spark.read.parquet(paths["orders"]).where(F.col("o_orderdate") < F.lit(CUTOFF))
    li = spark.read.parquet(paths["lineitem"]).where(F.col("l_shipdate") > F.lit(CUTOFF))
    rows = (
        c.join(o, c.c_custkey == o.o_custkey)
        .join(li, li.l_orderkey == o.o_orderkey)
        .groupBy("l_orderkey", "o_orderdate", "o_shippriority")
        .agg(F.sum(F.col("l_extendedprice") * (100 - F.col("l_discount"))).alias("revenue"))
        .orderBy(F.desc("revenue"), "o_orderdate", "l_orderkey")
        .limit(10)
        .collect()
    )
    wall = time.perf_counter() - start
    result = [(r.l_orderkey, r.revenue, r.o_orderdate.isoformat(), r.o_shippriority) for r in rows]
    return wall, _jvm_cpu() - before, result


def spark_session() -> Any:
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _config(pairs: list[str]) -> dict[str, Any]:
    return dict(p.split("=", 1) for p in pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "strom-batch-q3"))
    parser.add_argument("--no-spark", action="store_true")
    parser.add_argument("--no-streaming", action="store_true")
    parser.add_argument("--batch", action="append", default=[], help="KEY=VALUE for the BATCH runs only")
    args = parser.parse_args()
    cloudpickle.register_pickle_by_value(__import__(__name__))  # the TaskManagers cannot import this script
    paths = write_files(args.dir, args.scale)
    want = expected(paths)
    sizes = {n: pq.ParquetDataset(p).read(columns=[]).num_rows for n, p in paths.items()}
    print(f"scale {args.scale}: {sizes}; top revenue {want[0]}", flush=True)
    spark = None if args.no_spark else spark_session()
    results: dict[str, list[tuple[float, float]]] = {}
    for r in range(args.rounds):
        runs: list[tuple[str, Any]] = [
            ("strom BATCH", lambda: strom_run(RuntimeExecutionMode.BATCH, paths, _config(args.batch)))
        ]
        if not args.no_streaming:
            runs.append(("strom STREAMING", lambda: strom_run(RuntimeExecutionMode.STREAMING, paths, {})))
        if spark is not None:
            runs.append(("Spark DataFrame", lambda: spark_run(spark, paths)))
        for name, run in runs if r % 2 == 0 else runs[::-1]:
            wall, cpu, rows = run()
            if rows != want:
                raise SystemExit(f"expected {want} from {name}; got {rows}")
            results.setdefault(name, []).append((wall, cpu))
            print(f"round {r + 1}: {name} {wall:.2f} s ({cpu:.2f} s CPU), load {os.getloadavg()[0]:.1f}", flush=True)
    for name, rows_ in results.items():
        print(
            f"{name}: median {statistics.median(w for w, _ in rows_):.2f} s, "
            f"{statistics.median(c for _, c in rows_):.2f} s CPU; rounds "
            + ", ".join(f"{w:.2f}/{c:.2f}" for w, c in rows_)
        )
    if spark is not None:
        spark.stop()


if __name__ == "__main__":
    main()
