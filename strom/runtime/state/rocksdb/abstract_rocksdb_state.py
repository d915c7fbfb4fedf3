"""The base of the RocksDB state objects (Flink's ``AbstractRocksDBState``): one column family per state; the
current (key, namespace) as the backend's composite key prefix — the storage primitives of
:class:`~strom.runtime.state.internal_kv_state.InternalKvState`, which adds TTL reads and merging namespaces."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from strom.runtime.state.internal_kv_state import InternalKvState
from strom.runtime.state.rocksdb.rocksdb_stored_forms import read_stored, remove_stored, write_stored
from strom.runtime.state.rocksdb.rocksdb_value_serializer import ValueCodec
from strom.runtime.state.ttl import TtlPolicy

if TYPE_CHECKING:
    from strom.api.state import StateDescriptor
    from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend

__all__ = ["AbstractRocksDBState"]


class AbstractRocksDBState(InternalKvState):
    """Access to the entries of the current (key, namespace) of one state."""

    __slots__ = ("_backend", "_cf", "_codec", "_ttl", "name")
    kind: ClassVar[str] = "value"

    def __init__(
        self, backend: RocksDBKeyedStateBackend, descriptor: StateDescriptor, ttl: TtlPolicy | None, codec: ValueCodec
    ) -> None:
        self._backend = backend
        self._cf = backend.column_family(descriptor.name)
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
