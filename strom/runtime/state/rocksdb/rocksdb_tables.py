"""The tables built-in operators use directly (``get_table`` / ``get_namespaced_table``), over a column family.

The heap backend hands out its dicts; here the same ``MutableMapping`` interface reads and writes RocksDB:
``RocksDBTable`` is ``key → stored form`` in the void namespace, ``RocksDBNamespacedTable`` is ``key → namespace →
stored form`` of the other namespaces, and what it returns per key is a write-through view (``per_key[ns] = v``,
``per_key.pop(ns)``, ``del`` reach RocksDB). Values read are copies: a caller that mutates a stored list or dict in
place stores it back (``table[key] = value``). ``items()`` yields ``(key, dict)`` pairs for the namespaced table.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

from strom.runtime.state.rocksdb.rocksdb_key_serialization_utils import (
    KEY_GROUP_PREFIX_BYTES,
    decode_key,
    encode_namespace,
)
from strom.runtime.state.rocksdb.rocksdb_stored_forms import (
    iter_stored,
    read_stored,
    remove_stored,
    scan,
    write_stored,
)

if TYPE_CHECKING:
    from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend

__all__ = ["RocksDBNamespacedTable", "RocksDBTable"]

_VOID = encode_namespace(None)
_MISSING: Any = object()


class _Table:
    def __init__(self, backend: RocksDBKeyedStateBackend, name: str) -> None:
        self._backend = backend
        self._name = name
        self._cf = backend.column_family(name)

    def _stored(self) -> Iterator[tuple[int, Any, Any, Any]]:
        b = self._backend
        return iter_stored(self._cf.items(), b.kind_of(self._name), b.codec(self._name))

    def _read(self, prefix: bytes) -> Any:
        b = self._backend
        return read_stored(self._cf, b.kind_of(self._name), b.codec(self._name), prefix)

    def _write(self, prefix: bytes, stored: Any) -> None:
        b = self._backend
        write_stored(self._cf, b.kind_of(self._name), b.codec(self._name), prefix, stored)

    def _remove(self, prefix: bytes) -> None:
        remove_stored(self._cf, self._backend.kind_of(self._name), prefix)


class RocksDBTable(_Table, MutableMapping[Any, Any]):
    """``key → stored form`` of one state in the void namespace."""

    def _prefix(self, key: Any) -> bytes:
        return self._backend.key_bytes(key) + _VOID

    def __getitem__(self, key: Any) -> Any:
        stored = self._read(self._prefix(key))
        if stored is None:
            raise KeyError(key)
        return stored

    def get(self, key: Any, default: Any = None) -> Any:
        stored = self._read(self._prefix(key))
        return default if stored is None else stored

    def __contains__(self, key: object) -> bool:
        return self._read(self._prefix(key)) is not None

    def __setitem__(self, key: Any, stored: Any) -> None:
        self._write(self._prefix(key), stored)

    def __delitem__(self, key: Any) -> None:
        prefix = self._prefix(key)
        if self._read(prefix) is None:
            raise KeyError(key)
        self._remove(prefix)

    def __iter__(self) -> Iterator[Any]:
        return (key for _, key, ns, _ in list(self._stored()) if ns is None)

    def __len__(self) -> int:
        return sum(1 for _, _, ns, _ in self._stored() if ns is None)

    def items(self) -> list[tuple[Any, Any]]:  # type: ignore[override]
        return [(key, stored) for _, key, ns, stored in self._stored() if ns is None]

    def clear(self) -> None:
        for _, key, ns, _ in list(self._stored()):
            if ns is None:
                self._remove(self._prefix(key))


class _NamespaceView(_Table, MutableMapping[Any, Any]):
    """``namespace → stored form`` of one key: reads and writes go to RocksDB."""

    def __init__(self, backend: RocksDBKeyedStateBackend, name: str, key_prefix: bytes) -> None:
        super().__init__(backend, name)
        self._key_prefix = key_prefix

    def __getitem__(self, namespace: Any) -> Any:
        stored = self._read(self._key_prefix + encode_namespace(namespace))
        if stored is None:
            raise KeyError(namespace)
        return stored

    def __setitem__(self, namespace: Any, stored: Any) -> None:
        self._write(self._key_prefix + encode_namespace(namespace), stored)

    def __delitem__(self, namespace: Any) -> None:
        prefix = self._key_prefix + encode_namespace(namespace)
        if self._read(prefix) is None:
            raise KeyError(namespace)
        self._remove(prefix)

    def _namespaces(self) -> list[Any]:
        n = len(self._key_prefix)
        out: list[Any] = []
        last = _MISSING
        for raw, _ in scan(self._cf, self._key_prefix):
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
        return _NamespaceView(self._backend, self._name, self._backend.key_bytes(key))

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
        for raw, _ in self._cf.items():
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
        for raw in [raw for raw, _ in self._cf.items() if not _is_void(raw)]:
            self._cf.delete(raw)


def _is_void(raw: bytes) -> bool:
    _, pos = decode_key(raw, KEY_GROUP_PREFIX_BYTES)
    ns, _ = decode_key(raw, pos)
    return ns is None
