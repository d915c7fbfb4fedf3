"""``AggregatingState`` in RocksDB (Flink's ``RocksDBAggregatingState``): the accumulator as one entry."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from strom.api.state import AggregatingState, AggregatingStateDescriptor
from strom.runtime.state.rocksdb.abstract_rocksdb_state import AbstractRocksDBState
from strom.runtime.state.rocksdb.rocksdb_value_serializer import ValueCodec
from strom.runtime.state.ttl import TtlPolicy, TtlValue

if TYPE_CHECKING:
    from strom.api.state import StateDescriptor
    from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend

__all__ = ["RocksDBAggregatingState"]


class RocksDBAggregatingState(AbstractRocksDBState, AggregatingState[Any, Any]):
    __slots__ = ("_fn",)
    kind = "aggregating"

    def __init__(
        self, backend: RocksDBKeyedStateBackend, descriptor: StateDescriptor, ttl: TtlPolicy | None, codec: ValueCodec
    ) -> None:
        super().__init__(backend, descriptor, ttl, codec)
        assert isinstance(descriptor, AggregatingStateDescriptor)
        self._fn = descriptor.aggregate_function

    def get(self) -> Any:
        stored = self._get()
        accumulator = stored if stored is None or self._ttl is None else self._read_ttl(stored)
        return None if accumulator is None else self._fn.get_result(accumulator)

    def add(self, value: Any) -> None:
        stored = self._get()
        ttl = self._ttl
        fn = self._fn
        if ttl is None:
            self._put(fn.add(value, fn.create_accumulator() if stored is None else stored))
            return
        now = ttl.clock()
        current = None if stored is None or ttl.expired(stored, now) else stored.value
        self._put(TtlValue(fn.add(value, fn.create_accumulator() if current is None else current), now))

    def _combine(self, a: Any, b: Any) -> Any:
        return self._fn.merge(a, b)
