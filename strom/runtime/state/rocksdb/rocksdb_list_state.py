"""``ListState`` in RocksDB (Flink's ``RocksDBListState``): one entry per element under (key, namespace), so
``add`` is a single write (Flink appends to one value with RocksDB's merge operator)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from strom.api.state import ListState
from strom.runtime.state.rocksdb.abstract_rocksdb_state import AbstractRocksDBState
from strom.runtime.state.rocksdb.rocksdb_stored_forms import next_sequence, scan
from strom.runtime.state.rocksdb.rocksdb_value_serializer import loads_value
from strom.runtime.state.ttl import TtlValue

__all__ = ["RocksDBListState"]


class RocksDBListState(AbstractRocksDBState, ListState[Any]):
    __slots__ = ()
    kind = "list"

    def get(self) -> list[Any]:
        if self._ttl is None:
            return [loads_value(v) for _, v in scan(self._cf, self._backend.composite_key())]
        stored = self._get()
        return self._read_ttl_list(stored) if stored else []

    def add(self, value: Any) -> None:
        if self._ttl is None:
            self._cf.put(self._backend.composite_key() + next_sequence(), self._codec.dumps_value(value))
        else:
            self.add_all((value,))

    def add_all(self, values: Iterable[Any]) -> None:
        items = list(values)
        if not items:
            return
        prefix = self._backend.composite_key()
        codec = self._codec
        put = self._cf.put
        if self._ttl is not None:
            now = self._ttl.clock()
            for v in items:
                put(prefix + next_sequence(), codec.dumps_stored(TtlValue(v, now)))
        else:
            for v in items:
                put(prefix + next_sequence(), codec.dumps_value(v))

    def update(self, values: Iterable[Any]) -> None:
        self._remove()
        self.add_all(values)

    def _combine(self, a: Any, b: Any) -> Any:
        return a + b
