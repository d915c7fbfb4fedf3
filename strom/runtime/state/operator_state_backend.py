"""Non-keyed operator state (Flink's ``DefaultOperatorStateBackend``): list state and broadcast state per
subtask.

Each state is a list of elements and has a redistribution mode, used when the job restores with another
parallelism (Flink's ``RoundRobinOperatorStateRepartitioner``):

* ``SPLIT_DISTRIBUTE`` (``get_list_state``): with the same parallelism each subtask gets back its own
  elements; otherwise the elements of all old subtasks, concatenated in old-subtask order, are cut into
  ``parallelism`` contiguous chunks of near-equal size (the first chunks one element longer) and subtask
  ``i`` gets chunk ``i``;
* ``UNION`` (``get_union_list_state``): every subtask gets the elements of all old subtasks.

Broadcast state (``get_broadcast_state``, the broadcast state pattern) is a map every subtask holds the same
copy of; on restore subtask ``i`` takes old subtask ``i % old_parallelism``'s copy (Flink's
``RoundRobinOperatorStateRepartitioner`` for ``BROADCAST``).

    >>> backend = OperatorStateBackend()
    >>> backend.get_list_state(ListStateDescriptor("offsets")).update([1, 2, 3, 4, 5])
    >>> fresh = OperatorStateBackend()
    >>> fresh.restore([backend.snapshot()], subtask_index=0, parallelism=2)
    >>> fresh.get_list_state(ListStateDescriptor("offsets")).get()
    [1, 2, 3]
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from strom.api.co_functions import BroadcastState
from strom.api.state import ListState, ListStateDescriptor, MapStateDescriptor
from strom.exceptions import CheckpointError, InvalidProgramError
from strom.runtime.state.state_serialization import dump_state, load_state

__all__ = ["HeapBroadcastState", "OperatorListState", "OperatorStateBackend", "OperatorStateMode", "redistribute"]

_FORMAT_VERSION = 1


class OperatorStateMode(enum.Enum):
    """Flink's ``OperatorStateHandle.Mode``."""

    SPLIT_DISTRIBUTE = "SPLIT_DISTRIBUTE"
    UNION = "UNION"


_GETTER = {OperatorStateMode.SPLIT_DISTRIBUTE: "get_list_state", OperatorStateMode.UNION: "get_union_list_state"}


class OperatorListState(ListState[Any]):
    """The list of one operator state of this subtask."""

    __slots__ = ("elements", "mode", "name")

    def __init__(self, name: str, mode: OperatorStateMode, elements: list[Any] | None = None) -> None:
        self.name = name
        self.mode = mode
        self.elements: list[Any] = elements if elements is not None else []

    def get(self) -> list[Any]:
        return list(self.elements)

    def add(self, value: Any) -> None:
        self.elements.append(value)

    def add_all(self, values: Iterable[Any]) -> None:
        self.elements.extend(values)

    def update(self, values: Iterable[Any]) -> None:
        self.elements = list(values)

    def clear(self) -> None:
        self.elements = []


class HeapBroadcastState(BroadcastState[Any, Any]):
    """One broadcast state of this subtask: a dict."""

    __slots__ = ("entries", "name")

    def __init__(self, name: str, entries: dict[Any, Any] | None = None) -> None:
        self.name = name
        self.entries: dict[Any, Any] = entries if entries is not None else {}

    def get(self, key: Any) -> Any:
        return self.entries.get(key)

    def contains(self, key: Any) -> bool:
        return key in self.entries

    def keys(self) -> list[Any]:
        return list(self.entries)

    def values(self) -> list[Any]:
        return list(self.entries.values())

    def items(self) -> list[tuple[Any, Any]]:
        return list(self.entries.items())

    def is_empty(self) -> bool:
        return not self.entries

    def put(self, key: Any, value: Any) -> None:
        self.entries[key] = value

    def put_all(self, entries: Mapping[Any, Any]) -> None:
        self.entries.update(entries)

    def remove(self, key: Any) -> None:
        self.entries.pop(key, None)

    def clear(self) -> None:
        self.entries.clear()


class OperatorStateBackend:
    """The operator states of one operator of one subtask, registered by name."""

    def __init__(self) -> None:
        self._states: dict[str, OperatorListState] = {}
        self._registered: set[str] = set()
        self._broadcast: dict[str, HeapBroadcastState] = {}

    def get_broadcast_state(self, descriptor: MapStateDescriptor) -> HeapBroadcastState:
        """The broadcast state ``descriptor`` names (created, or restored, on first use)."""
        if not isinstance(descriptor, MapStateDescriptor):
            raise InvalidProgramError(
                f"broadcast state is map state; expected a MapStateDescriptor; got a {type(descriptor).__name__}; "
                "hint: broadcast(MapStateDescriptor('rules'))"
            )
        if descriptor.name in self._states:
            raise InvalidProgramError(
                f"operator state '{descriptor.name}' is list state; got a broadcast state of the same name; "
                "hint: use distinct state names"
            )
        state = self._broadcast.get(descriptor.name)
        if state is None:
            state = self._broadcast[descriptor.name] = HeapBroadcastState(descriptor.name)
        return state

    def get_list_state(self, descriptor: ListStateDescriptor) -> ListState[Any]:
        """List state redistributed in even chunks on rescaling (Flink's ``getListState``)."""
        return self._get(descriptor, OperatorStateMode.SPLIT_DISTRIBUTE)

    def get_union_list_state(self, descriptor: ListStateDescriptor) -> ListState[Any]:
        """List state of which every subtask restores the union of all subtasks' elements."""
        return self._get(descriptor, OperatorStateMode.UNION)

    def get_registered_state_names(self) -> set[str]:
        return set(self._states) | set(self._broadcast)

    def _get(self, descriptor: ListStateDescriptor, mode: OperatorStateMode) -> OperatorListState:
        if not isinstance(descriptor, ListStateDescriptor):
            raise InvalidProgramError(
                f"operator state is list state; expected a ListStateDescriptor; got a {type(descriptor).__name__}; "
                "hint: keyed state (value, map, reducing, ...) needs a keyed stream: key_by(...)"
            )
        if descriptor.ttl_config is not None:
            raise InvalidProgramError(
                f"operator state '{descriptor.name}' cannot have a time-to-live; got a descriptor with TTL; "
                "hint: TTL applies to keyed state only"
            )
        if descriptor.name in self._broadcast:
            raise InvalidProgramError(
                f"operator state '{descriptor.name}' is a broadcast state; got list state of the same name; "
                "hint: use distinct state names"
            )
        state = self._states.get(descriptor.name)
        if state is None:
            state = self._states[descriptor.name] = OperatorListState(descriptor.name, mode)
        elif state.mode is not mode:
            origin = "registered" if descriptor.name in self._registered else "restored"
            raise InvalidProgramError(
                f"operator state '{descriptor.name}' was {origin} with {_GETTER[state.mode]}(); got "
                f"{_GETTER[mode]}() for the same name; hint: keep the redistribution mode of a state name, "
                "or use a new name for the changed state"
            )
        self._registered.add(descriptor.name)
        return state

    def snapshot(self) -> bytes | None:
        """All states of this subtask as bytes (``None`` when none was registered or restored)."""
        if not self._states and not self._broadcast:
            return None
        states = {name: (s.mode.value, list(s.elements)) for name, s in sorted(self._states.items())}
        broadcast = {name: dict(b.entries) for name, b in sorted(self._broadcast.items())}
        payload = {"version": _FORMAT_VERSION, "states": states, "broadcast": broadcast}
        return dump_state(payload, {**states, **broadcast}, "operator state")

    def restore(self, old_blobs: Sequence[bytes | None], *, subtask_index: int, parallelism: int) -> None:
        """Take this subtask's share of the snapshots of *all* old subtasks (in old subtask order).

        ``None`` or empty blobs stand for old subtasks without operator state."""
        if not 0 <= subtask_index < parallelism:
            raise CheckpointError(
                f"expected 0 <= subtask_index < parallelism to restore operator state; got subtask_index "
                f"{subtask_index} and parallelism {parallelism}; hint: this is a bug in the caller"
            )
        per_name: dict[str, tuple[OperatorStateMode, list[list[Any]]]] = {}
        broadcast: dict[str, list[dict[Any, Any] | None]] = {}
        for old_index, blob in enumerate(old_blobs):
            if not blob:
                continue
            payload = load_state(blob, f"operator state of old subtask {old_index}")
            if not isinstance(payload, dict) or payload.get("version") != _FORMAT_VERSION:
                raise CheckpointError(
                    f"expected operator state of format version {_FORMAT_VERSION} from old subtask {old_index}; "
                    f"got a {type(payload).__name__}; hint: the checkpoint was written by an incompatible version"
                )
            for name, (mode_value, elements) in payload["states"].items():
                mode = OperatorStateMode(mode_value)
                known = per_name.setdefault(name, (mode, [[] for _ in old_blobs]))
                if known[0] is not mode:
                    raise CheckpointError(
                        f"operator state '{name}' must have one mode in all old subtasks; got {known[0].value} "
                        f"and {mode.value}; hint: the checkpoint is inconsistent"
                    )
                known[1][old_index] = elements
            for name, entries in payload.get("broadcast", {}).items():
                broadcast.setdefault(name, [None] * len(old_blobs))[old_index] = entries
        for name, copies in broadcast.items():
            # every old subtask held the same copy; subtask i takes old subtask i % old_parallelism's
            entries = copies[subtask_index % len(copies)]
            if entries is None:
                entries = next(c for c in copies if c is not None)
            self.get_broadcast_state(MapStateDescriptor(name)).entries.update(entries)
        for name, (mode, lists) in per_name.items():
            share = redistribute(lists, mode, subtask_index=subtask_index, parallelism=parallelism)
            state = self._states.get(name)
            if state is None:
                self._states[name] = OperatorListState(name, mode, share)
            elif state.mode is not mode:
                raise InvalidProgramError(
                    f"operator state '{name}' is registered with {_GETTER[state.mode]}(); got a checkpoint "
                    f"written with {_GETTER[mode]}(); hint: keep the redistribution mode of a state name, "
                    "or use a new name for the changed state"
                )
            else:
                state.elements.extend(share)


def redistribute(
    old: Sequence[Sequence[Any]], mode: OperatorStateMode, *, subtask_index: int, parallelism: int
) -> list[Any]:
    """Subtask ``subtask_index``'s share of the elements ``old[i]`` of each old subtask ``i``."""
    if mode is OperatorStateMode.UNION:
        return [e for elements in old for e in elements]
    if len(old) == parallelism:
        return list(old[subtask_index])
    everything = [e for elements in old for e in elements]
    base, extra = divmod(len(everything), parallelism)
    start = subtask_index * base + min(subtask_index, extra)
    end = start + base + (1 if subtask_index < extra else 0)
    return everything[start:end]
