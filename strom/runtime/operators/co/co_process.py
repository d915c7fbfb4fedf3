"""Operators of ``connect``: ``CoStreamMap``, ``CoStreamFlatMap``, ``CoProcessOperator`` and
``KeyedCoProcessOperator`` (Flink's classes of the same names).

Each loops over a batch of one input in one Python frame, like its one-input sibling, and carries each
input record's timestamp over to what is emitted for it. ``KeyedCoProcessOperator`` runs the key selector of
the record's input to scope keyed state and timers (both inputs are partitioned by the same key groups, so
the key of a record of either input is one this subtask owns); its timer service is ``user-timers``, as the
one-input ``KeyedProcessOperator``'s.
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
from strom.runtime.streamrecord import TimestampedBatch

__all__ = ["CoProcessOperator", "CoStreamFlatMap", "CoStreamMap", "KeyedCoProcessOperator"]


class _KeyedInputs(AbstractUdfTwoInputStreamOperator):
    """Key selectors per input, when the connected streams are keyed: the function may use keyed state of the
    current record's key (Flink's keyed ``CoStreamMap`` / ``CoStreamFlatMap``)."""

    def __init__(self, fn: object, key_selector1: object = None, key_selector2: object = None) -> None:
        super().__init__(fn)
        self.key_selector1 = key_selector1
        self.key_selector2 = key_selector2
        self._key1 = key_selector_callable(key_selector1) if key_selector1 is not None else None
        self._key2 = key_selector_callable(key_selector2) if key_selector2 is not None else None

    def setup(self, runtime_context: StreamingRuntimeContext, output: Any) -> None:
        if self._key1 is not None:
            ensure_keyed_backend(self, runtime_context)
        super().setup(runtime_context, output)

    def _keyed(self, f: Callable[[Any], Any], key_of: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
        """``f`` with the current key set to each record's first (identity when not keyed)."""
        backend = self.keyed_backend
        if key_of is None or backend is None:
            return f

        def keyed(value: Any) -> Any:
            backend.current_key = key_of(value)
            return f(value)

        return keyed


class CoStreamMap(_KeyedInputs):
    def __init__(self, fn: object, key_selector1: object = None, key_selector2: object = None) -> None:
        super().__init__(fn, key_selector1, key_selector2)
        self._map1: Callable[[Any], Any] = as_callable(fn, CoMapFunction, "map1", "ConnectedStreams.map()")
        self._map2: Callable[[Any], Any] = as_callable(fn, CoMapFunction, "map2", "ConnectedStreams.map()")

    def open(self) -> None:
        self._map1 = self._keyed(self._map1, self._key1)
        self._map2 = self._keyed(self._map2, self._key2)
        super().open()

    def process_batch1(self, batch: list[Any]) -> None:
        self._map(self._map1, batch)

    def process_batch2(self, batch: list[Any]) -> None:
        self._map(self._map2, batch)

    def _map(self, f: Callable[[Any], Any], batch: list[Any]) -> None:
        out: list[Any] = []
        append = out.append
        v = None
        try:
            for v in batch:
                append(f(v))
        except Exception as exc:
            raise self.user_error(exc, batch, v) from exc
        self._records_in += len(batch)
        if type(batch) is TimestampedBatch:
            out = TimestampedBatch(out, batch.timestamps)
        self.output.emit(out)


class CoStreamFlatMap(_KeyedInputs):
    def __init__(self, fn: object, key_selector1: object = None, key_selector2: object = None) -> None:
        super().__init__(fn, key_selector1, key_selector2)
        self._flat1: Callable[[Any], Any] = as_callable(
            fn, CoFlatMapFunction, "flat_map1", "ConnectedStreams.flat_map()"
        )
        self._flat2: Callable[[Any], Any] = as_callable(
            fn, CoFlatMapFunction, "flat_map2", "ConnectedStreams.flat_map()"
        )
        self._collector: TimestampedCollector = TimestampedCollector()

    def open(self) -> None:
        self._flat1 = self._keyed(self._flat1, self._key1)
        self._flat2 = self._keyed(self._flat2, self._key2)
        super().open()

    def process_batch1(self, batch: list[Any]) -> None:
        self._flat_map(self._flat1, batch)

    def process_batch2(self, batch: list[Any]) -> None:
        self._flat_map(self._flat2, batch)

    def _flat_map(self, f: Callable[[Any], Any], batch: list[Any]) -> None:
        add_all = self._collector.add_all
        timestamps = batch.timestamps if type(batch) is TimestampedBatch else None
        v = None
        try:
            for i, v in enumerate(batch):
                r = f(v)
                if r is not None:
                    add_all(r, timestamps[i] if timestamps is not None else None)
        except Exception as exc:
            raise self.user_error(exc, batch, v) from exc
        self._records_in += len(batch)
        self._collector.flush(self.output)


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

    def open(self) -> None:
        assert self.runtime_context is not None
        service = NonKeyedTimerService(self, self.runtime_context.processing_time_service)
        self._ctx = ProcessContext(self._collector, service)
        super().open()

    def process_batch1(self, batch: list[Any]) -> None:
        self._process(self._fn1, batch)

    def process_batch2(self, batch: list[Any]) -> None:
        self._process(self._fn2, batch)

    def _process(self, f: Callable[..., Any], batch: list[Any]) -> None:
        ctx = self._ctx
        assert ctx is not None
        add_all = self._collector.add_all
        timestamps = batch.timestamps if type(batch) is TimestampedBatch else None
        v = None
        try:
            for i, v in enumerate(batch):
                t = ctx.current_timestamp = timestamps[i] if timestamps is not None else None
                r = f(v, ctx)
                if r is not None:
                    add_all(r, t)
        except Exception as exc:
            raise self.user_error(exc, batch, v) from exc
        self._records_in += len(batch)
        self._collector.flush(self.output)


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

    def setup(self, runtime_context: StreamingRuntimeContext, output: Any) -> None:
        ensure_keyed_backend(self, runtime_context)
        super().setup(runtime_context, output)

    def open(self) -> None:
        service = self.get_internal_timer_service("user-timers", self)
        self._ctx = KeyedProcessContext(self._collector, UserTimerService(service))
        super().open()

    def process_batch1(self, batch: list[Any]) -> None:
        self._process(self._fn1, self._key1, batch)

    def process_batch2(self, batch: list[Any]) -> None:
        self._process(self._fn2, self._key2, batch)

    def _process(self, f: Callable[..., Any], key_of: Callable[[Any], Any], batch: list[Any]) -> None:
        ctx = self._ctx
        assert ctx is not None
        backend = self.keyed_backend
        assert backend is not None
        add_all = self._collector.add_all
        timestamps = batch.timestamps if type(batch) is TimestampedBatch else None
        v = None
        try:
            for i, v in enumerate(batch):
                k = key_of(v)
                ctx.key = k
                backend.current_key = k
                t = ctx.current_timestamp = timestamps[i] if timestamps is not None else None
                r = f(v, ctx)
                if r is not None:
                    add_all(r, t)
        except Exception as exc:
            raise self.user_error(exc, batch, v) from exc
        self._records_in += len(batch)
        self._collector.flush(self.output)
