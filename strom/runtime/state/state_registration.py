"""Registering keyed state by name, the same in every backend (Flink's ``RegisteredKeyValueStateBackendMetaInfo``
checks): a name keeps its descriptor type, its kind and whether it has a TTL — across registrations and across
restores — or the job is told which and why.

``states`` maps a name to ``(descriptor, state object)``; ``kinds`` maps a name to ``(kind, has_ttl)`` for every
state registered or restored (a checkpoint's ``meta``)."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

from strom.api.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueStateDescriptor,
)
from strom.exceptions import InvalidProgramError

__all__ = ["check_new_state", "describe_kind", "kind_of", "merge_restored_kind", "registered_state"]

_DESCRIPTOR_KINDS: tuple[tuple[type[StateDescriptor], str], ...] = (
    (ValueStateDescriptor, "value"),
    (ListStateDescriptor, "list"),
    (MapStateDescriptor, "map"),
    (ReducingStateDescriptor, "reducing"),
    (AggregatingStateDescriptor, "aggregating"),
)


def kind_of(descriptor: StateDescriptor) -> str:
    for cls, kind in _DESCRIPTOR_KINDS:
        if isinstance(descriptor, cls):
            return kind
    raise InvalidProgramError(
        f"expected a Value/List/Map/Reducing/AggregatingStateDescriptor; got a {type(descriptor).__name__}; "
        "hint: describe keyed state with one of the descriptors of strom.api.state"
    )


def describe_kind(kind: str, has_ttl: bool) -> str:
    return f"{kind} state {'with' if has_ttl else 'without'} TTL"


def registered_state(states: Mapping[str, tuple[StateDescriptor, Any]], descriptor: StateDescriptor) -> Any:
    """The state object registered under the descriptor's name, or ``None``; a descriptor of another type is
    refused."""
    known = states.get(descriptor.name)
    if known is None:
        return None
    if type(known[0]) is not type(descriptor):
        raise InvalidProgramError(
            f"state '{descriptor.name}' was registered as {type(known[0]).__name__}; got a "
            f"{type(descriptor).__name__} of the same name; hint: use distinct state names"
        )
    return known[1]


def check_new_state(kinds: Mapping[str, tuple[str, bool]], descriptor: StateDescriptor) -> tuple[str, bool]:
    """``(kind, has_ttl)`` of a state about to be registered, checked against what a restore brought."""
    kind = kind_of(descriptor)
    has_ttl = descriptor.ttl_config is not None
    restored = kinds.get(descriptor.name)
    if restored is not None and restored != (kind, has_ttl):
        raise InvalidProgramError(
            f"state '{descriptor.name}' was restored as {describe_kind(*restored)}; got a descriptor for "
            f"{describe_kind(kind, has_ttl)}; hint: keep the state type and TTL setting of a state name "
            "across restarts, or give the changed state a new name"
        )
    return kind, has_ttl


def merge_restored_kind(kinds: MutableMapping[str, tuple[str, bool]], name: str, restored: tuple[Any, ...]) -> bool:
    """Take a checkpoint's ``(kind, has_ttl)`` of state ``name``; whether it was new. A registered state of another
    kind or TTL setting is refused."""
    known = kinds.get(name)
    if known is None:
        kinds[name] = (str(restored[0]), bool(restored[1]))
        return True
    if known != restored:
        raise InvalidProgramError(
            f"state '{name}' is registered as {describe_kind(*known)}; got a checkpoint holding "
            f"{describe_kind(*restored)}; hint: keep the state type and TTL setting of a state name "
            "across restarts, or give the changed state a new name"
        )
    return False
