"""Interval join of two keyed streams (Flink's ``KeyedStream.IntervalJoin`` and ``IntervalJoined``).

    orange.key_by(key).interval_join(green.key_by(key)) \\
        .between(timedelta(milliseconds=-2), timedelta(milliseconds=1)) \\
        .process(PairUp())

joins each element ``a`` of the first (left) stream with every element ``b`` of the second (right) stream that
has the same key and ``a.ts + lower <= b.ts <= a.ts + upper``. Both bounds are inclusive unless
``lower_bound_exclusive()`` / ``upper_bound_exclusive()`` is called; either may be negative, but ``lower`` may not
exceed ``upper``. It is an inner join in event time only: both streams need event timestamps and watermarks
(``assign_timestamps_and_watermarks``). Each pair goes to a :class:`ProcessJoinFunction` (or a plain callable
``f(left, right, ctx)``) and what it emits carries ``max(a.ts, b.ts)``. An element arriving behind the
watermark is dropped, or sent to the side output set by ``side_output_left_late_data(tag)`` /
``side_output_right_late_data(tag)``. The operator behind it is
:class:`~strom.runtime.operators.co.interval_join.IntervalJoinOperator`, named ``"Interval Join"``.

As in Flink, ``between`` returns an :class:`IntervalJoined` whose setters change it and return it.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from strom.api._time import to_millis
from strom.api.co_functions import ProcessJoinFunction
from strom.api.output_tag import OutputTag
from strom.exceptions import InvalidProgramError
from strom.runtime.operators.co.interval_join import IntervalJoinOperator

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from strom.api.datastream import DataStream, KeyedStream

__all__ = ["IntervalJoin", "IntervalJoined"]

T1 = TypeVar("T1")
T2 = TypeVar("T2")
K = TypeVar("K")

_HINT = "hint: left.key_by(key).interval_join(right.key_by(key)).between(-2000, 1000).process(fn)"


class IntervalJoin(Generic[T1, T2, K]):
    """Two keyed streams to join over a time interval; ``between(lower, upper)`` sets it."""

    def __init__(self, first: KeyedStream[T1, K], second: KeyedStream[T2, K]) -> None:
        keyed: KeyedStream[T2, K] | None = second._as_keyed() if first._is_data_stream(second) else None
        if keyed is None:
            raise InvalidProgramError(
                f"interval_join() expects a KeyedStream to join with; got a {type(second).__name__}; {_HINT}"
            )
        if first.get_execution_environment() is not second.get_execution_environment():
            raise InvalidProgramError(
                "interval_join() expects streams of the same environment; got a stream of another one; "
                "hint: build both streams from one StreamExecutionEnvironment"
            )
        self.first = first
        self.second = second
        self._event_time = True

    def in_event_time(self) -> IntervalJoin[T1, T2, K]:
        """Join in event time (the default and, as in Flink, the only time an interval join supports)."""
        self._event_time = True
        return self

    def in_processing_time(self) -> IntervalJoin[T1, T2, K]:
        """Processing time: accepted here, rejected by :meth:`between` (Flink's rule)."""
        self._event_time = False
        return self

    def between(self, lower_bound: int | timedelta, upper_bound: int | timedelta) -> IntervalJoined[T1, T2, K]:
        """Join ``a`` of the first stream with ``b`` of the second where
        ``a.ts + lower_bound <= b.ts <= a.ts + upper_bound``; bounds in milliseconds or as ``timedelta``."""
        if not self._event_time:
            raise InvalidProgramError(
                "expected an interval join in event time; got in_processing_time(); hint: time-bounded stream "
                "joins are only supported in event time: drop in_processing_time() and assign timestamps"
            )
        lower = to_millis(lower_bound, "interval_join().between() lower bound")
        upper = to_millis(upper_bound, "interval_join().between() upper bound")
        if lower > upper:
            raise InvalidProgramError(
                f"expected the lower bound of between() to be <= its upper bound; got lower {lower} ms > upper "
                f"{upper} ms; hint: between(-2000, 1000) joins right elements from 2 s before to 1 s after"
            )
        return IntervalJoined(self.first, self.second, lower, upper)


class IntervalJoined(Generic[T1, T2, K]):
    """Two keyed streams and the bounds of their join; ``process(fn)`` completes it."""

    def __init__(self, left: KeyedStream[T1, K], right: KeyedStream[T2, K], lower_bound: int, upper_bound: int) -> None:
        self.left = left
        self.right = right
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.lower_bound_inclusive = True
        self.upper_bound_inclusive = True
        self.left_late_data_output_tag: OutputTag | None = None
        self.right_late_data_output_tag: OutputTag | None = None

    def upper_bound_exclusive(self) -> IntervalJoined[T1, T2, K]:
        """Leave out pairs with ``b.ts == a.ts + upper_bound``."""
        self.upper_bound_inclusive = False
        return self

    def lower_bound_exclusive(self) -> IntervalJoined[T1, T2, K]:
        """Leave out pairs with ``b.ts == a.ts + lower_bound``."""
        self.lower_bound_inclusive = False
        return self

    def side_output_left_late_data(self, output_tag: OutputTag) -> IntervalJoined[T1, T2, K]:
        """Send elements of the first stream that arrive behind the watermark to ``output_tag``."""
        self.left_late_data_output_tag = _check_tag(output_tag, "side_output_left_late_data")
        return self

    def side_output_right_late_data(self, output_tag: OutputTag) -> IntervalJoined[T1, T2, K]:
        """Send elements of the second stream that arrive behind the watermark to ``output_tag``."""
        self.right_late_data_output_tag = _check_tag(output_tag, "side_output_right_late_data")
        return self

    def process(
        self,
        process_join_function: ProcessJoinFunction[T1, T2, Any] | Callable[..., Iterable[Any] | None],
        output_type: Any = None,
    ) -> DataStream[Any]:
        """Call ``process_join_function`` for each joined pair; the stream of what it returns or yields."""
        fn = process_join_function
        if isinstance(fn, type) or not (isinstance(fn, ProcessJoinFunction) or callable(fn)):
            what = f"the class {fn.__name__}" if isinstance(fn, type) else f"a {type(fn).__name__}"
            raise InvalidProgramError(
                f"IntervalJoined.process() expects a ProcessJoinFunction instance or a callable "
                f"f(left, right, ctx); got {what}; hint: subclass strom.ProcessJoinFunction, implement "
                "process_element(left, right, ctx) and pass an instance"
            )
        operator = IntervalJoinOperator(
            fn,
            self.left.key_selector,
            self.right.key_selector,
            lower_bound=self.lower_bound,
            upper_bound=self.upper_bound,
            lower_bound_inclusive=self.lower_bound_inclusive,
            upper_bound_inclusive=self.upper_bound_inclusive,
            left_late_data_output_tag=self.left_late_data_output_tag,
            right_late_data_output_tag=self.right_late_data_output_tag,
        )
        return self.left._two_input(
            "Interval Join", self.right.get_transformation(), operator, output_type, "IntervalJoined.process()"
        )


def _check_tag(output_tag: object, method: str) -> OutputTag:
    if not isinstance(output_tag, OutputTag):
        raise InvalidProgramError(
            f"{method}() expects an OutputTag; got a {type(output_tag).__name__}; hint: {method}(OutputTag('late'))"
        )
    return output_tag
