"""``IntervalJoinOperator``: the time-bounded inner join of two keyed streams (Flink's operator of that name).

    orders.key_by(lambda o: o.id).interval_join(payments.key_by(lambda p: p.order_id)) \\
        .between(timedelta(minutes=-5), timedelta(minutes=10)) \\
        .process(MatchPayment())

It emits, through a :class:`~strom.api.co_functions.ProcessJoinFunction`, exactly the pairs ``(left, right)``
of equal keys with ``left.ts + lower_bound <= right.ts <= left.ts + upper_bound`` — each bound inclusive unless
made exclusive, which the operator turns into an inclusive bound one millisecond inwards (``lower + 1``,
``upper - 1``) so that it never tests inclusiveness again. Flink's rules, one by one:

* **Buffers.** Each side keeps, per key, its elements by timestamp — ``LEFT_BUFFER`` and ``RIGHT_BUFFER``, Flink's
  ``MapState<Long, List<BufferEntry>>`` — as internal tables of the keyed state backend
  (``key → {timestamp: [(value, joined), ...]}``), so they are checkpointed, restored and redistributed by key
  group like any keyed state. ``joined`` is Flink's ``hasBeenJoined`` flag: kept, always ``False`` (an inner
  join never reads it).
* **Join.** An element of the left input is added to the left buffer, then paired with every element of the
  right buffer whose timestamp lies in ``[ts + lower, ts + upper]``; one of the right input is added to the
  right buffer and paired with the left buffer's elements in ``[ts - upper, ts - lower]`` (the mirrored
  interval). strom pairs them in ascending timestamp of the other side, each bucket in arrival order (Flink's
  order is its map's, unspecified).
* **Timestamps.** A pair and whatever the function emits for it carry ``max(left.ts, right.ts)``;
  ``ctx.get_left_timestamp()`` / ``get_right_timestamp()`` / ``get_timestamp()`` give the three. An element
  without an event timestamp is a program error (Flink's "Long.MIN_VALUE timestamp" ``FlinkException``).
* **Late elements.** An element with ``ts < current watermark`` (the minimum of both inputs' watermarks) is
  neither buffered nor joined: it goes to the side output of its input when one was set
  (``side_output_left_late_data`` / ``side_output_right_late_data``, with its own timestamp), else it is dropped.
* **Cleanup.** Each buffered element registers an event-time timer of the timer service ``CLEANUP_TIMER`` in
  namespace ``CLEANUP_LEFT`` / ``CLEANUP_RIGHT`` at ``ts + relative_upper`` if ``relative_upper > 0``, else at
  ``ts`` (``relative_upper`` is ``upper`` for the left input, ``-lower`` for the right). When the watermark
  reaches it the bucket of that timestamp leaves the buffer: the left bucket at ``time - upper`` (``time`` if
  ``upper <= 0``), the right one at ``time + lower`` (``time`` if ``lower > 0``). One timer per key, namespace
  and time, so equal timestamps share it.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import TYPE_CHECKING, Any

from strom.api.co_functions import ProcessJoinFunction
from strom.api.functions import as_callable
from strom.api.output_tag import OutputTag
from strom.exceptions import InvalidProgramError
from strom.runtime.operators.base import LONG_MIN, StreamingRuntimeContext
from strom.runtime.operators.collector import TimestampedCollector
from strom.runtime.operators.keyed import key_selector_callable
from strom.runtime.operators.timer_service import InternalTimer
from strom.runtime.operators.two_input import AbstractUdfTwoInputStreamOperator, ensure_keyed_backend
from strom.runtime.streamrecord import timestamps_of

if TYPE_CHECKING:
    from strom.runtime.operators.timer_service import InternalTimerService

__all__ = [
    "CLEANUP_NAMESPACE_LEFT",
    "CLEANUP_NAMESPACE_RIGHT",
    "CLEANUP_TIMER_NAME",
    "LEFT_BUFFER",
    "RIGHT_BUFFER",
    "IntervalJoinOperator",
]

LEFT_BUFFER = "LEFT_BUFFER"
RIGHT_BUFFER = "RIGHT_BUFFER"
CLEANUP_TIMER_NAME = "CLEANUP_TIMER"
CLEANUP_NAMESPACE_LEFT = "CLEANUP_LEFT"
CLEANUP_NAMESPACE_RIGHT = "CLEANUP_RIGHT"

#: key -> timestamp -> [(value, has_been_joined), ...]
Buffer = MutableMapping[Any, dict[int, list[tuple[Any, bool]]]]


class _JoinContext(ProcessJoinFunction.Context):
    """The timestamps of the pair being joined (set before each call) and side outputs at the pair's time."""

    __slots__ = ("collector", "left_timestamp", "result_timestamp", "right_timestamp")

    def __init__(self, collector: TimestampedCollector) -> None:
        self.collector = collector
        self.left_timestamp = LONG_MIN
        self.right_timestamp = LONG_MIN
        self.result_timestamp = LONG_MIN

    def get_left_timestamp(self) -> int:
        return self.left_timestamp

    def get_right_timestamp(self) -> int:
        return self.right_timestamp

    def get_timestamp(self) -> int:
        return self.result_timestamp

    def output(self, output_tag: OutputTag, value: Any) -> None:
        if not isinstance(output_tag, OutputTag):
            raise InvalidProgramError(
                f"expected an OutputTag for ctx.output(); got a {type(output_tag).__name__}; "
                'hint: ctx.output(OutputTag("side"), value)'
            )
        self.collector.add_side(output_tag.tag_id, value, self.result_timestamp)


class IntervalJoinOperator(AbstractUdfTwoInputStreamOperator):
    """Joins the elements of two streams keyed alike whose timestamps lie within the bounds of each other.

    ``lower_bound <= upper_bound`` (milliseconds, before exclusiveness is applied); the late-data tags are the
    ``OutputTag`` s of ``side_output_left_late_data`` / ``side_output_right_late_data``, or ``None``."""

    def __init__(
        self,
        fn: object,
        key_selector1: object,
        key_selector2: object,
        *,
        lower_bound: int,
        upper_bound: int,
        lower_bound_inclusive: bool = True,
        upper_bound_inclusive: bool = True,
        left_late_data_output_tag: OutputTag | None = None,
        right_late_data_output_tag: OutputTag | None = None,
    ) -> None:
        super().__init__(fn)
        if lower_bound > upper_bound:
            raise InvalidProgramError(
                f"expected the lower bound of an interval join to be <= its upper bound; got lower {lower_bound} "
                f"ms > upper {upper_bound} ms; hint: between(-2000, 1000) joins right elements from 2 s before "
                "to 1 s after each left element"
            )
        # inclusive bounds from here on: an exclusive bound moves one millisecond inwards (Flink's trick)
        self.lower_bound = lower_bound if lower_bound_inclusive else lower_bound + 1
        self.upper_bound = upper_bound if upper_bound_inclusive else upper_bound - 1
        self.left_late_data_output_tag = left_late_data_output_tag
        self.right_late_data_output_tag = right_late_data_output_tag
        self._fn: Callable[..., Any] = as_callable(
            fn, ProcessJoinFunction, "process_element", "IntervalJoined.process()"
        )
        self.key_selector1 = key_selector1
        self.key_selector2 = key_selector2
        self._key1 = key_selector_callable(key_selector1)
        self._key2 = key_selector_callable(key_selector2)
        self._collector: TimestampedCollector = TimestampedCollector()
        self._ctx = _JoinContext(self._collector)
        self._left: Buffer = {}
        self._right: Buffer = {}
        self._timers: InternalTimerService | None = None

    def setup(self, runtime_context: StreamingRuntimeContext, output: Any) -> None:
        ensure_keyed_backend(self, runtime_context)
        super().setup(runtime_context, output)

    def open(self) -> None:
        backend = self.keyed_backend
        assert backend is not None
        self._left = backend.get_table(LEFT_BUFFER)  # restored already, if the job restores
        self._right = backend.get_table(RIGHT_BUFFER)
        self._timers = self.get_internal_timer_service(CLEANUP_TIMER_NAME, self)
        super().open()

    # -- the buffers, for tests and metrics ----------------------------------------------------------------
    @property
    def left_buffer(self) -> Buffer:
        """``key → {timestamp: [(value, joined), ...]}`` of the left input (Flink's ``getLeftBuffer``)."""
        return self._left

    @property
    def right_buffer(self) -> Buffer:
        """``key → {timestamp: [(value, joined), ...]}`` of the right input (Flink's ``getRightBuffer``)."""
        return self._right

    # -- elements (Flink's processElement1/2) ---------------------------------------------------------------
    def process_batch1(self, batch: list[Any]) -> None:
        self._process(batch, is_left=True)

    def process_batch2(self, batch: list[Any]) -> None:
        self._process(batch, is_left=False)

    def _process(self, batch: list[Any], *, is_left: bool) -> None:
        timestamps = timestamps_of(batch)
        if timestamps is None or None in timestamps:
            first = 0 if timestamps is None else timestamps.index(None)
            raise _no_timestamp(self.name, batch[first], "first" if is_left else "second")
        if is_left:
            key_of, ours, others = self._key1, self._left, self._right
            relative_lower, relative_upper = self.lower_bound, self.upper_bound
            namespace, late_tag = CLEANUP_NAMESPACE_LEFT, self.left_late_data_output_tag
        else:
            key_of, ours, others = self._key2, self._right, self._left
            relative_lower, relative_upper = -self.upper_bound, -self.lower_bound
            namespace, late_tag = CLEANUP_NAMESPACE_RIGHT, self.right_late_data_output_tag
        cleanup_delay = relative_upper if relative_upper > 0 else 0
        backend = self.keyed_backend
        timers = self._timers
        assert backend is not None and timers is not None
        collector = self._collector
        watermark = self.current_watermark
        v = None
        try:
            for v, t in zip(batch, timestamps, strict=True):
                assert t is not None
                if t < watermark:  # late: neither buffered nor joined
                    if late_tag is not None:
                        collector.add_side(late_tag.tag_id, v, t)
                    continue
                k = key_of(v)
                backend.current_key = k
                per_key = ours.get(k)
                if per_key is None:
                    per_key = {}
                bucket = per_key.get(t)
                if bucket is None:
                    per_key[t] = [(v, False)]
                else:
                    bucket.append((v, False))
                ours[k] = per_key  # stored back: a RocksDB table hands out copies
                candidates = others.get(k)
                if candidates:
                    self._join(v, t, candidates, t + relative_lower, t + relative_upper, is_left=is_left)
                timers.register_event_time_timer(namespace, t + cleanup_delay)
        except Exception as exc:
            raise self.user_error(exc, batch, v) from exc
        self._records_in += len(batch)
        collector.flush(self.output)

    def _join(
        self,
        value: Any,
        timestamp: int,
        candidates: dict[int, list[tuple[Any, bool]]],
        low: int,
        high: int,
        *,
        is_left: bool,
    ) -> None:
        """Pair ``value`` with the other side's elements of timestamps in ``[low, high]``, oldest first."""
        if high - low < len(candidates):  # fewer possible timestamps than buckets: look each one up
            stamps = [s for s in range(low, high + 1) if s in candidates]
        else:
            stamps = sorted(s for s in candidates if low <= s <= high)
        fn = self._fn
        ctx = self._ctx
        add_all = self._collector.add_all
        for s in stamps:
            if is_left:
                left_ts, right_ts = timestamp, s
            else:
                left_ts, right_ts = s, timestamp
            result_ts = left_ts if left_ts >= right_ts else right_ts
            for other, _joined in candidates[s]:
                ctx.left_timestamp, ctx.right_timestamp, ctx.result_timestamp = left_ts, right_ts, result_ts
                r = fn(value, other, ctx) if is_left else fn(other, value, ctx)
                if r is not None:
                    add_all(r, result_ts)

    # -- timers (Triggerable) -------------------------------------------------------------------------------
    def process_watermark(self, timestamp: int) -> None:
        self.current_watermark = timestamp
        if self.time_service_manager is not None:
            self.time_service_manager.advance_watermark(timestamp)
        self._collector.flush(self.output)
        self.output.emit_watermark(timestamp)

    def on_event_time(self, timer: InternalTimer) -> None:
        """A cleanup timer: drop the bucket of the timestamp it was registered for from its buffer."""
        time = timer.timestamp
        if timer.namespace == CLEANUP_NAMESPACE_LEFT:
            buffer, stamp = self._left, (time if self.upper_bound <= 0 else time - self.upper_bound)
        elif timer.namespace == CLEANUP_NAMESPACE_RIGHT:
            buffer, stamp = self._right, (time + self.lower_bound if self.lower_bound <= 0 else time)
        else:
            raise AssertionError(f"invalid namespace {timer.namespace!r} of an interval join cleanup timer")
        per_key = buffer.get(timer.key)
        if per_key is not None:
            per_key.pop(stamp, None)
            if not per_key:
                del buffer[timer.key]
            else:
                buffer[timer.key] = per_key  # stored back: a RocksDB table hands out copies

    def on_processing_time(self, timer: InternalTimer) -> None:
        """The interval join registers no processing-time timers."""


def _no_timestamp(operator: str, value: Any, which: str) -> InvalidProgramError:
    return InvalidProgramError(
        f"expected records with event timestamps in the {which} input of '{operator}'; got {value!r:.80} without "
        "one; an interval join needs event timestamps; hint: assign_timestamps_and_watermarks(...) on both streams "
        "before key_by(...).interval_join(...)"
    )
