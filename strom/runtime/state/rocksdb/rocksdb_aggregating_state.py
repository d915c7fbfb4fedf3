"""``AggregatingState`` in RocksDB (Flink's ``RocksDBAggregatingState``): the accumulator as one entry."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from strom.api.state import AggregatingState, AggregatingStateDescriptor
from strom.runtime.state.internal_kv_state import AggregatingStateLogic
from strom.runtime.state.rocksdb.abstract_rocksdb_state import CachedRocksDBState
from strom.runtime.state.rocksdb.rocksdb_value_serializer import ValueCodec
from strom.runtime.state.ttl import TtlPolicy

if TYPE_CHECKING:
    from strom.api.state import StateDescriptor
    from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend

__all__ = ["RocksDBAggregatingState"]


class RocksDBAggregatingState(AggregatingStateLogic, CachedRocksDBState, AggregatingState[Any, Any]):
    __slots__ = ("_fn",)
    kind = "aggregating"

    def __init__(
        self, backend: RocksDBKeyedStateBackend, descriptor: StateDescriptor, ttl: TtlPolicy | None, codec: ValueCodec
    ) -> None:
        super().__init__(backend, descriptor, ttl, codec)
        assert isinstance(descriptor, AggregatingStateDescriptor)
        self._fn = descriptor.aggregate_function
