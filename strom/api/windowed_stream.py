"""``WindowedStream`` and ``AllWindowedStream``: a keyed (or non-keyed) stream cut into windows
(Flink's / PyFlink's classes of the same names).

    keyed.window(TumblingEventTimeWindows.of(timedelta(seconds=5))) \\
         .allowed_lateness(timedelta(seconds=1)) \\
         .side_output_late_data(late_tag) \\
         .aggregate(Average(), window_function=WithWindowStart())

A window stream is configured (``trigger``, ``evictor``, ``allowed_lateness``, ``side_output_late_data``) and
then closed by one window function: ``reduce``, ``aggregate`` (each optionally with a ``window_function`` that
gets the combined value, the key and the window), ``apply`` or ``process``. The result is a ``DataStream``;
``get_side_output(tag)`` on it gives the late records.

The window operator is chosen here, when the graph is built (:func:`uses_aligned_window_operator`): tumbling
(aligned) or sliding event-time windows with the ``EventTimeTrigger`` and no evictor, in STREAMING execution, run in
the :class:`AlignedWindowOperator` (panes kept window by window); everything else in the general
:class:`WindowOperator` (merging windows, evictors, custom triggers, processing time, BATCH execution).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from strom.api._time import to_millis
from strom.api.execution_mode import RuntimeExecutionMode
from strom.api.functions import ReduceFunction, as_callable
from strom.api.output_tag import OutputTag
from strom.api.state import AggregateFunction
from strom.api.windowing.assigners import (
    SlidingEventTimeWindows,
    TumblingEventTimeWindows,
    WindowAssigner,
    WindowStagger,
    default_trigger,
)
from strom.api.windowing.evictors import Evictor
from strom.api.windowing.triggers import EventTimeTrigger, Trigger
from strom.exceptions import InvalidProgramError
from strom.runtime.operators.windowing.aligned_window_operator import AlignedWindowOperator
from strom.runtime.operators.windowing.internal_functions import internal_window_function
from strom.runtime.operators.windowing.window_operator import WindowOperator

if TYPE_CHECKING:
    from strom.api.datastream import DataStream, KeyedStream
    from strom.api.typeinfo import TypeInformation

__all__ = ["AllWindowedStream", "WindowedStream", "uses_aligned_window_operator", "window_operator"]

T = TypeVar("T")


def _check_assigner(assigner: object) -> WindowAssigner[Any, Any]:
    if not isinstance(assigner, WindowAssigner):
        raise InvalidProgramError(
            f"expected a WindowAssigner; got {type(assigner).__name__}; hint: "
            "TumblingEventTimeWindows.of(timedelta(seconds=5)), SlidingEventTimeWindows.of(...), "
            "EventTimeSessionWindows.with_gap(...), GlobalWindows.create()"
        )
    return assigner


def uses_aligned_window_operator(
    assigner: WindowAssigner[Any, Any], trigger: Trigger[Any, Any], evictor: Evictor[Any, Any] | None, *, batch: bool
) -> bool:
    """The build-time rule: the :class:`AlignedWindowOperator` for tumbling windows without a stagger and for sliding
    windows, by event time, with the ``EventTimeTrigger`` (exactly that class: a subclass may change what fires) and
    no evictor, in STREAMING execution (BATCH fires key by key at the end of input, through the general operator's
    timers); any pane kind (``reduce``, ``aggregate`` or the element list of ``apply``/``process``)."""
    if batch or evictor is not None or type(trigger) is not EventTimeTrigger:
        return False
    if type(assigner) is TumblingEventTimeWindows:
        return assigner.window_stagger is WindowStagger.ALIGNED
    return type(assigner) is SlidingEventTimeWindows


def window_operator(*, batch: bool = False, **arguments: Any) -> WindowOperator:
    """The window operator :func:`uses_aligned_window_operator` picks, built with ``arguments`` — the
    ``WindowOperator``'s keyword arguments (``assigner``, ``trigger``, ``evictor``, ``window_function``, ...)."""
    assigner, trigger, evictor = arguments["assigner"], arguments["trigger"], arguments["evictor"]
    aligned = uses_aligned_window_operator(assigner, trigger, evictor, batch=batch)
    return (AlignedWindowOperator if aligned else WindowOperator)(**arguments)


class _WindowedStreamBase(Generic[T]):
    _keyed: bool = True

    def __init__(self, keyed_stream: KeyedStream[T, Any], assigner: WindowAssigner[Any, Any]) -> None:
        self._input = keyed_stream
        self._assigner = _check_assigner(assigner)
        self._trigger: Trigger[Any, Any] = default_trigger(assigner, keyed_stream.get_execution_environment())
        self._evictor: Evictor[Any, Any] | None = None
        self._allowed_lateness = 0
        self._late_tag: OutputTag | None = None

    # -- configuration -------------------------------------------------------------------------------
    def trigger(self, trigger: Trigger[Any, Any]) -> _WindowedStreamBase[T]:
        """When a window fires (Flink's ``trigger``), instead of the assigner's default trigger (event time: at the
        watermark past the window's end; processing time: at the clock's).

        >>> from strom import CountTrigger, GlobalWindows
        >>> keyed = env.from_collection([("a", 1)]).key_by(lambda t: t[0])
        >>> per_100 = keyed.window(GlobalWindows.create()).trigger(CountTrigger.of(100)).reduce(lambda a, b: a)
        """
        if not isinstance(trigger, Trigger):
            raise InvalidProgramError(
                f"expected a Trigger; got {type(trigger).__name__}; hint: CountTrigger.of(100), "
                "PurgingTrigger.of(...), or subclass strom.Trigger"
            )
        self._trigger = trigger
        return self

    def evictor(self, evictor: Evictor[Any, Any]) -> _WindowedStreamBase[T]:
        """Remove elements from a window before (or after) its function runs (Flink's ``evictor``); the window then
        keeps its elements instead of a running reduce or aggregate.

        >>> from strom import CountEvictor, TumblingEventTimeWindows
        >>> keyed = env.from_collection([("a", 1)]).key_by(lambda t: t[0])
        >>> last_10 = keyed.window(TumblingEventTimeWindows.of(60_000)).evictor(CountEvictor.of(10)).reduce(max)
        """
        if not isinstance(evictor, Evictor):
            raise InvalidProgramError(
                f"expected an Evictor; got {type(evictor).__name__}; hint: CountEvictor.of(10), TimeEvictor.of(...)"
            )
        self._evictor = evictor
        return self

    def allowed_lateness(self, time: Any) -> _WindowedStreamBase[T]:
        """Keep window state this long after the window's end: late elements within it update the window and
        fire it again (event time only)."""
        millis = to_millis(time, "allowed_lateness")
        if millis < 0:
            raise InvalidProgramError(
                f"expected allowed_lateness >= 0; got {millis} ms; hint: allowed_lateness(timedelta(seconds=10))"
            )
        self._allowed_lateness = millis
        return self

    def side_output_late_data(self, output_tag: OutputTag) -> _WindowedStreamBase[T]:
        """Send elements that arrive after their windows' allowed lateness to ``output_tag`` instead of dropping
        them; read them with ``result.get_side_output(output_tag)``."""
        if not isinstance(output_tag, OutputTag):
            raise InvalidProgramError(
                f"expected an OutputTag; got {type(output_tag).__name__}; hint: OutputTag('late-data')"
            )
        self._late_tag = output_tag
        return self

    def get_execution_environment(self) -> Any:
        """The environment of the windowed stream (Flink's ``getExecutionEnvironment``).

        >>> from strom import GlobalWindows
        >>> env.from_collection([1]).key_by(str).window(GlobalWindows.create()).get_execution_environment() is env
        True
        """
        return self._input.get_execution_environment()

    def get_input_type(self) -> Any:
        """The declared type of the windowed records (``Types.PICKLED_BYTE_ARRAY()`` when none)."""
        return self._input.get_type()

    # -- window functions ----------------------------------------------------------------------------
    def reduce(
        self,
        reduce_function: ReduceFunction[T] | Callable[[T, T], T],
        window_function: Any = None,
        output_type: TypeInformation | None = None,
    ) -> DataStream[Any]:
        """Without a ``window_function`` the results have the input's declared type unless ``output_type`` says."""
        reduce = as_callable(reduce_function, ReduceFunction, "reduce", "window reduce()")
        if window_function is None and output_type is None:
            output_type = self._input.get_transformation().output_type
        return self._build("Window(Reduce)", "reduce", window_function, output_type, reduce=reduce)

    def aggregate(
        self,
        aggregate_function: AggregateFunction[Any, Any, Any],
        window_function: Any = None,
        accumulator_type: Any = None,
        output_type: Any = None,
    ) -> DataStream[Any]:
        """``output_type``: the declared type of the results; ``accumulator_type`` is accepted for PyFlink
        compatibility (accumulators stay in the window state as Python objects)."""
        if not isinstance(aggregate_function, AggregateFunction):
            raise InvalidProgramError(
                f"expected an AggregateFunction; got {type(aggregate_function).__name__}; hint: subclass "
                "strom.AggregateFunction with create_accumulator/add/get_result/merge"
            )
        return self._build("Window(Aggregate)", "aggregate", window_function, output_type, aggregate=aggregate_function)

    def apply(self, window_function: Any, output_type: TypeInformation | None = None) -> DataStream[Any]:
        """Call a :class:`WindowFunction` with all of a window's elements when it fires (Flink's ``apply``):
        ``apply(key, window, inputs)`` yields the outputs (an :class:`AllWindowFunction`'s ``apply(window, inputs)`` on
        :meth:`DataStream.window_all`). :meth:`reduce` and :meth:`aggregate` keep less state.

        >>> from strom import TumblingEventTimeWindows, WindowFunction
        >>> class Count(WindowFunction):
        ...     def apply(self, key, window, inputs):
        ...         yield key, window.end, len(list(inputs))
        >>> keyed = env.from_collection([("a", 1)]).key_by(lambda t: t[0])
        >>> counts = keyed.window(TumblingEventTimeWindows.of(60_000)).apply(Count())
        """
        return self._build("Window(Apply)", "list", window_function, output_type)

    def process(self, process_window_function: Any, output_type: TypeInformation | None = None) -> DataStream[Any]:
        """Call a :class:`ProcessWindowFunction` with all of a window's elements when it fires (Flink's ``process``):
        ``process(key, context, elements)`` yields the outputs and reads ``context.window()``, the watermark and
        per-window state (``process(context, elements)`` of a :class:`ProcessAllWindowFunction` on ``window_all``).

        >>> from strom import ProcessWindowFunction, TumblingEventTimeWindows
        >>> class Count(ProcessWindowFunction):
        ...     def process(self, key, context, elements):
        ...         yield key, context.window().start, len(list(elements))
        >>> keyed = env.from_collection([("a", 1)]).key_by(lambda t: t[0])
        >>> counts = keyed.window(TumblingEventTimeWindows.of(60_000)).process(Count())
        """
        return self._build("Window(Process)", "list", process_window_function, output_type)

    def _build(
        self,
        name: str,
        contents: str,
        window_function: Any,
        output_type: TypeInformation | None,
        *,
        reduce: Callable[[Any, Any], Any] | None = None,
        aggregate: AggregateFunction[Any, Any, Any] | None = None,
    ) -> DataStream[Any]:
        evicting = self._evictor is not None
        function = internal_window_function(
            window_function, keyed=self._keyed, reduce=reduce, aggregate=aggregate, evicting=evicting
        )
        env = self._input.get_execution_environment()
        operator = window_operator(
            key_selector=self._input.key_selector,
            assigner=self._assigner,
            trigger=self._trigger,
            evictor=self._evictor,
            window_function=function,
            contents=contents,
            reduce_function=reduce,
            aggregate_function=aggregate,
            allowed_lateness=self._allowed_lateness,
            late_data_tag=self._late_tag.tag_id if self._late_tag is not None else None,
            batch=env.get_runtime_mode() is RuntimeExecutionMode.BATCH,
        )
        prefix = "Evicting" if evicting else ""
        stream = self._input._one_input(f"{prefix}{name}", operator, output_type)
        if not self._keyed:
            t = stream.get_transformation()
            t.parallelism = 1
            t.non_parallel = True
        return stream


class WindowedStream(_WindowedStreamBase[T]):
    """``KeyedStream.window(assigner)``."""


class AllWindowedStream(_WindowedStreamBase[T]):
    """``DataStream.window_all(assigner)``: one window operator instance (parallelism 1) sees every record."""

    _keyed = False
