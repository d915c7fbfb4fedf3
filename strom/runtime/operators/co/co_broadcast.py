"""The broadcast state pattern's operators: ``CoBroadcastWithNonKeyedOperator`` and
``CoBroadcastWithKeyedOperator`` (Flink's classes of the same names).

Input 1 is the (keyed or non-keyed) data stream, input 2 the broadcast stream — every subtask receives every
broadcast element. The broadcast side writes the broadcast states declared in ``broadcast(*descriptors)``;
the data side sees them read-only, so every subtask, applying the same updates in the same order, keeps the
same copy. The states live in the operator state backend and are checkpointed with every subtask's copy.

The keyed operator also has keyed state and timers on the data side (timer service ``user-timers``), and the
broadcast side may visit the keyed state of every key of the subtask (``apply_to_keyed_state``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from strom.api.co_functions import (
    BroadcastProcessFunction,
    BroadcastState,
    KeyedBroadcastProcessFunction,
    ReadOnlyBroadcastState,
)
from strom.api.functions import TimeDomain, TimerService, as_callable
from strom.api.output_tag import OutputTag
from strom.api.state import MapStateDescriptor, StateDescriptor
from strom.exceptions import InvalidProgramError
from strom.runtime.operators.base import StreamingRuntimeContext
from strom.runtime.operators.collector import TimestampedCollector
from strom.runtime.operators.keyed import UserTimerService, UserTimersOperator, key_selector_callable
from strom.runtime.operators.two_input import AbstractUdfTwoInputStreamOperator, ensure_keyed_backend
from strom.runtime.operators.udf_loop import KeyOf, Loop, process_loop, unopened
from strom.runtime.state.operator_state_backend import HeapBroadcastState

__all__ = ["CoBroadcastWithKeyedOperator", "CoBroadcastWithNonKeyedOperator"]


class _ReadOnlyView(ReadOnlyBroadcastState[Any, Any]):
    """What the data side gets: reads of the broadcast state, no writes."""

    __slots__ = ("_state",)

    def __init__(self, state: HeapBroadcastState) -> None:
        self._state = state

    def get(self, key: Any) -> Any:
        return self._state.entries.get(key)

    def contains(self, key: Any) -> bool:
        return key in self._state.entries

    def keys(self) -> list[Any]:
        return self._state.keys()

    def values(self) -> list[Any]:
        return self._state.values()

    def items(self) -> list[tuple[Any, Any]]:
        return self._state.items()

    def is_empty(self) -> bool:
        return not self._state.entries


class _Context(KeyedBroadcastProcessFunction.OnTimerContext, KeyedBroadcastProcessFunction.Context):
    """Both sides' context (Flink hands out separate objects; one object with the side's rules is enough):
    ``writable`` is set while a broadcast element is processed."""

    def __init__(self, operator: _CoBroadcastOperator, service: TimerService | None) -> None:
        self._op = operator
        self._service = service
        self.current_timestamp: int | None = None
        self.key: Any = None
        self.writable = False
        self.domain = TimeDomain.EVENT_TIME

    def timestamp(self) -> int | None:
        return self.current_timestamp

    def current_processing_time(self) -> int:
        ctx = self._op.runtime_context
        assert ctx is not None
        return ctx.processing_time_service.get_current_processing_time()

    def current_watermark(self) -> int:
        return self._op.current_watermark

    def output(self, output_tag: OutputTag, value: Any) -> None:
        self._op._collector.add_side(output_tag.tag_id, value, self.current_timestamp)

    def get_broadcast_state(self, descriptor: MapStateDescriptor) -> Any:
        state, view = self._op.broadcast_state(descriptor)
        return state if self.writable else view

    def timer_service(self) -> TimerService:
        if self._service is None or self.writable:
            raise InvalidProgramError(
                f"expected timers on the keyed side of operator '{self._op.name}'; got a timer_service() call "
                f"{'from process_broadcast_element' if self.writable else 'on a non-keyed stream'}; hint: set "
                "timers in process_element of a KeyedBroadcastProcessFunction"
            )
        return self._service

    def get_current_key(self) -> Any:
        return self.key

    def apply_to_keyed_state(self, state_descriptor: StateDescriptor, function: Callable[[Any, Any], None]) -> None:
        self._op.apply_to_keyed_state(state_descriptor, function)

    def time_domain(self) -> TimeDomain:
        return self.domain


class _CoBroadcastOperator(AbstractUdfTwoInputStreamOperator):
    _base: type = BroadcastProcessFunction

    def __init__(self, fn: object, descriptors: tuple[MapStateDescriptor, ...]) -> None:
        super().__init__(fn)
        what = "BroadcastConnectedStream.process()"
        self._element: Callable[..., Any] = as_callable(fn, self._base, "process_element", what)
        self._broadcast_element: Callable[..., Any] = as_callable(fn, self._base, "process_broadcast_element", what)
        self.descriptors = descriptors
        self._collector: TimestampedCollector = TimestampedCollector()
        self._states: dict[str, tuple[BroadcastState[Any, Any], ReadOnlyBroadcastState[Any, Any]]] = {}
        self._ctx: _Context | None = None
        self._loop1: Loop = unopened  # the data side
        self._loop2: Loop = unopened  # the broadcast side: writes the broadcast state

    def _timer_service(self) -> TimerService | None:
        return None

    def open(self) -> None:
        backend = self.operator_state_backend
        for d in self.descriptors:
            state = backend.get_broadcast_state(d)
            self._states[d.name] = (state, _ReadOnlyView(state))
        ctx = self._ctx = _Context(self, self._timer_service())
        super().open()
        self._loop1 = process_loop(self._element, ctx, self._collector, self._key, self.keyed_backend)
        self._loop2 = process_loop(self._broadcast_element, ctx, self._collector)

    def broadcast_state(
        self, descriptor: MapStateDescriptor
    ) -> tuple[BroadcastState[Any, Any], ReadOnlyBroadcastState[Any, Any]]:
        name = getattr(descriptor, "name", None)
        found = self._states.get(name) if isinstance(name, str) else None
        if found is None:
            declared = ", ".join(repr(d.name) for d in self.descriptors) or "none"
            raise InvalidProgramError(
                f"expected a broadcast state declared in broadcast(...) ({declared}); got {descriptor!r}; hint: "
                "pass the same MapStateDescriptor to broadcast(descriptor) and ctx.get_broadcast_state(descriptor)"
            )
        return found

    def apply_to_keyed_state(self, descriptor: StateDescriptor, function: Callable[[Any, Any], None]) -> None:
        raise InvalidProgramError(
            f"expected a keyed stream for apply_to_keyed_state in operator '{self.name}'; got a non-keyed one; "
            "hint: key_by(...) the data stream and use a KeyedBroadcastProcessFunction"
        )

    def process_batch1(self, batch: list[Any]) -> None:
        self.process_elements(batch, self._loop1, self._key)

    def process_batch2(self, batch: list[Any]) -> None:
        ctx = self._ctx
        assert ctx is not None, f"{type(self).__name__} used before open()"
        ctx.writable = True
        try:
            self.process_elements(batch, self._loop2)
        finally:
            ctx.writable = False


class CoBroadcastWithNonKeyedOperator(_CoBroadcastOperator):
    """A ``BroadcastProcessFunction`` on a non-keyed stream connected with a broadcast stream."""


class CoBroadcastWithKeyedOperator(UserTimersOperator, _CoBroadcastOperator):
    """A ``KeyedBroadcastProcessFunction`` on a keyed stream connected with a broadcast stream."""

    _base = KeyedBroadcastProcessFunction

    def __init__(self, fn: object, descriptors: tuple[MapStateDescriptor, ...], key_selector: object) -> None:
        super().__init__(fn, descriptors)
        self.key_selector = key_selector
        self._key: KeyOf = key_selector_callable(key_selector)
        on_timer = getattr(fn, "on_timer", None)
        self._on_timer: Callable[..., Any] | None = on_timer if callable(on_timer) else None

    def setup(self, runtime_context: StreamingRuntimeContext, output: Any) -> None:
        ensure_keyed_backend(self, runtime_context)
        super().setup(runtime_context, output)

    def _timer_service(self) -> TimerService | None:
        return UserTimerService(self.get_internal_timer_service("user-timers", self))

    def apply_to_keyed_state(self, descriptor: StateDescriptor, function: Callable[[Any, Any], None]) -> None:
        """Flink's ``applyToKeyedState``: ``function(key, state)`` for every key with state ``descriptor``."""
        backend = self.keyed_backend
        assert backend is not None
        state = backend.get_state(descriptor)
        previous = backend.current_key
        try:
            for key in list(backend.get_table(descriptor.name)):
                backend.current_key = key
                function(key, state)
        finally:
            backend.current_key = previous
