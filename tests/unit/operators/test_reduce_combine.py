"""``ReduceCombineOperator``: a BATCH reduce's map-side pre-aggregation holds one partial value per key, emits them
when it holds ``max_keys`` keys and at the end of input, and the reduce over its partials is the reduce over the
records."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from operator_harness import OperatorHarness

from strom.api.functions import ReduceFunction
from strom.exceptions import UserFunctionError
from strom.runtime.operators.keyed import StreamGroupedReduce
from strom.runtime.operators.reduce_combine import ReduceCombineOperator


def _add(a: tuple[str, int], b: tuple[str, int]) -> tuple[str, int]:
    return (a[0], a[1] + b[1])


def _key(t: tuple[str, int]) -> str:
    return t[0]


def test_partials_leave_at_the_end_of_input_one_per_key() -> None:
    h = OperatorHarness(ReduceCombineOperator(_add, _key, max_keys=100)).open()
    h.operator.process_batch([("a", 1), ("b", 2), ("a", 3)])
    h.operator.process_batch([("b", 4), ("c", 5)])
    assert h.records() == []
    h.operator.finish()
    assert sorted(h.records()) == [("a", 4), ("b", 6), ("c", 5)]


def test_a_full_table_is_emitted_and_started_again() -> None:
    h = OperatorHarness(ReduceCombineOperator(_add, _key, max_keys=2)).open()
    h.operator.process_batch([("a", 1), ("a", 1)])
    assert h.records() == []
    h.operator.process_batch([("b", 1), ("a", 1)])  # two keys held: emitted
    assert sorted(h.records()) == [("a", 3), ("b", 1)]
    h.operator.process_batch([("a", 5)])
    h.operator.finish()
    assert h.records() == [("a", 5)]


def test_partials_reduced_downstream_equal_the_reduce_of_the_records() -> None:
    records = [(f"k{(i * 31) % 97}", i % 7) for i in range(5_000)]
    combiner = OperatorHarness(ReduceCombineOperator(_add, _key, max_keys=40)).open()
    for start in range(0, len(records), 300):
        combiner.operator.process_batch(records[start : start + 300])
    combiner.operator.finish()
    partials = combiner.records()
    assert 97 < len(partials) < len(records) / 2  # flushed several times, each key once per flush
    reduce = StreamGroupedReduce(_add, _key)
    reduce.batch_results = True
    downstream = OperatorHarness(reduce).open()
    downstream.operator.process_batch(partials)
    downstream.operator.finish()
    expected: Counter[str] = Counter()
    for k, v in records:
        expected[k] += v
    assert dict(downstream.records()) == dict(expected)


class _Min(ReduceFunction[Any]):
    def __init__(self) -> None:
        self.opened = False

    def open(self, runtime_context: Any) -> None:
        self.opened = True

    def reduce(self, value1: Any, value2: Any) -> Any:
        return value1 if value1[1] <= value2[1] else value2


def test_a_reduce_function_is_opened_and_keeps_the_first_on_ties() -> None:
    fn = _Min()
    h = OperatorHarness(ReduceCombineOperator(fn, _key, max_keys=10)).open()
    assert fn.opened
    h.operator.process_batch([("a", 3, "x"), ("a", 1, "y"), ("a", 1, "z")])
    h.operator.finish()
    assert h.records() == [("a", 1, "y")]


def test_a_failing_reduce_names_the_combiner_and_the_record() -> None:
    op = ReduceCombineOperator(lambda a, b: a[1] / 0, _key, max_keys=10)
    op.name = "Local Keyed Reduce"
    h = OperatorHarness(op).open()
    with pytest.raises(UserFunctionError, match="Local Keyed Reduce"):
        h.operator.process_batch([("a", 1), ("a", 2)])
