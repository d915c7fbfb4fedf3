"""``ValueState`` in RocksDB (Flink's ``RocksDBValueState``): one entry per (key, namespace)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from strom.api.state import ValueState
from strom.runtime.state.rocksdb.abstract_rocksdb_state import AbstractRocksDBState
from strom.runtime.state.rocksdb.rocksdb_value_serializer import ValueCodec, loads_value
from strom.runtime.state.ttl import TtlPolicy

if TYPE_CHECKING:
    from strom.api.state import StateDescriptor
    from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend

__all__ = ["RocksDBValueState"]


class RocksDBValueState(AbstractRocksDBState, ValueState[Any]):
    __slots__ = ("_default", "_dumps")

    def __init__(
        self, backend: RocksDBKeyedStateBackend, descriptor: StateDescriptor, ttl: TtlPolicy | None, codec: ValueCodec
    ) -> None:
        super().__init__(backend, descriptor, ttl, codec)
        self._default = getattr(descriptor, "default_value", None)
        self._dumps = codec.dumps_value

    def value(self) -> Any:
        data = self._cf.get(self._backend.composite_key())
        if data is None:
            return self._default
        if self._ttl is None:
            return loads_value(data)
        value = self._read_ttl(self._codec.loads_stored(data))
        return self._default if value is None else value

    def update(self, value: Any) -> None:
        if value is None:
            self._cf.delete(self._backend.composite_key())
            return
        ttl = self._ttl
        if ttl is None:
            self._cf.put(self._backend.composite_key(), self._dumps(value))
        else:
            self._put(ttl.wrap(value))
