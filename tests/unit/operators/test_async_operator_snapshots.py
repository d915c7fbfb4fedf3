"""Operators with forked keyed snapshots: what the synchronous part writes into the backend only for the snapshot —
the timers, the aligned window operator's materialized panes — is in the copy, although it leaves the backend (and
the windows fire) before the asynchronous part runs."""

from __future__ import annotations

from typing import Any

import pytest
from operator_harness import OperatorHarness

from strom import EventTimeTrigger, KeyedProcessFunction, TumblingEventTimeWindows
from strom.api.windowed_stream import window_operator
from strom.runtime.operators.keyed import KeyedProcessOperator
from strom.runtime.operators.windowing.aligned_window_operator import AlignedWindowOperator
from strom.runtime.operators.windowing.internal_functions import internal_window_function
from strom.runtime.state.heap_snapshot_strategy import FORK_SUPPORTED, ForkedSnapshot, HeapSnapshotStrategy

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(not FORK_SUPPORTED, reason="fork-based snapshots need Linux"),
]

KEYS = 40


def key0(t: tuple[Any, ...]) -> Any:
    return t[0]


def add_pairs(a: tuple[str, int], b: tuple[str, int]) -> tuple[str, int]:
    return (a[0], a[1] + b[1])


def _window() -> Any:
    assigner = TumblingEventTimeWindows.of(1000)
    return window_operator(
        key_selector=key0,
        assigner=assigner,
        trigger=EventTimeTrigger(),
        evictor=None,
        window_function=internal_window_function(None, keyed=True, reduce=add_pairs),
        contents="reduce",
        reduce_function=add_pairs,
        allowed_lateness=0,
        late_data_tag=None,
    )


class FireAt(KeyedProcessFunction[str, tuple[str, int], Any]):
    """Registers an event-time timer at the element's value and emits (key, time) when it fires."""

    def process_element(self, value: tuple[str, int], ctx: Any) -> None:
        ctx.timer_service().register_event_time_timer(value[1])

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield (ctx.get_current_key(), timestamp)


def _forking(h: OperatorHarness, fork: bool) -> OperatorHarness:
    backend: Any = h.operator.keyed_backend
    backend.snapshot_strategy = HeapSnapshotStrategy(use_fork=fork, fork_min_entries=0, sync_max_bytes=0)
    return h


@pytest.mark.parametrize("kind", ["window", "timers"])
def test_state_written_only_for_the_snapshot_is_in_the_forked_copy(kind: str) -> None:
    def make() -> OperatorHarness:
        return OperatorHarness(_window() if kind == "window" else KeyedProcessOperator(FireAt(), key0))

    elements = [((f"k{i}", 500 + i), 100 + i) for i in range(KEYS)]
    outputs: dict[bool, tuple[list[Any], list[Any]]] = {}
    for fork in (False, True):
        h = _forking(make().open(), fork)
        if kind == "window":
            assert isinstance(h.operator, AlignedWindowOperator)
        h.process_elements(elements)
        snap = h.operator.snapshot_state(1, 0)  # the synchronous part
        assert snap is not None
        assert isinstance(snap.keyed_supplier, ForkedSnapshot) is fork
        h.process_watermark(10_000)  # fires everything: panes and timers leave the original
        fired = sorted(h.records())
        restored = make().open(restore=snap.resolve())  # the asynchronous part, later
        restored.process_watermark(10_000)
        outputs[fork] = (fired, sorted(restored.records()))
    assert outputs[True] == outputs[False]
    fired, again = outputs[True]
    assert len(fired) == KEYS and again == fired  # the restored copy fires the same windows / timers
