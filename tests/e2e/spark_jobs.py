"""Jobs run on both targets by the Spark tests: a word count and a keyed event-time window job; also the functions
of the tests' other jobs (a keyed running count, a logging map).

    strom run [--target spark ...] tests/e2e/spark_jobs.py OUT.json   # both jobs, results into OUT.json

Each record of the word count also says whether it was processed inside a Spark task (``pyspark.TaskContext.get()``),
in which process, and from which file that process imported this module. Functions of an imported module are pickled
by reference (cloudpickle pickles only those of ``__main__`` by value), so on a Spark cluster this module must reach
the executors as a user's job module does: ``spark.submit.pyFiles`` (``-D spark.submit.pyFiles=...`` for ``strom
run``, ``spark-submit --py-files``) or ``SparkContext.addPyFile``. Keep its imports to strom and the standard library:
whatever it imports, the executors import too."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections import Counter
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from strom import (
    AggregateFunction,
    KeyedProcessFunction,
    ProcessWindowFunction,
    StreamExecutionEnvironment,
    TumblingEventTimeWindows,
    ValueStateDescriptor,
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


def job_module_file() -> str:
    """The file this process imported this module from (on a Spark cluster: the copy Spark shipped)."""
    import spark_jobs

    return str(spark_jobs.__file__)


def word_count(env: StreamExecutionEnvironment) -> dict[str, Any]:
    env.set_parallelism(2)
    counts = (
        env.from_collection(TEXT * 50)
        .flat_map(lambda line: line.split())
        .map(lambda w: (w, 1, in_spark_task(), os.getpid(), job_module_file()))
        .key_by(lambda t: t[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1], a[2] and b[2], b[3], b[4]))
    )
    final: dict[str, tuple[int, bool, int, str]] = {}
    with counts.execute_and_collect("word count") as results:
        for word, count, spark, pid, module in results:
            final[word] = (count, spark, pid, module)
    return {
        "counts": {w: c for w, (c, _, _, _) in final.items()},
        "in_spark_task": sorted({s for _, s, _, _ in final.values()}),
        "pids": sorted({p for _, _, p, _ in final.values()}),
        "module_files": sorted({m for _, _, _, m in final.values()}),
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


def warn_once(value: int) -> int:
    if value == 3:
        logging.getLogger("user.job").warning("value %d seen in pid %d", value, os.getpid())
    return value


class RunningCount(KeyedProcessFunction):
    def open(self, ctx: Any) -> None:
        self.count = ctx.get_state(ValueStateDescriptor("count"))

    def process_element(self, value: tuple[str, int], ctx: Any) -> Any:
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        yield (value[0], value[1], n)


def keyed_event(i: int) -> tuple[str, int]:
    return (f"k{i % 7}", i)


def failure_free_output(n: int) -> list[tuple[str, int, int]]:
    """What a failure-free run of ``keyed_event`` → ``RunningCount`` commits: one source subtask keeps each key's
    order, so the counts are fixed."""
    seen: Counter[str] = Counter()
    out = []
    for i in range(n):
        key, v = keyed_event(i)
        seen[key] += 1
        out.append((key, v, seen[key]))
    return sorted(out)


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
