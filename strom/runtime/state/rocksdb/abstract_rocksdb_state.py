"""The base of the RocksDB state objects (Flink's ``AbstractRocksDBState``): one column family per state; the
current (key, namespace) as the backend's composite key prefix — the storage primitives of
:class:`~strom.runtime.state.internal_kv_state.InternalKvState`, which adds TTL reads and merging namespaces.

List and map state read and write their column family directly (an entry per element or user key); value,
reducing and aggregating state, one stored form per (key, namespace), go through the backend's write cache
(:class:`CachedRocksDBState`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from strom.runtime.state.internal_kv_state import InternalKvState
from strom.runtime.state.rocksdb.rocksdb_stored_forms import read_stored, remove_stored, write_stored
from strom.runtime.state.rocksdb.rocksdb_value_serializer import ValueCodec
from strom.runtime.state.rocksdb.rocksdb_write_cache import MISSING, NAMESPACED
from strom.runtime.state.ttl import TtlPolicy

if TYPE_CHECKING:
    from strom.api.state import StateDescriptor
    from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend

__all__ = ["AbstractRocksDBState", "CachedRocksDBState"]


class AbstractRocksDBState(InternalKvState):
    """Access to the entries of the current (key, namespace) of one state."""

    __slots__ = ("_backend", "_cf", "_codec", "_ttl", "name")
    kind: ClassVar[str] = "value"

    def __init__(
        self, backend: RocksDBKeyedStateBackend, descriptor: StateDescriptor, ttl: TtlPolicy | None, codec: ValueCodec
    ) -> None:
        self._backend = backend
        self._cf = backend.db_column_family(descriptor.name)
        self._ttl = ttl
        self._codec = codec
        self.name = descriptor.name

    # -- the stored form of the current (key, namespace) ---------------------------------------------------
    def _get(self) -> Any:
        return read_stored(self._cf, self.kind, self._codec, self._backend.composite_key())

    def _put(self, stored: Any) -> None:
        write_stored(self._cf, self.kind, self._codec, self._backend.composite_key(), stored)

    def _remove(self) -> None:
        remove_stored(self._cf, self.kind, self._backend.composite_key())


class CachedRocksDBState(AbstractRocksDBState):
    """A state of one stored form per (key, namespace), read and written through the backend's write cache: the
    cache's dicts are held here, so a hit costs what a heap state's dict access does."""

    __slots__ = ("_cache", "_clean", "_dirty")

    def __init__(
        self, backend: RocksDBKeyedStateBackend, descriptor: StateDescriptor, ttl: TtlPolicy | None, codec: ValueCodec
    ) -> None:
        super().__init__(backend, descriptor, ttl, codec)
        self._cache = backend.write_cache.of(descriptor.name)
        self._dirty = self._cache.dirty
        self._clean = self._cache.clean

    def _get(self) -> Any:
        b = self._backend
        ns = b.current_namespace
        ck = b.current_key if ns is None else (NAMESPACED, b.current_key, ns)
        stored = self._dirty.get(ck, MISSING)
        if stored is MISSING:
            stored = self._clean.get(ck, MISSING)
            if stored is MISSING:
                stored = self._cache.load(ck)
        return stored

    def _put(self, stored: Any) -> None:
        b = self._backend
        ns = b.current_namespace
        ck = b.current_key if ns is None else (NAMESPACED, b.current_key, ns)
        dirty = self._dirty
        n = len(dirty)
        dirty[ck] = stored
        if len(dirty) != n:
            self._cache.added(ck)

    def _remove(self) -> None:
        b = self._backend
        ns = b.current_namespace
        self._cache.put(b.current_key if ns is None else (NAMESPACED, b.current_key, ns), None)
