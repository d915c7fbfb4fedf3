"""Sorted input of keyed operators in BATCH execution (:mod:`strom.runtime.io.sorting_data_input`, Flink's
``SortingDataInput``) and the single-key state it allows (``BatchExecutionKeyedStateBackend``): keys in BATCH key
order, a key's records contiguous and in order of time, ``end_key`` after each, only the final watermark passed on;
spilled runs merged to the same output; a keyed process operator holding one key's state at a time, its timers
firing at the end of their key; a reduce keeping hash aggregation, each key's final value in BATCH key order."""

from __future__ import annotations

from typing import Any

import pytest

from strom.api.functions import KeyedProcessFunction
from strom.api.state import ValueStateDescriptor
from strom.exceptions import CheckpointError
from strom.runtime.io.sorting_data_input import SortingDataInput
from strom.runtime.operators.base import StreamingRuntimeContext, TaskInfo
from strom.runtime.operators.keyed import KeyedProcessOperator, StreamGroupedReduce, sorted_input_key
from strom.runtime.operators.timer_service import LONG_MAX, LONG_MIN, batch_key_order
from strom.runtime.state.batch_execution_keyed_state_backend import BatchExecutionKeyedStateBackend
from strom.runtime.streamrecord import timestamps_of, with_timestamps
from strom.runtime.tasks.processing_time_service import ProcessingTimeService


class CollectingOutput:
    """What an operator emitted: ``(value, timestamp)`` per record, ``("watermark", t)`` per watermark."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    def emit(self, batch: list[Any]) -> None:
        self.events.extend(zip(batch, timestamps_of(batch) or [None] * len(batch), strict=True))

    def emit_watermark(self, timestamp: int) -> None:
        self.events.append(("watermark", timestamp))


class FakeHead:
    def __init__(self) -> None:
        self.events: list[Any] = []

    def process_batch(self, batch: list[Any]) -> None:
        ts = timestamps_of(batch)
        self.events.append(("batch", list(batch), ts))

    def end_key(self) -> None:
        self.events.append("end_key")

    def process_watermark(self, timestamp: int) -> None:
        self.events.append(("watermark", timestamp))

    def process_watermark_status(self, idle: bool) -> None:
        self.events.append(("idle", idle))


def _key(v: tuple[str, int]) -> str:
    return v[0]


def _sorter(head: Any, *, memory_bytes: int = 1 << 30, batch_records: int = 1024, **kw: Any) -> SortingDataInput:
    return SortingDataInput(head, _key, memory_bytes=memory_bytes, batch_records=batch_records, **kw)


def test_keys_come_in_batch_key_order_each_contiguous_then_end_key_then_the_final_watermark() -> None:
    head = FakeHead()
    sorter = _sorter(head)
    out = sorter.data_output()
    out.emit_batch([("b", 1), ("a", 2), ("c", 3), ("a", 4)])
    out.emit_watermark(100)  # dropped: BATCH passes on only the final watermark
    out.emit_batch([("b", 5), ("a", 6)])
    out.emit_watermark(LONG_MAX)
    sorter.drain()  # the end of data after the final watermark changes nothing
    keys = sorted(["a", "b", "c"], key=batch_key_order)
    expected: list[Any] = []
    groups = {"a": [("a", 2), ("a", 4), ("a", 6)], "b": [("b", 1), ("b", 5)], "c": [("c", 3)]}
    for k in keys:
        expected += [("batch", groups[k], None), "end_key"]
    assert head.events == [*expected, ("watermark", LONG_MAX)]
    assert sorter.num_records == 6


def test_a_keys_records_come_in_order_of_time_untimed_first_cut_into_batches() -> None:
    head = FakeHead()
    sorter = _sorter(head, batch_records=2)
    sorter.add_batch([("a", 0)])  # no timestamps: Flink's Long.MIN_VALUE
    sorter.add_batch(with_timestamps([("a", 1), ("a", 2), ("b", 3)], [30, 10, 5]))
    sorter.add_batch(with_timestamps([("a", 4)], [20]))
    sorter.drain()
    assert head.events == [
        ("batch", [("a", 0), ("a", 2)], [None, 10]),
        ("batch", [("a", 4), ("a", 1)], [20, 30]),
        "end_key",
        ("batch", [("b", 3)], [5]),
        "end_key",
    ]


def test_spilled_runs_merge_into_the_same_output(tmp_path: Any) -> None:
    batches = [[(f"k{(i * 7 + j) % 13}", i * 100 + j) for j in range(50)] for i in range(40)]
    outputs = []
    for memory in (1 << 30, 2_000):
        head = FakeHead()
        sorter = _sorter(head, memory_bytes=memory, spill_directory=str(tmp_path))
        for b in batches:
            sorter.add_batch(b)
        sorter.drain()
        outputs.append((head.events, sorter.num_spills))
    (unspilled, none), (spilled, spills) = outputs
    assert none == 0 and spills > 5
    assert spilled == unspilled
    assert list(tmp_path.iterdir()) == []  # the runs are gone


def _sorted_context() -> StreamingRuntimeContext:
    info = TaskInfo(
        job_id="job",
        job_name="test",
        task_name="task",
        subtask_index=0,
        parallelism=1,
        max_parallelism=128,
        attempt_number=0,
        batch_execution=True,
        sorted_inputs=True,
    )
    ctx = StreamingRuntimeContext(info, operator_name="op")
    ctx.processing_time_service = ProcessingTimeService(clock=lambda: 0)
    return ctx


class CountWithTimer(KeyedProcessFunction):
    """Counts a key's records; a timer at 1 000 000 emits the count. Records how many keys the state held."""

    def __init__(self) -> None:
        self.keys_held: list[int] = []
        self.watermarks: list[int] = []

    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count"))
        self.backend = runtime_context.keyed_backend

    def process_element(self, value: Any, ctx: Any) -> None:
        self.count.update((self.count.value() or 0) + 1)
        self.keys_held.append(len(self.backend.get_table("count")))
        self.watermarks.append(ctx.timer_service().current_watermark())
        ctx.timer_service().register_event_time_timer(1_000_000)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield (ctx.get_current_key(), self.count.value(), timestamp)


def test_a_keyed_process_operator_holds_one_keys_state_and_fires_its_timers_at_the_keys_end() -> None:
    fn = CountWithTimer()
    op = KeyedProcessOperator(fn, _key)
    output = CollectingOutput()
    op.setup(_sorted_context(), output)
    op.open()
    key_of = sorted_input_key(op)
    assert key_of is not None and isinstance(op.keyed_backend, BatchExecutionKeyedStateBackend)
    sorter = SortingDataInput(op, key_of, memory_bytes=1 << 30, batch_records=1024)
    records = [(f"k{i % 5}", i) for i in range(50)]
    sorter.add_batch(with_timestamps(records, list(range(50))))
    sorter.process_watermark(LONG_MAX)
    keys = sorted({k for k, _ in records}, key=batch_key_order)
    assert output.events == [((k, 10, 1_000_000), 1_000_000) for k in keys] + [("watermark", LONG_MAX)]
    assert set(fn.keys_held) == {1}  # never a second key's state
    assert set(fn.watermarks) == {LONG_MIN}  # -∞ while a key's records are processed, as Flink's batch timers
    assert op.keyed_backend.get_table("count") == {}


def test_a_reduce_keeps_hash_aggregation_and_emits_each_keys_final_value_in_batch_key_order() -> None:
    op = StreamGroupedReduce(lambda a, b: (a[0], a[1] + b[1]), _key)
    op.batch_results = True
    output = CollectingOutput()
    op.setup(_sorted_context(), output)
    op.open()
    assert sorted_input_key(op) is None  # CPython: a dict update per record beats grouping the records by key
    words = [(f"w{i % 11}", 1) for i in range(200)]
    for start in range(0, 200, 30):
        op.process_batch(words[start : start + 30])
    op.finish()
    keys = sorted({w for w, _ in words}, key=batch_key_order)
    assert [v for v, _ in output.events] == [(k, sum(1 for w, _ in words if w == k)) for k in keys]


def test_the_batch_backend_drops_the_key_at_its_end_and_refuses_a_snapshot() -> None:
    backend = BatchExecutionKeyedStateBackend(max_parallelism=128)
    state = backend.get_state(ValueStateDescriptor("v"))
    backend.current_key = "a"
    state.update(1)
    backend.current_namespace = "window"
    state.update(2)
    backend.end_key()
    backend.current_namespace = None
    assert state.value() is None and backend.num_keys() == 0
    with pytest.raises(CheckpointError, match="no checkpoint of a BATCH job"):
        backend.async_snapshot()
