"""State backends with PyFlink's names: ``HashMapStateBackend`` is the heap backend strom has;
``EmbeddedRocksDBStateBackend`` is refused with a clear error until a RocksDB backend exists.

    env.set_state_backend(HashMapStateBackend())   # the same as state.backend.type: hashmap
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
    """Flink's RocksDB backend: not built yet. Constructing one works (PyFlink programs import and build it);
    ``set_state_backend`` refuses it."""

    type_name = "rocksdb"

    def __init__(self, enable_incremental_checkpointing: bool | None = None) -> None:
        self.enable_incremental_checkpointing = enable_incremental_checkpointing


def backend_type(state_backend: object) -> str:
    """The ``state.backend.type`` of ``state_backend``; RocksDB and unknown backends are refused."""
    if isinstance(state_backend, EmbeddedRocksDBStateBackend):
        raise InvalidProgramError(
            "expected a state backend strom has; got EmbeddedRocksDBStateBackend, which is not built yet (RocksDB "
            "state with incremental checkpoints is on the roadmap); hint: env.set_state_backend(HashMapStateBackend()) "
            "keeps keyed state on the heap and checkpoints it to the checkpoint storage"
        )
    if not isinstance(state_backend, StateBackend) or not state_backend.type_name:
        raise InvalidProgramError(
            f"expected a StateBackend; got {state_backend!r:.60}; hint: env.set_state_backend(HashMapStateBackend())"
        )
    return state_backend.type_name
