"""User function base classes, PyFlink-style.

Every function may be a plain callable (``lambda x: x * 2``) or a subclass of the matching base
class; subclasses of :class:`RichFunction` get ``open(runtime_context)`` before the first record and
``close()`` after the last.

    >>> class Double(MapFunction):
    ...     def map(self, value):
    ...         return value * 2
    >>> Double().map(21)
    42
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from strom.api.output_tag import OutputTag
    from strom.api.state import (
        AggregatingState,
        AggregatingStateDescriptor,
        ListState,
        ListStateDescriptor,
        MapState,
        MapStateDescriptor,
        ReducingState,
        ReducingStateDescriptor,
        StateDescriptor,
    )
    from strom.metrics.metricbase import MetricGroup

__all__ = [
    "CoGroupFunction",
    "FilterFunction",
    "FlatJoinFunction",
    "FlatMapFunction",
    "Function",
    "JoinFunction",
    "KeySelector",
    "KeyedProcessFunction",
    "MapFunction",
    "Partitioner",
    "ProcessFunction",
    "ReduceFunction",
    "RichFunction",
    "RuntimeContext",
    "SinkFunction",
    "TimeDomain",
    "TimerService",
]

IN = TypeVar("IN")
IN1 = TypeVar("IN1")
IN2 = TypeVar("IN2")
OUT = TypeVar("OUT")
K = TypeVar("K")


class RuntimeContext(ABC):
    """What a running subtask knows about itself (Flink's ``RuntimeContext``)."""

    @abstractmethod
    def get_task_name(self) -> str: ...

    @abstractmethod
    def get_task_name_with_subtasks(self) -> str: ...

    @abstractmethod
    def get_index_of_this_subtask(self) -> int: ...

    @abstractmethod
    def get_number_of_parallel_subtasks(self) -> int: ...

    @abstractmethod
    def get_max_number_of_parallel_subtasks(self) -> int: ...

    @abstractmethod
    def get_attempt_number(self) -> int: ...

    @abstractmethod
    def get_job_id(self) -> str: ...

    @abstractmethod
    def get_job_parameter(self, key: str, default_value: str) -> str:
        """The global job parameter ``key`` (``env.get_config().set_global_job_parameters``), or the default."""

    @abstractmethod
    def get_metrics_group(self) -> MetricGroup:
        """The metric group of this operator's subtask (PyFlink's ``get_metrics_group``): ``counter``, ``gauge``,
        ``meter``, ``distribution``, ``add_group`` (see :mod:`strom.metrics`)."""

    @abstractmethod
    def get_state(self, descriptor: StateDescriptor) -> Any:
        """Keyed state of the current key (only on a keyed stream); its kind follows the descriptor's."""

    def get_list_state(self, descriptor: ListStateDescriptor) -> ListState[Any]:
        """Keyed :class:`ListState` of the current key."""
        state: ListState[Any] = self.get_state(descriptor)
        return state

    def get_map_state(self, descriptor: MapStateDescriptor) -> MapState[Any, Any]:
        """Keyed :class:`MapState` of the current key."""
        state: MapState[Any, Any] = self.get_state(descriptor)
        return state

    def get_reducing_state(self, descriptor: ReducingStateDescriptor) -> ReducingState[Any]:
        """Keyed :class:`ReducingState` of the current key."""
        state: ReducingState[Any] = self.get_state(descriptor)
        return state

    def get_aggregating_state(self, descriptor: AggregatingStateDescriptor) -> AggregatingState[Any, Any]:
        """Keyed :class:`AggregatingState` of the current key."""
        state: AggregatingState[Any, Any] = self.get_state(descriptor)
        return state


class Function:
    """Marker base of every user function."""


class RichFunction(Function):
    """A function with a lifecycle: ``open`` before the first record, ``close`` after the last."""

    def open(self, runtime_context: RuntimeContext) -> None:
        """Called once per subtask before any record; default does nothing."""

    def close(self) -> None:
        """Called once per subtask after the last record or on cancellation; default does nothing."""


class MapFunction(RichFunction, Generic[IN, OUT]):
    @abstractmethod
    def map(self, value: IN) -> OUT: ...


class FlatMapFunction(RichFunction, Generic[IN, OUT]):
    @abstractmethod
    def flat_map(self, value: IN) -> Iterable[OUT]:
        """Return (or yield) zero or more results."""


class FilterFunction(RichFunction, Generic[IN]):
    @abstractmethod
    def filter(self, value: IN) -> bool: ...


class ReduceFunction(RichFunction, Generic[IN]):
    @abstractmethod
    def reduce(self, value1: IN, value2: IN) -> IN: ...


class Partitioner(Function, Generic[K]):
    """Picks the downstream subtask of a key for ``partition_custom`` (Flink's ``Partitioner``); a plain callable
    ``(key, num_partitions) -> int`` works as well."""

    @abstractmethod
    def partition(self, key: K, num_partitions: int) -> int: ...


class KeySelector(Function, Generic[IN, K]):
    @abstractmethod
    def get_key(self, value: IN) -> K: ...


class TimeDomain(enum.Enum):
    """Which clock fired a timer (Flink's ``TimeDomain``)."""

    EVENT_TIME = 0
    PROCESSING_TIME = 1


class TimerService(ABC):
    """Current times, and timers of the current key on a keyed stream (Flink's ``TimerService``).

    A timer is set per key and timestamp: registering the same time twice for a key fires once. Event-time
    timers fire when the watermark reaches their time, processing-time timers when the wall clock does; both
    are checkpointed with the keyed state."""

    @abstractmethod
    def current_processing_time(self) -> int:
        """The wall clock in milliseconds since the epoch."""

    @abstractmethod
    def current_watermark(self) -> int:
        """The operator's current event time (``-2**63`` before the first watermark)."""

    @abstractmethod
    def register_processing_time_timer(self, timestamp: int) -> None: ...

    @abstractmethod
    def register_event_time_timer(self, timestamp: int) -> None: ...

    @abstractmethod
    def delete_processing_time_timer(self, timestamp: int) -> None: ...

    @abstractmethod
    def delete_event_time_timer(self, timestamp: int) -> None: ...


class ProcessFunction(RichFunction, Generic[IN, OUT]):
    """Processes each element; ``process_element`` returns or yields its outputs."""

    class Context(ABC):
        @abstractmethod
        def timestamp(self) -> int | None:
            """Event timestamp of the current element, if it has one."""

        @abstractmethod
        def timer_service(self) -> TimerService:
            """Current processing time and watermark (timers need a keyed stream)."""

        @abstractmethod
        def output(self, output_tag: OutputTag, value: Any) -> None:
            """Emit ``value`` to the side output ``output_tag`` (read it with ``get_side_output(tag)``)."""

    @abstractmethod
    def process_element(self, value: IN, ctx: ProcessFunction.Context) -> Iterable[OUT] | None: ...


class KeyedProcessFunction(RichFunction, Generic[K, IN, OUT]):
    """Processes each element of a keyed stream with access to its key, keyed state and timers.

    ``on_timer(timestamp, ctx)`` runs when a timer set through ``ctx.timer_service()`` fires; it may return or
    yield outputs (stamped with the timer's time) and read ``ctx.time_domain()``."""

    class Context(ABC):
        @abstractmethod
        def timestamp(self) -> int | None:
            """Event timestamp of the current element (or the firing timer's time), if it has one."""

        @abstractmethod
        def get_current_key(self) -> Any: ...

        @abstractmethod
        def timer_service(self) -> TimerService: ...

        @abstractmethod
        def output(self, output_tag: OutputTag, value: Any) -> None:
            """Emit ``value`` to the side output ``output_tag``."""

    class OnTimerContext(Context):
        @abstractmethod
        def time_domain(self) -> TimeDomain: ...

    @abstractmethod
    def process_element(self, value: IN, ctx: KeyedProcessFunction.Context) -> Iterable[OUT] | None: ...

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Iterable[OUT] | None:
        """A timer set for ``timestamp`` fired; the default does nothing."""
        return None


class SinkFunction(RichFunction, Generic[IN]):
    """Consumes each element (Flink's legacy ``SinkFunction``; see also ``strom.api.sink.Sink``)."""

    @abstractmethod
    def invoke(self, value: IN, context: Any) -> None: ...


# --- normalisation of plain callables -------------------------------------------------------------


def _describe(obj: object) -> str:
    return getattr(obj, "__qualname__", None) or type(obj).__name__


def as_callable(fn: object, base: type, method: str, what: str) -> Callable[..., Any]:
    """Return the bound method of a ``base`` instance or the callable itself; else a clear TypeError."""
    if isinstance(fn, base):
        return getattr(fn, method)  # type: ignore[no-any-return]
    if isinstance(fn, type) and issubclass(fn, base):
        raise TypeError(
            f"{what} expects a {base.__name__} instance or a callable; got the class {fn.__name__}; "
            f"hint: instantiate it: {fn.__name__}()"
        )
    if callable(fn):
        return fn
    raise TypeError(
        f"{what} expects a {base.__name__} or a callable; got a {type(fn).__name__!r} ({fn!r:.60}); "
        f"hint: pass a function such as 'lambda x: ...'"
    )


def open_function(fn: object, ctx: RuntimeContext) -> None:
    if isinstance(fn, RichFunction):
        fn.open(ctx)


def close_function(fn: object) -> None:
    if isinstance(fn, RichFunction):
        fn.close()


# --- two-input functions of the window join and co-group (Flink's ``JoinFunction``, ``CoGroupFunction``) --------
class JoinFunction(RichFunction, Generic[IN1, IN2, OUT]):
    """``join(first, second)``: one output for each pair of a window join (an element of the first input and
    one of the second with equal keys in the same window)."""

    @abstractmethod
    def join(self, first: IN1, second: IN2) -> OUT: ...


class FlatJoinFunction(RichFunction, Generic[IN1, IN2, OUT]):
    """``join(first, second)``: zero or more outputs for each pair of a window join; return or yield them."""

    @abstractmethod
    def join(self, first: IN1, second: IN2) -> Iterable[OUT] | None: ...


class CoGroupFunction(RichFunction, Generic[IN1, IN2, OUT]):
    """``co_group(first, second)``: all elements of one key and window, per input (either may be empty); return
    or yield the outputs. Unlike a join it sees a side that has no partner (outer joins, per-side counts)."""

    @abstractmethod
    def co_group(self, first: Iterable[IN1], second: Iterable[IN2]) -> Iterable[OUT] | None: ...
