"""BATCH local aggregation end to end: with the combiner before the shuffle (a bound small enough to make it flush
many times) a keyed reduce and min_by give exactly what they give without it: the plain loop's values."""

from __future__ import annotations

from collections import Counter
from typing import Any

from strom import Configuration, DataGeneratorSource, StreamExecutionEnvironment
from strom.api.execution_mode import RuntimeExecutionMode

COUNT = 20_000
KEYS = 50


def event(i: int) -> tuple[int, int, int]:
    return ((i * 7) % KEYS, i % 11, i)


def _env(**config: Any) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration({"taskmanager.numberOfTaskSlots": 1, "minicluster.number-of-taskmanagers": 2, **config})
    )
    env.set_parallelism(2)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    return env


def _run(env: StreamExecutionEnvironment) -> list[Any]:
    events = env.from_source(DataGeneratorSource(event, COUNT), source_name="events")
    keyed = events.key_by(lambda t: t[0])
    sums = keyed.reduce(lambda a, b: (a[0], a[1] + b[1], 0)).map(lambda t: ("sum", t[0], t[1]))
    lowest = keyed.min_by(1).map(lambda t: ("min_by", t[0], t[1]))
    return sorted(sums.union(lowest).execute_and_collect())


def test_the_combined_reduce_is_exact() -> None:
    combined = _run(_env(**{"execution.batch.local-aggregation.max-keys": 7}))
    plain = _run(_env(**{"execution.batch.local-aggregation.enabled": False}))
    expected_sums: Counter[int] = Counter()
    lowest: dict[int, int] = {}
    for i in range(COUNT):
        k, v, _ = event(i)
        expected_sums[k] += v
        lowest[k] = min(lowest.get(k, v), v)
    expected = sorted([("sum", k, s) for k, s in expected_sums.items()] + [("min_by", k, m) for k, m in lowest.items()])
    assert combined == expected
    assert plain == expected
