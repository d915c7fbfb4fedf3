"""BATCH speculative execution on TaskManager processes: a task of the middle stage whose first attempt never ends on
its own (its map blocks until the attempt is cancelled) is found slow against its finished peers, gets a speculative
attempt on another TaskManager reading the same blocking partitions, and that attempt's output is the one the next
stage reads: every record exactly once, those of the slow subtask from attempt 1. The first attempt is cancelled
(interrupted: task.cancellation.interval)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from strom import Configuration, DataGeneratorSource, StreamExecutionEnvironment
from strom.api.execution_mode import RuntimeExecutionMode
from strom.api.functions import MapFunction, RuntimeContext

pytestmark = pytest.mark.processes

COUNT = 3_000
PARALLELISM = 3


class SlowFirstAttempt(MapFunction):
    """Tags each record with its subtask and attempt; subtask 0's attempt 0 blocks on its first record until it is
    cancelled (the interrupt ends the sleep loop)."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.subtask = runtime_context.get_index_of_this_subtask()
        self.attempt = runtime_context.get_attempt_number()

    def map(self, value: int) -> tuple[int, int, int]:
        while self.subtask == 0 and self.attempt == 0:
            time.sleep(0.02)
        return (value, self.subtask, self.attempt)


def _env() -> StreamExecutionEnvironment:
    config = Configuration(
        {
            "taskmanager.numberOfTaskSlots": 1,
            "minicluster.number-of-taskmanagers": PARALLELISM,
            "execution.batch.speculative.enabled": True,
            "slow-task-detector.check-interval": "100 ms",
            "slow-task-detector.execution-time.baseline-lower-bound": "0 ms",
            "slow-task-detector.execution-time.baseline-ratio": 0.5,
            "task.cancellation.interval": "200 ms",
        }
    )
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(PARALLELISM)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    return env


def _identity(t: Any) -> Any:
    return t


def test_a_slow_task_is_overtaken_by_its_speculative_attempt() -> None:
    env = _env()
    numbers = env.from_source(DataGeneratorSource(lambda i: i, COUNT), source_name="numbers")
    tagged = numbers.rebalance().map(SlowFirstAttempt())  # a stage of its own: no source, no sink
    rows = list(tagged.key_by(lambda t: t[0] % 7).map(_identity).execute_and_collect())
    assert sorted(v for v, _, _ in rows) == list(range(COUNT))  # every record exactly once
    attempts = {(subtask, attempt) for _, subtask, attempt in rows}
    assert attempts == {(0, 1), (1, 0), (2, 0)}  # subtask 0's records come from its speculative attempt
