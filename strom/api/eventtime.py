"""Event time: watermarks, watermark generators, timestamp assigners and the :class:`WatermarkStrategy`.

The Python form of Flink's ``org.apache.flink.api.common.eventtime`` package, with Flink's class names and
snake_cased methods. A :class:`WatermarkStrategy` is a factory for two things a source (or
``assign_timestamps_and_watermarks``) instantiates per parallel subtask: a :class:`TimestampAssigner` that
gives every record its event time, and a :class:`WatermarkGenerator` that turns the timestamps it sees into
watermarks::

    strategy = (
        WatermarkStrategy.for_bounded_out_of_orderness(timedelta(seconds=5))
        .with_timestamp_assigner(lambda event, record_timestamp: event["ts"])
        .with_idleness(timedelta(minutes=1))
    )

Generators emit *punctuated* watermarks from :meth:`WatermarkGenerator.on_event` and *periodic* ones from
:meth:`WatermarkGenerator.on_periodic_emit`, which the runtime calls every ``pipeline.auto-watermark-interval``.
Timestamps and watermarks are ``int`` milliseconds with Java's ``long`` range: a stream's event time starts
at ``-2**63`` (``Long.MIN_VALUE``) and ends with :attr:`Watermark.MAX_WATERMARK` (``2**63 - 1``).
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, ClassVar, Generic, Protocol, TypeAlias, TypeVar

from strom.api._time import LONG_MAX, LONG_MIN
from strom.exceptions import InvalidProgramError

__all__ = [
    "LONG_MAX",
    "LONG_MIN",
    "AscendingTimestampsWatermarks",
    "BoundedOutOfOrdernessWatermarks",
    "Clock",
    "IdlenessTimer",
    "MonotonicClock",
    "NoWatermarksGenerator",
    "RecordTimestampAssigner",
    "SerializableTimestampAssigner",
    "TimestampAssigner",
    "TimestampAssignerSupplierContext",
    "Watermark",
    "WatermarkAlignmentParams",
    "WatermarkGenerator",
    "WatermarkGeneratorSupplierContext",
    "WatermarkOutput",
    "WatermarkStrategy",
    "WatermarksWithIdleness",
    "emits_only_periodically",
    "feed_events",
]

T = TypeVar("T")


# ---------------------------------------------------------------------------------------------------------------
#  Watermark, output, clock
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Watermark:
    """Flink's ``eventtime.Watermark``: no record with a timestamp ``<= timestamp`` is expected any more.

    ``Watermark.MAX_WATERMARK`` (``Long.MAX_VALUE``) is the end of event time, sent when a source is
    exhausted; ``Watermark.UNINITIALIZED`` (``Long.MIN_VALUE``) is where every stream's event time starts.
    """

    timestamp: int

    MAX_WATERMARK: ClassVar[Watermark]
    UNINITIALIZED: ClassVar[Watermark]


Watermark.MAX_WATERMARK = Watermark(LONG_MAX)
Watermark.UNINITIALIZED = Watermark(LONG_MIN)


class WatermarkOutput(Protocol):
    """Flink's ``WatermarkOutput``: where a :class:`WatermarkGenerator` sends watermarks and idleness.

    Emitting a watermark also marks the output active again, ending an idleness announced by :meth:`mark_idle`.
    """

    def emit_watermark(self, watermark: Watermark) -> None: ...

    def mark_idle(self) -> None: ...

    def mark_active(self) -> None: ...


class Clock(Protocol):
    """Flink's ``RelativeClock``: a monotonic time in milliseconds, meaningful only as a difference."""

    def relative_time_ms(self) -> int: ...


class MonotonicClock:
    """Flink's ``SystemClock`` as a :class:`Clock`: :func:`time.monotonic_ns` in milliseconds."""

    def relative_time_ms(self) -> int:
        return time.monotonic_ns() // 1_000_000

    def __repr__(self) -> str:
        return "MonotonicClock()"


@dataclass(frozen=True, slots=True, kw_only=True)
class WatermarkGeneratorSupplierContext:
    """Flink's ``WatermarkGeneratorSupplier.Context`` (and ``TimestampAssignerSupplier.Context``).

    ``input_activity_clock`` measures idleness (:class:`WatermarksWithIdleness`); a runtime may hand a clock
    that stands still while the input is back-pressured, as Flink's does.
    """

    metric_group: Any = None
    input_activity_clock: Clock = field(default_factory=MonotonicClock)


TimestampAssignerSupplierContext: TypeAlias = WatermarkGeneratorSupplierContext
"""Flink's ``TimestampAssignerSupplier.Context``: the same context (only ``metric_group`` is meant for it)."""


# ---------------------------------------------------------------------------------------------------------------
#  Timestamp assigners
# ---------------------------------------------------------------------------------------------------------------


class TimestampAssigner(ABC, Generic[T]):
    """Flink's ``TimestampAssigner``: the event time of an element, in milliseconds since the epoch.

    ``record_timestamp`` is the timestamp the record already carries (from the source or an earlier
    assigner), or :data:`TimestampAssigner.NO_TIMESTAMP` (``Long.MIN_VALUE``) if it has none.
    """

    NO_TIMESTAMP: ClassVar[int] = LONG_MIN

    @abstractmethod
    def extract_timestamp(self, element: T, record_timestamp: int) -> int: ...


SerializableTimestampAssigner: TypeAlias = Callable[[T, int], int]
"""Flink's ``SerializableTimestampAssigner``: a plain function ``(element, record_timestamp) -> int``."""


class RecordTimestampAssigner(TimestampAssigner[Any]):
    """Flink's ``RecordTimestampAssigner``: keeps the timestamp the record already carries (the default)."""

    def extract_timestamp(self, element: Any, record_timestamp: int) -> int:
        return record_timestamp

    def __repr__(self) -> str:
        return "RecordTimestampAssigner()"


@dataclass(frozen=True, slots=True)
class _FunctionTimestampAssigner(TimestampAssigner[T]):
    """A :data:`SerializableTimestampAssigner` function as a :class:`TimestampAssigner`."""

    function: SerializableTimestampAssigner[T]

    def extract_timestamp(self, element: T, record_timestamp: int) -> int:
        return self.function(element, record_timestamp)


# ---------------------------------------------------------------------------------------------------------------
#  Watermark generators
# ---------------------------------------------------------------------------------------------------------------


class WatermarkGenerator(ABC, Generic[T]):
    """Flink's ``WatermarkGenerator``: turns the timestamps of the events it sees into watermarks.

    :meth:`on_event` runs for every record (after its timestamp was assigned) and may emit a *punctuated*
    watermark; :meth:`on_periodic_emit` runs every ``pipeline.auto-watermark-interval`` and may emit a
    *periodic* one. Watermarks must not decrease; the runtime drops one that does.
    """

    @abstractmethod
    def on_event(self, event: T, event_timestamp: int, output: WatermarkOutput) -> None: ...

    @abstractmethod
    def on_periodic_emit(self, output: WatermarkOutput) -> None: ...

    def on_events(self, events: Sequence[T], timestamps: Sequence[int], output: WatermarkOutput) -> None:
        """strom's batch form of :meth:`on_event`: one call for a batch of events with their timestamps.

        The default calls :meth:`on_event` for each event in order; generators that only track the maximum
        timestamp override it to look at the batch once."""
        on_event = self.on_event
        for event, timestamp in zip(events, timestamps, strict=True):
            on_event(event, timestamp, output)


def feed_events(
    generator: WatermarkGenerator[T], events: Sequence[T], timestamps: Sequence[int], output: WatermarkOutput
) -> None:
    """Hand a batch to ``generator``: its ``on_events`` if it has one (a duck-typed generator may not)."""
    on_events = getattr(generator, "on_events", None)
    if on_events is not None:
        on_events(events, timestamps, output)
        return
    for event, timestamp in zip(events, timestamps, strict=True):
        generator.on_event(event, timestamp, output)


def emits_only_periodically(generator: object) -> bool:
    """Whether ``generator`` is one of the built-in generators that never emit from ``on_event`` (so the runtime
    may show it a whole batch after the batch left; any other generator sees each event as it leaves), or a
    generator whose class declares ``periodic_only = True`` (SQL's ``WATERMARK FOR`` generator)."""
    if isinstance(generator, WatermarksWithIdleness):
        return emits_only_periodically(generator._watermarks)
    if getattr(type(generator), "periodic_only", False) is True:
        return True
    return type(generator) in (BoundedOutOfOrdernessWatermarks, AscendingTimestampsWatermarks, NoWatermarksGenerator)


class BoundedOutOfOrdernessWatermarks(WatermarkGenerator[Any]):
    """Flink's ``BoundedOutOfOrdernessWatermarks``: events arrive at most ``max_out_of_orderness`` late.

    Periodically emits ``max_timestamp - max_out_of_orderness - 1``: once an event with timestamp ``T`` was
    seen, events with a timestamp ``<= T - max_out_of_orderness - 1`` are late. Before any event it emits
    ``Long.MIN_VALUE`` (``max_timestamp`` starts at ``Long.MIN_VALUE + max_out_of_orderness + 1``).
    """

    def __init__(self, max_out_of_orderness: int | timedelta) -> None:
        self._out_of_orderness_ms = _duration_ms(max_out_of_orderness, "max_out_of_orderness", allow_zero=True)
        # start so that our lowest watermark would be Long.MIN_VALUE
        self._max_timestamp = LONG_MIN + self._out_of_orderness_ms + 1

    @property
    def out_of_orderness_ms(self) -> int:
        return self._out_of_orderness_ms

    def on_event(self, event: Any, event_timestamp: int, output: WatermarkOutput) -> None:
        if event_timestamp > self._max_timestamp:
            self._max_timestamp = event_timestamp

    def on_events(self, events: Sequence[Any], timestamps: Sequence[int], output: WatermarkOutput) -> None:
        if timestamps:
            highest = max(timestamps)
            if highest > self._max_timestamp:
                self._max_timestamp = highest

    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        output.emit_watermark(Watermark(self._max_timestamp - self._out_of_orderness_ms - 1))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(max_out_of_orderness={self._out_of_orderness_ms}ms)"


class AscendingTimestampsWatermarks(BoundedOutOfOrdernessWatermarks):
    """Flink's ``AscendingTimestampsWatermarks``: timestamps never decrease; emits ``max_timestamp - 1``."""

    def __init__(self) -> None:
        super().__init__(0)

    def __repr__(self) -> str:
        return "AscendingTimestampsWatermarks()"


class NoWatermarksGenerator(WatermarkGenerator[Any]):
    """Flink's ``NoWatermarksGenerator``: never emits a watermark (for pure processing-time programs)."""

    def on_event(self, event: Any, event_timestamp: int, output: WatermarkOutput) -> None:
        """Emits nothing: event time never advances."""

    def on_events(self, events: Sequence[Any], timestamps: Sequence[int], output: WatermarkOutput) -> None:
        """Emits nothing: event time never advances."""

    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        """Emits nothing: event time never advances."""

    def __repr__(self) -> str:
        return "NoWatermarksGenerator()"


class IdlenessTimer:
    """Flink's ``WatermarksWithIdleness.IdlenessTimer``: has the input seen no activity for too long?

    Idleness is only evaluated by :meth:`check_if_idle`: the first check that finds no :meth:`activity` since
    the previous check starts the countdown; a later check reports idle once *strictly more* than the timeout
    has elapsed since then. As in Flink, a start time of ``0`` means "no countdown" (so a clock reading
    exactly ``0`` when the countdown starts makes the next check start it again).
    """

    __slots__ = ("_clock", "_counter", "_last_counter", "_max_idle_time_ms", "_start_of_inactivity_ms")

    def __init__(self, clock: Clock, idle_timeout_ms: int) -> None:
        self._clock = clock
        self._max_idle_time_ms = idle_timeout_ms
        self._counter = 0  # bumped by activity(); Flink lets it overflow, Python's int never does
        self._last_counter = 0  # the counter at the previous check
        self._start_of_inactivity_ms = 0  # 0 = no countdown running

    def activity(self) -> None:
        self._counter += 1

    def check_if_idle(self) -> bool:
        if self._counter != self._last_counter:
            # activity since the last check: reset the countdown
            self._last_counter = self._counter
            self._start_of_inactivity_ms = 0
            return False
        if self._start_of_inactivity_ms == 0:
            # first check without activity since the previous one: start the countdown
            self._start_of_inactivity_ms = self._clock.relative_time_ms()
            return False
        return self._clock.relative_time_ms() - self._start_of_inactivity_ms > self._max_idle_time_ms


class WatermarksWithIdleness(WatermarkGenerator[T]):
    """Flink's ``WatermarksWithIdleness``: wraps a generator and marks the output idle when no events come.

    On a periodic emit that finds the input idle (see :class:`IdlenessTimer`) it calls ``mark_idle()`` once
    and skips the wrapped generator's periodic emit; the next event ends the idleness (the wrapped generator's
    next watermark marks the output active again). The stream is marked idle no earlier than the timeout after
    the last event and at worst the timeout plus three periodic emit intervals after it.
    """

    def __init__(
        self, watermarks: WatermarkGenerator[T], idle_timeout: int | timedelta, clock: Clock | None = None
    ) -> None:
        timeout_ms = _duration_ms(idle_timeout, "idle_timeout", allow_zero=False)
        if not (
            callable(getattr(watermarks, "on_event", None)) and callable(getattr(watermarks, "on_periodic_emit", None))
        ):
            raise InvalidProgramError(
                f"WatermarksWithIdleness expected a WatermarkGenerator to wrap; got {_describe(watermarks)}; "
                "hint: pass e.g. BoundedOutOfOrdernessWatermarks(5000)"
            )
        self._watermarks = watermarks
        self._idleness_timer = IdlenessTimer(clock if clock is not None else MonotonicClock(), timeout_ms)
        self._is_idle_now = False

    def on_event(self, event: T, event_timestamp: int, output: WatermarkOutput) -> None:
        self._watermarks.on_event(event, event_timestamp, output)
        self._idleness_timer.activity()
        self._is_idle_now = False

    def on_events(self, events: Sequence[T], timestamps: Sequence[int], output: WatermarkOutput) -> None:
        if events:
            feed_events(self._watermarks, events, timestamps, output)
            self._idleness_timer.activity()
            self._is_idle_now = False

    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        if self._idleness_timer.check_if_idle():
            if not self._is_idle_now:
                output.mark_idle()
                self._is_idle_now = True
        else:
            self._watermarks.on_periodic_emit(output)

    def __repr__(self) -> str:
        return f"WatermarksWithIdleness({self._watermarks!r}, idle_timeout={self._idleness_timer._max_idle_time_ms}ms)"


# ---------------------------------------------------------------------------------------------------------------
#  WatermarkStrategy
# ---------------------------------------------------------------------------------------------------------------

#: Flink's default ``updateInterval`` of watermark alignment: 1 s
DEFAULT_ALIGNMENT_UPDATE_INTERVAL_MS = 1000


@dataclass(frozen=True, slots=True, kw_only=True)
class WatermarkAlignmentParams:
    """Flink's ``WatermarkAlignmentParams``: a watermark group, its maximal drift and the update interval (ms)."""

    watermark_group: str
    max_allowed_watermark_drift_ms: int
    update_interval_ms: int = DEFAULT_ALIGNMENT_UPDATE_INTERVAL_MS


WatermarkGeneratorFactory: TypeAlias = Callable[[WatermarkGeneratorSupplierContext], WatermarkGenerator[T]]
"""Flink's ``WatermarkGeneratorSupplier``: ``context -> WatermarkGenerator``, called once per subtask."""


class WatermarkStrategy(ABC, Generic[T]):
    """Flink's ``WatermarkStrategy``: how a source creates its :class:`WatermarkGenerator` and
    :class:`TimestampAssigner`.

    Build one with the class methods (:meth:`for_monotonous_timestamps`, :meth:`for_bounded_out_of_orderness`,
    :meth:`no_watermarks`, :meth:`for_generator`) and enrich it with :meth:`with_timestamp_assigner` and
    :meth:`with_idleness`; each returns a new strategy wrapping this one, which is never changed. Subclass it
    and implement :meth:`create_watermark_generator` for a strategy of your own.

    >>> strategy = WatermarkStrategy.for_bounded_out_of_orderness(10).with_timestamp_assigner(lambda e, ts: e)
    >>> strategy.create_timestamp_assigner().extract_timestamp(1337, TimestampAssigner.NO_TIMESTAMP)
    1337
    """

    @abstractmethod
    def create_watermark_generator(
        self, context: WatermarkGeneratorSupplierContext | None = None
    ) -> WatermarkGenerator[T]:
        """A new generator for one parallel instance of the source."""

    def create_timestamp_assigner(
        self, context: TimestampAssignerSupplierContext | None = None
    ) -> TimestampAssigner[T]:
        """A new assigner; by default a :class:`RecordTimestampAssigner` (keep the record's own timestamp)."""
        return RecordTimestampAssigner()

    # -- builder methods -----------------------------------------------------------------------------------------

    def with_timestamp_assigner(
        self, timestamp_assigner: TimestampAssigner[T] | SerializableTimestampAssigner[T]
    ) -> WatermarkStrategy[T]:
        """Flink's ``withTimestampAssigner``: this strategy, but records get their timestamp from
        ``timestamp_assigner`` — a :class:`TimestampAssigner` or a function ``(element, record_timestamp) -> int``.
        """
        if isinstance(timestamp_assigner, TimestampAssigner):
            assigner: TimestampAssigner[T] = timestamp_assigner
        elif callable(timestamp_assigner):
            assigner = _FunctionTimestampAssigner(timestamp_assigner)
        else:
            raise InvalidProgramError(
                "with_timestamp_assigner expected a TimestampAssigner or a function (element, record_timestamp) -> "
                f"int; got {_describe(timestamp_assigner)}; hint: lambda event, ts: event.timestamp"
            )
        return _WatermarkStrategyWithTimestampAssigner(self, assigner)

    def with_idleness(self, idle_timeout: int | timedelta) -> WatermarkStrategy[T]:
        """Flink's ``withIdleness``: a split with no records for ``idle_timeout`` (ms or a timedelta) is marked
        idle, so it no longer holds back the watermark downstream."""
        timeout_ms = _duration_ms(idle_timeout, "idle_timeout", allow_zero=False)
        return _WatermarkStrategyWithIdleness(self, timeout_ms)

    def with_watermark_alignment(
        self,
        watermark_group: str,
        max_allowed_watermark_drift: int | timedelta,
        update_interval: int | timedelta = DEFAULT_ALIGNMENT_UPDATE_INTERVAL_MS,
    ) -> WatermarkStrategy[T]:
        """Flink's ``withWatermarkAlignment`` (FLIP-182): the sources of ``watermark_group`` keep their watermarks
        within ``max_allowed_watermark_drift`` (ms or a timedelta) of the group's lowest — a source subtask whose
        watermark runs further ahead stops reading until the others catch up; every ``update_interval`` (default
        1 s) each subtask reports its watermark to its source's coordinator and learns the group's bound. A subtask
        pauses between polled batches, so a bound far below ``execution.batch-size`` records' worth of event time
        is kept only to a batch."""
        if not isinstance(watermark_group, str) or not watermark_group:
            raise InvalidProgramError(
                f"with_watermark_alignment expected a non-empty watermark group name; got {_describe(watermark_group)}"
            )
        params = WatermarkAlignmentParams(
            watermark_group=watermark_group,
            max_allowed_watermark_drift_ms=_duration_ms(
                max_allowed_watermark_drift, "max_allowed_watermark_drift", allow_zero=True
            ),
            update_interval_ms=_duration_ms(update_interval, "update_interval", allow_zero=False),
        )
        return _WatermarkStrategyWithAlignment(self, params)

    def alignment_parameters(self) -> WatermarkAlignmentParams | None:
        """Flink's ``getAlignmentParameters``: the watermark alignment of the sources using this strategy
        (``None``: not aligned)."""
        return None

    # -- common strategies ---------------------------------------------------------------------------------------

    @staticmethod
    def for_monotonous_timestamps() -> WatermarkStrategy[Any]:
        """Flink's ``forMonotonousTimestamps``: ascending timestamps (:class:`AscendingTimestampsWatermarks`)."""
        return _MonotonousTimestampsStrategy()

    @staticmethod
    def for_bounded_out_of_orderness(max_out_of_orderness: int | timedelta) -> WatermarkStrategy[Any]:
        """Flink's ``forBoundedOutOfOrderness``: records at most ``max_out_of_orderness`` (ms or a timedelta)
        late (:class:`BoundedOutOfOrdernessWatermarks`)."""
        return _BoundedOutOfOrdernessStrategy(
            _duration_ms(max_out_of_orderness, "max_out_of_orderness", allow_zero=True)
        )

    @staticmethod
    def no_watermarks() -> WatermarkStrategy[Any]:
        """Flink's ``noWatermarks``: no watermarks at all (:class:`NoWatermarksGenerator`)."""
        return _NoWatermarksStrategy()

    @staticmethod
    def for_generator(generator_factory: WatermarkGeneratorFactory[T]) -> WatermarkStrategy[T]:
        """Flink's ``forGenerator``: ``generator_factory(context)`` creates a new generator per subtask."""
        if isinstance(generator_factory, WatermarkGenerator) or not callable(generator_factory):
            raise InvalidProgramError(
                "for_generator expected a function context -> WatermarkGenerator; "
                f"got {_describe(generator_factory)}; hint: every subtask needs its own generator, so pass "
                "e.g. lambda ctx: MyGenerator() rather than a generator instance"
            )
        return _GeneratorFactoryStrategy(generator_factory)


@dataclass(frozen=True, slots=True)
class _MonotonousTimestampsStrategy(WatermarkStrategy[Any]):
    def create_watermark_generator(
        self, context: WatermarkGeneratorSupplierContext | None = None
    ) -> WatermarkGenerator[Any]:
        return AscendingTimestampsWatermarks()


@dataclass(frozen=True, slots=True)
class _BoundedOutOfOrdernessStrategy(WatermarkStrategy[Any]):
    out_of_orderness_ms: int

    def create_watermark_generator(
        self, context: WatermarkGeneratorSupplierContext | None = None
    ) -> WatermarkGenerator[Any]:
        return BoundedOutOfOrdernessWatermarks(self.out_of_orderness_ms)


@dataclass(frozen=True, slots=True)
class _NoWatermarksStrategy(WatermarkStrategy[Any]):
    def create_watermark_generator(
        self, context: WatermarkGeneratorSupplierContext | None = None
    ) -> WatermarkGenerator[Any]:
        return NoWatermarksGenerator()


@dataclass(frozen=True, slots=True)
class _GeneratorFactoryStrategy(WatermarkStrategy[T]):
    generator_factory: WatermarkGeneratorFactory[T]

    def create_watermark_generator(
        self, context: WatermarkGeneratorSupplierContext | None = None
    ) -> WatermarkGenerator[T]:
        generator = self.generator_factory(context if context is not None else WatermarkGeneratorSupplierContext())
        if not (
            callable(getattr(generator, "on_event", None)) and callable(getattr(generator, "on_periodic_emit", None))
        ):
            raise InvalidProgramError(
                f"the for_generator factory {self.generator_factory!r} expected to return a WatermarkGenerator; "
                f"got {_describe(generator)}; hint: subclass strom.WatermarkGenerator"
            )
        return generator


@dataclass(frozen=True, slots=True)
class _WrappedWatermarkStrategy(WatermarkStrategy[T]):
    """A strategy wrapping ``base_strategy`` (what the builder methods return): everything the subclass does not
    change comes from the base."""

    base_strategy: WatermarkStrategy[T]

    def create_watermark_generator(
        self, context: WatermarkGeneratorSupplierContext | None = None
    ) -> WatermarkGenerator[T]:
        return self.base_strategy.create_watermark_generator(context)

    def create_timestamp_assigner(
        self, context: TimestampAssignerSupplierContext | None = None
    ) -> TimestampAssigner[T]:
        return self.base_strategy.create_timestamp_assigner(context)

    def alignment_parameters(self) -> WatermarkAlignmentParams | None:
        return self.base_strategy.alignment_parameters()


@dataclass(frozen=True, slots=True)
class _WatermarkStrategyWithTimestampAssigner(_WrappedWatermarkStrategy[T]):
    """Flink's ``WatermarkStrategyWithTimestampAssigner``."""

    timestamp_assigner: TimestampAssigner[T]

    def create_timestamp_assigner(
        self, context: TimestampAssignerSupplierContext | None = None
    ) -> TimestampAssigner[T]:
        return self.timestamp_assigner


@dataclass(frozen=True, slots=True)
class _WatermarkStrategyWithIdleness(_WrappedWatermarkStrategy[T]):
    """Flink's ``WatermarkStrategyWithIdleness``: idleness measured on the context's input activity clock."""

    idle_timeout_ms: int

    def create_watermark_generator(
        self, context: WatermarkGeneratorSupplierContext | None = None
    ) -> WatermarkGenerator[T]:
        context = context if context is not None else WatermarkGeneratorSupplierContext()
        return WatermarksWithIdleness(
            self.base_strategy.create_watermark_generator(context), self.idle_timeout_ms, context.input_activity_clock
        )


@dataclass(frozen=True, slots=True)
class _WatermarkStrategyWithAlignment(_WrappedWatermarkStrategy[T]):
    """The base strategy with :meth:`WatermarkStrategy.with_watermark_alignment`'s parameters."""

    params: WatermarkAlignmentParams

    def alignment_parameters(self) -> WatermarkAlignmentParams | None:
        return self.params


# ---------------------------------------------------------------------------------------------------------------
#  Argument checks
# ---------------------------------------------------------------------------------------------------------------


def _duration_ms(value: object, what: str, *, allow_zero: bool) -> int:
    """An ``int`` of milliseconds, or a ``timedelta`` truncated to whole milliseconds like ``Duration.toMillis()``.

    The sign is checked on the value given (as Flink checks the ``Duration``), so a positive timedelta below a
    millisecond is accepted and becomes ``0``.
    """
    bound = "zero or more" if allow_zero else "more than zero"
    if isinstance(value, bool) or not isinstance(value, int | timedelta):
        raise InvalidProgramError(
            f"{what} expected an int of milliseconds or a datetime.timedelta; got {_describe(value)}; "
            "hint: timedelta(seconds=5) and 5000 are the same duration"
        )
    negative = value < timedelta(0) if isinstance(value, timedelta) else value < 0
    zero = value == timedelta(0) if isinstance(value, timedelta) else value == 0
    if negative or (zero and not allow_zero):
        raise InvalidProgramError(
            f"{what} expected a duration of {bound}; got {value!r}; hint: durations are lengths of time, "
            "e.g. timedelta(seconds=5) or 5000 (milliseconds)"
        )
    if isinstance(value, int):
        return value
    return (value.days * 86_400 + value.seconds) * 1000 + value.microseconds // 1000


def _describe(value: object) -> str:
    return f"a {type(value).__name__!r} ({value!r:.60})"


@dataclass(frozen=True, slots=True)
class BatchWatermarkStrategy(WatermarkStrategy[Any]):
    """``strategy`` in BATCH execution: its timestamps, no watermark before the end of input (Flink's batch mode
    has a perfect watermark: event time jumps to the end once all input is read)."""

    strategy: WatermarkStrategy[Any]

    def create_watermark_generator(
        self, context: WatermarkGeneratorSupplierContext | None = None
    ) -> WatermarkGenerator[Any]:
        return NoWatermarksGenerator()

    def create_timestamp_assigner(
        self, context: TimestampAssignerSupplierContext | None = None
    ) -> TimestampAssigner[Any]:
        return self.strategy.create_timestamp_assigner(context)
