"""BATCH execution on the Spark target: the stages' tasks run in TaskManagers hosted in Spark Python workers
(``local[2,4]``), on blocking exchanges stage after stage, with the MiniCluster's results."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from spark_jobs import in_spark_task

from strom import Configuration, DataGeneratorSource, StreamExecutionEnvironment
from strom.api.execution_mode import RuntimeExecutionMode
from strom.deploy.spark.session import create_session

pytestmark = [pytest.mark.slow, pytest.mark.spark]

COUNT = 20_000
KEYS = 30


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    session = create_session(Configuration({"spark.master": "local[2,4]"}), "strom-batch-tests")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def word(i: int) -> str:
    return f"w{(i * 7) % KEYS}"


def test_a_batch_job_runs_its_stages_in_spark_tasks(spark: Any) -> None:
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({}), spark=spark)
    env.set_parallelism(2)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    counts = (
        env.from_source(DataGeneratorSource(word, COUNT), source_name="words")
        .map(lambda w: (w, 1, in_spark_task(), os.getpid()))
        .key_by(lambda t: t[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1], a[2] and b[2], b[3]))
    )
    rows = list(counts.execute_and_collect("batch word count"))
    assert {w: c for w, c, _, _ in rows} == Counter(word(i) for i in range(COUNT))
    assert len(rows) == KEYS  # BATCH: one final count per word
    assert {s for _, _, s, _ in rows} == {True}
    assert os.getpid() not in {p for _, _, _, p in rows}
    assert spark.sparkContext.statusTracker().getActiveJobsIds() == []
