"""Window join and window co-group of two streams (Flink's ``JoinedStreams`` and ``CoGroupedStreams``).

    orders.join(payments) \\
        .where(lambda order: order[0]).equal_to(lambda payment: payment[1]) \\
        .window(TumblingEventTimeWindows.of(timedelta(seconds=5))) \\
        .apply(lambda order, payment: (order[0], payment[2]))

A *window join* pairs the elements of two streams whose keys are equal and that fall into the same window: for
each key and window, every element of the first input with every element of the second, one ``JoinFunction``
call (or ``FlatJoinFunction`` call, zero or more outputs) per pair. It is an inner join: a window in which one
side has no element emits nothing. A *co-group* hands both sides of a key and window to one ``CoGroupFunction``
call, so it also sees a side alone (outer joins, per-side counts).

There is no two-input operator behind it, exactly as in Flink: each input is mapped to a :class:`TaggedUnion`
(``one`` for the first input, ``two`` for the second), the tagged streams are ``union``-ed, keyed by a
:class:`UnionKeySelector` (the first key selector for ``one``, the second for ``two``, so keys must be *equal*
across the inputs) and cut into windows by the assigner, trigger, evictor and allowed lateness given here. The
window function (:class:`CoGroupWindowFunction`) splits each firing pane into its two sides and calls the
co-group function; a join's is a nested loop over the two sides (:class:`JoinCoGroupFunction`). Hence outputs
carry their window's ``max_timestamp()`` as event timestamp, and assigners, triggers and evictors see
``TaggedUnion`` elements. Each step returns a new object: ``where`` → ``equal_to`` → ``window`` → [``trigger``,
``evictor``, ``allowed_lateness``] → ``apply``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar

from strom.api._time import to_millis
from strom.api.functions import (
    CoGroupFunction,
    FlatJoinFunction,
    Function,
    JoinFunction,
    KeySelector,
    RichFunction,
    RuntimeContext,
    close_function,
    open_function,
)
from strom.api.transformations import SourceTransformation, Transformation
from strom.api.windowed_stream import _check_assigner
from strom.api.windowing.assigners import WindowAssigner
from strom.api.windowing.evictors import Evictor
from strom.api.windowing.functions import WindowFunction
from strom.api.windowing.triggers import Trigger
from strom.exceptions import InvalidProgramError

if TYPE_CHECKING:
    from strom.api.datastream import DataStream

__all__ = [
    "CoGroupWindowFunction",
    "CoGroupedStreams",
    "EqualTo",
    "FlatJoinCoGroupFunction",
    "JoinCoGroupFunction",
    "JoinedStreams",
    "TaggedUnion",
    "UnionKeySelector",
    "Where",
]

T1 = TypeVar("T1")
T2 = TypeVar("T2")

_HINTS = {
    "join": "first.join(second).where(key1).equal_to(key2).window(TumblingEventTimeWindows.of(...)).apply(fn)",
    "co_group": "first.co_group(second).where(key1).equal_to(key2).window(assigner).apply(co_group_fn)",
}
_STEP_METHODS = frozenset({"where", "equal_to", "window", "trigger", "evictor", "allowed_lateness", "apply"})


# --- the tagged union and its key ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TaggedUnion:
    """An element of the first input (``tag == 1``) or of the second (``tag == 2``) on the unioned stream."""

    tag: int
    value: Any

    @staticmethod
    def one(value: Any) -> TaggedUnion:
        return TaggedUnion(1, value)

    @staticmethod
    def two(value: Any) -> TaggedUnion:
        return TaggedUnion(2, value)

    def is_one(self) -> bool:
        return self.tag == 1

    def is_two(self) -> bool:
        return self.tag == 2


class UnionKeySelector(KeySelector[TaggedUnion, Any]):
    """The key of a tagged element: the first input's key selector for ``one``, the second's for ``two``."""

    def __init__(self, key_selector1: Callable[[Any], Any], key_selector2: Callable[[Any], Any]) -> None:
        self.key_selector1 = key_selector1
        self.key_selector2 = key_selector2

    def get_key(self, value: TaggedUnion) -> Any:
        if value.tag == 1:
            return self.key_selector1(value.value)
        return self.key_selector2(value.value)


# --- the functions: a window function around a co-group function around a join function ---------------------------


class _WrappingFunction(RichFunction):
    """Opens and closes the user function it wraps (Flink's ``WrappingFunction``)."""

    def __init__(self, wrapped_function: object) -> None:
        self.wrapped_function = wrapped_function

    def open(self, runtime_context: RuntimeContext) -> None:
        open_function(self.wrapped_function, runtime_context)

    def close(self) -> None:
        close_function(self.wrapped_function)


class CoGroupWindowFunction(_WrappingFunction, WindowFunction[TaggedUnion, Any, Any, Any]):
    """Splits a firing pane into the elements of the first and of the second input, in arrival order, and
    calls the co-group function with both lists."""

    def __init__(self, wrapped_function: object, co_group: Callable[[list[Any], list[Any]], Any]) -> None:
        super().__init__(wrapped_function)
        self._co_group = co_group

    def apply(self, key: Any, window: Any, inputs: Iterable[TaggedUnion]) -> Iterable[Any] | None:
        first: list[Any] = []
        second: list[Any] = []
        for element in inputs:
            (first if element.tag == 1 else second).append(element.value)
        result: Iterable[Any] | None = self._co_group(first, second)
        return result


class JoinCoGroupFunction(_WrappingFunction, CoGroupFunction[Any, Any, Any]):
    """The nested-loop join: ``join(l, r)`` for each element ``l`` of the first side and ``r`` of the second."""

    def __init__(self, wrapped_function: object, join: Callable[[Any, Any], Any]) -> None:
        super().__init__(wrapped_function)
        self._join = join

    def co_group(self, first: Iterable[Any], second: Iterable[Any]) -> list[Any]:
        join = self._join
        rights = list(second)
        return [join(left, right) for left in first for right in rights]


class FlatJoinCoGroupFunction(JoinCoGroupFunction):
    """The nested-loop join of a ``FlatJoinFunction``: every output of every ``join(l, r)``."""

    def co_group(self, first: Iterable[Any], second: Iterable[Any]) -> list[Any]:
        join = self._join
        rights = list(second)
        out: list[Any] = []
        for left in first:
            for right in rights:
                results = join(left, right)
                if results is not None:
                    out.extend(results)
        return out


# --- the steps -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class _Spec:
    """What the steps collected so far."""

    kind: str  # "join" or "co_group"
    input1: DataStream[Any]
    input2: DataStream[Any]
    key_selector1: Callable[[Any], Any] | None = None
    key_selector2: Callable[[Any], Any] | None = None
    assigner: WindowAssigner[Any, Any] | None = None
    trigger: Trigger[Any, Any] | None = None
    evictor: Evictor[Any, Any] | None = None
    allowed_lateness: Any = None


class _Step:
    """A step of the builder; ``_next`` names the call that may follow it."""

    _spec: _Spec
    _next = ""

    if not TYPE_CHECKING:  # a later step's method called too early: say which call is missing

        def __getattr__(self, name: str) -> Any:
            if name in _STEP_METHODS:
                kind = self._spec.kind
                raise InvalidProgramError(f"{kind}(): expected .{self._next} next; got .{name}(); hint: {_HINTS[kind]}")
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


WW = TypeVar("WW", bound="_WithWindow")


class Where(_Step, Generic[WW]):
    """The first input's key is set; ``equal_to`` sets the second's."""

    _next = "equal_to(key_selector)"

    def __init__(self, spec: _Spec, with_window: type[WW]) -> None:
        self._spec = spec
        self._with_window = with_window

    def equal_to(self, key_selector: KeySelector[Any, Any] | Callable[[Any], Any]) -> EqualTo[WW]:
        key = _function(key_selector, KeySelector, "get_key", "equal_to()", "equal_to(lambda e: e[0])")
        return EqualTo(replace(self._spec, key_selector2=key), self._with_window)


class EqualTo(_Step, Generic[WW]):
    """Both keys are set; ``window`` sets the window assigner."""

    _next = "window(assigner)"

    def __init__(self, spec: _Spec, with_window: type[WW]) -> None:
        self._spec = spec
        self._with_window = with_window

    def window(self, assigner: WindowAssigner[Any, Any]) -> WW:
        return self._with_window(replace(self._spec, assigner=_check_assigner(assigner)))


class _WithWindow(_Step):
    """Keys and window assigner are set; ``trigger``, ``evictor`` and ``allowed_lateness`` are optional."""

    _next = "apply(function)"

    def __init__(self, spec: _Spec) -> None:
        self._spec = spec

    def trigger(self, trigger: Trigger[Any, Any]) -> Self:
        if not isinstance(trigger, Trigger):
            raise InvalidProgramError(
                f"expected a Trigger; got {type(trigger).__name__}; hint: CountTrigger.of(100), or subclass Trigger"
            )
        return type(self)(replace(self._spec, trigger=trigger))

    def evictor(self, evictor: Evictor[Any, Any]) -> Self:
        if not isinstance(evictor, Evictor):
            raise InvalidProgramError(
                f"expected an Evictor; got {type(evictor).__name__}; hint: CountEvictor.of(10), TimeEvictor.of(...)"
            )
        return type(self)(replace(self._spec, evictor=evictor))

    def allowed_lateness(self, time: Any) -> Self:
        """Keep each window this long after its end: a late element within it fires the window again."""
        millis = to_millis(time, "allowed_lateness")
        if millis < 0:
            raise InvalidProgramError(
                f"expected allowed_lateness >= 0; got {millis} ms; hint: allowed_lateness(timedelta(seconds=10))"
            )
        return type(self)(replace(self._spec, allowed_lateness=millis))

    def _apply(self, function: CoGroupWindowFunction, label: str) -> DataStream[Any]:
        """Flink's ``CoGroupedStreams.WithWindow.apply``: tag, union, key, window, apply."""
        spec = self._spec
        assert spec.key_selector1 is not None and spec.key_selector2 is not None and spec.assigner is not None
        tagged1 = _tag(spec.input1, TaggedUnion.one)
        tagged2 = _tag(spec.input2, TaggedUnion.two)
        key = UnionKeySelector(spec.key_selector1, spec.key_selector2)
        windowed = tagged1.union(tagged2).key_by(key).window(spec.assigner)
        if spec.trigger is not None:
            windowed.trigger(spec.trigger)
        if spec.evictor is not None:
            windowed.evictor(spec.evictor)
        if spec.allowed_lateness is not None:
            windowed.allowed_lateness(spec.allowed_lateness)
        evicting = "Evicting" if spec.evictor is not None else ""
        return windowed.apply(function).name(f"{evicting}Window({label})")


class CoGroupedStreams(_Step, Generic[T1, T2]):
    """``first.co_group(second)``: set the first input's key with ``where``."""

    _next = "where(key_selector)"

    class WithWindow(_WithWindow):
        def apply(self, function: CoGroupFunction[Any, Any, Any] | Callable[..., Any]) -> DataStream[Any]:
            """``function.co_group(first, second)`` (or ``function(first, second)``) once per key and window
            firing, with the lists of both inputs' elements; it returns or yields the outputs."""
            co_group = _function(
                function, CoGroupFunction, "co_group", "co_group().apply()", "apply(lambda first, second: ...)"
            )
            return self._apply(CoGroupWindowFunction(function, co_group), "CoGroup")

    def __init__(self, input1: DataStream[T1], input2: DataStream[T2]) -> None:
        self._spec = _Spec(kind="co_group", input1=input1, input2=_check_input(input1, input2, "co_group"))

    def where(self, key_selector: KeySelector[T1, Any] | Callable[[T1], Any]) -> Where[CoGroupedStreams.WithWindow]:
        key = _function(key_selector, KeySelector, "get_key", "where()", "where(lambda e: e[0])")
        return Where(replace(self._spec, key_selector1=key), CoGroupedStreams.WithWindow)


class JoinedStreams(_Step, Generic[T1, T2]):
    """``first.join(second)``: set the first input's key with ``where``."""

    _next = "where(key_selector)"

    class WithWindow(_WithWindow):
        def apply(
            self, function: JoinFunction[Any, Any, Any] | FlatJoinFunction[Any, Any, Any] | Callable[[Any, Any], Any]
        ) -> DataStream[Any]:
            """``function.join(first, second)`` for each pair of a key and window: one output from a
            ``JoinFunction`` or a plain callable, an iterable of outputs from a ``FlatJoinFunction``."""
            wrapped: JoinCoGroupFunction
            if isinstance(function, FlatJoinFunction):
                wrapped = FlatJoinCoGroupFunction(function, function.join)
            else:
                hint = "apply(lambda first, second: (first, second))"
                join = _function(function, JoinFunction, "join", "join().apply()", hint)
                wrapped = JoinCoGroupFunction(function, join)
            return self._apply(CoGroupWindowFunction(wrapped, wrapped.co_group), "Join")

    def __init__(self, input1: DataStream[T1], input2: DataStream[T2]) -> None:
        self._spec = _Spec(kind="join", input1=input1, input2=_check_input(input1, input2, "join"))

    def where(self, key_selector: KeySelector[T1, Any] | Callable[[T1], Any]) -> Where[JoinedStreams.WithWindow]:
        key = _function(key_selector, KeySelector, "get_key", "where()", "where(lambda e: e[0])")
        return Where(replace(self._spec, key_selector1=key), JoinedStreams.WithWindow)


# --- helpers -------------------------------------------------------------------------------------------------------


def _check_input(input1: DataStream[Any], input2: object, kind: str) -> DataStream[Any]:
    if not input1._is_data_stream(input2):
        raise InvalidProgramError(
            f"expected a DataStream to {kind} with; got a {type(input2).__name__}; hint: {_HINTS[kind]}"
        )
    if input2.get_execution_environment() is not input1.get_execution_environment():
        raise InvalidProgramError(
            f"expected two streams of the same environment for {kind}(); got streams of two environments; "
            "hint: build both inputs from one StreamExecutionEnvironment"
        )
    return input2


def _function(fn: object, base: type[Function], method: str, what: str, hint: str) -> Callable[..., Any]:
    """The bound method of a ``base`` instance or the callable itself; else an error naming ``what``."""
    if isinstance(fn, base):
        bound: Callable[..., Any] = getattr(fn, method)
        return bound
    if isinstance(fn, type) and issubclass(fn, Function):
        raise InvalidProgramError(
            f"expected a {base.__name__} instance or a callable for {what}; got the class {fn.__name__}; "
            f"hint: pass an instance: {fn.__name__}()"
        )
    if callable(fn):
        return fn
    raise InvalidProgramError(
        f"expected a {base.__name__} or a callable for {what}; got a {type(fn).__name__!r} ({fn!r:.60}); hint: {hint}"
    )


def _tag(stream: DataStream[Any], tagger: Callable[[Any], TaggedUnion]) -> DataStream[TaggedUnion]:
    """Map ``stream`` to tagged elements at the input's parallelism, so the tagger chains to it (as Flink's)."""
    tagged: DataStream[TaggedUnion] = stream.map(tagger)
    parallelism = _parallelism_of(stream.get_transformation())
    if parallelism is not None:
        tagged.get_transformation().parallelism = parallelism
    return tagged


def _parallelism_of(t: Transformation) -> int | None:
    """The parallelism set on the operator behind ``t`` (through partitionings and unions); None: the default."""
    while t.is_virtual and t.inputs:
        t = t.inputs[0]
    if isinstance(t, SourceTransformation) and not t.parallel:
        return 1
    return t.parallelism
