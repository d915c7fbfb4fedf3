"""The tables built-in operators use directly (``get_table`` / ``get_namespaced_table``), over a column family.

The heap backend hands out its dicts; here the same ``MutableMapping`` interface reads and writes RocksDB:
``RocksDBTable`` is ``key → stored form`` in the void namespace, ``RocksDBNamespacedTable`` is ``key → namespace →
stored form`` of the other namespaces, and what it returns per key is a write-through view (``per_key[ns] = v``,
``per_key.pop(ns)``, ``del`` reach RocksDB). A caller that mutates a stored list or dict in place stores it back
(``table[key] = value``). ``items()`` yields ``(key, dict)`` pairs for the namespaced table.

Entries of one stored form (every kind but list and map) are read and written through the backend's write cache
(:mod:`.rocksdb_write_cache`): a key's namespaces are RocksDB's (none to scan while the column family is empty) and
the cache's dirty ones, so the per-key calls of a snapshot's materialization touch no RocksDB; a scan of the whole
column family (iteration, ``len``, ``clear``) flushes the cache first.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

from rocksdict import WriteBatch

from strom.runtime.state.rocksdb.rocksdb_key_serialization_utils import (
    KEY_GROUP_PREFIX_BYTES,
    decode_key,
    encode_namespace,
)
from strom.runtime.state.rocksdb.rocksdb_stored_forms import (
    MULTI_ENTRY_KINDS,
    iter_stored,
    read_stored,
    remove_stored,
    scan,
    write_stored,
)
from strom.runtime.state.rocksdb.rocksdb_write_cache import StateCache, cache_key

if TYPE_CHECKING:
    from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend

__all__ = ["RocksDBNamespacedTable", "RocksDBTable"]

_VOID = encode_namespace(None)
_MISSING: Any = object()


class _Table:
    def __init__(self, backend: RocksDBKeyedStateBackend, name: str) -> None:
        self._backend = backend
        self._name = name
        self._cf = backend.db_column_family(name)

    def _cached(self) -> StateCache | None:
        """The write cache of this state, unless its entries are per element or user key (list, map)."""
        b = self._backend
        return None if b.kind_of(self._name) in MULTI_ENTRY_KINDS else b.write_cache.of(self._name)

    def _flushed(self) -> Any:
        """The column family with every cached write in it (before a scan)."""
        self._backend.write_cache.flush(self._name)
        return self._cf

    def _stored(self) -> Iterator[tuple[int, Any, Any, Any]]:
        b = self._backend
        return iter_stored(self._flushed().items(), b.kind_of(self._name), b.codec(self._name))

    def _prefix(self, key: Any, namespace: Any) -> bytes:
        return self._backend.key_bytes(key) + encode_namespace(namespace)

    def _read(self, key: Any, namespace: Any) -> Any:
        cache = self._cached()
        if cache is not None:
            return cache.get(cache_key(key, namespace))
        b = self._backend
        return read_stored(self._cf, b.kind_of(self._name), b.codec(self._name), self._prefix(key, namespace))

    def _write(self, key: Any, namespace: Any, stored: Any) -> None:
        cache = self._cached()
        if cache is not None:
            cache.put(cache_key(key, namespace), stored)
            return
        b = self._backend
        write_stored(self._cf, b.kind_of(self._name), b.codec(self._name), self._prefix(key, namespace), stored)

    def _remove(self, key: Any, namespace: Any) -> None:
        cache = self._cached()
        if cache is not None:
            cache.put(cache_key(key, namespace), None)
            return
        remove_stored(self._cf, self._backend.kind_of(self._name), self._prefix(key, namespace))


class RocksDBTable(_Table, MutableMapping[Any, Any]):
    """``key → stored form`` of one state in the void namespace."""

    def __getitem__(self, key: Any) -> Any:
        stored = self._read(key, None)
        if stored is None:
            raise KeyError(key)
        return stored

    def get(self, key: Any, default: Any = None) -> Any:
        stored = self._read(key, None)
        return default if stored is None else stored

    def __contains__(self, key: object) -> bool:
        return self._read(key, None) is not None

    def __setitem__(self, key: Any, stored: Any) -> None:
        self._write(key, None, stored)

    def __delitem__(self, key: Any) -> None:
        if self._read(key, None) is None:
            raise KeyError(key)
        self._remove(key, None)

    def __iter__(self) -> Iterator[Any]:
        return (key for _, key, ns, _ in list(self._stored()) if ns is None)

    def __len__(self) -> int:
        return sum(1 for _, _, ns, _ in self._stored() if ns is None)

    def items(self) -> list[tuple[Any, Any]]:  # type: ignore[override]
        return [(key, stored) for _, key, ns, stored in self._stored() if ns is None]

    def clear(self) -> None:
        for _, key, ns, _ in list(self._stored()):
            if ns is None:
                self._remove(key, None)


class _NamespaceView(_Table, MutableMapping[Any, Any]):
    """``namespace → stored form`` of one key: reads and writes go to RocksDB (through the write cache)."""

    def __init__(self, backend: RocksDBKeyedStateBackend, name: str, key: Any) -> None:
        super().__init__(backend, name)
        self._key = key

    def __getitem__(self, namespace: Any) -> Any:
        stored = self._read(self._key, namespace)
        if stored is None:
            raise KeyError(namespace)
        return stored

    def __setitem__(self, namespace: Any, stored: Any) -> None:
        self._write(self._key, namespace, stored)

    def __delitem__(self, namespace: Any) -> None:
        if self._read(self._key, namespace) is None:
            raise KeyError(namespace)
        self._remove(self._key, namespace)

    def _namespaces(self) -> list[Any]:
        cache = self._cached()
        if cache is None:
            return self._scan(self._cf)
        return cache.namespaces(self._key, [] if cache.rocksdb_empty else self._scan(self._cf))

    def _scan(self, cf: Any) -> list[Any]:
        """The namespaces (not the void one) of this key's entries in ``cf``, in key order."""
        key_prefix = self._backend.key_bytes(self._key)
        n = len(key_prefix)
        out: list[Any] = []
        last = _MISSING
        for raw, _ in scan(cf, key_prefix):
            ns = decode_key(raw, n)[0]
            if ns is not None and ns != last:
                out.append(ns)
                last = ns
        return out

    def __iter__(self) -> Iterator[Any]:
        return iter(self._namespaces())

    def __len__(self) -> int:
        return len(self._namespaces())

    def copy(self) -> dict[Any, Any]:
        return {ns: self[ns] for ns in self._namespaces()}


class RocksDBNamespacedTable(_Table, MutableMapping[Any, MutableMapping[Any, Any]]):
    """``key → namespace → stored form`` of one state outside the void namespace."""

    def _view(self, key: Any) -> _NamespaceView:
        return _NamespaceView(self._backend, self._name, key)

    def __getitem__(self, key: Any) -> MutableMapping[Any, Any]:
        view = self._view(key)
        if not view:
            raise KeyError(key)
        return view

    def get(self, key: Any, default: Any = None) -> Any:
        view = self._view(key)
        return view if view else default

    def __contains__(self, key: object) -> bool:
        return bool(self._view(key))

    def __setitem__(self, key: Any, per_namespace: Mapping[Any, Any]) -> None:
        entries = list(per_namespace.items())  # before clearing: it may be this key's own view
        view = self._view(key)
        for ns in view._namespaces():
            del view[ns]
        for ns, stored in entries:
            view[ns] = stored

    def __delitem__(self, key: Any) -> None:
        view = self._view(key)
        namespaces = view._namespaces()
        if not namespaces:
            raise KeyError(key)
        for ns in namespaces:
            del view[ns]

    def _keys(self) -> list[Any]:
        out: list[Any] = []
        last: bytes | None = None
        for raw, _ in self._flushed().items():
            key, pos = decode_key(raw, KEY_GROUP_PREFIX_BYTES)
            if decode_key(raw, pos)[0] is None:
                continue
            if raw[:pos] != last:
                out.append(key)
                last = raw[:pos]
        return out

    def __iter__(self) -> Iterator[Any]:
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())

    def items(self) -> list[tuple[Any, dict[Any, Any]]]:  # type: ignore[override]
        grouped: dict[Any, dict[Any, Any]] = {}
        for _, key, ns, stored in self._stored():
            if ns is not None:
                grouped.setdefault(key, {})[ns] = stored
        return list(grouped.items())

    def clear(self) -> None:
        b = self._backend
        b.write_cache.invalidate(self._name)  # deleted below, behind the cache's back
        batch = WriteBatch(raw_mode=True)
        handle = b.db.get_column_family_handle(self._name)
        kept = 0
        for raw, _ in self._cf.items():
            if _is_void(raw):
                kept += 1
            else:
                batch.delete(raw, handle)
        b.db.write(batch)
        cache = self._cached()
        if cache is not None:
            cache.rocksdb_empty = kept == 0


def _is_void(raw: bytes) -> bool:
    _, pos = decode_key(raw, KEY_GROUP_PREFIX_BYTES)
    ns, _ = decode_key(raw, pos)
    return ns is None
