"""Async I/O on real TaskManagers: ordered and unordered results equal the synchronous computation (ordered in
input order), the capacity bounds the coroutines running at once, timeouts call ``timeout()``, retries follow
the strategy, a failing coroutine fails the job naming the operator and the input, and a TaskManager SIGKILLed
with inputs in flight loses and duplicates nothing in a checkpointed sink."""

from __future__ import annotations

import asyncio
import functools
import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from failover import completed_checkpoints, failover_env, kill_a_task_manager

from strom import Configuration, DataGeneratorSource, JobExecutionError
from strom.common import Time, Types
from strom.connectors.file_system import BucketAssigner, FileSink, JsonLinesEncoder
from strom.datastream import (
    AsyncDataStream,
    AsyncFunction,
    AsyncRetryStrategy,
    StreamExecutionEnvironment,
    async_retry_predicates,
)


def env_with(parallelism: int) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration({"taskmanager.numberOfTaskSlots": 1, "minicluster.number-of-taskmanagers": 2})
    )
    env.set_parallelism(parallelism)
    return env


class Square(AsyncFunction):
    """Completes in a scrambled order; reports how many of its coroutines ran at once."""

    def open(self, runtime_context: Any) -> None:
        self.running = 0
        self.most = 0

    async def async_invoke(self, value: int) -> list[tuple[int, int, int]]:
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            await asyncio.sleep(((value * 7919) % 5) / 1000)
            return [(value, value * value, self.most)]
        finally:
            self.running -= 1


@pytest.mark.timeout(120)
@pytest.mark.parametrize("ordered", [True, False])
def test_results_equal_the_synchronous_computation_and_capacity_bounds_what_runs(ordered: bool) -> None:
    env = env_with(2)
    numbers = env.from_sequence(0, 1999)
    wait = AsyncDataStream.ordered_wait if ordered else AsyncDataStream.unordered_wait
    results = wait(numbers, Square(), Time.seconds(30), capacity=7)
    with results.execute_and_collect() as collected:
        rows = list(collected)
    assert sorted((v, sq) for v, sq, _ in rows) == [(v, v * v) for v in range(2000)]
    assert max(most for _, _, most in rows) <= 7 and max(most for _, _, most in rows) > 1
    if ordered:  # each subtask's results in its input order (the collect sink sees each channel in order)
        for half in (range(0, 1000), range(1000, 2000)):
            mine = [v for v, _, _ in rows if v in half]
            assert mine == sorted(mine)


class Flaky(AsyncFunction):
    def open(self, runtime_context: Any) -> None:
        self.failed: set[int] = set()

    async def async_invoke(self, value: int) -> list[str]:
        if value % 3 == 0 and value not in self.failed:
            self.failed.add(value)
            raise ConnectionError(f"flaky {value}")
        if value == 10:
            await asyncio.sleep(3600)
        if value == 11 and value not in self.failed:
            self.failed.add(value)
            return []  # empty: retried by the result predicate
        return [f"{value}:ok"]

    def timeout(self, value: int) -> list[str]:
        return [f"{value}:timeout"]


@pytest.mark.timeout(120)
def test_timeouts_call_timeout_and_retries_follow_the_strategy() -> None:
    env = env_with(1)
    strategy = AsyncRetryStrategy.fixed_delay(
        max_attempts=2,
        backoff_time_millis=5,
        result_predicate=async_retry_predicates.empty_result_predicate,
        exception_predicate=functools.partial(
            async_retry_predicates.exception_type_predicate, expected_error_type=ConnectionError
        ),
    )
    stream = env.from_collection(list(range(15)), type_info=Types.INT())
    results = AsyncDataStream.unordered_wait_with_retry(
        stream, Flaky(), Time.seconds(2), strategy, capacity=20, output_type=Types.STRING()
    )
    with results.execute_and_collect() as collected:
        rows = sorted(collected)
    assert rows == sorted([f"{v}:ok" for v in range(15) if v != 10] + ["10:timeout"])


class Broken(AsyncFunction):
    async def async_invoke(self, value: int) -> list[int]:
        if value == 42:
            raise KeyError("no such user")
        return [value]


@pytest.mark.timeout(120)
def test_an_exception_not_retried_fails_the_job_naming_the_operator_and_the_input() -> None:
    env = env_with(1)
    AsyncDataStream.unordered_wait(env.from_sequence(0, 100), Broken(), 10_000).name("lookup").print()
    with pytest.raises(JobExecutionError) as info:
        env.execute("broken lookup")
    text = str(info.value) + "".join(str(c) for c in [info.value.__cause__] if c)
    assert "KeyError: 'no such user' — raised by async_invoke of operator 'lookup' for the input 42" in text


class SlowEcho(AsyncFunction):
    async def async_invoke(self, value: int) -> list[tuple[int, int]]:
        await asyncio.sleep(0.02)
        return [(value % 5, value)]


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_inputs_in_flight_survive_a_killed_task_manager_exactly_once(tmp_path: Path) -> None:
    count = 12_000
    out = tmp_path / "out"
    env = failover_env(attempts=10)
    source = env.from_source(DataGeneratorSource(lambda i: i, count, records_per_second=3_000), source_name="ids")
    (
        AsyncDataStream.unordered_wait(source.uid("ids"), SlowEcho(), Time.seconds(60), capacity=50)
        .uid("echo")
        .sink_to(
            FileSink.for_row_format(str(out), JsonLinesEncoder())
            .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
            .build()
        )
        .uid("files")
    )
    client = env.execute_async("async with a kill")
    killed: list[int] = []

    def kill() -> None:
        completed_checkpoints(client, 2)
        if not client.get_job_status().is_globally_terminal:
            killed.append(kill_a_task_manager(client, seed=5))

    killer = threading.Thread(target=kill)
    killer.start()
    try:
        result = client.get_job_execution_result()
    finally:
        killer.join()
    assert killed and result.num_restarts >= 1
    parts = [f for f in sorted(out.iterdir()) if not f.name.startswith(".")]
    rows = [tuple(json.loads(line)) for f in parts for line in f.read_text().splitlines()]
    assert Counter(rows) == Counter((i % 5, i) for i in range(count))
