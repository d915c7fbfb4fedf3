"""The base of the RocksDB state objects (Flink's ``AbstractRocksDBState``): one column family per state; the
current (key, namespace) as the backend's composite key prefix; merging namespaces of the mergeable kinds."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar

from strom.exceptions import InvalidProgramError
from strom.runtime.state.rocksdb.rocksdb_stored_forms import read_stored, remove_stored, write_stored
from strom.runtime.state.rocksdb.rocksdb_value_serializer import ValueCodec
from strom.runtime.state.ttl import TtlPolicy, TtlValue

if TYPE_CHECKING:
    from strom.api.state import StateDescriptor
    from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend

__all__ = ["AbstractRocksDBState"]


class AbstractRocksDBState:
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

    def _read_ttl(self, tv: TtlValue) -> Any:
        """The user value of ``tv`` under the TTL rules (``None`` if expired and invisible)."""
        ttl = self._ttl
        assert ttl is not None
        now = ttl.clock()
        if ttl.expired(tv, now):
            self._remove()
            return tv.value if ttl.return_expired else None
        if ttl.update_on_read:
            self._put(TtlValue(tv.value, now))
        return tv.value

    def clear(self) -> None:
        self._remove()

    # -- merging namespaces (merging windows) --------------------------------------------------------------
    def _combine(self, a: Any, b: Any) -> Any:
        raise AssertionError(f"{self.kind} state has no combine; merge_namespaces refuses it before")

    def merge_namespaces(self, target: Any, sources: Iterable[Any]) -> None:
        """Move the state of each ``sources`` namespace of the current key into ``target`` (Flink's
        ``InternalMergingState.mergeNamespaces``); list, reducing and aggregating state only."""
        kind = self.kind
        if kind not in ("list", "reducing", "aggregating"):
            raise InvalidProgramError(
                f"expected list, reducing or aggregating state to merge namespaces; got {kind} state "
                f"'{self.name}'; hint: merging windows need state that can be combined"
            )
        backend = self._backend
        saved = backend.current_namespace
        ttl = self._ttl
        merged: Any = None
        try:
            for ns in [target, *sources]:
                backend.current_namespace = ns
                stored = self._get()
                if stored is None:
                    continue
                self._remove()
                if ttl is not None:
                    stored = ttl.purge(kind, stored, ttl.clock())
                    if stored is None:
                        continue
                    if kind != "list":
                        stored = stored.value
                merged = stored if merged is None else self._combine(merged, stored)
            if merged is not None:
                backend.current_namespace = target
                self._put(merged if ttl is None or kind == "list" else ttl.wrap(merged))
        finally:
            backend.current_namespace = saved
