"""Async I/O (``AsyncDataStream``) on real TaskManagers: results equal the synchronous computation, timeouts
reach ``timeout()``, retries, capacity, failures that name the record, and exactly-once across a SIGKILL with
records in flight. Coroutines sleep a little only to keep records in flight; nothing asserts on time."""

from __future__ import annotations

import asyncio
import functools
import random
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from failover import committed_rows, completed_checkpoints, failover_env, kill_a_task_manager

from strom import DataGeneratorSource, StreamExecutionEnvironment
from strom.api.async_data_stream import AsyncDataStream
from strom.api.async_function import AsyncFunction
from strom.api.async_retry_predicates import exception_type_predicate
from strom.api.async_retry_strategies import AsyncRetryStrategy
from strom.common import Time, Types
from strom.connectors.file_system import FileSink, JsonLinesEncoder
from strom.datastream import async_retry_predicates
from strom.exceptions import InvalidProgramError, JobExecutionError


def collect(stream: Any) -> list[Any]:
    with stream.execute_and_collect() as results:
        return list(results)


class SquareLater(AsyncFunction[int, tuple[int, int]]):
    """Completes out of input order: later records often finish first."""

    async def async_invoke(self, value: int) -> list[tuple[int, int]]:
        await asyncio.sleep(0.001 * ((7 - value) % 7))
        return [(value, value * value)]


@pytest.mark.timeout(90)
def test_ordered_wait_emits_the_synchronous_results_in_input_order() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    stream = env.from_collection(list(range(500)))
    out = collect(AsyncDataStream.ordered_wait(stream, SquareLater(), timedelta(seconds=30), capacity=16))
    assert out == [(i, i * i) for i in range(500)]


@pytest.mark.timeout(90)
def test_unordered_wait_emits_every_synchronous_result_once() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    stream = env.from_collection(list(range(500)))
    out = collect(AsyncDataStream.unordered_wait(stream, SquareLater(), 30_000, capacity=16))
    assert sorted(out) == [(i, i * i) for i in range(500)]


class SlowEveryFifth(AsyncFunction[int, Any]):
    async def async_invoke(self, value: int) -> list[Any]:
        if value % 5 == 0:
            await asyncio.sleep(60)  # far beyond the timeout
        return [("ok", value)]

    def timeout(self, value: int) -> list[Any]:
        return [("timeout", value)]


@pytest.mark.timeout(90)
def test_a_record_that_times_out_gets_the_timeout_callbacks_results() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    stream = env.from_collection(list(range(40)))
    out = collect(AsyncDataStream.ordered_wait(stream, SlowEveryFifth(), timedelta(milliseconds=300), capacity=40))
    assert sorted(out) == sorted(("timeout" if i % 5 == 0 else "ok", i) for i in range(40))


class Hangs(AsyncFunction[int, int]):
    async def async_invoke(self, value: int) -> list[int]:
        if value == 7:
            await asyncio.sleep(60)
        return [value]


@pytest.mark.timeout(90)
def test_the_default_timeout_fails_the_job_naming_operator_and_record() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    stream = env.from_collection(list(range(10)))
    AsyncDataStream.unordered_wait(stream, Hangs(), 200).name("lookup").print()
    with pytest.raises(JobExecutionError) as info:
        env.execute("times out")
    text = str(info.value)
    assert "TimeoutError" in text and "timed out for input: 7" in text
    assert "operator 'lookup'" in text and "(7)" in text


class FlakyConnection(AsyncFunction[int, int]):
    """Fails each record's first two attempts with a ConnectionError."""

    def __init__(self) -> None:
        self.attempts: dict[int, int] = {}

    async def async_invoke(self, value: int) -> list[int]:
        n = self.attempts[value] = self.attempts.get(value, 0) + 1
        if n <= 2:
            raise ConnectionError(f"attempt {n} for {value}")
        return [value * 10 + n]


@pytest.mark.timeout(90)
def test_retry_with_exception_type_predicate_succeeds() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    stream = env.from_collection(list(range(50)))
    strategy = AsyncRetryStrategy.fixed_delay(3, 5, None, lambda e: exception_type_predicate(e, ConnectionError))
    out = collect(AsyncDataStream.ordered_wait_with_retry(stream, FlakyConnection(), timedelta(seconds=30), strategy))
    assert sorted(out) == [i * 10 + 3 for i in range(50)]  # the third attempt of every record


class FailsOnValueError(AsyncFunction[int, int]):
    async def async_invoke(self, value: int) -> list[int]:
        if value == 13:
            raise ValueError("no row for key 13")
        return [value]


@pytest.mark.timeout(90)
def test_an_exception_that_is_not_retried_fails_the_job_naming_the_record() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    stream = env.from_collection(list(range(20)))
    strategy = AsyncRetryStrategy.fixed_delay(3, 5, None, lambda e: exception_type_predicate(e, ConnectionError))
    AsyncDataStream.unordered_wait_with_retry(stream, FailsOnValueError(), 30_000, strategy).name("enrich").print()
    with pytest.raises(JobExecutionError) as info:
        env.execute("fails")
    text = str(info.value)
    assert "ValueError: no row for key 13" in text
    assert "operator 'enrich'" in text and "subtask 1/1" in text and "(13)" in text


class CountsConcurrency(AsyncFunction[int, tuple[int, int]]):
    """Reports how many coroutines ran at once; holds each until ``capacity`` are running (or a moment passed)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.running = 0

    async def async_invoke(self, value: int) -> list[tuple[int, int]]:
        self.running += 1
        try:
            peak = self.running
            for _ in range(20):
                if self.running >= self.capacity:
                    break
                await asyncio.sleep(0.005)
            return [(value, max(peak, self.running))]
        finally:
            self.running -= 1


@pytest.mark.timeout(90)
def test_capacity_bounds_the_coroutines_running_at_once() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    stream = env.from_collection(list(range(300)))
    out = collect(AsyncDataStream.unordered_wait(stream, CountsConcurrency(4), 30_000, capacity=4))
    assert sorted(v for v, _ in out) == list(range(300))
    assert max(peak for _, peak in out) <= 4


def test_build_time_misuse_is_refused_with_a_hint() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    stream = env.from_collection([1])

    class NotAsync(AsyncFunction[int, int]):
        def async_invoke(self, value: int) -> list[int]:  # type: ignore[override]
            return [value]

    with pytest.raises(InvalidProgramError, match="async def"):
        AsyncDataStream.unordered_wait(stream, NotAsync(), 1000)
    with pytest.raises(InvalidProgramError, match="capacity"):
        AsyncDataStream.ordered_wait(stream, SquareLater(), 1000, capacity=0)
    strategy = AsyncRetryStrategy.fixed_delay(3, 5, None, None)
    with pytest.raises(InvalidProgramError, match="timeout above zero"):
        AsyncDataStream.ordered_wait_with_retry(stream, SquareLater(), 0, strategy)


# -- exactly-once across a killed TaskManager ---------------------------------------------------------------
COUNT = 20_000


def event(i: int) -> int:
    return i


class Lookup(AsyncFunction[int, tuple[int, int]]):
    async def async_invoke(self, value: int) -> list[tuple[int, int]]:
        await asyncio.sleep(0.002 * (value % 5))  # keeps up to ``capacity`` records in flight
        return [(value, value * 3)]


@pytest.mark.processes  # kills a TaskManager
@pytest.mark.timeout(180)
@pytest.mark.parametrize("ordered", [True, False])
def test_in_flight_records_survive_a_killed_task_manager_exactly_once(tmp_path: Path, ordered: bool) -> None:
    env = failover_env(parallelism=2, attempts=10)
    stream = env.from_source(DataGeneratorSource(event, COUNT, records_per_second=4_000), source_name="ids").uid("ids")
    wait = AsyncDataStream.ordered_wait if ordered else AsyncDataStream.unordered_wait
    out = tmp_path / "out"
    wait(stream, Lookup(), timedelta(seconds=30), capacity=50).uid("lookup").sink_to(
        FileSink.for_row_format(str(out), JsonLinesEncoder()).build()
    ).uid("files")
    client = env.execute_async("async with a kill")
    killed: list[int] = []

    def kill() -> None:
        completed_checkpoints(client, 2)
        if not client.get_job_status().is_globally_terminal:
            killed.append(kill_a_task_manager(client, seed=random.Random(7).randrange(100)))

    killer = threading.Thread(target=kill)
    killer.start()
    try:
        result = client.get_job_execution_result()
    finally:
        killer.join()
    assert killed, "the job ended before a TaskManager was killed"
    assert result.num_restarts >= 1
    rows = committed_rows(out)
    assert sorted(rows) == [(i, i * 3) for i in range(COUNT)]


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
def test_pyflink_style_timeouts_retries_and_declared_output_type() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
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
