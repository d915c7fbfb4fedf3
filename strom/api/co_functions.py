"""Functions over two connected inputs, PyFlink-style: ``connect`` (CoMap / CoFlatMap / CoProcess /
KeyedCoProcess) and the broadcast state pattern (BroadcastProcess / KeyedBroadcastProcess).

Each method taking an element returns its outputs (``map1``/``map2``: one value; the others: an iterable or
``None``, a generator works). Methods ending in ``1`` see the first stream's elements, ``2`` the second's.

    >>> class Tag(CoMapFunction):
    ...     def map1(self, value):
    ...         return ("left", value)
    ...     def map2(self, value):
    ...         return ("right", value)
    >>> Tag().map2(7)
    ('right', 7)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from strom.api.functions import KeyedProcessFunction, ProcessFunction, RichFunction, TimeDomain, TimerService

if TYPE_CHECKING:
    from strom.api.output_tag import OutputTag
    from strom.api.state import MapStateDescriptor, StateDescriptor

__all__ = [
    "BroadcastProcessFunction",
    "BroadcastState",
    "CoFlatMapFunction",
    "CoMapFunction",
    "CoProcessFunction",
    "KeyedBroadcastProcessFunction",
    "KeyedCoProcessFunction",
    "ProcessJoinFunction",
    "ReadOnlyBroadcastState",
]

IN1 = TypeVar("IN1")
IN2 = TypeVar("IN2")
OUT = TypeVar("OUT")
K = TypeVar("K")
V = TypeVar("V")


class CoMapFunction(RichFunction, Generic[IN1, IN2, OUT]):
    """One output per element of either input."""

    @abstractmethod
    def map1(self, value: IN1) -> OUT: ...

    @abstractmethod
    def map2(self, value: IN2) -> OUT: ...


class CoFlatMapFunction(RichFunction, Generic[IN1, IN2, OUT]):
    """Any number of outputs per element of either input."""

    @abstractmethod
    def flat_map1(self, value: IN1) -> Iterable[OUT] | None: ...

    @abstractmethod
    def flat_map2(self, value: IN2) -> Iterable[OUT] | None: ...


class CoProcessFunction(RichFunction, Generic[IN1, IN2, OUT]):
    """Elements of both inputs with their timestamps and side outputs. On keyed connected streams it may also
    set timers (``on_timer``), as Flink's keyed ``CoProcessFunction``; ``KeyedCoProcessFunction`` adds the key."""

    Context = ProcessFunction.Context

    class OnTimerContext(ProcessFunction.Context):
        @abstractmethod
        def time_domain(self) -> TimeDomain: ...

    @abstractmethod
    def process_element1(self, value: IN1, ctx: ProcessFunction.Context) -> Iterable[OUT] | None: ...

    @abstractmethod
    def process_element2(self, value: IN2, ctx: ProcessFunction.Context) -> Iterable[OUT] | None: ...

    def on_timer(self, timestamp: int, ctx: CoProcessFunction.OnTimerContext) -> Iterable[OUT] | None:
        """A timer set for ``timestamp`` fired (keyed connected streams only); the default does nothing."""
        return None


class KeyedCoProcessFunction(RichFunction, Generic[K, IN1, IN2, OUT]):
    """Two streams keyed alike: both inputs' elements of a key share its keyed state and timers."""

    Context = KeyedProcessFunction.Context
    OnTimerContext = KeyedProcessFunction.OnTimerContext

    @abstractmethod
    def process_element1(self, value: IN1, ctx: KeyedProcessFunction.Context) -> Iterable[OUT] | None: ...

    @abstractmethod
    def process_element2(self, value: IN2, ctx: KeyedProcessFunction.Context) -> Iterable[OUT] | None: ...

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Iterable[OUT] | None:
        """A timer set for ``timestamp`` fired; the default does nothing."""
        return None


class ProcessJoinFunction(RichFunction, Generic[IN1, IN2, OUT]):
    """The function of an interval join (``key_by(...).interval_join(...).between(lower, upper).process(fn)``):
    ``process_element(left, right, ctx)`` runs once per joined pair — an element of the first (left) keyed stream
    and one of the second (right) with equal keys whose timestamps satisfy the bounds — in the scope of the pair's
    key. Its outputs carry the pair's timestamp, the larger of the two; ``ctx`` gives the timestamps and side
    outputs."""

    class Context(ABC):
        """The timestamps of the pair being joined, and side outputs (Flink's ``ProcessJoinFunction.Context``)."""

        @abstractmethod
        def get_left_timestamp(self) -> int:
            """The timestamp of the left element of the pair."""

        @abstractmethod
        def get_right_timestamp(self) -> int:
            """The timestamp of the right element of the pair."""

        @abstractmethod
        def get_timestamp(self) -> int:
            """The timestamp of the pair and of what it emits: ``max(left, right)``."""

        @abstractmethod
        def output(self, output_tag: OutputTag, value: Any) -> None:
            """Emit ``value`` to the side output ``output_tag``, with the pair's timestamp."""

    @abstractmethod
    def process_element(self, left: IN1, right: IN2, ctx: ProcessJoinFunction.Context) -> Iterable[OUT] | None:
        """Return or yield the outputs of the pair ``(left, right)``."""


# -- broadcast state ------------------------------------------------------------------------------------------


class ReadOnlyBroadcastState(ABC, Generic[K, V]):
    """The broadcast state as the non-broadcast side sees it: read only (Flink's ``ReadOnlyBroadcastState``)."""

    @abstractmethod
    def get(self, key: Any) -> Any: ...

    @abstractmethod
    def contains(self, key: Any) -> bool: ...

    @abstractmethod
    def keys(self) -> list[Any]: ...

    @abstractmethod
    def values(self) -> list[Any]: ...

    @abstractmethod
    def items(self) -> list[tuple[Any, Any]]: ...

    @abstractmethod
    def is_empty(self) -> bool: ...

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        return iter(self.items())


class BroadcastState(ReadOnlyBroadcastState[K, V]):
    """A map every parallel instance holds the same copy of, written only by the broadcast side."""

    @abstractmethod
    def put(self, key: Any, value: Any) -> None: ...

    @abstractmethod
    def put_all(self, entries: Mapping[Any, Any]) -> None: ...

    @abstractmethod
    def remove(self, key: Any) -> None: ...

    @abstractmethod
    def clear(self) -> None: ...


class _BaseBroadcastContext(ABC):
    @abstractmethod
    def timestamp(self) -> int | None:
        """Event timestamp of the current element, if it has one."""

    @abstractmethod
    def current_processing_time(self) -> int: ...

    @abstractmethod
    def current_watermark(self) -> int: ...

    @abstractmethod
    def output(self, output_tag: OutputTag, value: Any) -> None:
        """Emit ``value`` to the side output ``output_tag``."""


class BroadcastProcessFunction(RichFunction, Generic[IN1, IN2, OUT]):
    """Connects a non-keyed stream with a broadcast stream: ``process_broadcast_element`` may update the
    broadcast state, ``process_element`` only reads it (every instance must make the same updates, so that the
    copies stay equal — Flink's rule)."""

    class ReadOnlyContext(_BaseBroadcastContext):
        @abstractmethod
        def get_broadcast_state(self, descriptor: MapStateDescriptor) -> ReadOnlyBroadcastState[Any, Any]: ...

    class Context(_BaseBroadcastContext):
        @abstractmethod
        def get_broadcast_state(self, descriptor: MapStateDescriptor) -> BroadcastState[Any, Any]: ...

    @abstractmethod
    def process_element(self, value: IN1, ctx: BroadcastProcessFunction.ReadOnlyContext) -> Iterable[OUT] | None: ...

    @abstractmethod
    def process_broadcast_element(self, value: IN2, ctx: BroadcastProcessFunction.Context) -> Iterable[OUT] | None: ...


class KeyedBroadcastProcessFunction(RichFunction, Generic[K, IN1, IN2, OUT]):
    """Connects a keyed stream with a broadcast stream: the keyed side reads the broadcast state and has keyed
    state and timers; the broadcast side updates the broadcast state and may visit every key's state with
    ``ctx.apply_to_keyed_state(descriptor, function)``."""

    class ReadOnlyContext(_BaseBroadcastContext):
        @abstractmethod
        def get_broadcast_state(self, descriptor: MapStateDescriptor) -> ReadOnlyBroadcastState[Any, Any]: ...

        @abstractmethod
        def timer_service(self) -> TimerService: ...

        @abstractmethod
        def get_current_key(self) -> Any: ...

    class Context(_BaseBroadcastContext):
        @abstractmethod
        def get_broadcast_state(self, descriptor: MapStateDescriptor) -> BroadcastState[Any, Any]: ...

        @abstractmethod
        def apply_to_keyed_state(self, state_descriptor: StateDescriptor, function: Callable[[Any, Any], None]) -> None:
            """Call ``function(key, state)`` for every key of this instance that has state ``state_descriptor``."""

    class OnTimerContext(ReadOnlyContext):
        @abstractmethod
        def time_domain(self) -> TimeDomain: ...

    @abstractmethod
    def process_element(
        self, value: IN1, ctx: KeyedBroadcastProcessFunction.ReadOnlyContext
    ) -> Iterable[OUT] | None: ...

    @abstractmethod
    def process_broadcast_element(
        self, value: IN2, ctx: KeyedBroadcastProcessFunction.Context
    ) -> Iterable[OUT] | None: ...

    def on_timer(self, timestamp: int, ctx: KeyedBroadcastProcessFunction.OnTimerContext) -> Iterable[OUT] | None:
        """A timer set for ``timestamp`` fired; the default does nothing."""
        return None
