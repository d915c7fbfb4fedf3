"""The built-in keyed operators over the RocksDB backend's tables (the rest of the operator tests run on the heap):
windows (general, aligned, merging sessions) and keyed timers give the same output across a snapshot taken with one
backend and restored with the other as without one."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from operator_harness import OperatorHarness

from strom import EventTimeSessionWindows, ProcessWindowFunction, SlidingEventTimeWindows, TumblingEventTimeWindows
from strom.api.windowed_stream import window_operator
from strom.runtime.operators.windowing.internal_functions import internal_window_function

pytestmark = pytest.mark.timeout(60)

BACKEND_PAIRS = [("rocksdb", "rocksdb"), ("hashmap", "rocksdb"), ("rocksdb", "hashmap")]


class WithWindow(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
        w = context.window()
        yield (key, w.start, w.end, sum(e[1] for e in elements))


def _harness(assigner: Any, backend: str, restore: Any = None) -> OperatorHarness:
    op = window_operator(
        key_selector=lambda t: t[0],
        assigner=assigner,
        trigger=assigner.get_default_trigger(),
        evictor=None,
        window_function=internal_window_function(WithWindow(), keyed=True),
        contents="list",
    )
    return OperatorHarness(op, state_backend=backend).open(restore=restore)


@pytest.mark.parametrize(("before", "after"), BACKEND_PAIRS)
@pytest.mark.parametrize(
    "assigner",
    [TumblingEventTimeWindows.of(1000), SlidingEventTimeWindows.of(2000, 500), EventTimeSessionWindows.with_gap(300)],
    ids=["tumbling", "sliding", "session"],
)
def test_a_window_snapshot_restores_across_backends_with_the_uninterrupted_output(
    assigner: Any, before: str, after: str
) -> None:
    first = [((f"k{i % 3}", i), i * 37 % 1500) for i in range(30)]
    second = [((f"k{i % 3}", i), 1500 + i * 53 % 1500) for i in range(30, 60)]

    def run(restart: bool) -> list[Any]:
        h = _harness(assigner, before)
        h.process_elements(first)
        h.process_watermark(700)
        out = h.records()
        if restart:
            h = _harness(assigner, after, restore=h.snapshot())
        h.process_elements(second)
        h.process_watermark(10_000)
        return sorted(out + h.records())

    expected = sorted(_run_on_heap(assigner, first + second))
    assert run(restart=False) == expected
    assert run(restart=True) == expected


def _run_on_heap(assigner: Any, elements: list[Any]) -> list[Any]:
    h = _harness(assigner, "hashmap")
    h.process_elements(elements[:30])
    h.process_watermark(700)
    out = h.records()
    h.process_elements(elements[30:])
    h.process_watermark(10_000)
    return out + h.records()
