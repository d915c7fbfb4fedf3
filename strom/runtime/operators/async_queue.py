"""The element queues of the :class:`~strom.runtime.operators.async_wait.AsyncWaitOperator`: pure state machines
(Flink's ``OrderedStreamElementQueue`` and ``UnorderedStreamElementQueue``).

A queue holds what the operator took in and has not emitted yet: records (in flight, or completed with their
results) and watermarks. Both count toward ``capacity``. ``try_put_record`` / ``try_put_watermark`` refuse
when the queue is full; ``complete(entry, results)`` records a result; ``pop_completed()`` returns what may be
emitted now, in the order to emit it.

- Ordered: strictly the input order — the head is emitted once complete, and everything behind it waits.
- Unordered: records are emitted as they complete, but never across a watermark: a watermark starts a new
  *segment*, and no record of a segment is emitted before the segments in front of it — the watermark
  included — have been. So a watermark is emitted after every record that came before it, and before every
  record that came after it (Flink's watermark barriers).

``values()`` lists every held element (the operator's checkpointed state, re-issued on restore).

    >>> q = UnorderedStreamElementQueue(4)
    >>> a, b = q.try_put_record("a", None), q.try_put_record("b", None)
    >>> q.try_put_watermark(10); c = q.try_put_record("c", None)
    True
    >>> q.complete(c, ["C"]); q.pop_completed()
    []
    >>> q.complete(b, ["B"]); [e.results for e in q.pop_completed()]
    [['B']]
    >>> q.complete(a, ["A"]); [getattr(e, "results", e) for e in q.pop_completed()]
    [['A'], WatermarkEntry(timestamp=10), ['C']]
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from dataclasses import dataclass
from typing import Any

__all__ = [
    "OrderedStreamElementQueue",
    "RecordEntry",
    "StreamElementQueue",
    "UnorderedStreamElementQueue",
    "WatermarkEntry",
]


class RecordEntry:
    """One record taken in: its value, its event timestamp, and its results once complete."""

    __slots__ = ("done", "position", "results", "segment", "timestamp", "value")

    def __init__(self, value: Any, timestamp: int | None) -> None:
        self.value = value
        self.timestamp = timestamp
        self.results: list[Any] | None = None
        self.done = False
        self.segment: _Segment | None = None  # unordered queue only
        self.position = 0  # set by the operator: the how-manyth element its subtask took in (error messages)

    def __repr__(self) -> str:
        state = f"results={self.results!r}" if self.done else "in flight"
        return f"RecordEntry({self.value!r}, {state})"


@dataclass(frozen=True, slots=True)
class WatermarkEntry:
    timestamp: int


Entry = RecordEntry | WatermarkEntry


class StreamElementQueue(ABC):
    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"expected a queue capacity of at least 1; got {capacity}")
        self.capacity = capacity
        self._size = 0

    def size(self) -> int:
        return self._size

    def is_empty(self) -> bool:
        return self._size == 0

    def is_full(self) -> bool:
        return self._size >= self.capacity

    def try_put_record(self, value: Any, timestamp: int | None) -> RecordEntry | None:
        """Take ``value`` in (``None``: the queue is full)."""
        if self._size >= self.capacity:
            return None
        entry = RecordEntry(value, timestamp)
        self._add_record(entry)
        self._size += 1
        return entry

    def try_put_watermark(self, timestamp: int) -> bool:
        """Take a watermark in (``False``: the queue is full)."""
        if self._size >= self.capacity:
            return False
        self._add_watermark(WatermarkEntry(timestamp))
        self._size += 1
        return True

    def complete(self, entry: RecordEntry, results: list[Any]) -> None:
        """``entry``'s results arrived."""
        if entry.done:
            raise ValueError(f"expected an in-flight record; got {entry!r}, completed already")
        entry.results = results
        entry.done = True
        self._on_complete(entry)

    def pop_completed(self) -> list[Entry]:
        """Remove and return what may be emitted now, in emission order."""
        out = self._pop_completed()
        self._size -= len(out)
        return out

    @abstractmethod
    def _add_record(self, entry: RecordEntry) -> None: ...

    @abstractmethod
    def _add_watermark(self, entry: WatermarkEntry) -> None: ...

    def _on_complete(self, entry: RecordEntry) -> None:
        return None

    @abstractmethod
    def _pop_completed(self) -> list[Entry]: ...

    @abstractmethod
    def values(self) -> list[Entry]:
        """Every element held, completed or not (for a checkpoint)."""

    def in_flight(self) -> list[RecordEntry]:
        """The records still waiting for their results."""
        return [e for e in self.values() if isinstance(e, RecordEntry) and not e.done]

    def validate(self) -> None:
        held = self.values()
        assert len(held) == self._size, f"size {self._size} but {len(held)} elements held"
        assert self._size <= self.capacity, f"size {self._size} over capacity {self.capacity}"


class OrderedStreamElementQueue(StreamElementQueue):
    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self._queue: deque[Entry] = deque()

    def _add_record(self, entry: RecordEntry) -> None:
        self._queue.append(entry)

    def _add_watermark(self, entry: WatermarkEntry) -> None:
        self._queue.append(entry)

    def _pop_completed(self) -> list[Entry]:
        q = self._queue
        out: list[Entry] = []
        while q and (isinstance(q[0], WatermarkEntry) or q[0].done):
            out.append(q.popleft())
        return out

    def values(self) -> list[Entry]:
        return list(self._queue)


class _Segment:
    """Records between two watermarks (or a lone watermark): completed ones wait in ``completed``."""

    __slots__ = ("completed", "incomplete", "watermark")

    def __init__(self, watermark: WatermarkEntry | None = None) -> None:
        self.watermark = watermark
        self.incomplete: dict[int, RecordEntry] = {}  # by id(), in arrival order
        self.completed: deque[RecordEntry] = deque()


class UnorderedStreamElementQueue(StreamElementQueue):
    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self._segments: deque[_Segment] = deque()

    def _add_record(self, entry: RecordEntry) -> None:
        segs = self._segments
        if not segs or segs[-1].watermark is not None:
            segs.append(_Segment())
        seg = segs[-1]
        entry.segment = seg
        seg.incomplete[id(entry)] = entry

    def _add_watermark(self, entry: WatermarkEntry) -> None:
        segs = self._segments
        if segs and segs[-1].watermark is None and not (segs[-1].incomplete or segs[-1].completed):
            segs.pop()  # an emptied record segment closes behind nothing
        segs.append(_Segment(entry))

    def _on_complete(self, entry: RecordEntry) -> None:
        seg = entry.segment
        assert seg is not None
        del seg.incomplete[id(entry)]
        seg.completed.append(entry)

    def _pop_completed(self) -> list[Entry]:
        segs = self._segments
        out: list[Entry] = []
        while segs:
            seg = segs[0]
            if seg.watermark is not None:
                out.append(seg.watermark)
                segs.popleft()
                continue
            while seg.completed:
                out.append(seg.completed.popleft())
            if seg.incomplete or len(segs) == 1:
                break  # records still in flight hold back everything behind them; the last segment stays open
            segs.popleft()
        return out

    def values(self) -> list[Entry]:
        out: list[Entry] = []
        for seg in self._segments:
            if seg.watermark is not None:
                out.append(seg.watermark)
            else:
                out.extend(seg.completed)
                out.extend(seg.incomplete.values())
        return out

    def validate(self) -> None:
        super().validate()
        for i, seg in enumerate(self._segments):
            if seg.watermark is not None:
                assert not seg.incomplete and not seg.completed, "a watermark segment holds records"
            else:
                assert all(not e.done for e in seg.incomplete.values()), "a completed record left in incomplete"
                assert all(e.done for e in seg.completed), "an in-flight record in completed"
                if i + 1 < len(self._segments):
                    assert seg.incomplete or seg.completed, "an empty record segment before others"
