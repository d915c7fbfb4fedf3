"""The async wait operator's queues: ordered emits in input order, unordered in completion order but never
across a watermark; the length counts what is in flight for the capacity; the snapshot holds every input not
yet emitted."""

from __future__ import annotations

from typing import Any

from strom.runtime.operators.async_queue import AsyncElement, StreamElementQueue


def _out(items: list[AsyncElement | int]) -> list[Any]:
    return [i if isinstance(i, int) else i.results[0] for i in items]


def test_ordered_results_leave_in_input_order_and_watermarks_in_place() -> None:
    q = StreamElementQueue(ordered=True)
    a, b = q.add("a", 1), q.add("b", 2)
    q.add_watermark(5)
    c = q.add("c", 6)
    q.complete(c, ["C"])
    q.complete(b, ["B"])
    assert q.pop_ready() == [] and len(q) == 3
    q.complete(a, ["A"])
    assert _out(q.pop_ready()) == ["A", "B", 5, "C"] and len(q) == 0 and q.is_empty()


def test_unordered_results_leave_as_they_complete_but_not_across_a_watermark() -> None:
    q = StreamElementQueue(ordered=False)
    a, b = q.add("a", None), q.add("b", None)
    q.add_watermark(10)
    c, d = q.add("c", None), q.add("d", None)
    q.add_watermark(20)
    q.complete(d, ["D"])
    q.complete(b, ["B"])
    assert _out(q.pop_ready()) == ["B"]
    assert q.snapshot() == [("a", None), ("c", None), ("d", None)]
    q.complete(a, ["A"])
    assert _out(q.pop_ready()) == ["A", 10, "D"]
    q.complete(c, ["C"])
    assert _out(q.pop_ready()) == ["C", 20] and q.is_empty()


def test_a_watermark_with_nothing_in_flight_leaves_at_once_and_completing_twice_counts_once() -> None:
    for ordered in (True, False):
        q = StreamElementQueue(ordered=ordered)
        q.add_watermark(3)
        assert q.pop_ready() == [3]
        e = q.add("x", 7)
        q.complete(e, ["X"])
        q.complete(e, ["Y"])
        ready = q.pop_ready()
        assert _out(ready) == ["X"] and ready[0].timestamp == 7 and len(q) == 0  # type: ignore[union-attr]
