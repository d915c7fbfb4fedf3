"""The state backend seam (Flink's ``StateBackend`` / ``KeyedStateBackend``): what keyed operators need from
the store of their keyed state, and the factory ``state.backend.type`` names.

Operators only see :class:`KeyedStateBackend`. ``hashmap`` (Flink's ``HashMapStateBackend``: objects on the
heap, per key group) is the one backend today; a RocksDB backend with incremental checkpoints plugs in here
by implementing the same protocol and registering its name in :data:`STATE_BACKENDS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from strom.api.state import StateDescriptor
from strom.api.typeinfo import TypeInformation
from strom.exceptions import ConfigurationError
from strom.runtime.state.heap_keyed_state_backend import HeapKeyedStateBackend
from strom.runtime.state.key_groups import KeyGroupRange

__all__ = [
    "STATE_BACKENDS",
    "KeyedStateBackend",
    "create_keyed_state_backend",
    "key_type_of",
    "validate_state_backend",
]


class KeyedStateBackend(Protocol):
    """Keyed state of one operator subtask: scoped by the current key (and namespace), grouped by key group."""

    max_parallelism: int
    #: the key the state objects read and write; operators set it per record (the attribute is the fast path)
    current_key: Any
    #: the namespace (window) state objects are scoped to; ``None``: no window
    current_namespace: Any

    def set_current_key(self, key: Any) -> None: ...

    def get_current_key(self) -> Any: ...

    def set_current_namespace(self, namespace: Any) -> None: ...

    def get_state(self, descriptor: StateDescriptor) -> Any:
        """The state object the descriptor describes (Value/List/Map/Reducing/Aggregating), created once."""

    def get_table(self, name: str) -> dict[Any, Any]:
        """key → value of an internal state (the fast path of built-in operators such as reduce)."""

    def get_namespaced_table(self, name: str) -> dict[Any, dict[Any, Any]]:
        """key → namespace → value of a state outside the void namespace (window contents, timers)."""

    def snapshot(self) -> dict[int, bytes]:
        """key group → bytes of every non-empty key group, in the canonical format; ``async_snapshot()()``."""

    def async_snapshot(self) -> Callable[[], dict[int, bytes]]:
        """The synchronous part of a checkpoint, on the task thread: O(1) or O(key groups), not O(state size).

        Returns the supplier the asynchronous part calls off the task thread: key group → canonical bytes of
        every non-empty key group as the state was when ``async_snapshot`` ran, whatever the task changed since.
        It raises (and the checkpoint is declined) when the state cannot be serialized. A supplier with a
        ``cancel()`` method is cancelled when its checkpoint is aborted or dropped before it was called."""

    def restore(self, blobs: Mapping[int, bytes], key_group_range: KeyGroupRange | None = None) -> None:
        """Load the key groups this subtask owns (``key_group_range``; ``None``: all) from a checkpoint."""


#: name -> factory(max_parallelism, key_type): the key type (``None``: untyped keys) decides the key groups
STATE_BACKENDS: dict[str, Callable[[int, TypeInformation | None], KeyedStateBackend]] = {
    "hashmap": lambda max_parallelism, key_type: HeapKeyedStateBackend(
        max_parallelism=max_parallelism, key_type=key_type
    ),
}


def validate_state_backend(name: str) -> str:
    """The canonical name of a configured backend, or a :class:`ConfigurationError` that says what exists."""
    canonical = name.strip().lower()
    if canonical not in STATE_BACKENDS:
        raise ConfigurationError(
            f"expected state.backend.type to be one of {', '.join(sorted(STATE_BACKENDS))}; got {name!r}; "
            "hint: 'hashmap' keeps keyed state on the heap of the TaskManagers (a RocksDB backend comes later)"
        )
    return canonical


def create_keyed_state_backend(
    name: str, *, max_parallelism: int, key_type: TypeInformation | None = None
) -> KeyedStateBackend:
    return STATE_BACKENDS[validate_state_backend(name)](max_parallelism, key_type)


def key_type_of(key_selector: object) -> TypeInformation | None:
    """The declared key type a ``key_by(..., key_type=)`` selector carries (``None``: untyped keys)."""
    key_type = getattr(key_selector, "key_type", None)
    return key_type if isinstance(key_type, TypeInformation) else None
