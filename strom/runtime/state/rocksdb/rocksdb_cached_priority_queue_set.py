"""One key group's ordered set of elements in a column family, with its head cached (Flink's
``RocksDBCachingPriorityQueueSet``).

Elements are RocksDB keys (``bytes``, all starting with the key group's 2-byte prefix) ordered as RocksDB orders
them; the value is an attachment the set does not look at. The set keeps the ``capacity`` smallest elements in a
sorted list (Flink's ``TreeOrderedSetCache``) so that ``peek`` and ``poll`` cost no RocksDB read; the list is
refilled by one seek when it runs empty. Invariants (:meth:`validate`):

* the cache holds the smallest elements of the key group, sorted and distinct;
* ``all_in_cache`` means the cache holds *every* element of the key group;
* the cache is empty only if the key group is (it is refilled the moment its last element leaves it).

A refill seeks to a lower bound of the key group's elements (Flink's ``seekHint``): the last element that left
an emptied cache, lowered by any smaller element added since, so the seek skips the tombstones that polling left
at the front of the key group.

    >>> from rocksdict import Options, Rdict
    >>> import tempfile
    >>> db = Rdict(tempfile.mkdtemp(), Options(raw_mode=True))
    >>> s = RocksDBCachingPriorityQueueSet(db, b"\\x00\\x07", capacity=2, known_empty=True)
    >>> [s.add(e) for e in (b"\\x00\\x07c", b"\\x00\\x07a", b"\\x00\\x07b", b"\\x00\\x07a")]
    [True, True, False, False]
    >>> s.poll(), s.poll(), s.poll(), s.poll()
    (b'\\x00\\x07a', b'\\x00\\x07b', b'\\x00\\x07c', None)
    >>> db.close()
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

from strom.runtime.state.rocksdb.rocksdb_key_serialization_utils import prefix_successor

__all__ = ["DEFAULT_CACHE_CAPACITY", "RocksDBCachingPriorityQueueSet"]

#: Flink's ``DEFAULT_CACHES_SIZE`` of the RocksDB priority queue set factory
DEFAULT_CACHE_CAPACITY = 128


class RocksDBCachingPriorityQueueSet:
    """The elements of one key group in ``cf``: a set ordered by the element bytes, its head cached."""

    __slots__ = ("_all_in_cache", "_cache", "_capacity", "_cf", "_end", "_prefix", "_seek_hint")

    def __init__(
        self, cf: Any, key_group_prefix: bytes, *, capacity: int = DEFAULT_CACHE_CAPACITY, known_empty: bool
    ) -> None:
        """``known_empty``: the key group has no element in ``cf`` yet (no read needed to know it)."""
        if capacity < 1:
            raise ValueError(f"expected a cache capacity of at least 1; got {capacity}")
        self._cf = cf
        self._capacity = capacity
        self._cache: list[bytes] = []
        self._all_in_cache = known_empty
        self._prefix = key_group_prefix
        self._seek_hint = key_group_prefix
        self._end = prefix_successor(key_group_prefix)
        if not known_empty:
            self._refill()

    # -- queries ---------------------------------------------------------------------------------------------
    def peek(self) -> bytes | None:
        """The smallest element (``None``: empty); no RocksDB read."""
        cache = self._cache
        return cache[0] if cache else None

    def is_empty(self) -> bool:
        return not self._cache

    def __len__(self) -> int:
        """The number of elements (a scan of the key group unless every element is cached)."""
        if self._all_in_cache:
            return len(self._cache)
        return sum(1 for _ in self._scan(self._seek_hint))

    # -- updates ---------------------------------------------------------------------------------------------
    def add(self, element: bytes, value: bytes = b"") -> bool:
        """Add ``element`` (no effect if present); ``True`` if it is the new head. An element found in the cache
        is not written again (Flink's check: a window trigger registers its timer with every element)."""
        cache = self._cache
        if not cache:  # the key group is empty (invariant): every element is cached
            self._cf.put(element, value)
            if element < self._seek_hint:
                self._seek_hint = element  # the hint stays a lower bound of the key group
            cache.append(element)
            self._all_in_cache = True
            return True
        if element > cache[-1]:  # above the cache: above the hint too
            self._cf.put(element, value)
            if self._all_in_cache:
                if len(cache) < self._capacity:
                    cache.append(element)
                else:
                    self._all_in_cache = False
            return False
        i = bisect_left(cache, element)
        if cache[i] == element:
            return False
        self._cf.put(element, value)
        if element < self._seek_hint:
            self._seek_hint = element
        cache.insert(i, element)
        if len(cache) > self._capacity:
            cache.pop()  # still in RocksDB
            self._all_in_cache = False
        return i == 0

    def remove(self, element: bytes) -> bool:
        """Remove ``element`` (no effect if absent); ``True`` if it was the head."""
        self._cf.delete(element)
        cache = self._cache
        if not cache or element > cache[-1]:
            return False
        i = bisect_left(cache, element)
        if cache[i] != element:
            return False
        del cache[i]
        if not cache and not self._all_in_cache:
            self._seek_hint = element  # nothing below it is left
            self._refill()
        return i == 0

    def remove_head(self) -> None:
        """Remove the smallest element (the set is not empty)."""
        cache = self._cache
        head = cache.pop(0)
        self._cf.delete(head)
        if not cache and not self._all_in_cache:
            self._seek_hint = head
            self._refill()

    def poll(self) -> bytes | None:
        """Remove and return the smallest element (``None``: empty)."""
        head = self.peek()
        if head is not None:
            self.remove(head)
        return head

    def get_value(self, element: bytes) -> bytes | None:
        """The value stored with ``element`` (``None``: absent)."""
        data: bytes | None = self._cf.get(element)
        return data

    # -- internals -------------------------------------------------------------------------------------------
    def _scan(self, start: bytes) -> Any:
        it = self._cf.iter()
        it.seek(start)
        end = self._end
        while it.valid():
            key = it.key()
            if key >= end:
                return
            yield key
            it.next()

    def _refill(self) -> None:
        cache = self._cache
        capacity = self._capacity
        more = False
        for key in self._scan(self._seek_hint):
            if len(cache) == capacity:
                more = True
                break
            cache.append(key)
        self._all_in_cache = not more

    def validate(self) -> None:
        """Check the invariants against RocksDB (tests)."""
        stored = list(self._scan(self._prefix))
        assert not stored or stored[0] >= self._seek_hint, "an element below the seek hint"
        cache = self._cache
        assert cache == sorted(set(cache)), "cache not sorted or not distinct"
        assert cache == stored[: len(cache)], f"cache {cache[:3]}... is not the head of the key group {stored[:3]}..."
        assert not self._all_in_cache or len(cache) == len(stored), "all_in_cache but elements are missing"
        assert cache or not stored, "empty cache of a non-empty key group"
        assert len(cache) <= self._capacity
