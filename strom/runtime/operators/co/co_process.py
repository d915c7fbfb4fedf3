"""Operators of ``connect``: ``CoStreamMap``, ``CoStreamFlatMap``, ``CoProcessOperator`` and
``KeyedCoProcessOperator`` (Flink's classes of the same names).

Each runs the batches of both inputs through the one UDF operator loop, as its one-input sibling does
(:meth:`~strom.runtime.operators.abstract_udf_stream_operator.AbstractUdfStreamOperator.process_elements`: byte
slicing of the output, the failing record named, an unhashable key explained), with a per-record loop per
input that carries each input record's timestamp over to what is emitted for it. On keyed connected streams the
loop runs the key selector of the record's input to scope keyed state and timers (both inputs are partitioned
by the same key groups, so the key of a record of either input is one this subtask owns);
``KeyedCoProcessOperator``'s timer service is ``user-timers``, as the one-input ``KeyedProcessOperator``'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from strom.api.co_functions import CoFlatMapFunction, CoMapFunction, CoProcessFunction, KeyedCoProcessFunction
from strom.api.functions import as_callable
from strom.runtime.operators.base import StreamingRuntimeContext
from strom.runtime.operators.collector import TimestampedCollector
from strom.runtime.operators.keyed import (
    KeyedProcessContext,
    UserTimerService,
    UserTimersOperator,
    key_selector_callable,
)
from strom.runtime.operators.simple import NonKeyedTimerService, ProcessContext
from strom.runtime.operators.two_input import AbstractUdfTwoInputStreamOperator, ensure_keyed_backend
from strom.runtime.operators.udf_loop import (
    KeyOf,
    Loop,
    flat_map_loop,
    into_collector,
    map_loop,
    process_loop,
    unopened,
)

__all__ = ["CoProcessOperator", "CoStreamFlatMap", "CoStreamMap", "KeyedCoProcessOperator"]


class _KeyedInputs(AbstractUdfTwoInputStreamOperator):
    """Key selectors per input, when the connected streams are keyed: the function may use keyed state of the
    current record's key (Flink's keyed ``CoStreamMap`` / ``CoStreamFlatMap``)."""

    def __init__(self, fn: object, key_selector1: object = None, key_selector2: object = None) -> None:
        super().__init__(fn)
        self.key_selector1 = key_selector1
        self.key_selector2 = key_selector2
        self._key1: KeyOf | None = key_selector_callable(key_selector1) if key_selector1 is not None else None
        self._key2: KeyOf | None = key_selector_callable(key_selector2) if key_selector2 is not None else None

    def setup(self, runtime_context: StreamingRuntimeContext, output: Any) -> None:
        if self._key1 is not None:
            ensure_keyed_backend(self, runtime_context)
        super().setup(runtime_context, output)


class CoStreamMap(_KeyedInputs):
    def __init__(self, fn: object, key_selector1: object = None, key_selector2: object = None) -> None:
        super().__init__(fn, key_selector1, key_selector2)
        self._map1: Callable[[Any], Any] = as_callable(fn, CoMapFunction, "map1", "ConnectedStreams.map()")
        self._map2: Callable[[Any], Any] = as_callable(fn, CoMapFunction, "map2", "ConnectedStreams.map()")
        self._loop1: Loop = unopened
        self._loop2: Loop = unopened

    def open(self) -> None:
        super().open()
        self._loop1 = map_loop(self._map1, self._key1, self.keyed_backend)
        self._loop2 = map_loop(self._map2, self._key2, self.keyed_backend)

    def process_batch1(self, batch: list[Any]) -> None:
        self.process_elements(batch, self._loop1, self._key1)

    def process_batch2(self, batch: list[Any]) -> None:
        self.process_elements(batch, self._loop2, self._key2)


class CoStreamFlatMap(_KeyedInputs):
    """Emits through its collector, so a yielded ``(OutputTag, value)`` goes to that side output."""

    def __init__(self, fn: object, key_selector1: object = None, key_selector2: object = None) -> None:
        super().__init__(fn, key_selector1, key_selector2)
        self._flat1: Callable[[Any], Any] = as_callable(
            fn, CoFlatMapFunction, "flat_map1", "ConnectedStreams.flat_map()"
        )
        self._flat2: Callable[[Any], Any] = as_callable(
            fn, CoFlatMapFunction, "flat_map2", "ConnectedStreams.flat_map()"
        )
        self._collector: TimestampedCollector = TimestampedCollector()
        self._loop1: Loop = unopened
        self._loop2: Loop = unopened

    def open(self) -> None:
        super().open()
        backend = self.keyed_backend
        self._loop1 = into_collector(flat_map_loop(self._flat1, self._key1, backend), self._collector)
        self._loop2 = into_collector(flat_map_loop(self._flat2, self._key2, backend), self._collector)

    def process_batch1(self, batch: list[Any]) -> None:
        self.process_elements(batch, self._loop1, self._key1)

    def process_batch2(self, batch: list[Any]) -> None:
        self.process_elements(batch, self._loop2, self._key2)


class CoProcessOperator(AbstractUdfTwoInputStreamOperator):
    """A ``CoProcessFunction`` on non-keyed connected streams: timestamps, side outputs, current times; no
    timers (they need a key)."""

    def __init__(self, fn: object) -> None:
        super().__init__(fn)
        what = "ConnectedStreams.process()"
        self._fn1: Callable[..., Any] = as_callable(fn, CoProcessFunction, "process_element1", what)
        self._fn2: Callable[..., Any] = as_callable(fn, CoProcessFunction, "process_element2", what)
        self._collector: TimestampedCollector = TimestampedCollector()
        self._ctx: ProcessContext | None = None
        self._loop1: Loop = unopened
        self._loop2: Loop = unopened

    def open(self) -> None:
        assert self.runtime_context is not None
        service = NonKeyedTimerService(self, self.runtime_context.processing_time_service)
        self._ctx = ProcessContext(self._collector, service)
        super().open()
        self._loop1 = process_loop(self._fn1, self._ctx, self._collector)
        self._loop2 = process_loop(self._fn2, self._ctx, self._collector)

    def process_batch1(self, batch: list[Any]) -> None:
        self.process_elements(batch, self._loop1)

    def process_batch2(self, batch: list[Any]) -> None:
        self.process_elements(batch, self._loop2)


class KeyedCoProcessOperator(UserTimersOperator, AbstractUdfTwoInputStreamOperator):
    """A ``KeyedCoProcessFunction`` (or a ``CoProcessFunction``) on connected streams keyed alike: keyed state
    and timers of the current key, ``on_timer`` with the time domain."""

    def __init__(self, fn: object, key_selector1: object, key_selector2: object) -> None:
        super().__init__(fn)
        what = "ConnectedStreams.process()"
        base: type = KeyedCoProcessFunction if isinstance(fn, KeyedCoProcessFunction) else CoProcessFunction
        self._fn1: Callable[..., Any] = as_callable(fn, base, "process_element1", what)
        self._fn2: Callable[..., Any] = as_callable(fn, base, "process_element2", what)
        on_timer = getattr(fn, "on_timer", None)
        self._on_timer: Callable[..., Any] | None = on_timer if callable(on_timer) else None
        self.key_selector1 = key_selector1
        self.key_selector2 = key_selector2
        self._key1 = key_selector_callable(key_selector1)
        self._key2 = key_selector_callable(key_selector2)
        self._collector: TimestampedCollector = TimestampedCollector()
        self._ctx: KeyedProcessContext | None = None
        self._loop1: Loop = unopened
        self._loop2: Loop = unopened

    def setup(self, runtime_context: StreamingRuntimeContext, output: Any) -> None:
        ensure_keyed_backend(self, runtime_context)
        super().setup(runtime_context, output)

    def open(self) -> None:
        service = self.get_internal_timer_service("user-timers", self)
        self._ctx = KeyedProcessContext(self._collector, UserTimerService(service))
        super().open()
        backend = self.keyed_backend
        self._loop1 = process_loop(self._fn1, self._ctx, self._collector, self._key1, backend)
        self._loop2 = process_loop(self._fn2, self._ctx, self._collector, self._key2, backend)

    def process_batch1(self, batch: list[Any]) -> None:
        self.process_elements(batch, self._loop1, self._key1)

    def process_batch2(self, batch: list[Any]) -> None:
        self.process_elements(batch, self._loop2, self._key2)
