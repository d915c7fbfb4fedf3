"""State backends with PyFlink's names: ``HashMapStateBackend`` (keyed state on the heap) and
``EmbeddedRocksDBStateBackend`` (keyed state in an embedded RocksDB per operator subtask).

    env.set_state_backend(HashMapStateBackend())           # the same as state.backend.type: hashmap
    env.set_state_backend(EmbeddedRocksDBStateBackend())   # the same as state.backend.type: rocksdb
    env.set_state_backend(EmbeddedRocksDBStateBackend(enable_incremental_checkpointing=True))
                                                  # ... and execution.checkpointing.incremental: true
"""

from __future__ import annotations

from typing import Any

from strom.config import CheckpointingOptions, ConfigOption
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

    def configuration(self) -> list[tuple[ConfigOption[Any], Any]]:
        """The options this backend object sets besides ``state.backend.type`` (none by default)."""
        return []


class HashMapStateBackend(StateBackend):
    """Keyed state as Python objects on the TaskManagers' heap, per key group (``state.backend.type: hashmap``)."""

    type_name = "hashmap"


class EmbeddedRocksDBStateBackend(StateBackend):
    """Keyed state in an embedded RocksDB on the TaskManagers' local disk (``state.backend.type: rocksdb``);
    its options are the ``state.backend.rocksdb.*`` keys. ``enable_incremental_checkpointing`` (PyFlink's argument)
    sets ``execution.checkpointing.incremental``; ``None`` leaves the configured value."""

    type_name = "rocksdb"

    def __init__(self, enable_incremental_checkpointing: bool | None = None) -> None:
        if enable_incremental_checkpointing is not None and not isinstance(enable_incremental_checkpointing, bool):
            raise InvalidProgramError(
                f"expected enable_incremental_checkpointing to be True, False or None; got "
                f"{enable_incremental_checkpointing!r:.60}; hint: None keeps execution.checkpointing.incremental"
            )
        self.enable_incremental_checkpointing = enable_incremental_checkpointing

    def is_incremental_checkpoints_enabled(self) -> bool:
        """PyFlink's ``is_incremental_checkpoints_enabled`` (``None``, not set here: False)."""
        return bool(self.enable_incremental_checkpointing)

    def configuration(self) -> list[tuple[ConfigOption[Any], Any]]:
        if self.enable_incremental_checkpointing is None:
            return []
        return [(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, self.enable_incremental_checkpointing)]


def backend_type(state_backend: object) -> str:
    """The ``state.backend.type`` of ``state_backend``; unknown backends are refused."""
    if not isinstance(state_backend, StateBackend) or not state_backend.type_name:
        raise InvalidProgramError(
            f"expected a StateBackend; got {state_backend!r:.60}; hint: env.set_state_backend(HashMapStateBackend())"
        )
    return state_backend.type_name
