"""One-input operators for stateless functions: ``StreamMap``, ``StreamFlatMap``, ``StreamFilter``,
``ProcessOperator``. Each runs its batches through the one UDF operator loop
(:meth:`~strom.runtime.operators.abstract_udf_stream_operator.AbstractUdfStreamOperator.process_elements`) with
the per-record loop of its shape (:mod:`strom.runtime.operators.udf_loop`), so the per-record cost is the user
call and an append, and each input record's timestamp is carried over to the records emitted for it (Flink's
operators keep the input's ``StreamRecord`` timestamp). Their keyed forms (:mod:`~strom.runtime.operators.keyed`)
are the same classes with a key selector: the loop then sets each record's key context.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from strom.api.functions import (
    FilterFunction,
    FlatMapFunction,
    MapFunction,
    ProcessFunction,
    TimerService,
    as_callable,
)
from strom.exceptions import InvalidProgramError
from strom.runtime.operators.abstract_udf_stream_operator import AbstractUdfStreamOperator
from strom.runtime.operators.base import StreamOperator
from strom.runtime.operators.collector import TimestampedCollector
from strom.runtime.operators.udf_loop import KeyOf, Loop, filter_loop, flat_map_loop, map_loop, process_loop, unopened
from strom.runtime.tasks.processing_time_service import ProcessingTimeService

if TYPE_CHECKING:
    from strom.api.output_tag import OutputTag

__all__ = [
    "NonKeyedTimerService",
    "ProcessContext",
    "ProcessOperator",
    "StreamFilter",
    "StreamFlatMap",
    "StreamMap",
]


class _RecordFunctionOperator(AbstractUdfStreamOperator):
    """Map, filter and flat_map: a function of one record (``_function``: its class, method and API call), run by
    the per-record loop :meth:`_make_loop` builds — in each record's key context on a keyed stream."""

    _function: tuple[type, str, str]

    def __init__(self, fn: object) -> None:
        super().__init__(fn)
        self._fn: Callable[[Any], Any] = as_callable(fn, *self._function)
        self._loop: Loop = unopened

    @abstractmethod
    def _make_loop(self, key_of: KeyOf | None, backend: Any) -> Loop: ...

    def open(self) -> None:
        super().open()
        self._loop = self._make_loop(self._key, self.keyed_backend)

    def process_batch(self, batch: list[Any]) -> None:
        self.process_elements(batch, self._loop, self._key)


class StreamMap(_RecordFunctionOperator):
    _function = (MapFunction, "map", "map()")

    def _make_loop(self, key_of: KeyOf | None, backend: Any) -> Loop:
        return map_loop(self._fn, key_of, backend)


class StreamFilter(_RecordFunctionOperator):
    _function = (FilterFunction, "filter", "filter()")
    output_grows = False

    def _make_loop(self, key_of: KeyOf | None, backend: Any) -> Loop:
        return filter_loop(self._fn, key_of, backend)


class StreamFlatMap(_RecordFunctionOperator):
    _function = (FlatMapFunction, "flat_map", "flat_map()")

    def _make_loop(self, key_of: KeyOf | None, backend: Any) -> Loop:
        return flat_map_loop(self._fn, key_of, backend)


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
        self._loop: Loop = unopened

    def open(self) -> None:
        assert self.runtime_context is not None
        service = NonKeyedTimerService(self, self.runtime_context.processing_time_service)
        self._ctx = ProcessContext(self._collector, service)
        super().open()
        self._loop = process_loop(self._fn, self._ctx, self._collector)

    def process_batch(self, batch: list[Any]) -> None:
        self.process_elements(batch, self._loop)
