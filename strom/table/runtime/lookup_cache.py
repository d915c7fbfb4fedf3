"""Flink's ``DefaultLookupCache`` (``'lookup.cache' = 'PARTIAL'``): the rows of recently looked-up keys, at most
``max-rows`` keys (least recently used evicted first), each expiring ``expire-after-write`` ms after it was stored
or ``expire-after-access`` ms after it was last read. Per subtask, in memory (as Flink's: not checkpointed)."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from strom.table.connectors.lookup import LookupCacheOptions

__all__ = ["LookupCache"]


class LookupCache:
    """``get(keys)`` → the cached rows or None; ``put(keys, rows)``."""

    def __init__(self, options: LookupCacheOptions, clock: Callable[[], float] = time.monotonic) -> None:
        self.options = options
        self.clock = clock
        self.entries: OrderedDict[tuple[Any, ...], tuple[float, float, Sequence[tuple[Any, ...]]]] = OrderedDict()

    def get(self, keys: tuple[Any, ...]) -> Sequence[tuple[Any, ...]] | None:
        entry = self.entries.get(keys)
        if entry is None:
            return None
        written, accessed, rows = entry
        now = self.clock() * 1000
        write, access = self.options.expire_after_write, self.options.expire_after_access
        if (write is not None and now - written >= write) or (access is not None and now - accessed >= access):
            del self.entries[keys]
            return None
        self.entries[keys] = (written, now, rows)
        self.entries.move_to_end(keys)
        return rows

    def put(self, keys: tuple[Any, ...], rows: Sequence[tuple[Any, ...]]) -> None:
        if not rows and not self.options.cache_missing_key:
            return
        now = self.clock() * 1000
        self.entries[keys] = (now, now, rows)
        self.entries.move_to_end(keys)
        limit = self.options.max_rows
        while limit is not None and len(self.entries) > limit:
            self.entries.popitem(last=False)
