"""A chain's run of stateless maps and a last filter runs as one loop (strom.runtime.operators.fused_loop): the same
output and counts as operator by operator, and a failure names the operator and its input record."""

from __future__ import annotations

from typing import Any

import pytest

from strom.exceptions import UserFunctionError
from strom.runtime.operators.base import StreamingRuntimeContext, StreamOperator, TaskInfo
from strom.runtime.operators.fused_loop import fuse_stateless_runs
from strom.runtime.operators.simple import StreamFilter, StreamMap
from strom.runtime.streamrecord import timestamps_of, with_timestamps
from strom.runtime.tasks.operator_chain import _ChainedTarget, _ChainOutput


class _Sink:
    def __init__(self) -> None:
        self.batches: list[list[Any]] = []

    def emit(self, batch: list[Any]) -> None:
        self.batches.append(batch)

    def emit_watermark(self, timestamp: int) -> None:
        pass

    def emit_watermark_status(self, idle: bool) -> None:
        pass


def _chain(ops: list[StreamOperator]) -> _Sink:
    info = TaskInfo(
        job_id="j",
        job_name="t",
        task_name="t",
        subtask_index=0,
        parallelism=1,
        max_parallelism=128,
        attempt_number=0,
        auto_watermark_interval_ms=0,
    )
    sink = _Sink()
    for i in reversed(range(len(ops))):
        main: list[Any] = [_ChainedTarget(ops[i + 1])] if i + 1 < len(ops) else [sink]
        ops[i].setup(StreamingRuntimeContext(info, operator_name=ops[i].name), _ChainOutput(main, {}))
    for op in reversed(ops):
        op.open()
    return sink


def plus_one(v: int) -> int:
    return v + 1


def halve(v: int) -> int:
    return 10 // (v - 7) if v == 7 else v // 2


def even(v: int) -> bool:
    return v % 2 == 0


def test_a_run_gives_what_the_operators_give_one_by_one_and_counts_each_input() -> None:
    ops: list[StreamOperator] = [StreamMap(plus_one), StreamMap(halve), StreamFilter(even)]
    sink = _chain(ops)
    (run,) = fuse_stateless_runs(ops)
    assert run.stages == ops
    ops[0].output_budget.records = 1024  # as after the first batch
    run.process_batch(list(range(10, 20)))
    assert sink.batches == [[v for v in ((x + 1) // 2 for x in range(10, 20)) if v % 2 == 0]]
    assert [op._records_in for op in ops] == [10, 10, 10]
    run.process_batch(with_timestamps([3, 4], [5, 6]))  # timestamps: the operators' own loops
    assert sink.batches[-1] == [2, 2] and timestamps_of(sink.batches[-1]) == [5, 6]


def test_a_failure_names_the_operator_and_its_own_input_record() -> None:
    ops: list[StreamOperator] = [StreamMap(plus_one), StreamMap(halve), StreamFilter(even)]
    ops[1].name = "halve"
    _chain(ops)
    (run,) = fuse_stateless_runs(ops)
    ops[0].output_budget.records = 1024
    run.process_batch([0, 1, 2])
    with pytest.raises(UserFunctionError) as info:
        run.process_batch([4, 5, 6, 9])  # 6 + 1 = 7 fails in halve, its input #5
    assert str(info.value).startswith(
        "ZeroDivisionError: integer division or modulo by zero — raised by the user function of operator 'halve' "
    )
    assert str(info.value).endswith("on input record #5 (7)")


def test_functions_that_cannot_be_told_apart_are_not_fused() -> None:
    assert fuse_stateless_runs([StreamMap(str), StreamMap(plus_one)]) == []
    ops: list[StreamOperator] = [StreamMap(plus_one), StreamMap(plus_one)]
    _chain(ops)
    assert fuse_stateless_runs(ops) == []


def test_a_run_after_a_filter_starts_a_run_of_its_own_and_the_first_feeds_it() -> None:
    chain: list[StreamOperator] = [StreamMap(plus_one), StreamFilter(even), StreamMap(halve)]
    chain.append(StreamMap(lambda v: v * 10))
    sink = _chain(chain)
    runs = fuse_stateless_runs(chain)
    assert [r.stages for r in runs] == [chain[:2], chain[2:]]
    for op in chain:
        op.output_budget.records = 1024
    chain[1].output.retarget(chain[2].process_batch, runs[1].process_batch)  # as OperatorChain does
    runs[0].process_batch([1, 2, 3])  # 2 and 4 pass, are halved to 1 and 2, times ten
    assert sink.batches == [[10, 20]]
    assert [op._records_in for op in chain] == [3, 3, 2, 2]
