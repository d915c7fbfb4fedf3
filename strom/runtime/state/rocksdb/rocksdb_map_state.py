"""``MapState`` in RocksDB (Flink's ``RocksDBMapState``): one entry per user key under (key, namespace)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from strom.api.state import MapState
from strom.runtime.state.rocksdb.abstract_rocksdb_state import AbstractRocksDBState
from strom.runtime.state.rocksdb.rocksdb_key_serialization_utils import decode_key, encode_key
from strom.runtime.state.rocksdb.rocksdb_stored_forms import scan
from strom.runtime.state.ttl import TtlValue

__all__ = ["RocksDBMapState"]

_MISSING: Any = object()


class RocksDBMapState(AbstractRocksDBState, MapState[Any, Any]):
    __slots__ = ()
    kind = "map"

    def _lookup(self, key: Any) -> Any:
        """The visible user value of ``key``, or ``_MISSING``."""
        entry = self._backend.composite_key() + encode_key(key)
        data = self._cf.get(entry)
        if data is None:
            return _MISSING
        stored = self._codec.loads_stored(data)
        ttl = self._ttl
        if ttl is None:
            return stored
        now = ttl.clock()
        if ttl.expired(stored, now):
            self._cf.delete(entry)
            return stored.value if ttl.return_expired else _MISSING
        if ttl.update_on_read:
            self._cf.put(entry, self._codec.dumps_stored(TtlValue(stored.value, now)))
        return stored.value

    def get(self, key: Any) -> Any:
        value = self._lookup(key)
        return None if value is _MISSING else value

    def contains(self, key: Any) -> bool:
        return self._lookup(key) is not _MISSING

    def put(self, key: Any, value: Any) -> None:
        self.put_all({key: value})

    def put_all(self, entries: Mapping[Any, Any]) -> None:
        if not entries:
            return
        prefix = self._backend.composite_key()
        codec = self._codec
        ttl = self._ttl
        now = ttl.clock() if ttl is not None else 0
        for k, v in entries.items():
            self._cf.put(prefix + encode_key(k), codec.dumps_stored(v if ttl is None else TtlValue(v, now)))

    def remove(self, key: Any) -> None:
        self._cf.delete(self._backend.composite_key() + encode_key(key))

    def items(self) -> list[tuple[Any, Any]]:
        prefix = self._backend.composite_key()
        n = len(prefix)
        codec = self._codec
        ttl = self._ttl
        if ttl is None:
            return [(decode_key(k, n)[0], codec.loads_stored(v)) for k, v in scan(self._cf, prefix)]
        now = ttl.clock()
        out: list[tuple[Any, Any]] = []
        for raw, data in list(scan(self._cf, prefix)):
            key = decode_key(raw, n)[0]
            tv = codec.loads_stored(data)
            if ttl.expired(tv, now):
                self._cf.delete(raw)
                if ttl.return_expired:
                    out.append((key, tv.value))
                continue
            if ttl.update_on_read:
                self._cf.put(raw, codec.dumps_stored(TtlValue(tv.value, now)))
            out.append((key, tv.value))
        return out

    def keys(self) -> list[Any]:
        return [k for k, _ in self.items()]

    def values(self) -> list[Any]:
        return [v for _, v in self.items()]

    def is_empty(self) -> bool:
        return not self.items()
