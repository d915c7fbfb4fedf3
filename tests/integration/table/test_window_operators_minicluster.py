"""The SQL time operators as a planner wires them — factories on DataStreams of rows — on the MiniCluster at
parallelism 2, against Flink 2.3's results (``tests/data/flink_window``)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

from strom import Configuration, DataStream, StreamExecutionEnvironment, WatermarkStrategy
from strom.api.row import Row
from strom.table.runtime.interval_join import interval_join
from strom.table.runtime.over_aggregate import over_aggregate
from strom.table.runtime.window.session_window import session_window_aggregate
from strom.table.runtime.window.slice_assigners import HoppingSliceAssigner, TumblingSliceAssigner
from strom.table.runtime.window.window_aggregate import window_aggregate
from strom.table.runtime.window.window_join import window_join
from strom.table.runtime.window.window_rank import sort_key, window_top_n
from strom.table.runtime.window.window_table_function import window_tvf

DATA = Path(__file__).resolve().parents[2] / "data" / "flink_window"
EPOCH = datetime.datetime(1970, 1, 1)


def rows_of(name: str) -> list[Row]:
    out = []
    for line in (DATA / f"{name}.csv").read_text().splitlines():
        user, second, ts = line.split(",")
        out.append(Row(user, int(second) if second.isdigit() else second, datetime.datetime.fromisoformat(ts)))
    return out


def rowtime(row: Row, _: Any) -> int:
    return (row[2] - EPOCH) // datetime.timedelta(milliseconds=1)


def source(env: StreamExecutionEnvironment, name: str) -> DataStream[Any]:
    """The table ``name`` with ``WATERMARK FOR ts AS ts - INTERVAL '5' SECOND``."""
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(5_000).with_timestamp_assigner(rowtime)
    return env.from_collection(rows_of(name)).assign_timestamps_and_watermarks(strategy)


def env_p2() -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"taskmanager.numberOfTaskSlots": 2}))
    env.set_parallelism(2)
    return env


def collected(stream: DataStream[Any]) -> list[str]:
    with stream.execute_and_collect() as results:
        rows = list(results)
    return sorted(json.dumps(["+I", [str(v) if isinstance(v, datetime.datetime) else v for v in r]]) for r in rows)


def facts(name: str) -> list[str]:
    lines = (DATA / f"{name}.txt").read_text().splitlines()[1:]
    return sorted(json.dumps([d["kind"], d["values"]]) for d in map(json.loads, lines))


class CountSumMax:
    def create_accumulators(self) -> list[Any]:
        return [0, 0, None]

    def accumulate(self, accs: list[Any], row: Row) -> None:
        accs[0] += 1
        accs[1] += row[1]
        accs[2] = row[1] if accs[2] is None else max(accs[2], row[1])

    def retract(self, accs: list[Any], row: Row) -> None:
        accs[0] -= 1
        accs[1] -= row[1]

    def merge(self, accs: list[Any], other: list[Any]) -> None:
        accs[0] += other[0]
        accs[1] += other[1]
        if other[2] is not None:
            accs[2] = other[2] if accs[2] is None else max(accs[2], other[2])

    def get_value(self, accs: list[Any]) -> tuple[Any, ...]:
        return tuple(accs)

    def record_count_is_zero(self, accs: list[Any]) -> bool:
        return bool(accs[0] == 0)


class CountSum(CountSumMax):
    def get_value(self, accs: list[Any]) -> tuple[Any, ...]:
        return accs[0], accs[1]


def first_properties(row: Row) -> Row:
    """Flink's query selects window_start, window_end before the keys and aggregates."""
    values = list(row)
    return Row(*values[-2:], *values[:-2])


def test_hop_window_aggregate_at_parallelism_2_is_flinks() -> None:
    env = env_p2()
    result = window_aggregate(
        source(env, "bids"), key_indices=[0], aggs=CountSumMax(), assigner=HoppingSliceAssigner(10_000, 5_000)
    ).map(first_properties)
    assert collected(result) == facts("agg_hop")


def test_session_aggregate_and_top_n_after_a_tumbling_aggregate_are_flinks() -> None:
    env = env_p2()
    sessions = session_window_aggregate(source(env, "bids"), key_indices=[0], aggs=CountSum(), gap=5_000)
    assert collected(sessions.map(first_properties)) == facts("agg_session")
    env = env_p2()
    agg = window_aggregate(
        source(env, "bids"), key_indices=[0], aggs=CountSumMax(), assigner=TumblingSliceAssigner(10_000)
    )
    top = window_top_n(agg, window_end_index=5, partition_indices=[], sort_keys=[sort_key(2, False)], rank_end=2)
    assert collected(top.map(lambda r: Row(*list(r)[4:6], *list(r)[:4], r[6]))) == facts("topn_agg")


def test_window_join_and_interval_join_at_parallelism_2_are_flinks() -> None:
    env = env_p2()
    tumble = TumblingSliceAssigner(10_000)
    joined = window_join(
        window_tvf(source(env, "bids"), tumble),
        window_tvf(source(env, "clicks"), tumble),
        left_key_indices=[0],
        right_key_indices=[0],
        left_window_end_index=4,
        right_window_end_index=4,
        left_arity=6,
        right_arity=6,
        join_type="FULL",
    )
    assert collected(joined.map(lambda r: Row(r[0], r[1], r[6], r[7], r[3], r[9]))) == facts("window_join_full")
    env = env_p2()
    interval = interval_join(
        source(env, "bids"),
        source(env, "clicks"),
        left_key_indices=[0],
        right_key_indices=[0],
        lower_bound=-2_000,
        upper_bound=3_000,
        left_arity=3,
        right_arity=3,
        join_type="LEFT",
    )
    assert collected(interval.map(lambda r: Row(r[0], r[1], r[4], r[2], r[5]))) == facts("interval_join_left")


def test_over_aggregate_at_parallelism_2_is_flinks() -> None:
    env = env_p2()
    over = over_aggregate(source(env, "bids"), key_indices=[0], aggs=CountSum(), rows=False, preceding=5_000)
    swapped = over.map(lambda r: Row(r[0], r[1], r[2], r[4], r[3]))  # the query selects SUM, then COUNT
    assert collected(swapped) == facts("over_range_bounded")
