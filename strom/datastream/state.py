"""PyFlink's ``pyflink.datastream.state`` module path: states, their descriptors and TTL (re-exports)."""

from strom.api.co_functions import BroadcastState, ReadOnlyBroadcastState
from strom.api.state import (
    AggregatingState,
    AggregatingStateDescriptor,
    ListState,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    ReducingState,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueState,
    ValueStateDescriptor,
)

__all__ = [
    "AggregatingState",
    "AggregatingStateDescriptor",
    "BroadcastState",
    "ListState",
    "ListStateDescriptor",
    "MapState",
    "MapStateDescriptor",
    "ReadOnlyBroadcastState",
    "ReducingState",
    "ReducingStateDescriptor",
    "StateTtlConfig",
    "ValueState",
    "ValueStateDescriptor",
]
