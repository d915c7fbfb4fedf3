"""Operators on a keyed stream: ``StreamGroupedReduce``, ``KeyedProcessOperator``, and ``map``/``flat_map``/
``filter`` after ``key_by`` (``KeyedStreamMap``, ...: their functions may use keyed state, as in Flink). All but the
reduce run their batches through the one UDF operator loop, which sets each record's key context.

Each input batch arrives already routed by key group, so every key a subtask sees is one it owns.
The key selector runs again here (as Flink's ``setKeyContextElement``) to scope state per key.
``KeyedProcessOperator`` owns the timer service ``user-timers``: a firing timer sets its key as the current
key and calls the function's ``on_timer``; what that emits carries the timer's timestamp.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import Any

from strom.api.functions import (
    KeyedProcessFunction,
    KeySelector,
    ReduceFunction,
    TimeDomain,
    TimerService,
    as_callable,
)
from strom.api.output_tag import OutputTag
from strom.exceptions import InvalidProgramError
from strom.runtime.operators.abstract_udf_stream_operator import AbstractUdfStreamOperator
from strom.runtime.operators.base import StreamingRuntimeContext, StreamOperator
from strom.runtime.operators.collector import TimestampedCollector
from strom.runtime.operators.simple import StreamFilter, StreamFlatMap, StreamMap
from strom.runtime.operators.timer_service import InternalTimer, InternalTimerService, batch_key_order
from strom.runtime.operators.udf_loop import Loop, explain_key_error, process_loop, unopened
from strom.runtime.state.batch_execution_keyed_state_backend import BatchExecutionKeyedStateBackend
from strom.runtime.state.state_backend import backend_parameters, create_keyed_state_backend, key_type_of
from strom.runtime.streamrecord import timestamps_of, with_timestamps

__all__ = [
    "KeyedProcessContext",
    "KeyedProcessOperator",
    "KeyedStreamFilter",
    "KeyedStreamFlatMap",
    "KeyedStreamMap",
    "StreamGroupedReduce",
    "UserTimerService",
    "UserTimersOperator",
    "check_timer_time",
    "key_selector_callable",
    "sorted_input_key",
]


def key_selector_callable(selector: object) -> Callable[[Any], Any]:
    return as_callable(selector, KeySelector, "get_key", "key_by()")


def sorted_input_key(op: StreamOperator) -> Callable[[Any], Any] | None:
    """The key selector of a keyed operator that takes sorted input (BATCH, ``execution.sorted-inputs.enabled``);
    ``None`` for any other operator."""
    if isinstance(op, _KeyedUdfOperator) and op.sorted_input:
        return op._key
    return None


class _KeyedUdfOperator(AbstractUdfStreamOperator):
    #: may take sorted input in BATCH execution (``execution.sorted-inputs.enabled``)
    supports_sorted_input = True

    def __init__(self, fn: object, key_selector: object) -> None:
        super().__init__(fn)
        self.key_selector = key_selector
        self._key: Callable[[Any], Any] = key_selector_callable(key_selector)
        #: BATCH execution with sorted inputs: the task feeds this operator key by key, calling ``end_key``
        self.sorted_input = False

    def setup(self, runtime_context: StreamingRuntimeContext, output: Any) -> None:
        info = runtime_context.info
        if runtime_context.keyed_backend is None and info.sorted_inputs and self.supports_sorted_input:
            self.sorted_input = True  # Flink: BATCH replaces the configured backend with the single-key one
            runtime_context.keyed_backend = BatchExecutionKeyedStateBackend(
                max_parallelism=info.max_parallelism, key_type=key_type_of(self.key_selector)
            )
        elif runtime_context.keyed_backend is None:
            runtime_context.keyed_backend = create_keyed_state_backend(
                info.state_backend,
                max_parallelism=info.max_parallelism,
                parameters=backend_parameters(info, self.operator_id, key_type_of(self.key_selector)),
            )
        self.keyed_backend = runtime_context.keyed_backend
        super().setup(runtime_context, output)

    def end_key(self) -> None:
        """Sorted input (BATCH): the current key's records are all in. Its timers fire (watermark +∞), what they
        emitted goes out, then its state is dropped: the next key starts from none."""
        manager = self.time_service_manager
        if manager is not None:
            manager.end_key()
        self._emit_key_end()
        backend = self.keyed_backend
        if isinstance(backend, BatchExecutionKeyedStateBackend):
            backend.end_key()

    def _emit_key_end(self) -> None:
        """What the operator emits when a key ends (sorted input): nothing but what its timers collected."""

    def _explain(self, exc: Exception, record: Any) -> Exception:
        """An unhashable key surfaces here when routing needed no hash (one consumer): say so plainly."""
        return explain_key_error(exc, record, self._key)


class KeyedStreamMap(_KeyedUdfOperator, StreamMap):
    """``map`` after ``key_by``: the function runs in its record's key context, so it may use keyed state."""


class KeyedStreamFlatMap(_KeyedUdfOperator, StreamFlatMap):
    """``flat_map`` after ``key_by`` (keyed state of the record's key)."""


class KeyedStreamFilter(_KeyedUdfOperator, StreamFilter):
    """``filter`` after ``key_by`` (keyed state of the record's key)."""


class StreamGroupedReduce(_KeyedUdfOperator):
    """Running reduce per key: emits the new aggregate for every input record. With ``batch_results`` (BATCH
    execution) it emits only each key's final aggregate, at the end of input, keys in Flink's batch order."""

    #: BATCH keeps hash aggregation (one value per key in a dict) rather than sorted input: in CPython grouping the
    #: records by key costs more than the dict update it saves (docs/design.md, "Sorted inputs")
    supports_sorted_input = False

    def __init__(self, fn: object, key_selector: object) -> None:
        super().__init__(fn, key_selector)
        self._reduce: Callable[[Any, Any], Any] = as_callable(fn, ReduceFunction, "reduce", "reduce()")
        self._table: MutableMapping[Any, Any] = {}
        self.batch_results = False

    def open(self) -> None:
        super().open()
        assert self.keyed_backend is not None
        self._table = self.keyed_backend.get_table(f"_reduce:{self.operator_id}")

    def process_batch(self, batch: list[Any]) -> None:
        if self.batch_results:
            self._aggregate(batch)
            return
        key_of = self._key
        reduce = self._reduce
        table = self._table
        get = table.get
        out: list[Any] = []
        append = out.append
        missing = _MISSING
        v = None
        try:
            for v in batch:
                k = key_of(v)
                old = get(k, missing)
                new = v if old is missing else reduce(old, v)
                table[k] = new
                append(new)
        except Exception as exc:
            raise self.keyed_user_error(exc, batch, v, self._key) from exc
        self._records_in += len(batch)
        self.output.emit(with_timestamps(out, timestamps_of(batch)))

    def _aggregate(self, batch: list[Any]) -> None:
        """BATCH: the running loop without its output (hash aggregation; the final values leave in ``finish``)."""
        hash_reduce(self, self._table, batch, self._key, self._reduce)

    def finish(self) -> None:
        if self.batch_results:
            keys = sorted(self._table, key=batch_key_order)
            budget = self.output_budget.records
            for start in range(0, len(keys), budget):
                self.output.emit([self._table[k] for k in keys[start : start + budget]])
        super().finish()


_MISSING = object()


def hash_reduce(
    operator: AbstractUdfStreamOperator,
    table: MutableMapping[Any, Any],
    batch: list[Any],
    key_of: Callable[[Any], Any],
    reduce: Callable[[Any, Any], Any],
) -> None:
    """Hash aggregation: ``table[key]`` becomes the reduce of the key's records so far, ``batch``'s included (the
    BATCH reduce and the producer-side combiner); a failing record is reported as ``operator``'s, with its key."""
    get = table.get
    missing = _MISSING
    v = None
    try:
        for v in batch:
            k = key_of(v)
            old = get(k, missing)
            table[k] = v if old is missing else reduce(old, v)
    except Exception as exc:
        raise operator.keyed_user_error(exc, batch, v, key_of) from exc
    operator._records_in += len(batch)


class UserTimerService(TimerService):
    """The user's view of the operator's ``user-timers``: timers of the current key (void namespace)."""

    __slots__ = ("_service",)

    def __init__(self, service: InternalTimerService) -> None:
        self._service = service

    def current_processing_time(self) -> int:
        return self._service.current_processing_time()

    def current_watermark(self) -> int:
        return self._service.current_watermark

    def register_processing_time_timer(self, timestamp: int) -> None:
        self._service.register_processing_time_timer(None, check_timer_time(timestamp))

    def register_event_time_timer(self, timestamp: int) -> None:
        self._service.register_event_time_timer(None, check_timer_time(timestamp))

    def delete_processing_time_timer(self, timestamp: int) -> None:
        self._service.delete_processing_time_timer(None, check_timer_time(timestamp))

    def delete_event_time_timer(self, timestamp: int) -> None:
        self._service.delete_event_time_timer(None, check_timer_time(timestamp))


def check_timer_time(timestamp: Any) -> int:
    if isinstance(timestamp, bool) or not isinstance(timestamp, int):
        raise InvalidProgramError(
            f"expected a timer time as an int of milliseconds; got {timestamp!r} ({type(timestamp).__name__}); "
            "hint: ctx.timer_service().register_event_time_timer(ctx.timestamp() + 1000)"
        )
    return timestamp


class KeyedProcessContext(KeyedProcessFunction.OnTimerContext):
    __slots__ = ("collector", "current_timestamp", "domain", "key", "service")

    def __init__(self, collector: TimestampedCollector, service: TimerService) -> None:
        self.key: Any = None
        self.current_timestamp: int | None = None
        self.collector = collector
        self.service = service
        self.domain = TimeDomain.EVENT_TIME

    def timestamp(self) -> int | None:
        return self.current_timestamp

    def get_current_key(self) -> Any:
        return self.key

    def timer_service(self) -> TimerService:
        return self.service

    def output(self, output_tag: OutputTag, value: Any) -> None:
        self.collector.add_side(output_tag.tag_id, value, self.current_timestamp)

    def time_domain(self) -> TimeDomain:
        return self.domain


class UserTimersOperator(StreamOperator):
    """What the keyed process operators share about user timers (the ``user-timers`` service): a firing timer
    sets its key on the context and calls the function's ``on_timer``; what it emits goes out before the
    watermark that fired it. Subclasses set ``_on_timer``, ``_ctx`` and ``_collector``."""

    _on_timer: Callable[..., Any] | None = None
    _ctx: Any = None
    _collector: TimestampedCollector

    def process_watermark(self, timestamp: int) -> None:
        self.current_watermark = timestamp
        if self.time_service_manager is not None:
            self.time_service_manager.advance_watermark(timestamp)
        self._collector.flush(self.output)  # what the timers emitted precedes the watermark
        self.output.emit_watermark(timestamp)

    def on_event_time(self, timer: InternalTimer) -> None:
        self._fire(timer, TimeDomain.EVENT_TIME)

    def on_processing_time(self, timer: InternalTimer) -> None:
        self._fire(timer, TimeDomain.PROCESSING_TIME)
        self._collector.flush(self.output)

    def _fire(self, timer: InternalTimer, domain: TimeDomain) -> None:
        on_timer = self._on_timer
        ctx = self._ctx
        if on_timer is None or ctx is None:
            return
        ctx.key = timer.key
        ctx.domain = domain
        # Flink: the output of an event-time timer is stamped with its time, of a processing-time one with none
        t = ctx.current_timestamp = timer.timestamp if domain is TimeDomain.EVENT_TIME else None
        try:
            r = on_timer(timer.timestamp, ctx)
            if r is not None:
                self._collector.add_all(r, t)
        except Exception as exc:
            raise self.user_error(
                exc, None, role=f"on_timer of operator '{self.name}' (key {timer.key!r:.60})"
            ) from exc


class KeyedProcessOperator(UserTimersOperator, _KeyedUdfOperator):
    def __init__(self, fn: object, key_selector: object) -> None:
        super().__init__(fn, key_selector)
        self._fn: Callable[..., Any] = as_callable(fn, KeyedProcessFunction, "process_element", "KeyedStream.process()")
        on_timer = getattr(fn, "on_timer", None)
        self._on_timer: Callable[..., Any] | None = on_timer if callable(on_timer) else None
        self._collector: TimestampedCollector = TimestampedCollector()
        self._ctx: KeyedProcessContext | None = None
        self._loop: Loop = unopened

    def open(self) -> None:
        service = self.get_internal_timer_service("user-timers", self)
        self._ctx = KeyedProcessContext(self._collector, UserTimerService(service))
        super().open()
        self._loop = process_loop(self._fn, self._ctx, self._collector, self._key, self.keyed_backend)

    def process_batch(self, batch: list[Any]) -> None:
        self.process_elements(batch, self._loop, self._key)

    def _emit_key_end(self) -> None:
        self._collector.flush(self.output)  # what the key's timers emitted
