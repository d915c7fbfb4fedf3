"""Event-time timers in RocksDB (``state.backend.rocksdb.timer-service.factory: ROCKSDB``) on real TaskManager
processes: a TaskManager SIGKILLed mid-job recovers exactly-once, and a savepoint of RocksDB timers restores into
heap timers (``HEAP``) at another parallelism with the output of an uninterrupted run.

The job sums each key's values per 1 s of event time in a ``KeyedProcessFunction``: the sums in ``MapState`` by the
second's last ms, one event-time timer per key and second (registered with every element: a set, so once), which
emits that second's sum and removes it. Event time is the event's index (ms): every split's timestamps increase,
so no element is late and the committed output is deterministic.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from failover import committed_rows, completed_checkpoints, kill_a_task_manager

from strom import (
    Configuration,
    DataGeneratorSource,
    FileSink,
    JobStatus,
    JsonLinesEncoder,
    KeyedProcessFunction,
    MapStateDescriptor,
    StreamExecutionEnvironment,
    WatermarkStrategy,
)
from strom.connectors.file_system import RollingPolicy

pytestmark = [pytest.mark.processes, pytest.mark.timeout(240)]

KEYS = 16
ON_CHECKPOINT = RollingPolicy.on_checkpoint_rolling_policy()
WINDOW = 1000


def event(i: int) -> tuple[int, int]:
    return (i % KEYS, i)


class SumPerSecond(KeyedProcessFunction):
    def open(self, runtime_context: Any) -> None:
        self.sums = runtime_context.get_map_state(MapStateDescriptor("sums"))

    def process_element(self, value: tuple[int, int], ctx: Any) -> Any:
        end = value[1] // WINDOW * WINDOW + WINDOW - 1
        self.sums.put(end, (self.sums.get(end) or 0) + value[1])
        ctx.timer_service().register_event_time_timer(end)
        return ()

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield (ctx.get_current_key(), timestamp, self.sums.get(timestamp))
        self.sums.remove(timestamp)


def expected_rows(count: int) -> list[tuple[int, int, int]]:
    sums: dict[tuple[int, int], int] = {}
    for i in range(count):
        key, v = event(i)
        slot = (key, v // WINDOW * WINDOW + WINDOW - 1)
        sums[slot] = sums.get(slot, 0) + v
    return [(k, t, s) for (k, t), s in sums.items()]


def timers_job(env: StreamExecutionEnvironment, count: int, out: Path, rate: float | None) -> None:
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, ts: e[1])
    (
        env.from_source(DataGeneratorSource(event, count, rate), strategy, "events")
        .uid("events")
        .key_by(lambda e: e[0])
        .process(SumPerSecond())
        .uid("sums")
        # parts roll at every checkpoint: the committed output shows how far the checkpoints got
        .sink_to(FileSink.for_row_format(str(out), JsonLinesEncoder()).with_rolling_policy(ON_CHECKPOINT).build())
        .uid("files")
    )


def env_with(parallelism: int, factory: str, **extra: Any) -> StreamExecutionEnvironment:
    config = Configuration(
        {
            "state.backend.type": "rocksdb",
            "state.backend.rocksdb.timer-service.factory": factory,
            "taskmanager.numberOfTaskSlots": 1,
            "minicluster.number-of-taskmanagers": parallelism,
            "heartbeat.interval": "250 ms",
            "heartbeat.timeout": "1 s",
            "restart-strategy.type": "fixed-delay",
            "restart-strategy.fixed-delay.attempts": 10,
            "restart-strategy.fixed-delay.delay": 200,
            "pipeline.auto-watermark-interval": 50,
            **extra,
        }
    )
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(parallelism)
    env.enable_checkpointing(200)
    return env


def test_rocksdb_timers_recover_exactly_once_after_a_task_manager_kill(tmp_path: Path) -> None:
    count = 150_000
    out = tmp_path / "out"
    env = env_with(2, "ROCKSDB")
    timers_job(env, count, out, rate=30_000)
    client = env.execute_async("rocksdb timers with a kill")
    completed_checkpoints(client, 3)
    kill_a_task_manager(client, seed=11)
    result = client.get_job_execution_result()
    assert result.num_restarts >= 1
    assert Counter(committed_rows(out)) == Counter(expected_rows(count))


def test_a_savepoint_of_rocksdb_timers_restores_into_heap_timers_at_another_parallelism(tmp_path: Path) -> None:
    count = 120_000
    out = tmp_path / "out"
    env = env_with(2, "ROCKSDB")
    timers_job(env, count, out, rate=30_000)
    client = env.execute_async("rocksdb timers before the savepoint")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not out.exists() or len(committed_rows(out)) < 100):
        time.sleep(0.1)
    savepoint = client.stop_with_savepoint(str(tmp_path / "savepoints"))
    assert client.get_job_status() is JobStatus.FINISHED
    first = committed_rows(out)
    assert 0 < len(first) < len(expected_rows(count)), "the savepoint should be taken mid-way"

    env2 = env_with(3, "HEAP")
    timers_job(env2, count, out, rate=None)
    result = env2.execute("heap timers after the savepoint", savepoint_path=savepoint)
    assert result.num_restarts == 0
    assert Counter(committed_rows(out)) == Counter(expected_rows(count))
