"""A priority queue made of one ordered set per key group (Flink's ``KeyGroupPartitionedPriorityQueue``).

Each key group's elements live in their own :class:`RocksDBCachingPriorityQueueSet` (so a key-group range is
contiguous in RocksDB, and rescaling moves whole key groups); a heap of the key groups' heads gives the overall
head. Elements are bytes that start with the 2-byte key group; they are ordered by the rest (``element[2:]``:
the timestamp first), ties between key groups by key group.

The heap is lazy: an entry ``(element[2:], key group, element)`` is pushed whenever a key group's head changes
and dropped when it reaches the top and is no longer that key group's head, so a change costs one push and no
search. It is rebuilt when stale entries outnumber the live ones.

    >>> from rocksdict import Options, Rdict
    >>> import tempfile
    >>> db = Rdict(tempfile.mkdtemp(), Options(raw_mode=True))
    >>> q = KeyGroupPartitionedPriorityQueue(db, known_empty=True)
    >>> _ = q.add(b"\\x00\\x02b"), q.add(b"\\x00\\x01c"), q.add(b"\\x00\\x03a")
    >>> [q.poll() for _ in range(4)]
    [b'\\x00\\x03a', b'\\x00\\x02b', b'\\x00\\x01c', None]
    >>> db.close()
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import Any

from strom.runtime.state.rocksdb.rocksdb_cached_priority_queue_set import (
    DEFAULT_CACHE_CAPACITY,
    RocksDBCachingPriorityQueueSet,
)
from strom.runtime.state.rocksdb.rocksdb_key_serialization_utils import KEY_GROUP_PREFIX_BYTES, prefix_successor

__all__ = ["KeyGroupPartitionedPriorityQueue"]

_KG = KEY_GROUP_PREFIX_BYTES


class KeyGroupPartitionedPriorityQueue:
    """The elements of every key group in ``cf``, one cached ordered set per key group."""

    __slots__ = ("_capacity", "_cf", "_heap", "_sets")

    def __init__(self, cf: Any, *, known_empty: bool, capacity: int = DEFAULT_CACHE_CAPACITY) -> None:
        """``known_empty``: ``cf`` holds nothing yet; otherwise its key groups are found with one seek each."""
        self._cf = cf
        self._capacity = capacity
        self._sets: dict[int, RocksDBCachingPriorityQueueSet] = {}
        self._heap: list[tuple[bytes, int, bytes]] = []
        if not known_empty:
            for prefix in self._stored_key_groups():
                self._set_of(prefix, known_empty=False)
            self._rebuild()

    def _stored_key_groups(self) -> Iterator[bytes]:
        it = self._cf.iter()
        it.seek_to_first()
        while it.valid():
            prefix = bytes(it.key()[:_KG])
            yield prefix
            it.seek(prefix_successor(prefix))

    def _set_of(self, element: bytes, *, known_empty: bool = True) -> RocksDBCachingPriorityQueueSet:
        """The set of ``element``'s key group (``element`` may be just the prefix), created if new."""
        kg = (element[0] << 8) | element[1]
        found = self._sets.get(kg)
        if found is None:
            found = self._sets[kg] = RocksDBCachingPriorityQueueSet(
                self._cf, element[:_KG], capacity=self._capacity, known_empty=known_empty
            )
        return found

    # -- the queue -------------------------------------------------------------------------------------------
    def peek(self) -> bytes | None:
        """The smallest element of all key groups (``None``: empty)."""
        heap = self._heap
        sets = self._sets
        while heap:
            _, kg, element = heap[0]
            if sets[kg].peek() == element:
                return element
            heapq.heappop(heap)
        return None

    def poll(self) -> bytes | None:
        """Remove and return the smallest element: its key group's head, whose heap entry is replaced by the next."""
        head = self.peek()
        if head is not None:
            self.remove_peeked()
        return head

    def remove_peeked(self) -> None:
        """Remove the element :meth:`peek` returned just now (its entry is the heap's top)."""
        heap = self._heap
        kg = heap[0][1]
        found = self._sets[kg]
        found.remove_head()
        following = found.peek()
        if following is None:
            heapq.heappop(heap)
        else:
            heapq.heapreplace(heap, (following[_KG:], kg, following))

    def add(self, element: bytes, value: bytes = b"") -> bool:
        """Add ``element`` (a set: no effect if present); ``True`` if it became its key group's head."""
        if self._set_of(element).add(element, value):
            self._push(element)
            return True
        return False

    def remove(self, element: bytes) -> bool:
        """Remove ``element`` (no effect if absent); ``True`` if it was its key group's head."""
        kg = (element[0] << 8) | element[1]
        found = self._sets.get(kg)
        if found is None:
            return False
        if not found.remove(element):
            return False
        head = found.peek()
        if head is not None:
            self._push(head)
        return True

    def get_value(self, element: bytes) -> bytes | None:
        data: bytes | None = self._cf.get(element)
        return data

    def _push(self, element: bytes) -> None:
        heap = self._heap
        heapq.heappush(heap, (element[_KG:], (element[0] << 8) | element[1], element))
        if len(heap) > 2 * len(self._sets) + 64:
            self._rebuild()

    def _rebuild(self) -> None:
        heads = ((s.peek(), kg) for kg, s in self._sets.items())
        self._heap = [(head[_KG:], kg, head) for head, kg in heads if head is not None]
        heapq.heapify(self._heap)

    # -- whole-queue views (not on the hot path) -------------------------------------------------------------
    def __len__(self) -> int:
        return sum(len(s) for s in self._sets.values())

    def items(self) -> list[tuple[bytes, bytes]]:
        """Every ``(element, value)``, in RocksDB's order (key group first)."""
        return list(self._cf.items())

    def key_groups(self) -> list[int]:
        """The key groups that hold elements, ascending."""
        return sorted(kg for kg, s in self._sets.items() if not s.is_empty())

    def clear(self) -> None:
        """Remove every element: one range tombstone (key groups are below 0x8000)."""
        self._cf.delete_range(b"\x00", b"\x80")
        self._sets.clear()
        self._heap.clear()

    def validate(self) -> None:
        """Check every key group's invariants and that every non-empty key group's head is on the heap."""
        live = {(entry[1], entry[2]) for entry in self._heap}
        for kg, s in self._sets.items():
            s.validate()
            head = s.peek()
            assert head is None or (kg, head) in live, f"head of key group {kg} is not on the heap"
