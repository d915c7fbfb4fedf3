"""Jobs run on both targets by the Spark tests: a word count and a keyed event-time window job.

    strom run [--target spark ...] tests/e2e/spark_jobs.py OUT.json   # both jobs, results into OUT.json

Each record also says whether it was processed inside a Spark task (``pyspark.TaskContext.get()``)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from strom import (
    AggregateFunction,
    ProcessWindowFunction,
    StreamExecutionEnvironment,
    TumblingEventTimeWindows,
    WatermarkStrategy,
)

TEXT = [
    "to be or not to be that is the question",
    "whether tis nobler in the mind to suffer",
    "the slings and arrows of outrageous fortune",
    "or to take arms against a sea of troubles",
]


def in_spark_task() -> bool:
    from pyspark import TaskContext

    return TaskContext.get() is not None


def word_count(env: StreamExecutionEnvironment) -> dict[str, Any]:
    env.set_parallelism(2)
    counts = (
        env.from_collection(TEXT * 50)
        .flat_map(lambda line: line.split())
        .map(lambda w: (w, 1, in_spark_task(), os.getpid()))
        .key_by(lambda t: t[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1], a[2] and b[2], b[3]))
    )
    final: dict[str, tuple[int, bool, int]] = {}
    with counts.execute_and_collect("word count") as results:
        for word, count, spark, pid in results:
            final[word] = (count, spark, pid)
    return {
        "counts": {w: c for w, (c, _, _) in final.items()},
        "in_spark_task": sorted({s for _, s, _ in final.values()}),
        "pids": sorted({p for _, _, p in final.values()}),
    }


def event(i: int) -> tuple[str, int, int]:
    """(key, event time ms, value): ten keys, time advancing 7 ms per event with disorder below 200 ms."""
    return (f"k{i % 10}", i * 7 - (i * 37) % 190, i % 13)


class SumCount(AggregateFunction):
    def create_accumulator(self) -> tuple[int, int]:
        return (0, 0)

    def add(self, value: tuple[str, int, int], acc: tuple[int, int]) -> tuple[int, int]:
        return (acc[0] + value[2], acc[1] + 1)

    def get_result(self, acc: tuple[int, int]) -> tuple[int, int]:
        return acc

    def merge(self, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
        return (a[0] + b[0], a[1] + b[1])


class WithStart(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
        for s, c in elements:
            yield (key, context.window().start, s, c)


def windows(env: StreamExecutionEnvironment, n: int = 20_000) -> list[list[Any]]:
    env.set_parallelism(2)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(timedelta(milliseconds=200)).with_timestamp_assigner(
        lambda e, ts: e[1]
    )
    sums = (
        env.from_collection([event(i) for i in range(n)])
        .assign_timestamps_and_watermarks(strategy)
        .key_by(lambda e: e[0])
        .window(TumblingEventTimeWindows.of(timedelta(seconds=1)))
        .aggregate(SumCount(), WithStart())
    )
    with sums.execute_and_collect("windows") as results:
        return sorted([list(r) for r in results])


def reference_windows(n: int = 20_000) -> list[list[Any]]:
    acc: dict[tuple[str, int], list[int]] = {}
    for i in range(n):
        key, ts, value = event(i)
        a = acc.setdefault((key, ts - ts % 1000), [0, 0])
        a[0] += value
        a[1] += 1
    return sorted([[k, start, s, c] for (k, start), (s, c) in acc.items()])


def main(out: str) -> None:
    results = {
        "word_count": word_count(StreamExecutionEnvironment.get_execution_environment()),
        "windows": windows(StreamExecutionEnvironment.get_execution_environment()),
        "client_pid": os.getpid(),
    }
    with open(out, "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main(sys.argv[1])
