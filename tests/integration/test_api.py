"""The DataStream API surface on a real MiniCluster: aggregations, process functions, state, sinks."""

from __future__ import annotations

import dataclasses
from collections import namedtuple
from typing import Any

import pytest

from strom import (
    Configuration,
    KeyedProcessFunction,
    MapFunction,
    ProcessFunction,
    RuntimeContext,
    Sink,
    SinkWriter,
    SinkWriterContext,
    StreamExecutionEnvironment,
    ValueStateDescriptor,
)

Sale = namedtuple("Sale", ["shop", "amount"])


@dataclasses.dataclass(frozen=True)
class Reading:
    sensor: str
    value: int


def collect(stream: Any) -> list[Any]:
    with stream.execute_and_collect() as results:
        return list(results)


def last_per_key(rows: list[Any], key: Any) -> dict[Any, Any]:
    out = {}
    for r in rows:
        out[key(r)] = r
    return out


@pytest.mark.timeout(60)
def test_keyed_aggregations_by_index_and_attribute() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    data = [("a", 3, 1), ("b", 5, 2), ("a", 1, 3), ("a", 7, 4), ("b", 2, 5)]
    src = env.from_collection(data)
    sums = last_per_key(collect(src.key_by(lambda t: t[0]).sum(1)), lambda t: t[0])
    assert sums == {"a": ("a", 11, 1), "b": ("b", 7, 2)}  # other fields from the first record

    env = StreamExecutionEnvironment.get_execution_environment()
    src = env.from_collection(data)
    mins = last_per_key(collect(src.key_by(lambda t: t[0]).min(1)), lambda t: t[0])
    assert mins == {"a": ("a", 1, 1), "b": ("b", 2, 2)}

    env = StreamExecutionEnvironment.get_execution_environment()
    src = env.from_collection(data)
    max_by = last_per_key(collect(src.key_by(lambda t: t[0]).max_by(1)), lambda t: t[0])
    assert max_by == {"a": ("a", 7, 4), "b": ("b", 5, 2)}  # the whole record with the max

    env = StreamExecutionEnvironment.get_execution_environment()
    sales = env.from_collection([Sale("x", 2), Sale("y", 4), Sale("x", 5)])
    by_attr = last_per_key(collect(sales.key_by(lambda s: s.shop).sum("amount")), lambda s: s.shop)
    assert by_attr == {"x": Sale("x", 7), "y": Sale("y", 4)}

    env = StreamExecutionEnvironment.get_execution_environment()
    readings = env.from_collection([Reading("s", 4), Reading("s", 9), Reading("s", 6)])
    assert collect(readings.key_by(lambda r: r.sensor).max("value"))[-1] == Reading("s", 9)
    env = StreamExecutionEnvironment.get_execution_environment()
    readings = env.from_collection([Reading("s", 4), Reading("s", 9), Reading("s", 6)])
    assert collect(readings.key_by(lambda r: r.sensor).min_by("value"))[-1] == Reading("s", 4)


class CountPerKey(KeyedProcessFunction):
    def open(self, ctx: RuntimeContext) -> None:
        self.count = ctx.get_state(ValueStateDescriptor("count"))

    def process_element(self, value: int, ctx: KeyedProcessFunction.Context) -> Any:
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        yield ctx.get_current_key(), n


@pytest.mark.timeout(60)
def test_keyed_process_function_with_value_state() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    rows = collect(env.from_sequence(0, 999).key_by(lambda x: x % 7).process(CountPerKey()))
    final = last_per_key(rows, lambda r: r[0])
    assert {k: v[1] for k, v in final.items()} == {k: len(range(k, 1000, 7)) for k in range(7)}


class Explode(ProcessFunction):
    def process_element(self, value: int, ctx: ProcessFunction.Context) -> Any:
        for i in range(value):
            yield (value, i)


@pytest.mark.timeout(60)
def test_process_function_and_filter_and_class_functions() -> None:
    class Square(MapFunction):
        def map(self, value: int) -> int:
            return value * value

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    rows = collect(env.from_sequence(0, 5).process(Explode()).filter(lambda t: t[1] % 2 == 0).map(lambda t: t[0]))
    assert sorted(rows) == sorted(v for v in range(6) for i in range(v) if i % 2 == 0)
    assert sorted(collect(StreamExecutionEnvironment().from_sequence(1, 4).map(Square()))) == [1, 4, 9, 16]


class RuntimeInfo(MapFunction):
    def open(self, ctx: RuntimeContext) -> None:
        self.info = (
            ctx.get_task_name(),
            ctx.get_index_of_this_subtask(),
            ctx.get_number_of_parallel_subtasks(),
            ctx.get_max_number_of_parallel_subtasks(),
            ctx.get_attempt_number(),
        )

    def map(self, value: int) -> Any:
        return self.info


@pytest.mark.timeout(60)
def test_runtime_context_describes_the_subtask() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(3)
    env.set_max_parallelism(64)
    infos = set(collect(env.from_sequence(0, 300).map(RuntimeInfo()).name("info")))
    assert {i[1] for i in infos} == {0, 1, 2}
    assert all(i[0] == "Source: Sequence Source -> info" and i[2:] == (3, 64, 0) for i in infos)


class FileSink(Sink):
    def __init__(self, directory: str) -> None:
        self.directory = directory

    def create_writer(self, context: SinkWriterContext) -> SinkWriter:
        return _FileWriter(f"{self.directory}/part-{context.subtask_index}")


class _FileWriter(SinkWriter):
    def __init__(self, path: str) -> None:
        self.path = path
        self.buffer: list[str] = []

    def write(self, element: Any) -> None:
        self.buffer.append(f"{element}\n")

    def flush(self, end_of_input: bool) -> None:
        if end_of_input:
            with open(self.path, "w") as f:
                f.writelines(self.buffer)


@pytest.mark.timeout(60)
def test_sink_to_writes_from_every_subtask(tmp_path: Any) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.from_sequence(1, 1000).sink_to(FileSink(str(tmp_path)))
    env.execute()
    parts = sorted(p.name for p in tmp_path.iterdir())
    assert parts == ["part-0", "part-1"]
    values = sorted(int(line) for p in tmp_path.iterdir() for line in p.read_text().split())
    assert values == list(range(1, 1001))


@pytest.mark.processes  # counts the TaskManager processes by pid
@pytest.mark.timeout(60)
def test_several_slots_per_task_manager() -> None:
    import os

    conf = Configuration({"taskmanager.numberOfTaskSlots": 2})
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.set_parallelism(4)
    rows = collect(env.from_sequence(0, 3999).rebalance().map(lambda x: (x, os.getpid())))
    assert sorted(x for x, _ in rows) == list(range(4000))
    assert len({pid for _, pid in rows}) == 2  # 4 subtasks in 2 TaskManagers of 2 slots


@pytest.mark.timeout(60)
def test_execute_and_collect_with_limit_stops_the_job() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)  # one subtask reads the sequence in order
    with env.from_sequence(0, 10**9).execute_and_collect(limit=5) as results:
        assert list(results) == [0, 1, 2, 3, 4]


@pytest.mark.timeout(60)
def test_buffer_timeout_zero_and_large_batches() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.set_buffer_timeout(0)
    rows = collect(env.from_sequence(0, 9999).rebalance().map(lambda x: x + 1))
    assert sorted(rows) == list(range(1, 10001))
