"""In-memory keyed state (Flink's ``HeapKeyedStateBackend``, the ``hashmap`` backend).

State lives in one table per state name, ``dict[key, value]``; the current key is set by the keyed
operator before each user call. Operators on the hot path (``StreamGroupedReduce``) may use a table
directly through :meth:`get_table`.
"""

from __future__ import annotations

from typing import Any

from strom.api.state import StateDescriptor, ValueState, ValueStateDescriptor
from strom.exceptions import InvalidProgramError

__all__ = ["HeapKeyedStateBackend", "HeapValueState"]


class HeapKeyedStateBackend:
    def __init__(self, *, max_parallelism: int) -> None:
        self.max_parallelism = max_parallelism
        self.current_key: Any = None
        self._tables: dict[str, dict[Any, Any]] = {}
        self._states: dict[str, tuple[StateDescriptor, Any]] = {}

    def set_current_key(self, key: Any) -> None:
        self.current_key = key

    def get_table(self, name: str) -> dict[Any, Any]:
        table = self._tables.get(name)
        if table is None:
            table = self._tables[name] = {}
        return table

    def get_state(self, descriptor: StateDescriptor) -> Any:
        known = self._states.get(descriptor.name)
        if known is not None:
            if type(known[0]) is not type(descriptor):
                raise InvalidProgramError(
                    f"state '{descriptor.name}' was registered as {type(known[0]).__name__}; got a "
                    f"{type(descriptor).__name__} of the same name; hint: use distinct state names"
                )
            return known[1]
        if isinstance(descriptor, ValueStateDescriptor):
            state = HeapValueState(self, self.get_table(descriptor.name))
        else:
            raise InvalidProgramError(
                f"expected a ValueStateDescriptor; got {type(descriptor).__name__}; "
                "hint: list, map, reducing and aggregating state are not available yet"
            )
        self._states[descriptor.name] = (descriptor, state)
        return state

    def num_keys(self) -> int:
        return len({k for t in self._tables.values() for k in t})


class HeapValueState(ValueState[Any]):
    __slots__ = ("_backend", "_table")

    def __init__(self, backend: HeapKeyedStateBackend, table: dict[Any, Any]) -> None:
        self._backend = backend
        self._table = table

    def value(self) -> Any:
        return self._table.get(self._backend.current_key)

    def update(self, value: Any) -> None:
        self._table[self._backend.current_key] = value

    def clear(self) -> None:
        self._table.pop(self._backend.current_key, None)
