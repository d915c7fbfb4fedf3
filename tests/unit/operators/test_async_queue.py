"""The element queues of async I/O: ordered emits in input order, unordered as completed but never across a
watermark, both hold at most ``capacity`` elements and list what they hold for a checkpoint."""

from __future__ import annotations

import random
from typing import Any

import pytest

from strom.runtime.operators.async_queue import (
    OrderedStreamElementQueue,
    RecordEntry,
    StreamElementQueue,
    UnorderedStreamElementQueue,
    WatermarkEntry,
)


def emitted(entries: list[Any]) -> list[Any]:
    """Records as their first result, watermarks as ``("wm", t)``."""
    return [("wm", e.timestamp) if isinstance(e, WatermarkEntry) else e.results[0] for e in entries]


def put(q: StreamElementQueue, value: Any) -> RecordEntry:
    entry = q.try_put_record(value, None)
    assert entry is not None
    q.validate()
    return entry


def test_ordered_queue_emits_in_input_order_whatever_the_completion_order() -> None:
    q = OrderedStreamElementQueue(10)
    a, b, c = put(q, "a"), put(q, "b"), put(q, "c")
    q.complete(c, ["C"])
    q.complete(b, ["B"])
    assert q.pop_completed() == []
    q.validate()
    q.complete(a, ["A"])
    assert emitted(q.pop_completed()) == ["A", "B", "C"]
    assert q.is_empty()
    q.validate()


def test_ordered_queue_keeps_watermarks_in_place() -> None:
    q = OrderedStreamElementQueue(10)
    a = put(q, "a")
    assert q.try_put_watermark(5)
    b = put(q, "b")
    q.complete(b, ["B"])
    assert q.pop_completed() == []
    q.complete(a, ["A"])
    assert emitted(q.pop_completed()) == ["A", ("wm", 5), "B"]


def test_unordered_queue_emits_as_completed_within_a_segment() -> None:
    q = UnorderedStreamElementQueue(10)
    a, b, c = put(q, "a"), put(q, "b"), put(q, "c")
    q.complete(c, ["C"])
    assert emitted(q.pop_completed()) == ["C"]
    q.complete(a, ["A"])
    assert emitted(q.pop_completed()) == ["A"]
    q.complete(b, ["B"])
    assert emitted(q.pop_completed()) == ["B"]
    q.validate()


def test_unordered_queue_treats_watermarks_as_barriers() -> None:
    q = UnorderedStreamElementQueue(10)
    a = put(q, "a")
    assert q.try_put_watermark(10)
    b = put(q, "b")
    assert q.try_put_watermark(20)
    c = put(q, "c")
    q.complete(c, ["C"])
    q.complete(b, ["B"])
    assert q.pop_completed() == []  # "a" is still in flight: nothing after the first watermark may pass
    q.validate()
    q.complete(a, ["A"])
    assert emitted(q.pop_completed()) == ["A", ("wm", 10), "B", ("wm", 20), "C"]
    assert q.is_empty()
    q.validate()


def test_unordered_queue_emits_a_watermark_at_once_when_nothing_precedes_it() -> None:
    q = UnorderedStreamElementQueue(10)
    a = put(q, "a")
    q.complete(a, ["A"])
    assert emitted(q.pop_completed()) == ["A"]
    assert q.try_put_watermark(7)
    assert emitted(q.pop_completed()) == [("wm", 7)]
    q.validate()


@pytest.mark.parametrize("kind", [OrderedStreamElementQueue, UnorderedStreamElementQueue])
def test_capacity_counts_records_and_watermarks(kind: type[StreamElementQueue]) -> None:
    q = kind(3)
    a = put(q, "a")
    assert q.try_put_watermark(1)
    put(q, "b")
    assert q.is_full()
    assert q.try_put_record("c", None) is None
    assert not q.try_put_watermark(2)
    q.complete(a, ["A"])
    q.pop_completed()  # "a" and the watermark leave; "b" stays in flight
    assert q.size() == 1
    assert q.try_put_record("c", None) is not None
    q.validate()


@pytest.mark.parametrize("kind", [OrderedStreamElementQueue, UnorderedStreamElementQueue])
def test_values_hold_every_element_not_yet_emitted(kind: type[StreamElementQueue]) -> None:
    q = kind(10)
    a, b = put(q, "a"), put(q, "b")
    q.try_put_watermark(3)
    c = put(q, "c")
    q.complete(b, ["B"])
    q.complete(c, ["C"])
    q.pop_completed()
    held = q.values()
    records = sorted(e.value for e in held if isinstance(e, RecordEntry))
    assert "a" in records and "c" in records  # in flight, or completed behind the watermark
    assert WatermarkEntry(3) in held
    assert [e.value for e in q.in_flight()] == ["a"]
    assert a in held


def test_completing_twice_is_refused() -> None:
    q = OrderedStreamElementQueue(2)
    a = put(q, "a")
    q.complete(a, [1])
    with pytest.raises(ValueError, match="completed already"):
        q.complete(a, [2])


@pytest.mark.parametrize("kind", [OrderedStreamElementQueue, UnorderedStreamElementQueue])
@pytest.mark.parametrize("seed", range(10))
def test_random_completion_orders_never_move_a_record_across_a_watermark(
    kind: type[StreamElementQueue], seed: int
) -> None:
    """Records are numbered in input order; a watermark put after ``n`` records carries ``n``: when it is
    emitted, exactly the records ``0..n-1`` have been."""
    rng = random.Random(seed)
    q = kind(6)
    pending: list[RecordEntry] = []
    records: list[int] = []
    n = 0
    for _ in range(400):
        action = rng.random()
        if action < 0.45 and not q.is_full():
            entry = q.try_put_record(n, None)
            assert entry is not None
            pending.append(entry)
            n += 1
        elif action < 0.55 and not q.is_full():
            assert q.try_put_watermark(n)
        elif pending:
            entry = pending.pop(rng.randrange(len(pending)))
            q.complete(entry, [entry.value])
        for v in emitted(q.pop_completed()):
            if isinstance(v, tuple):
                assert sorted(records) == list(range(v[1])), f"watermark {v[1]} after records {sorted(records)}"
            else:
                records.append(v)
        q.validate()
    if kind is OrderedStreamElementQueue:
        assert records == sorted(records)
