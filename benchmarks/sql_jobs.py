"""The jobs of ``sql_window_count.py``: each query as strom SQL (or the Table API) and as the same job in strom's
DataStream API, over the same generated rows, into one checksum sink; and the plain-Python-loop references.

The rows: ``i`` = 0 … N−1 (a ``datagen`` sequence), ``user_id = (i * 7919) mod USERS``, ``ts = BASE_MS + i // 10``
(10 000 rows per second of event time, so a 1 s window holds 10 rows of each of the 1 000 users). Everything here
is shipped to the TaskManager by cloudpickle by reference (the benchmarks directory is on its ``PYTHONPATH``).
"""

from __future__ import annotations

import datetime as dt
import time
import zlib
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from jobs import write_part

from strom import (
    AggregateFunction,
    ProcessWindowFunction,
    Sink,
    SinkWriter,
    SinkWriterContext,
    StreamExecutionEnvironment,
    TumblingEventTimeWindows,
    WatermarkStrategy,
)
from strom.api.row import RowKind
from strom.connectors.datagen import DataGeneratorSource

USERS = 1000
BASE_MS = 1_700_000_000_000
_M64 = (1 << 64) - 1
_EPOCH = dt.datetime(1970, 1, 1)

DDL = (
    "CREATE TABLE events (i BIGINT, user_id AS MOD(i * 7919, {users}), "
    "ts AS TO_TIMESTAMP_LTZ({base} + i / 10, 3), WATERMARK FOR ts AS ts - INTERVAL '0.2' SECOND) "
    "WITH ('connector' = 'datagen', 'fields.i.kind' = 'sequence', 'fields.i.start' = '0', "
    "'fields.i.end' = '{last}', 'rows-per-second' = '1000000000')"
)

#: the queries, by name; ``window_group`` is the Table API's group window (see ``table_query``)
QUERIES = {
    "window_tvf": (
        "SELECT user_id, window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), "
        "INTERVAL '1' SECOND)) GROUP BY window_start, window_end, user_id"
    ),
    "window_group": (
        "SELECT user_id, TUMBLE_START(ts, INTERVAL '1' SECOND), COUNT(*) AS n FROM events "
        "GROUP BY TUMBLE(ts, INTERVAL '1' SECOND), user_id"
    ),
    "group": "SELECT user_id, SUM(i) AS s FROM events GROUP BY user_id",
    "calc": "SELECT user_id, i * 3 + 1 AS v FROM events WHERE MOD(i, 3) <> 0 AND user_id < 900",
}
#: what the sink folds: window rows (user, start, n), the final table of an updating (user, sum), or rows (user, v)
FOLD = {"window_tvf": "window", "window_group": "window", "group": "table", "calc": "rows"}


# ---- the plain loops ---------------------------------------------------------------------------------------------
def reference(query: str, n: int) -> dict[str, int]:
    fold = Fold(FOLD[query])
    if FOLD[query] == "window":
        counts: dict[tuple[int, int], int] = {}
        for i in range(n):
            key = ((i * 7919) % USERS, BASE_MS + i // 10 - (BASE_MS + i // 10) % 1000)
            counts[key] = counts.get(key, 0) + 1
        fold.add_batch([(u, ws, c) for (u, ws), c in counts.items()])
    elif FOLD[query] == "table":
        sums: dict[int, int] = {}
        for i in range(n):
            u = (i * 7919) % USERS
            sums[u] = sums.get(u, 0) + i
        fold.table = sums
    else:
        out = []
        for i in range(n):
            u = (i * 7919) % USERS
            if i % 3 != 0 and u < 900:
                out.append((u, i * 3 + 1))
        fold.add_batch(out)
    return fold.result()


# ---- the checksum sink -------------------------------------------------------------------------------------------
def _millis(value: Any) -> int:
    return (value - _EPOCH) // timedelta(milliseconds=1) if isinstance(value, dt.datetime) else int(value)


class Fold:
    """Order-independent checksums: window rows, the final table of a changelog, or plain rows."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.rows = 0
        self.total = 0
        self.hash = 0
        self.table: dict[Any, Any] = {}

    def add_batch(self, rows: list[Any]) -> None:
        self.rows += len(rows)
        if self.kind == "window":
            h = self.hash
            for user, start, count in rows:
                self.total += count
                h += zlib.crc32(b"%d|%d|%d" % (user, _millis(start), count))
            self.hash = h & _M64
        elif self.kind == "rows":
            h, t = self.hash, self.total
            for user, value in rows:
                t += value
                h += user * value
            self.hash, self.total = h & _M64, t
        else:  # a changelog (Rows with a kind) or running values (tuples) into the final table
            table = self.table
            for row in rows:  # unpacked as the other folds' rows (a Row's two items: one __iter__, no __getitem__)
                kind = getattr(row, "_row_kind", RowKind.INSERT)
                key, value = row
                if kind is RowKind.UPDATE_BEFORE or kind is RowKind.DELETE:
                    table.pop(key, None)
                else:
                    table[key] = value

    def result(self) -> dict[str, int]:
        if self.kind == "table":
            h = sum(zlib.crc32(b"%d|%d" % (k, v)) for k, v in self.table.items()) & _M64
            return {"keys": len(self.table), "total": sum(self.table.values()), "hash": h}
        return {"rows": self.rows, "total": self.total, "hash": self.hash}


class _FoldWriter(SinkWriter[Any]):
    def __init__(self, out_dir: str, kind: str) -> None:
        self.out_dir = out_dir
        self.fold = Fold(kind)
        self.t_open, self.cpu_open = time.monotonic_ns(), time.process_time_ns()  # the TaskManager process

    def write(self, element: Any) -> None:
        self.fold.add_batch([element])

    def write_batch(self, elements: list[Any]) -> None:
        self.fold.add_batch(elements)

    def close(self) -> None:
        stamps = {"t_open": self.t_open, "t_close": time.monotonic_ns()}
        stamps.update(cpu_open=self.cpu_open, cpu_close=time.process_time_ns())
        write_part(self.out_dir, "sink", {**stamps, "records": self.fold.rows, **self.fold.result()})


class FoldSink(Sink[Any]):
    """The one sink of every form: its writer opens with the job's tasks (p=1: one TaskManager) and stamps the
    wall and CPU clocks at open and close."""

    def __init__(self, out_dir: str, kind: str) -> None:
        self.out_dir, self.kind = out_dir, kind

    def create_writer(self, context: SinkWriterContext) -> SinkWriter[Any]:
        return _FoldWriter(self.out_dir, self.kind)


# ---- strom SQL / Table API ---------------------------------------------------------------------------------------
def sql_job(env: StreamExecutionEnvironment, query: str, n: int, out_dir: str) -> None:
    from strom.table import StreamTableEnvironment
    from strom.table.expressions import col, lit
    from strom.table.window import Tumble

    t_env = StreamTableEnvironment.create(env)
    t_env.execute_sql(DDL.format(users=USERS, base=BASE_MS, last=n - 1))
    if query == "window_group":  # the group-window form through the Table API (SQL's GROUP BY TUMBLE: docs)
        table = (
            t_env.from_path("events")
            .window(Tumble.over(lit(1).seconds).on(col("ts")).alias("w"))
            .group_by(col("w"), col("user_id"))
            .select(col("user_id"), col("w").start, col("i").count)
        )
    else:
        table = t_env.sql_query(QUERIES[query])
    stream = t_env.to_changelog_stream(table) if FOLD[query] == "table" else t_env.to_data_stream(table)
    stream.sink_to(FoldSink(out_dir, FOLD[query]))


# ---- the same jobs in the DataStream API -------------------------------------------------------------------------
def _index(i: int) -> int:
    return i


def _event(i: int) -> tuple[int, int, int]:
    return ((i * 7919) % USERS, BASE_MS + i // 10, i)


class _Count(AggregateFunction):
    def create_accumulator(self) -> int:
        return 0

    def add(self, value: Any, acc: int) -> int:
        return acc + 1

    def get_result(self, acc: int) -> int:
        return acc

    def merge(self, a: int, b: int) -> int:
        return a + b


class _WithStart(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
        start = context.window().start
        for count in elements:
            yield (key, start, count)


def _user_and_i(i: int) -> tuple[int, int]:
    return ((i * 7919) % USERS, i)


def _sum(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    return (a[0], a[1] + b[1])


def datastream_job(env: StreamExecutionEnvironment, query: str, n: int, out_dir: str) -> None:
    rows = env.from_source(DataGeneratorSource(_index, n), WatermarkStrategy.no_watermarks(), "generator")
    if FOLD[query] == "window":
        strategy = WatermarkStrategy.for_bounded_out_of_orderness(timedelta(milliseconds=200))
        windows = (
            rows.map(_event)
            .assign_timestamps_and_watermarks(strategy.with_timestamp_assigner(lambda e, _: e[1]))
            .key_by(lambda e: e[0])
            .window(TumblingEventTimeWindows.of(timedelta(seconds=1)))
            .aggregate(_Count(), _WithStart())
        )
        windows.sink_to(FoldSink(out_dir, "window"))
    elif query == "group":
        sums = rows.map(_user_and_i).key_by(lambda e: e[0]).reduce(_sum)
        sums.sink_to(FoldSink(out_dir, "table"))
    else:
        kept = rows.map(_event).filter(lambda e: e[2] % 3 != 0 and e[0] < 900).map(lambda e: (e[0], e[2] * 3 + 1))
        kept.sink_to(FoldSink(out_dir, "rows"))
