"""A window aggregation's state in strom's keyed state: exactly-once results through a SIGKILLed TaskManager (HOP
windows: shared slices and chained window timers restored from a checkpoint), and a savepoint taken at parallelism
2 on the heap backend restored at parallelism 3 on RocksDB (TUMBLE windows: slices and timers redistributed by
key group)."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from failover import committed_rows, completed_checkpoints, failover_env, kill_a_task_manager

from strom import Configuration, StreamExecutionEnvironment, WatermarkStrategy
from strom.api.row import Row
from strom.connectors.datagen import DataGeneratorSource
from strom.connectors.file_system import FileSink, JsonLinesEncoder
from strom.table.runtime.window.slice_assigners import HoppingSliceAssigner, SliceAssigner, TumblingSliceAssigner
from strom.table.runtime.window.window_aggregate import window_aggregate

COUNT = 40_000
USERS = 7
STEP_MS = 5  # event time advances 5 ms per event: 200 events a second of event time


def event(i: int) -> Row:
    return Row(f"u{i % USERS}", i % 100, i * STEP_MS)


def rowtime(row: Row, _: Any) -> int:
    return int(row[2])


class CountSum:
    def create_accumulators(self) -> list[Any]:
        return [0, 0]

    def accumulate(self, accs: list[Any], row: Row) -> None:
        accs[0] += 1
        accs[1] += row[1]

    def retract(self, accs: list[Any], row: Row) -> None:
        accs[0] -= 1
        accs[1] -= row[1]

    def merge(self, accs: list[Any], other: list[Any]) -> None:
        accs[0] += other[0]
        accs[1] += other[1]

    def get_value(self, accs: list[Any]) -> tuple[Any, ...]:
        return accs[0], accs[1]

    def record_count_is_zero(self, accs: list[Any]) -> bool:
        return bool(accs[0] == 0)


def as_tuple(row: Row) -> tuple[Any, ...]:
    return (row[0], row[1], row[2], str(row[3]))


def job(env: StreamExecutionEnvironment, out: Path, assigner: SliceAssigner, records_per_second: float) -> None:
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(rowtime)
    events = (
        env.from_source(DataGeneratorSource(event, COUNT, records_per_second=records_per_second), source_name="events")
        .uid("events")
        .assign_timestamps_and_watermarks(strategy)
    )
    aggregated = window_aggregate(
        events, key_indices=[0], aggs=CountSum(), assigner=assigner, window_properties=("window_end",)
    ).uid("window-aggregate")
    aggregated.map(as_tuple).sink_to(FileSink.for_row_format(str(out), JsonLinesEncoder()).build()).uid("out")


def expected(assigner: SliceAssigner) -> Counter[tuple[Any, ...]]:
    import datetime

    windows: dict[tuple[str, int], list[int]] = {}
    for i in range(COUNT):
        row = event(i)
        for _, end in assigner.assign_windows(row[2]):
            acc = windows.setdefault((row[0], end), [0, 0])
            acc[0] += 1
            acc[1] += row[1]
    return Counter(
        (user, c, s, str(datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=end)))
        for (user, end), (c, s) in windows.items()
    )


@pytest.mark.processes  # kills a TaskManager
@pytest.mark.timeout(240)
def test_hop_window_aggregate_survives_a_killed_task_manager_exactly_once(tmp_path: Path) -> None:
    out = tmp_path / "out"
    hop = HoppingSliceAssigner(size=2_000, slide=1_000)
    env: StreamExecutionEnvironment = failover_env(attempts=10)
    job(env, out, hop, records_per_second=10_000)
    client = env.execute_async("window aggregate with a kill")
    killed: list[int] = []

    def kill() -> None:
        completed_checkpoints(client, 2)
        if not client.get_job_status().is_globally_terminal:
            killed.append(kill_a_task_manager(client, seed=7))

    killer = threading.Thread(target=kill)
    killer.start()
    try:
        result = client.get_job_execution_result()
    finally:
        killer.join()
    assert killed, "the job ended before a TaskManager was killed"
    assert result.num_restarts >= 1
    rows = [tuple(r) for r in committed_rows(out)]
    assert Counter(rows) == expected(hop)


@pytest.mark.processes  # two jobs on real TaskManagers
@pytest.mark.timeout(240)
def test_window_aggregate_savepoint_at_parallelism_2_restores_at_3_on_rocksdb(tmp_path: Path) -> None:
    out, savepoints = tmp_path / "out", tmp_path / "savepoints"
    tumble = TumblingSliceAssigner(1_000)
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration({"taskmanager.numberOfTaskSlots": 2, "state.backend.type": "hashmap"})
    )
    env.set_parallelism(2)
    env.enable_checkpointing(200)
    job(env, out, tumble, records_per_second=3_000)
    client = env.execute_async("before the savepoint")
    completed_checkpoints(client, 3)
    savepoint = client.stop_with_savepoint(str(savepoints))  # raises if the job ended first

    env2 = StreamExecutionEnvironment.get_execution_environment(
        Configuration({"taskmanager.numberOfTaskSlots": 3, "state.backend.type": "rocksdb"})
    )
    env2.set_parallelism(3)
    env2.enable_checkpointing(200)
    job(env2, out, tumble, records_per_second=50_000)
    result = env2.execute("after the savepoint", savepoint_path=savepoint)
    assert result.num_restarts == 0
    rows = [tuple(r) for r in committed_rows(out)]
    assert Counter(rows) == expected(tumble)
