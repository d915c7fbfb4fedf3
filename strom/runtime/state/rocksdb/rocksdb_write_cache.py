"""A bounded write-back cache of decoded stored forms in front of RocksDB (no Flink counterpart: Flink's RocksDB
backend serializes on every access, a few hundred ns in the JVM; here a RocksDB round trip and the value codec
cost µs, twenty times a heap dict access — so the hot entries stay decoded, as PyFlink's Python worker keeps a
state cache in front of the JVM's backend).

Each column family whose entries are one stored form per (key, namespace) — value, reducing and aggregating state
and the built-in operators' tables, never list or map state — has a :class:`StateCache`: ``dirty`` holds what was
written since the last flush (``None``: deleted) and ``clean`` what RocksDB holds (``None``: known absent). Both
are keyed as the heap backend's dicts are, by the key itself in the void namespace and by ``(NAMESPACED, key,
namespace)`` otherwise: equal keys encode to equal bytes (:mod:`.rocksdb_key_serialization_utils`), so a dict of
keys is a cache of RocksDB's entries. A read looks at ``dirty``, then ``clean``, then RocksDB.

:class:`WriteCache` (one per backend) bounds the entries of all its caches by ``capacity``
(``python.state.cache-size``, PyFlink's key): ``dirty`` of one state grows to half of it at most (and to
``MAX_WRITE_BATCH``), then every dirty entry of the backend is written in one ``WriteBatch``; a load beyond the
capacity flushes too and drops the oldest clean entries (insertion order — an entry moves to the end when it is
loaded or flushed) down to three quarters.
:meth:`WriteCache.flush` runs first in everything that reads a column family directly: the synchronous part of an
incremental snapshot, iteration over tables, TTL clean-up, restore, ``num_keys``, and a close that keeps the
instance. A canonical full snapshot's synchronous part calls :meth:`WriteCache.freeze` instead: the dirty entries
whose stored forms cannot change in place are copied (laid over RocksDB's view by the asynchronous part), the
others written.

    >>> NAMESPACED is cache_key("k", 3)[0], cache_key("k", None)
    (True, 'k')
"""

from __future__ import annotations

from itertools import islice
from typing import TYPE_CHECKING, Any

from rocksdict import WriteBatch

from strom.runtime.state.rocksdb.rocksdb_key_serialization_utils import encode_namespace

if TYPE_CHECKING:
    from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend

__all__ = ["DEFAULT_CAPACITY", "ENTRY_BYTES", "MISSING", "NAMESPACED", "StateCache", "WriteCache", "cache_key"]

#: entries a backend keeps decoded unless configured (``python.state.cache-size``)
DEFAULT_CAPACITY = 100_000
#: what one cached entry is taken to cost (dict slot, key, small decoded value) when the capacity is charged to the
#: slot's managed memory
ENTRY_BYTES = 256
MISSING: Any = object()
#: dirty entries of one state written back in one ``WriteBatch`` at most: a write-back is a pause of the task thread
#: (~15 µs an entry of 1 KiB: 50 000 entries paused it 566 ms, 8192 130 ms, 4096 80 ms): slices under 100 ms
MAX_WRITE_BATCH = 4096
_VOID = encode_namespace(None)


#: stored forms that cannot change in place: a full snapshot copies them instead of writing them (``freeze``)
_ATOMS = frozenset({bytes, str, int, float, bool, complex, type(None)})


def _atoms_only(values: tuple[Any, ...]) -> bool:
    return all(type(v) in _ATOMS for v in values)


def _is_empty(cf: Any) -> bool:
    it = cf.iter()
    it.seek_to_first()
    return not it.valid()


class _Namespaced:
    """The first item of a namespaced entry's cache key (no user key can equal it)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NAMESPACED"


NAMESPACED = _Namespaced()


def cache_key(key: Any, namespace: Any) -> Any:
    """The cache key of (``key``, ``namespace``): the key itself in the void namespace."""
    return key if namespace is None else (NAMESPACED, key, namespace)


class StateCache:
    """The cached entries of one column family (see the module docstring)."""

    __slots__ = (
        "_backend",
        "_cf",
        "_handle",
        "_ns",
        "_ns_bytes",
        "_owner",
        "clean",
        "dirty",
        "dirty_namespaces",
        "name",
        "rocksdb_empty",
    )

    def __init__(self, owner: WriteCache, backend: RocksDBKeyedStateBackend, name: str, cf: Any) -> None:
        self._owner = owner
        self._backend = backend
        self._cf = cf
        self._handle: Any = None
        self._ns: Any = None  # the namespace last encoded, and its bytes (windows repeat from record to record)
        self._ns_bytes = _VOID
        self.name = name
        self.dirty: dict[Any, Any] = {}
        self.clean: dict[Any, Any] = {}
        #: key -> the namespaces it has (or had) dirty entries in: what a namespaced table lists besides RocksDB's
        self.dirty_namespaces: dict[Any, set[Any]] = {}
        #: RocksDB holds no entry of this column family (then a namespaced table scans nothing)
        self.rocksdb_empty = _is_empty(cf)

    def entry_key(self, ck: Any) -> bytes:
        """The RocksDB key of cache key ``ck`` (raises for a key without a deterministic encoding)."""
        if type(ck) is tuple and len(ck) == 3 and ck[0] is NAMESPACED:
            ns = ck[2]
            if ns is not self._ns:
                self._ns_bytes = encode_namespace(ns)
                self._ns = ns
            return self._backend.key_bytes(ck[1]) + self._ns_bytes
        return self._backend.key_bytes(ck) + _VOID

    def get(self, ck: Any) -> Any:
        """The stored form of ``ck`` (``None``: absent)."""
        stored = self.dirty.get(ck, MISSING)
        if stored is MISSING:
            stored = self.clean.get(ck, MISSING)
            if stored is MISSING:
                stored = self.load(ck)
        return stored

    def put(self, ck: Any, stored: Any) -> None:
        """Write ``stored`` (``None``: delete) at ``ck``."""
        if stored is None and self.clean.get(ck, MISSING) is None:
            self.dirty.pop(ck, None)  # RocksDB has no entry there: forget the write, write no tombstone
            return
        dirty = self.dirty
        n = len(dirty)
        dirty[ck] = stored
        if len(dirty) != n:
            self.added(ck)

    def load(self, ck: Any) -> Any:
        """A miss: read RocksDB, keep the decoded stored form (``None`` too) as clean."""
        data = self._cf.get(self.entry_key(ck))
        stored = None if data is None else self._backend.codec(self.name).loads_stored(data)
        self.clean[ck] = stored
        owner = self._owner
        owner.size += 1
        if owner.size > owner.capacity:
            owner.check_capacity()
        return stored

    def added(self, ck: Any) -> None:
        """``ck`` became dirty: refuse a key RocksDB cannot hold now, not at the flush; spill when full."""
        if ck not in self.clean:  # a loaded key was encoded already
            try:
                self.entry_key(ck)
            except BaseException:
                del self.dirty[ck]
                raise
        if type(ck) is tuple and len(ck) == 3 and ck[0] is NAMESPACED:
            found = self.dirty_namespaces.get(ck[1])
            if found is None:
                found = self.dirty_namespaces[ck[1]] = set()
            found.add(ck[2])
        owner = self._owner
        owner.size += 1
        if len(self.dirty) > owner.dirty_limit:
            owner.flush()
            owner.check_capacity()
        elif owner.size > owner.capacity:
            owner.check_capacity()

    def write_into(self, batch: WriteBatch) -> None:
        handle = self._handle
        if handle is None:
            handle = self._handle = self._backend.db.get_column_family_handle(self.name)
        codec = self._backend.codec(self.name)
        entry_key = self.entry_key
        for ck, stored in self.dirty.items():
            if stored is None:
                batch.delete(entry_key(ck), handle)
            else:
                batch.put(entry_key(ck), codec.dumps_stored(stored), handle)
                self.rocksdb_empty = False

    def freeze(self, batch: WriteBatch) -> dict[Any, Any]:
        """A full snapshot's synchronous part: a copy of the dirty entries whose stored forms cannot change in place
        (:func:`is_immutable`: the copy is the point-in-time value); the others are written into ``batch`` now (their
        bytes are their copy) and become clean, so the snapshot reads them from RocksDB."""
        frozen: dict[Any, Any] = {}
        written: list[Any] = []
        for ck, stored in self.dirty.items():
            if stored is None or type(stored) in _ATOMS or (type(stored) is tuple and _atoms_only(stored)):
                frozen[ck] = stored
            else:
                written.append(ck)
        if written:
            handle = self._handle
            if handle is None:
                handle = self._handle = self._backend.db.get_column_family_handle(self.name)
            codec = self._backend.codec(self.name)
            dirty, clean = self.dirty, self.clean
            for ck in written:
                stored = dirty.pop(ck)
                batch.put(self.entry_key(ck), codec.dumps_stored(stored), handle)
                clean.pop(ck, None)
                clean[ck] = stored
            self.rocksdb_empty = False
        return frozen

    def settle(self) -> None:
        """After the dirty entries are in RocksDB: they are clean now, the most recent ones."""
        clean = self.clean
        for ck, stored in self.dirty.items():
            clean.pop(ck, None)
            clean[ck] = stored
        self.dirty.clear()
        self.dirty_namespaces.clear()

    def namespaces(self, key: Any, in_rocksdb: list[Any]) -> list[Any]:
        """The namespaces (not the void one) ``key`` has entries in, given those RocksDB holds (``in_rocksdb``)."""
        dirty = self.dirty
        out = [ns for ns in in_rocksdb if dirty.get((NAMESPACED, key, ns), MISSING) is not None]
        extra = self.dirty_namespaces.get(key)
        if extra:
            known = set(in_rocksdb)
            out += [ns for ns in extra if ns not in known and dirty.get((NAMESPACED, key, ns)) is not None]
        return out

    def drop_oldest(self, n: int) -> None:
        clean = self.clean
        for ck in list(islice(clean, n)):
            del clean[ck]

    def __len__(self) -> int:
        return len(self.dirty) + len(self.clean)


class WriteCache:
    """The :class:`StateCache` s of one backend and their bound."""

    def __init__(self, backend: RocksDBKeyedStateBackend, capacity: int) -> None:
        if capacity < 0:
            raise ValueError(f"expected a write cache capacity of 0 or more entries; got {capacity}")
        self._backend = backend
        self.capacity = capacity
        self.dirty_limit = min(capacity // 2, MAX_WRITE_BATCH)
        #: entries held, counted up on each load and new dirty entry (an upper bound), recounted when above capacity
        self.size = 0
        self._caches: dict[str, StateCache] = {}

    def of(self, name: str) -> StateCache:
        """The cache of column family ``name`` (created on first use)."""
        cache = self._caches.get(name)
        if cache is None:
            cache = self._caches[name] = StateCache(self, self._backend, name, self._backend.db_column_family(name))
        return cache

    def __len__(self) -> int:
        return sum(len(cache) for cache in self._caches.values())

    def flush(self, name: str | None = None) -> None:
        """Write the dirty entries (of state ``name``, or of all) to RocksDB in one ``WriteBatch``."""
        caches = [c for c in self._caches.values() if c.dirty and (name is None or c.name == name)]
        if not caches:
            return
        batch = WriteBatch(raw_mode=True)
        for cache in caches:
            cache.write_into(batch)
        self._backend.db.write(batch)
        for cache in caches:
            cache.settle()

    def freeze(self) -> dict[str, dict[Any, Any]]:
        """The synchronous part of a full snapshot without a flush: state name → its dirty entries of immutable
        stored forms (cache key → stored form, ``None``: deleted), copied — the snapshot lays them over RocksDB's
        point-in-time view; they stay dirty, written later as any other. Dirty entries that could change in place
        are written into RocksDB now, in one ``WriteBatch``. O(dirty entries), no encoding of the copied ones."""
        batch = WriteBatch(raw_mode=True)
        out: dict[str, dict[Any, Any]] = {}
        for cache in self._caches.values():
            if cache.dirty:
                frozen = cache.freeze(batch)
                if frozen:
                    out[cache.name] = frozen
        if batch.len():
            self._backend.db.write(batch)
        return out

    def invalidate(self, name: str | None = None) -> None:
        """Flush, then forget the clean entries (of state ``name``, or of all): RocksDB is written directly next."""
        self.flush(name)
        for cache in self._caches.values():
            if name is None or cache.name == name:
                cache.clean.clear()
                cache.rocksdb_empty = False  # as far as the cache knows: RocksDB is written behind it
        self.size = len(self)

    def check_capacity(self) -> None:
        total = self.size = len(self)
        if total <= self.capacity:
            return
        self.flush()
        target = self.capacity * 3 // 4
        excess = total - target
        clean_total = sum(len(c.clean) for c in self._caches.values())
        for cache in self._caches.values():
            if clean_total and cache.clean:
                cache.drop_oldest(-(-excess * len(cache.clean) // clean_total))
        self.size = len(self)
