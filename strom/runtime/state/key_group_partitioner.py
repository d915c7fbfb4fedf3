"""A state table's entries split by key group for a snapshot (Flink's ``KeyGroupPartitioner``, which partitions the
heap backend's state by key group before its snapshot writes them key group by key group).

The heap backend keeps its tables keyed by key, not by key group, so every snapshot places each key again. Placing
one key costs ~1.2 µs for an ``int`` and ~3.7 µs for a string or any other key (PyFlink's hash of its pickle), so two
things make it cheaper, by the size of the state:

* **many keys** (≥ :data:`VECTOR_MIN_KEYS`, a large snapshot in its forked child): plain ``int`` keys are placed all
  at once with numpy (:func:`~strom.runtime.state.int_key_groups.int_key_groups_of`: 500 000 keys in ~20–60 ms
  instead of ~0.6 s of the child's CPU);
* **few keys** (≤ :data:`CACHE_MAX_KEYS` in the snapshot, small state pickled on the task thread): the key groups of
  ``int``, ``str`` and ``bytes`` keys are kept between snapshots (the keys of one checkpoint are mostly the keys of
  the next), so a snapshot places only keys it has not seen. Only those exact types are kept, so keys that are
  equal across types (``1``, ``True``, ``1.0``: one dict entry, three key groups) are always placed afresh.

Otherwise each key is placed by the backend's assigner, once per snapshot even when several states hold it.

    >>> partitioner = KeyGroupPartitioner(lambda key: key % 4)
    >>> partitioner.partition({5: "a", 6: "b", 9: "c"}, total=3)
    {1: {5: 'a', 9: 'c'}, 2: {6: 'b'}}
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

__all__ = ["CACHE_MAX_KEYS", "VECTOR_MIN_KEYS", "KeyGroupPartitioner"]

#: from this many keys in one table, int keys are placed all at once (numpy's import in a forked child, ~60 ms,
#: is then a tenth of the placing it saves)
VECTOR_MIN_KEYS = 100_000
#: up to this many stored entries in a snapshot, the key groups of int / str / bytes keys are kept for the next one
#: (a dict of at most twice as many keys: ~10 MB)
CACHE_MAX_KEYS = 100_000
_CACHED_TYPES = frozenset({int, str, bytes})


class KeyGroupPartitioner:
    """Splits tables by key group with ``assign`` (key → key group); ``vector`` (optional) places many keys at once
    and returns ``None`` when it cannot."""

    def __init__(
        self,
        assign: Callable[[Any], int],
        vector: Callable[[Collection[Any]], list[int] | None] | None = None,
    ) -> None:
        self._assign = assign
        self._vector = vector
        self._cache: dict[Any, int] = {}

    def start(self, total: int, *, shared_keys: bool) -> Callable[[Any], int]:
        """The key → key group function of one snapshot of ``total`` stored entries (``shared_keys``: several
        states may hold the same key, place it once)."""
        direct = self._assign
        if total <= CACHE_MAX_KEYS:
            cache = self._cache
            if len(cache) > 2 * CACHE_MAX_KEYS:  # keys that left the state long ago
                cache.clear()
            get = cache.get

            def cached(key: Any) -> int:
                if type(key) not in _CACHED_TYPES:
                    return direct(key)
                kg = get(key)
                if kg is None:
                    kg = cache[key] = direct(key)
                return kg

            return cached
        if not shared_keys:
            return direct
        placed: dict[Any, int] = {}

        def place(key: Any) -> int:
            kg = placed.get(key)
            if kg is None:
                kg = placed[key] = direct(key)
            return kg

        return place

    def partition(
        self, table: Mapping[Any, Any], *, total: int, assign: Callable[[Any], int] | None = None
    ) -> dict[int, dict[Any, Any]]:
        """``table`` split by the key group of each key (the entries in the table's order); ``assign``: the
        snapshot's from :meth:`start` (default: a fresh one for ``total`` entries)."""
        if self._vector is not None and len(table) >= VECTOR_MIN_KEYS:
            key_groups = self._vector(table.keys())
            if key_groups is not None:
                return _split(table, key_groups)
        if assign is None:
            assign = self.start(total, shared_keys=False)
        out: dict[int, dict[Any, Any]] = {}
        for key, stored in table.items():
            kg = assign(key)
            part = out.get(kg)
            if part is None:
                part = out[kg] = {}
            part[key] = stored
        return out


def _split(table: Mapping[Any, Any], key_groups: list[int]) -> dict[int, dict[Any, Any]]:
    parts: list[dict[Any, Any]] = [{} for _ in range(max(key_groups, default=-1) + 1)]
    for (key, stored), kg in zip(table.items(), key_groups, strict=True):
        parts[kg][key] = stored
    return {kg: part for kg, part in enumerate(parts) if part}
