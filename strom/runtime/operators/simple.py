"""One-input operators for stateless functions: ``StreamMap``, ``StreamFlatMap``, ``StreamFilter``,
``ProcessOperator``. Each loops over its batch in one Python frame, so the per-record cost is the user
call and an append. A batch with event timestamps takes a second loop that carries each input record's
timestamp over to the records emitted for it (Flink's operators keep the input's ``StreamRecord`` timestamp).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from strom.api.checkpoint import (
    CheckpointedFunction,
    CheckpointListener,
    FunctionInitializationContext,
    FunctionSnapshotContext,
)
from strom.api.functions import (
    FilterFunction,
    FlatMapFunction,
    MapFunction,
    ProcessFunction,
    TimerService,
    as_callable,
    close_function,
    open_function,
)
from strom.exceptions import InvalidProgramError
from strom.runtime.operators.base import StreamOperator
from strom.runtime.operators.collector import TimestampedCollector
from strom.runtime.streamrecord import TimestampedBatch
from strom.runtime.tasks.processing_time_service import ProcessingTimeService

if TYPE_CHECKING:
    from strom.api.output_tag import OutputTag
    from strom.runtime.checkpoint.snapshot import OperatorRestoreState, OperatorSnapshot

__all__ = [
    "AbstractUdfStreamOperator",
    "NonKeyedTimerService",
    "ProcessContext",
    "ProcessOperator",
    "StreamFilter",
    "StreamFlatMap",
    "StreamMap",
]


class AbstractUdfStreamOperator(StreamOperator):
    """An operator around one user function, opened and closed with the operator.

    A function implementing :class:`CheckpointedFunction` gets ``initialize_state`` before ``open`` and
    ``snapshot_state`` at every checkpoint; one implementing :class:`CheckpointListener` hears of every
    completed and aborted checkpoint (Flink's ``AbstractUdfStreamOperator`` / ``StreamingFunctionUtils``). A
    function wrapping the user's (``wrapped_function``, as the window join's) is looked through, as Flink's
    ``WrappingFunction``.
    """

    def __init__(self, user_function: object) -> None:
        super().__init__()
        self.user_function = user_function

    def initialize_state(self, restore: OperatorRestoreState | None) -> None:
        super().initialize_state(restore)
        fn = innermost(self.user_function, CheckpointedFunction)
        if isinstance(fn, CheckpointedFunction):
            ctx = FunctionInitializationContext(
                self.operator_state_backend, self.keyed_backend, self.restored_checkpoint_id
            )
            try:
                fn.initialize_state(ctx)
            except Exception as exc:
                raise self.user_error(exc, None, role=f"initialize_state of operator '{self.name}'") from exc

    def snapshot_state(self, checkpoint_id: int, timestamp_ms: int) -> OperatorSnapshot | None:
        fn = innermost(self.user_function, CheckpointedFunction)
        if isinstance(fn, CheckpointedFunction):
            try:
                fn.snapshot_state(FunctionSnapshotContext(checkpoint_id, timestamp_ms))
            except Exception as exc:
                raise self.user_error(exc, None, role=f"snapshot_state of operator '{self.name}'") from exc
        return super().snapshot_state(checkpoint_id, timestamp_ms)

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        fn = innermost(self.user_function, CheckpointListener)
        if isinstance(fn, CheckpointListener):
            try:
                fn.notify_checkpoint_complete(checkpoint_id)
            except Exception as exc:
                raise self.user_error(exc, None, role=f"notify_checkpoint_complete of '{self.name}'") from exc

    def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        fn = innermost(self.user_function, CheckpointListener)
        if isinstance(fn, CheckpointListener):
            try:
                fn.notify_checkpoint_aborted(checkpoint_id)
            except Exception as exc:
                raise self.user_error(exc, None, role=f"notify_checkpoint_aborted of '{self.name}'") from exc

    def open(self) -> None:
        assert self.runtime_context is not None
        try:
            open_function(self.user_function, self.runtime_context)
        except Exception as exc:
            raise self.user_error(exc, None) from exc

    def close(self) -> None:
        try:
            close_function(self.user_function)
        except Exception as exc:
            raise self.user_error(exc, None) from exc


def innermost(fn: object, kind: type) -> object:
    """``fn`` if it is a ``kind``; else the first ``kind`` among the functions it wraps (``wrapped_function``)."""
    for _ in range(16):  # wrappers nest a few levels at most
        if isinstance(fn, kind) or not hasattr(fn, "wrapped_function"):
            return fn
        fn = fn.wrapped_function
    return fn


class StreamMap(AbstractUdfStreamOperator):
    def __init__(self, fn: object) -> None:
        super().__init__(fn)
        self._fn: Callable[[Any], Any] = as_callable(fn, MapFunction, "map", "map()")

    def process_batch(self, batch: list[Any]) -> None:
        budget = self.output_budget
        if len(batch) > budget.records:
            self.process_in_slices(batch)
            return
        f = self._fn
        out: list[Any] = []
        append = out.append
        v = None
        try:
            for v in batch:
                append(f(v))
        except Exception as exc:
            raise self.user_error(exc, batch, v) from exc
        self._records_in += len(batch)
        budget.observe(out, len(batch))
        if type(batch) is TimestampedBatch:
            out = TimestampedBatch(out, batch.timestamps)  # 1:1, so the timestamps are the input's
        self.output.emit(out)


class StreamFilter(AbstractUdfStreamOperator):
    def __init__(self, fn: object) -> None:
        super().__init__(fn)
        self._fn: Callable[[Any], Any] = as_callable(fn, FilterFunction, "filter", "filter()")

    def process_batch(self, batch: list[Any]) -> None:
        f = self._fn
        out: list[Any] = []
        append = out.append
        v = None
        try:
            if type(batch) is TimestampedBatch:
                out_ts: list[Any] = []
                for v, t in zip(batch, batch.timestamps, strict=True):
                    if f(v):
                        append(v)
                        out_ts.append(t)
                out = TimestampedBatch(out, out_ts)
            else:
                for v in batch:
                    if f(v):
                        append(v)
        except Exception as exc:
            raise self.user_error(exc, batch, v) from exc
        self._records_in += len(batch)
        if out:
            self.output.emit(out)


class StreamFlatMap(AbstractUdfStreamOperator):
    def __init__(self, fn: object) -> None:
        super().__init__(fn)
        self._fn: Callable[[Any], Any] = as_callable(fn, FlatMapFunction, "flat_map", "flat_map()")

    def process_batch(self, batch: list[Any]) -> None:
        budget = self.output_budget
        if len(batch) > budget.records:
            self.process_in_slices(batch)
            return
        f = self._fn
        out: list[Any] = []
        extend = out.extend
        v = None
        try:
            if type(batch) is TimestampedBatch:
                out_ts: list[Any] = []
                for v, t in zip(batch, batch.timestamps, strict=True):
                    r = f(v)
                    if r is not None:
                        n = len(out)
                        extend(r)
                        out_ts.extend([t] * (len(out) - n))
                out = TimestampedBatch(out, out_ts)
            else:
                for v in batch:
                    r = f(v)
                    if r is not None:
                        extend(r)
        except Exception as exc:
            raise self.user_error(exc, batch, v) from exc
        self._records_in += len(batch)
        budget.observe(out, len(batch))
        if out:
            self.output.emit(out)


class NonKeyedTimerService(TimerService):
    """Times without timers: a non-keyed stream has no key to scope a timer to (as Flink's ProcessOperator)."""

    __slots__ = ("_operator", "_pts")

    def __init__(self, operator: StreamOperator, pts: ProcessingTimeService) -> None:
        self._operator = operator
        self._pts = pts

    def current_processing_time(self) -> int:
        return self._pts.get_current_processing_time()

    def current_watermark(self) -> int:
        return self._operator.current_watermark

    def _no_timers(self) -> InvalidProgramError:
        return InvalidProgramError(
            f"expected timers on a keyed stream; got a timer registration in the non-keyed operator "
            f"'{self._operator.name}'; hint: key_by(...) the stream and use a KeyedProcessFunction"
        )

    def register_processing_time_timer(self, timestamp: int) -> None:
        raise self._no_timers()

    def register_event_time_timer(self, timestamp: int) -> None:
        raise self._no_timers()

    def delete_processing_time_timer(self, timestamp: int) -> None:
        raise self._no_timers()

    def delete_event_time_timer(self, timestamp: int) -> None:
        raise self._no_timers()


class ProcessContext(ProcessFunction.Context):
    __slots__ = ("collector", "current_timestamp", "service")

    def __init__(self, collector: TimestampedCollector, service: TimerService) -> None:
        self.collector = collector
        self.service = service
        self.current_timestamp: int | None = None

    def timestamp(self) -> int | None:
        return self.current_timestamp

    def timer_service(self) -> TimerService:
        return self.service

    def output(self, output_tag: OutputTag, value: Any) -> None:
        self.collector.add_side(output_tag.tag_id, value, self.current_timestamp)


class ProcessOperator(AbstractUdfStreamOperator):
    def __init__(self, fn: object) -> None:
        super().__init__(fn)
        self._fn: Callable[..., Any] = as_callable(fn, ProcessFunction, "process_element", "process()")
        self._collector: TimestampedCollector = TimestampedCollector()
        self._ctx: ProcessContext | None = None

    def open(self) -> None:
        assert self.runtime_context is not None
        service = NonKeyedTimerService(self, self.runtime_context.processing_time_service)
        self._ctx = ProcessContext(self._collector, service)
        super().open()

    def process_batch(self, batch: list[Any]) -> None:
        budget = self.output_budget
        if len(batch) > budget.records:
            self.process_in_slices(batch)
            return
        f = self._fn
        ctx = self._ctx
        assert ctx is not None
        collector = self._collector
        add_all = collector.add_all
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
        budget.observe(collector.values, len(batch))
        collector.flush(self.output)
