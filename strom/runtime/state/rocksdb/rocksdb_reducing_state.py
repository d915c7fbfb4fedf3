"""``ReducingState`` in RocksDB (Flink's ``RocksDBReducingState``): read, reduce, write one entry."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from strom.api.state import ReducingState, ReducingStateDescriptor
from strom.runtime.state.internal_kv_state import ReducingStateLogic
from strom.runtime.state.rocksdb.abstract_rocksdb_state import CachedRocksDBState
from strom.runtime.state.rocksdb.rocksdb_value_serializer import ValueCodec
from strom.runtime.state.ttl import TtlPolicy

if TYPE_CHECKING:
    from strom.api.state import StateDescriptor
    from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend

__all__ = ["RocksDBReducingState"]


class RocksDBReducingState(ReducingStateLogic, CachedRocksDBState, ReducingState[Any]):
    __slots__ = ("_reduce",)
    kind = "reducing"

    def __init__(
        self, backend: RocksDBKeyedStateBackend, descriptor: StateDescriptor, ttl: TtlPolicy | None, codec: ValueCodec
    ) -> None:
        super().__init__(backend, descriptor, ttl, codec)
        assert isinstance(descriptor, ReducingStateDescriptor)
        self._reduce = descriptor.get_reduce_callable()
