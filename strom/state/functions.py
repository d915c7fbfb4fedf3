"""The user functions of the state processor API (Flink's ``org.apache.flink.state.api.functions``).

* :class:`KeyedStateReaderFunction` reads the keyed state of one operator, key by key (``read_key``), through
  the same state descriptors the job registered (``open``: ``runtime_context.get_state(...)``);
* :class:`KeyedStateBootstrapFunction` writes keyed state, record by record (``process_element``), for a new or
  changed savepoint;
* :class:`StateBootstrapFunction` writes operator (non-keyed) list / union list state: it implements
  :class:`~strom.api.checkpoint.CheckpointedFunction` as a function of a running job does;
* :class:`BroadcastStateBootstrapFunction` writes broadcast state (every subtask holds the same copy).

As everywhere in strom, a function returns or yields its outputs instead of taking a ``Collector``::

    class CountReader(KeyedStateReaderFunction):
        def open(self, runtime_context):
            self.count = runtime_context.get_state(ValueStateDescriptor("count"))

        def read_key(self, key, ctx):
            yield {"key": key, "count": self.count.value()}
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any, Generic, TypeVar

from strom.api.co_functions import BroadcastState
from strom.api.functions import RichFunction, TimerService
from strom.api.state import MapStateDescriptor

__all__ = [
    "BroadcastStateBootstrapFunction",
    "KeyedStateBootstrapFunction",
    "KeyedStateReaderFunction",
    "StateBootstrapFunction",
]

K = TypeVar("K")
IN = TypeVar("IN")
OUT = TypeVar("OUT")


class KeyedStateReaderFunction(RichFunction, Generic[K, OUT]):
    """Reads the keyed state of one operator of a savepoint, one key at a time (Flink's
    ``KeyedStateReaderFunction``).

    ``open(runtime_context)`` registers the states to read with ``runtime_context.get_state(descriptor)`` —
    descriptors of the same kind, name and TTL setting as the job's — and ``read_key(key, ctx)`` runs once per
    key that has a value in any of them, with that key current, and returns or yields its outputs.
    """

    class Context(ABC):
        """What ``read_key`` knows beside the state: the key's timers (Flink's ``KeyedStateReaderFunction.Context``)."""

        @abstractmethod
        def registered_event_time_timers(self) -> list[int]:
            """The event-time timers of the current key (of a ``KeyedProcessFunction``), in order of time."""

        @abstractmethod
        def registered_processing_time_timers(self) -> list[int]:
            """The processing-time timers of the current key, in order of time."""

    @abstractmethod
    def read_key(self, key: K, ctx: KeyedStateReaderFunction.Context) -> Iterable[OUT] | None: ...


class KeyedStateBootstrapFunction(RichFunction, Generic[K, IN]):
    """Writes keyed state for the records of a bootstrap (Flink's ``KeyedStateBootstrapFunction``).

    ``open(runtime_context)`` registers states with ``runtime_context.get_state(descriptor)`` as a
    ``KeyedProcessFunction`` does; ``process_element(value, ctx)`` runs with the record's key current and
    updates them. ``ctx.timer_service()`` registers timers that the restored job's ``KeyedProcessFunction``
    then owns."""

    class Context(ABC):
        @abstractmethod
        def get_current_key(self) -> Any: ...

        @abstractmethod
        def timer_service(self) -> TimerService: ...

    @abstractmethod
    def process_element(self, value: IN, ctx: KeyedStateBootstrapFunction.Context) -> None: ...


class StateBootstrapFunction(RichFunction, Generic[IN]):
    """Writes operator (non-keyed) state for the records of a bootstrap (Flink's ``StateBootstrapFunction``).

    Implement :class:`~strom.api.checkpoint.CheckpointedFunction` as well: ``initialize_state`` registers list or
    union list state through ``context.get_operator_state_store()``, ``process_element`` collects, and
    ``snapshot_state`` (called once, when the bootstrap is written) puts the collected values into that state."""

    class Context(ABC):
        @abstractmethod
        def current_processing_time(self) -> int: ...

    @abstractmethod
    def process_element(self, value: IN, ctx: StateBootstrapFunction.Context) -> None: ...


class BroadcastStateBootstrapFunction(RichFunction, Generic[IN]):
    """Writes broadcast state (Flink's ``BroadcastStateBootstrapFunction``): every record reaches every subtask,
    so each holds the same copy, as the broadcast state pattern requires."""

    class Context(ABC):
        @abstractmethod
        def current_processing_time(self) -> int: ...

        @abstractmethod
        def get_broadcast_state(self, descriptor: MapStateDescriptor) -> BroadcastState[Any, Any]: ...

    @abstractmethod
    def process_element(self, value: IN, ctx: BroadcastStateBootstrapFunction.Context) -> None: ...
