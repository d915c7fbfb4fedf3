"""The queues of the async wait operator (Flink's ``OrderedStreamElementQueue`` and
``UnorderedStreamElementQueue``): a pure state machine of the elements in flight and the watermarks between
them; the operator adds, completes and takes what is ready to emit.

- **ordered**: results leave in input order; a watermark leaves when everything before it has.
- **unordered**: results leave as they complete, but never across a watermark: the elements after a watermark
  wait until it left, and it leaves once every element before it has (watermarks are barriers).

    >>> q = StreamElementQueue(ordered=False)
    >>> a, b = q.add("a", None), q.add("b", None)
    >>> q.add_watermark(10); c = q.add("c", None)
    >>> q.complete(c, ["C"]); q.complete(b, ["B"]); [e.results for e in q.pop_ready()]
    [['B']]
    >>> q.complete(a, ["A"]); [getattr(e, "results", e) for e in q.pop_ready()]
    [['A'], 10, ['C']]
"""

from __future__ import annotations

from collections import deque
from typing import Any

__all__ = ["AsyncElement", "StreamElementQueue"]


class AsyncElement:
    """An input in flight: its value, timestamp, results once complete, and the attempts made so far."""

    __slots__ = ("done", "results", "segment", "seq", "timestamp", "value")

    def __init__(self, seq: int, value: Any, timestamp: int | None) -> None:
        self.seq = seq
        self.value = value
        self.timestamp = timestamp
        self.results: list[Any] = []
        self.done = False
        self.segment: _Segment | None = None


class _Segment:
    """Unordered mode: the elements between two watermarks, and the watermark that closes them."""

    __slots__ = ("pending", "ready", "watermark")

    def __init__(self) -> None:
        self.pending = 0
        self.ready: list[AsyncElement] = []
        self.watermark: int | None = None


class StreamElementQueue:
    def __init__(self, *, ordered: bool) -> None:
        self.ordered = ordered
        self._items: deque[AsyncElement | int] = deque()  # ordered: elements and watermarks in input order
        self._segments: deque[_Segment] = deque()  # unordered
        self._elements: dict[int, AsyncElement] = {}  # every element not yet emitted, in input order (snapshots)
        self._seq = 0

    def __len__(self) -> int:
        """Elements added and not yet emitted (what ``capacity`` bounds)."""
        return len(self._elements)

    def is_empty(self) -> bool:
        return not self._items and not self._segments

    def add(self, value: Any, timestamp: int | None) -> AsyncElement:
        self._seq += 1
        element = AsyncElement(self._seq, value, timestamp)
        self._elements[element.seq] = element
        if self.ordered:
            self._items.append(element)
            return element
        if not self._segments or self._segments[-1].watermark is not None:
            self._segments.append(_Segment())
        segment = self._segments[-1]
        segment.pending += 1
        element.segment = segment
        return element

    def add_watermark(self, timestamp: int) -> None:
        if self.ordered:
            self._items.append(timestamp)
            return
        if not self._segments or self._segments[-1].watermark is not None:
            self._segments.append(_Segment())
        self._segments[-1].watermark = timestamp

    def complete(self, element: AsyncElement, results: list[Any]) -> None:
        if element.done:
            return
        element.done = True
        element.results = results
        if not self.ordered:
            segment = element.segment
            assert segment is not None
            segment.pending -= 1
            segment.ready.append(element)

    def pop_ready(self) -> list[AsyncElement | int]:
        """What may leave now, in emission order: completed elements and watermarks (ints)."""
        out: list[AsyncElement | int] = []
        if self.ordered:
            items = self._items
            while items and (isinstance(items[0], int) or items[0].done):
                out.append(items.popleft())
        else:
            segments = self._segments
            while segments:
                head = segments[0]
                out.extend(head.ready)
                head.ready = []
                if head.pending or (head.watermark is None and len(segments) == 1):
                    break
                segments.popleft()
                if head.watermark is not None:
                    out.append(head.watermark)
        for e in out:
            if not isinstance(e, int):
                del self._elements[e.seq]
        return out

    def snapshot(self) -> list[tuple[Any, int | None]]:
        """Every element not yet emitted, ``(value, timestamp)`` in input order: restored elements are invoked
        again (Flink's AsyncWaitOperator keeps the inputs, not the results, in its state)."""
        return [(e.value, e.timestamp) for e in self._elements.values()]
