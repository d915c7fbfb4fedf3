"""State backends with PyFlink's names: ``HashMapStateBackend`` (keyed state on the heap) and
``EmbeddedRocksDBStateBackend`` (keyed state in an embedded RocksDB per operator subtask).

    env.set_state_backend(HashMapStateBackend())           # the same as state.backend.type: hashmap
    env.set_state_backend(EmbeddedRocksDBStateBackend())   # the same as state.backend.type: rocksdb
"""

from __future__ import annotations

from strom.exceptions import InvalidProgramError

__all__ = ["EmbeddedRocksDBStateBackend", "HashMapStateBackend", "StateBackend"]


class StateBackend:
    """Where keyed state lives (Flink's ``StateBackend``); ``type_name`` is its ``state.backend.type``."""

    type_name = ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))


class HashMapStateBackend(StateBackend):
    """Keyed state as Python objects on the TaskManagers' heap, per key group (``state.backend.type: hashmap``)."""

    type_name = "hashmap"


class EmbeddedRocksDBStateBackend(StateBackend):
    """Keyed state in an embedded RocksDB on the TaskManagers' local disk (``state.backend.type: rocksdb``);
    its options are the ``state.backend.rocksdb.*`` keys. ``enable_incremental_checkpointing`` is accepted for
    PyFlink programs; checkpoints are full (canonical) until incremental checkpoints exist."""

    type_name = "rocksdb"

    def __init__(self, enable_incremental_checkpointing: bool | None = None) -> None:
        self.enable_incremental_checkpointing = enable_incremental_checkpointing


def backend_type(state_backend: object) -> str:
    """The ``state.backend.type`` of ``state_backend``; unknown backends are refused."""
    if not isinstance(state_backend, StateBackend) or not state_backend.type_name:
        raise InvalidProgramError(
            f"expected a StateBackend; got {state_backend!r:.60}; hint: env.set_state_backend(HashMapStateBackend())"
        )
    return state_backend.type_name
