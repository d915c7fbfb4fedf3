"""``ReducingState`` in RocksDB (Flink's ``RocksDBReducingState``): read, reduce, write one entry."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from strom.api.state import ReducingState, ReducingStateDescriptor
from strom.runtime.state.rocksdb.abstract_rocksdb_state import AbstractRocksDBState
from strom.runtime.state.rocksdb.rocksdb_value_serializer import ValueCodec
from strom.runtime.state.ttl import TtlPolicy, TtlValue

if TYPE_CHECKING:
    from strom.api.state import StateDescriptor
    from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend

__all__ = ["RocksDBReducingState"]


class RocksDBReducingState(AbstractRocksDBState, ReducingState[Any]):
    __slots__ = ("_reduce",)
    kind = "reducing"

    def __init__(
        self, backend: RocksDBKeyedStateBackend, descriptor: StateDescriptor, ttl: TtlPolicy | None, codec: ValueCodec
    ) -> None:
        super().__init__(backend, descriptor, ttl, codec)
        assert isinstance(descriptor, ReducingStateDescriptor)
        self._reduce = descriptor.get_reduce_callable()

    def get(self) -> Any:
        stored = self._get()
        if stored is None or self._ttl is None:
            return stored
        return self._read_ttl(stored)

    def add(self, value: Any) -> None:
        if value is None:
            return
        stored = self._get()
        ttl = self._ttl
        if ttl is None:
            new = value if stored is None else self._reduce(stored, value)
        else:
            now = ttl.clock()
            current = None if stored is None or ttl.expired(stored, now) else stored.value
            new = value if current is None else self._reduce(current, value)
            new = None if new is None else TtlValue(new, now)
        if new is None:
            self._remove()
        else:
            self._put(new)

    def _combine(self, a: Any, b: Any) -> Any:
        return self._reduce(a, b)
