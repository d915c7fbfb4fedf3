"""The window operators (``WindowOperator`` and ``AlignedWindowOperator``, as the graph builder picks them) against
hand-computed outputs of Flink's documented semantics (the cases of Flink's
``WindowOperatorTest``): tumbling, sliding and session windows, triggers, evictors, allowed lateness and late
data, count windows, processing time, per-window state, and snapshot/restore in the middle of windows."""

from __future__ import annotations

import base64
import dataclasses
import pickle
import zlib
from collections.abc import Iterable
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from operator_harness import OperatorHarness, Record, WatermarkOut

from strom import (
    AggregateFunction,
    ContinuousEventTimeTrigger,
    CountEvictor,
    CountTrigger,
    EventTimeSessionWindows,
    EventTimeTrigger,
    GlobalWindows,
    ProcessingTimeSessionWindows,
    ProcessWindowFunction,
    PurgingTrigger,
    SlidingEventTimeWindows,
    StreamExecutionEnvironment,
    TimeEvictor,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    ValueStateDescriptor,
)
from strom.api.eventtime import LONG_MAX
from strom.api.transformations import operator_of
from strom.api.windowed_stream import uses_aligned_window_operator, window_operator
from strom.api.windowing import DynamicEventTimeSessionWindows, Trigger, TriggerResult, WindowStagger
from strom.exceptions import InvalidProgramError, UserFunctionError
from strom.runtime.checkpoint.snapshot import OperatorSnapshot
from strom.runtime.operators.windowing.aligned_window_operator import AlignedWindowOperator
from strom.runtime.operators.windowing.internal_functions import internal_window_function
from strom.runtime.operators.windowing.window_operator import WindowOperator
from strom.runtime.state.key_groups import assign_to_key_group
from strom.runtime.streamrecord import TimestampedBatch


def key0(t: tuple[Any, ...]) -> Any:
    return t[0]


def add_pairs(a: tuple[str, int], b: tuple[str, int]) -> tuple[str, int]:
    return (a[0], a[1] + b[1])


class SumCount(AggregateFunction):
    def create_accumulator(self) -> tuple[int, int]:
        return (0, 0)

    def add(self, value: tuple[str, int], acc: tuple[int, int]) -> tuple[int, int]:
        return (acc[0] + value[1], acc[1] + 1)

    def get_result(self, acc: tuple[int, int]) -> tuple[int, int]:
        return acc

    def merge(self, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
        return (a[0] + b[0], a[1] + b[1])


class WithWindow(ProcessWindowFunction):
    """Emits (key, window start, window end, the elements' values summed) — Flink's test window functions."""

    def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
        w = context.window()
        total = sum(e[1] if isinstance(e, tuple) else e for e in elements)
        yield (key, w.start, w.end, total)


def make(
    assigner: Any,
    *,
    contents: str = "reduce",
    fn: Any = None,
    trigger: Any = None,
    evictor: Any = None,
    lateness: int = 0,
    late_tag: str | None = None,
    processing_time: int = 0,
) -> OperatorHarness:
    reduce = add_pairs if contents == "reduce" else None
    aggregate = SumCount() if contents == "aggregate" else None
    op = window_operator(  # the operator the graph builder picks
        key_selector=key0,
        assigner=assigner,
        trigger=trigger or assigner.get_default_trigger(),
        evictor=evictor,
        window_function=internal_window_function(
            fn, keyed=True, reduce=reduce, aggregate=aggregate, evicting=evictor is not None
        ),
        contents=contents,
        reduce_function=reduce,
        aggregate_function=aggregate,
        allowed_lateness=lateness,
        late_data_tag=late_tag,
    )
    return OperatorHarness(op, processing_time=processing_time).open()


def by_watermark(events: list[Any]) -> list[Any]:
    """Records between two watermarks sorted (Flink's tests compare output with a same-timestamp comparator)."""
    out: list[Any] = []
    run: list[Record] = []
    for e in events:
        if isinstance(e, Record):
            run.append(e)
        else:
            out.extend(sorted(run, key=repr))
            run = []
            out.append(e)
    return out + sorted(run, key=repr)


# --- tumbling --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("contents", ["reduce", "list"])
def test_tumbling_event_time_windows_fire_when_the_watermark_passes_their_end(contents: str) -> None:
    h = make(TumblingEventTimeWindows.of(3000), contents=contents, fn=WithWindow() if contents == "list" else None)
    for key, ts in [("key2", 3999), ("key2", 3000), ("key1", 20), ("key1", 0), ("key1", 999), ("key2", 1998)]:
        h.process_element((key, 1), ts)
    h.process_elements([(("key2", 1), 1999), (("key2", 1), 1000)])
    h.process_watermark(999)
    h.process_watermark(1999)
    assert h.extract_output() == [WatermarkOut(999), WatermarkOut(1999)]
    h.process_watermark(2999)
    if contents == "reduce":
        expected = [Record(("key1", 3), 2999), Record(("key2", 3), 2999), WatermarkOut(2999)]
    else:
        expected = [Record(("key1", 0, 3000, 3), 2999), Record(("key2", 0, 3000, 3), 2999), WatermarkOut(2999)]
    assert by_watermark(h.extract_output()) == expected
    h.process_watermark(3999)
    h.process_watermark(4999)
    assert h.extract_output() == [WatermarkOut(3999), WatermarkOut(4999)]
    h.process_watermark(5999)
    two = ("key2", 2) if contents == "reduce" else ("key2", 3000, 6000, 2)
    assert h.extract_output() == [Record(two, 5999), WatermarkOut(5999)]
    assert h.operator.keyed_backend.num_keys() == 0  # type: ignore[union-attr]  # all state cleaned up


def test_aggregate_with_a_process_window_function_sees_the_accumulated_result() -> None:
    class Emit(ProcessWindowFunction):
        def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
            for s, c in elements:
                yield (key, context.window().start, s, c)

    h = make(TumblingEventTimeWindows.of(1000), contents="aggregate", fn=Emit())
    h.process_elements([(("a", 5), 10), (("a", 7), 990), (("b", 1), 500), (("a", 1), 1000)])
    h.process_watermark(999)
    assert by_watermark(h.extract_output()) == [
        Record(("a", 0, 12, 2), 999),
        Record(("b", 0, 1, 1), 999),
        WatermarkOut(999),
    ]


def test_tumbling_windows_with_an_offset() -> None:
    # Flink's docs: one-hour windows with a 15 minute offset start at 0:15, 1:15, ... (here: size 10, offset 3)
    h = make(TumblingEventTimeWindows.of(10, 3), contents="list", fn=WithWindow())
    h.process_elements([(("k", 1), 2), (("k", 1), 3), (("k", 1), 12), (("k", 1), 13)])
    h.process_watermark(20)
    assert h.records() == [("k", -7, 3, 1), ("k", 3, 13, 2)]


# --- sliding ---------------------------------------------------------------------------------------------------


def test_sliding_event_time_windows_put_each_element_in_size_over_slide_windows() -> None:
    h = make(SlidingEventTimeWindows.of(3000, 1000), contents="list", fn=WithWindow())
    h.process_elements([(("key2", 1), 3999), (("key2", 1), 3000), (("key2", 1), 20), (("key2", 1), 0)])
    h.process_elements([(("key2", 1), 999), (("key1", 1), 1998), (("key1", 1), 1999), (("key1", 1), 1000)])
    h.process_watermark(999)
    assert by_watermark(h.extract_output()) == [
        Record(("key2", -2000, 1000, 3), 999),
        WatermarkOut(999),
    ]
    h.process_watermark(1999)
    assert by_watermark(h.extract_output()) == [
        Record(("key1", -1000, 2000, 3), 1999),
        Record(("key2", -1000, 2000, 3), 1999),
        WatermarkOut(1999),
    ]
    h.process_watermark(2999)
    assert by_watermark(h.extract_output()) == [
        Record(("key1", 0, 3000, 3), 2999),
        Record(("key2", 0, 3000, 3), 2999),
        WatermarkOut(2999),
    ]
    h.process_watermark(3999)
    assert by_watermark(h.extract_output()) == [
        Record(("key1", 1000, 4000, 3), 3999),
        Record(("key2", 1000, 4000, 2), 3999),
        WatermarkOut(3999),
    ]
    h.process_watermark(7000)
    assert by_watermark(h.extract_output()) == [
        Record(("key2", 2000, 5000, 2), 4999),
        Record(("key2", 3000, 6000, 2), 5999),
        WatermarkOut(7000),
    ]


# --- sessions --------------------------------------------------------------------------------------------------


def test_event_time_session_windows_merge_elements_closer_than_the_gap() -> None:
    h = make(EventTimeSessionWindows.with_gap(3000), contents="list", fn=WithWindow())
    h.process_elements([(("key2", 1), 0), (("key2", 2), 1000), (("key2", 3), 2500)])
    h.process_elements([(("key1", 1), 10), (("key1", 2), 1000)])
    h.process_watermark(3999)
    assert by_watermark(h.extract_output()) == [Record(("key1", 10, 4000, 3), 3999), WatermarkOut(3999)]
    h.process_elements([(("key2", 4), 5501), (("key2", 5), 6000), (("key2", 5), 6000), (("key2", 6), 6050)])
    h.process_watermark(12000)
    # 5501 starts a new session: [0, 5500) and [5501, 8501) do not touch (Flink's TimeWindow.intersects)
    assert by_watermark(h.extract_output()) == [
        Record(("key2", 0, 5500, 6), 5499),
        Record(("key2", 5501, 9050, 20), 9049),
        WatermarkOut(12000),
    ]
    h.process_elements([(("key1", 1), 13000), (("key2", 1), 13500), (("key1", 2), 15000)])
    h.process_watermark(20000)
    assert by_watermark(h.extract_output()) == [
        Record(("key1", 13000, 18000, 3), 17999),
        Record(("key2", 13500, 16500, 1), 16499),
        WatermarkOut(20000),
    ]
    assert h.operator.keyed_backend.num_keys() == 0  # type: ignore[union-attr]


def test_session_windows_with_reduce_merge_their_accumulators() -> None:
    h = make(EventTimeSessionWindows.with_gap(15), contents="reduce")
    h.process_elements([(("a", 1), 0), (("a", 2), 25), (("a", 4), 12)])  # [12, 27) bridges [0, 15) and [25, 40)
    h.process_watermark(100)
    assert h.records() == [("a", 7)]


def test_dynamic_session_gap_comes_from_each_element() -> None:
    h = make(DynamicEventTimeSessionWindows.with_dynamic_gap(lambda e: e[1] * 10), contents="list", fn=WithWindow())
    h.process_elements([(("a", 1), 0), (("a", 5), 5), (("a", 1), 60)])
    h.process_watermark(1000)
    assert h.records() == [("a", 0, 55, 6), ("a", 60, 70, 1)]


# --- lateness --------------------------------------------------------------------------------------------------


def test_allowed_lateness_refires_and_late_data_goes_to_the_side_output() -> None:
    h = make(TumblingEventTimeWindows.of(2000), contents="reduce", lateness=500, late_tag="late")
    h.process_elements([(("k", 1), 100), (("k", 1), 1999)])
    h.process_watermark(1999)
    assert h.extract_output() == [Record(("k", 2), 1999), WatermarkOut(1999)]
    # late but within the allowed lateness: the window fires again at once, with everything so far
    h.process_element(("k", 1), 500)
    assert h.extract_output() == [Record(("k", 3), 1999)]
    h.process_watermark(2499)  # cleanup time = 1999 + 500: the state is gone
    assert h.extract_output() == [WatermarkOut(2499)]
    h.process_element(("k", 1), 1000)  # beyond the lateness
    assert h.extract_output() == []
    assert h.side_output("late") == [Record(("k", 1), 1000)]
    assert h.operator.keyed_backend.num_keys() == 0  # type: ignore[union-attr]


def test_late_records_without_a_side_output_are_counted_as_dropped() -> None:
    h = make(TumblingEventTimeWindows.of(1000), contents="reduce")
    h.process_watermark(5000)
    h.process_elements([(("k", 1), 10), (("k", 1), 4999), (("k", 1), 5001)])
    assert h.operator.num_late_records_dropped == 2  # type: ignore[attr-defined]
    h.process_watermark(6000)
    assert h.records() == [("k", 1)]


def test_an_element_late_for_some_sliding_windows_only_is_not_late() -> None:
    h = make(SlidingEventTimeWindows.of(2000, 1000), contents="list", fn=WithWindow(), late_tag="late")
    h.process_watermark(1500)
    h.process_element(("k", 1), 900)  # [-1000, 1000) is late, [0, 2000) is not
    assert h.side_output("late") == []
    h.process_watermark(2000)
    assert h.records() == [("k", 0, 2000, 1)]


# --- triggers --------------------------------------------------------------------------------------------------


def test_continuous_event_time_trigger_fires_early_and_at_the_end() -> None:
    h = make(TumblingEventTimeWindows.of(10000), contents="reduce", trigger=ContinuousEventTimeTrigger.of(2000))
    h.process_elements([(("k", 1), 100), (("k", 1), 1500)])
    h.process_watermark(1999)
    assert h.records() == []  # the first firing time is 2000 (the next multiple of the interval)
    h.process_watermark(2000)
    assert h.records() == [("k", 2)]
    h.process_element(("k", 1), 2500)
    h.process_watermark(4000)
    assert h.records() == [("k", 3)]
    h.process_watermark(9999)
    assert h.records() == [("k", 3), ("k", 3), ("k", 3)]  # 5999, 7999 and the end 9999


def test_count_trigger_with_purging_fires_every_n_elements_per_key() -> None:
    h = make(GlobalWindows.create(), contents="reduce", trigger=PurgingTrigger.of(CountTrigger.of(3)))
    for i in range(7):
        h.process_element(("a" if i % 2 == 0 else "b", i))
    # a: 0, 2, 4 → fires 6; b: 1, 3, 5 → fires 9; a: 6 pending
    assert h.records() == [("a", 6), ("b", 9)]


def test_custom_trigger_decides_fire_and_purge() -> None:
    class FireOnNegative(Trigger):
        def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> TriggerResult:
            return TriggerResult.FIRE_AND_PURGE if element[1] < 0 else TriggerResult.CONTINUE

        def on_event_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
            return TriggerResult.CONTINUE

        def on_processing_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
            return TriggerResult.CONTINUE

        def clear(self, window: Any, ctx: Any) -> None:
            """No state, no timers."""

    h = make(
        GlobalWindows.create(), contents="list", fn=lambda k, w, els: [[e[1] for e in els]], trigger=FireOnNegative()
    )
    for v in [1, 2, -1, 3, -2]:
        h.process_element(("k", v))
    assert h.records() == [[1, 2, -1], [3, -2]]


# --- count windows and evictors --------------------------------------------------------------------------------


def test_sliding_count_window_keeps_the_last_size_elements_and_fires_every_slide() -> None:
    # Flink's countWindow(3, 2): GlobalWindows + CountEvictor.of(3) + CountTrigger.of(2)
    h = make(GlobalWindows.create(), contents="reduce", evictor=CountEvictor.of(3), trigger=CountTrigger.of(2))
    for v in range(1, 8):
        h.process_element(("k", v))
    assert h.records() == [("k", 3), ("k", 2 + 3 + 4), ("k", 4 + 5 + 6)]


def test_time_evictor_keeps_elements_within_its_span_of_the_newest() -> None:
    h = make(TumblingEventTimeWindows.of(10000), contents="list", fn=WithWindow(), evictor=TimeEvictor.of(1000))
    h.process_elements([(("k", 1), 100), (("k", 2), 5000), (("k", 4), 5500), (("k", 8), 6000)])
    h.process_watermark(9999)
    # Flink's TimeEvictor: evict timestamps <= newest - span, so 5000 goes too
    assert h.records() == [("k", 0, 10000, 4 + 8)]


# --- processing time -------------------------------------------------------------------------------------------


def test_processing_time_tumbling_windows_fire_on_the_clock() -> None:
    h = make(TumblingProcessingTimeWindows.of(3000), contents="reduce", processing_time=0)
    h.process_element(("k", 1))
    h.set_processing_time(1000)
    h.process_element(("k", 1))
    h.set_processing_time(2998)
    assert h.records() == []
    h.set_processing_time(2999)
    assert h.extract_output() == [Record(("k", 2), 2999)]
    h.process_element(("k", 5))
    h.set_processing_time(7000)
    assert h.records() == [("k", 5)]


def test_processing_time_sessions_close_after_the_gap() -> None:
    h = make(ProcessingTimeSessionWindows.with_gap(1000), contents="reduce", processing_time=0)
    h.process_element(("k", 1))
    h.set_processing_time(500)
    h.process_element(("k", 1))
    h.set_processing_time(1498)
    assert h.records() == []
    h.set_processing_time(1499)  # the merged session [0, 1500) ends
    assert h.records() == [("k", 2)]


# --- per-window state ------------------------------------------------------------------------------------------


def test_process_window_function_per_window_state_lives_until_clear() -> None:
    firings = ValueStateDescriptor("firings")

    class CountFirings(ProcessWindowFunction):
        def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
            state = context.window_state().get_state(firings)
            n = (state.value() or 0) + 1
            state.update(n)
            yield (key, context.window().start, n)

        def clear(self, context: Any) -> None:
            context.window_state().get_state(firings).clear()

    h = make(TumblingEventTimeWindows.of(1000), contents="list", fn=CountFirings(), lateness=1000)
    h.process_element(("k", 1), 10)
    h.process_watermark(999)
    h.process_element(("k", 1), 20)  # late within lateness: fires again
    assert h.records() == [("k", 0, 1), ("k", 0, 2)]
    h.process_watermark(1999)  # cleanup: contents, and the per-window state through clear()
    assert h.operator.keyed_backend.num_keys() == 0  # type: ignore[union-attr]


# --- checkpoints -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "assigner",
    [TumblingEventTimeWindows.of(1000), SlidingEventTimeWindows.of(2000, 500), EventTimeSessionWindows.with_gap(300)],
    ids=["tumbling", "sliding", "session"],
)
def test_snapshot_mid_window_and_restore_gives_the_uninterrupted_output(assigner: Any) -> None:
    # the second half is not late for the watermark of the first (watermarks are not state: a restored operator
    # starts at Long.MIN_VALUE, as in Flink, and would accept records the first run dropped as late)
    first = [((f"k{i % 3}", i), i * 37 % 1500) for i in range(30)]
    second = [((f"k{i % 3}", i), 1500 + i * 53 % 1500) for i in range(30, 60)]

    def run(restart: bool) -> list[Any]:
        h = make(assigner, contents="list", fn=WithWindow())
        h.process_elements(first)
        h.process_watermark(700)
        out = h.records()
        if restart:
            h = _restored(assigner, h.snapshot())
        h.process_elements(second)
        h.process_watermark(10_000)
        return sorted(out + h.records())

    assert run(restart=True) == run(restart=False)


def _restored(assigner: Any, snap: Any) -> OperatorHarness:
    op = window_operator(
        key_selector=key0,
        assigner=assigner,
        trigger=assigner.get_default_trigger(),
        evictor=None,
        window_function=internal_window_function(WithWindow(), keyed=True),
        contents="list",
    )
    return OperatorHarness(op).open(restore=snap)


def test_a_trigger_that_cannot_merge_is_refused_for_session_windows() -> None:
    class NoMerge(Trigger):
        def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> TriggerResult:
            return TriggerResult.CONTINUE

        def on_event_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
            return TriggerResult.FIRE

        def on_processing_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
            return TriggerResult.CONTINUE

        def clear(self, window: Any, ctx: Any) -> None:
            """No state, no timers."""

    with pytest.raises(InvalidProgramError, match="can_merge"):
        make(EventTimeSessionWindows.with_gap(10), trigger=NoMerge())


# --- the AlignedWindowOperator equals the WindowOperator --------------------------------------------------------


class _GeneralEventTimeTrigger(EventTimeTrigger):
    """The same trigger under another type: the graph builder picks the (general) WindowOperator."""


@settings(max_examples=60, deadline=None)
@example(  # late elements within the lateness fire the window one by one, each seeing the pane so far
    events=[("a", 0, 0)] * 7 + [("a", 1, 0)],
    watermarks=[0, 0, 999],
    sliding=False,
    lateness=700,
    contents="reduce",
    process=False,
    uneven=False,
)
@given(
    events=st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 50), st.integers(0, 5000)), max_size=80),
    watermarks=st.lists(st.integers(0, 6000), max_size=6),
    sliding=st.booleans(),
    lateness=st.sampled_from([0, 700]),
    contents=st.sampled_from(["reduce", "list", "aggregate"]),
    process=st.booleans(),
    uneven=st.booleans(),
)
def test_the_aligned_operator_emits_what_the_window_operator_emits(
    events: list[tuple[str, int, int]],
    watermarks: list[int],
    sliding: bool,
    lateness: int,
    contents: str,
    process: bool,
    uneven: bool,
) -> None:
    # uneven: a size that is no multiple of the slide (an element's windows depend on its timestamp, not its slide)
    slides = SlidingEventTimeWindows.of(1500, 1000) if uneven else SlidingEventTimeWindows.of(2000, 500)
    assigner = slides if sliding else TumblingEventTimeWindows.of(1000)

    def run(trigger: Any) -> tuple[list[Any], list[Any]]:
        fn = WithWindow() if contents == "list" or process else None
        h = make(assigner, contents=contents, fn=fn, trigger=trigger, lateness=lateness, late_tag="late")
        assert isinstance(h.operator, AlignedWindowOperator) is (type(trigger) is EventTimeTrigger)
        chunks = max(1, len(watermarks))
        step = max(1, len(events) // chunks)
        marks = sorted(watermarks)
        for i in range(chunks):
            h.process_elements([((k, v), t) for k, v, t in events[i * step : (i + 1) * step]] or [(("z", 0), 0)])
            if i < len(marks):
                h.process_watermark(marks[i])
        h.process_elements([((k, v), t) for k, v, t in events[chunks * step :]] or [(("z", 0), 0)])
        h.process_watermark(1 << 62)
        return by_watermark(h.extract_output()), h.side_output("late")

    assert run(EventTimeTrigger()) == run(_GeneralEventTimeTrigger())


@pytest.mark.parametrize("assigner", [TumblingEventTimeWindows.of(1000), SlidingEventTimeWindows.of(2000, 500)])
def test_the_aligned_operator_names_a_record_without_a_timestamp(assigner: Any) -> None:
    h = make(assigner, contents="aggregate")
    with pytest.raises(UserFunctionError, match="without one"):
        h.operator.process_batch(TimestampedBatch([("a", 1), ("b", 2)], [5, None]))


# --- the aligned operator's window-major panes in checkpoints ---------------------------------------------------


def _op(assigner: Any, trigger: Any, *, lateness: int, contents: str = "aggregate") -> WindowOperator:
    return window_operator(
        key_selector=key0,
        assigner=assigner,
        trigger=trigger,
        evictor=None,
        window_function=internal_window_function(WithWindow(), keyed=True, aggregate=SumCount()),
        contents=contents,
        aggregate_function=SumCount(),
        allowed_lateness=lateness,
        late_data_tag="late",
    )


def _drive(h: OperatorHarness, steps: list[tuple[str, Any]]) -> list[Any]:
    for kind, arg in steps:
        if kind == "elements":
            h.process_elements(arg)
        else:
            h.process_watermark(arg)
    return by_watermark(h.extract_output()) + [("late", r) for r in h.side_output("late")]


@settings(max_examples=40, deadline=None)
@given(
    events=st.lists(st.tuples(st.sampled_from("abcd"), st.integers(0, 9), st.integers(0, 5000)), max_size=60),
    watermarks=st.lists(st.integers(0, 6000), min_size=2, max_size=6),
    sliding=st.booleans(),
    lateness=st.sampled_from([0, 700]),
    split=st.integers(0, 6),
)
def test_a_snapshot_of_either_operator_restores_into_either(
    events: list[tuple[str, int, int]], watermarks: list[int], sliding: bool, lateness: int, split: int
) -> None:
    """The aligned operator's panes and timers are written as the WindowOperator keeps them: a snapshot taken on one
    operator and restored on the other continues exactly as on one operator throughout."""
    assigner = SlidingEventTimeWindows.of(2000, 500) if sliding else TumblingEventTimeWindows.of(1000)
    marks = sorted(watermarks)
    step = max(1, len(events) // len(marks))
    steps: list[tuple[str, Any]] = []
    for i, mark in enumerate(marks):
        chunk = [((k, v), t) for k, v, t in events[i * step : (i + 1) * step]]
        if chunk:
            steps.append(("elements", chunk))
        steps.append(("watermark", mark))
    steps.append(("elements", [((k, v), t) for k, v, t in events[len(marks) * step :]] or [(("z", 0), 0)]))
    steps.append(("watermark", 1 << 62))
    cut = min(split, len(steps))
    triggers = {"aligned": EventTimeTrigger(), "general": _GeneralEventTimeTrigger()}

    def run(before: str, after: str) -> list[Any]:
        h = OperatorHarness(_op(assigner, triggers[before], lateness=lateness)).open()
        out = _drive(h, steps[:cut])
        snap = h.operator.snapshot_state(1, 0)  # None: no state at all
        h = OperatorHarness(_op(assigner, triggers[after], lateness=lateness)).open(restore=snap)
        out += _drive(h, steps[cut:])
        if after == "aligned":
            store = h.operator._store  # type: ignore[attr-defined]
            assert not store.panes and not store.pending and store.queue.peek() is None  # all state gone
        return out

    expected = run("general", "general")
    assert run("aligned", "aligned") == expected
    assert run("aligned", "general") == expected
    assert run("general", "aligned") == expected


def test_a_restore_merging_subtasks_fires_a_window_for_the_keys_whose_timer_says_so() -> None:
    """Rescaling merges key groups of subtasks whose watermarks differed: a window one of them fired (its panes wait
    for their cleanup, allowed lateness) fires again only for the keys of the other, and for keys with an element
    since — the EventTimeTrigger registers the timer with every element."""
    assigner = TumblingEventTimeWindows.of(1000)
    keys = ["a", "b", "c", "d", "e", "f", "g", "h"]
    groups = {k: assign_to_key_group(k, 128) for k in keys}
    fired, waiting = keys[0], next(k for k in keys[1:] if groups[k] != groups[keys[0]])
    fresh = next(k for k in keys[1:] if groups[k] not in (groups[fired], groups[waiting]))
    idle = next(k for k in keys[1:] if groups[k] not in (groups[fired], groups[waiting], groups[fresh]))

    def run(trigger: Any) -> list[Any]:
        one = OperatorHarness(_op(assigner, trigger, lateness=700)).open()
        one.process_elements([((fired, 1), 100), ((idle, 1), 150)])
        one.process_watermark(999)  # the window fired here; its panes stay until 1699
        two = OperatorHarness(_op(assigner, trigger, lateness=700)).open()
        two.process_elements([((waiting, 1), 200)])
        two.process_watermark(500)
        merged = dict(one.snapshot().keyed)
        merged.update(two.snapshot().keyed)
        h = OperatorHarness(_op(assigner, trigger, lateness=700)).open(restore=OperatorSnapshot(keyed=merged))
        h.process_elements([((fresh, 1), 300), ((fired, 1), 400)])
        h.process_watermark(999)
        h.process_elements([((fired, 1), 50)])  # within the lateness: fires at once
        h.process_watermark(5000)
        return by_watermark(h.extract_output())

    out = run(EventTimeTrigger())
    assert out == run(_GeneralEventTimeTrigger())
    values = [r.value for r in out if isinstance(r, Record)]
    assert sorted(values[:3]) == sorted([(waiting, 0, 1000, 1), (fresh, 0, 1000, 1), (fired, 0, 1000, 2)])
    assert values[3:] == [(fired, 0, 1000, 3)]  # the idle key's pane never fires again


# --- the operator the graph builder picks -----------------------------------------------------------------------


class _Sub(EventTimeTrigger):
    """A subclass may change what fires: the general operator."""


@pytest.mark.parametrize(
    ("assigner", "trigger", "evictor", "batch", "aligned"),
    [
        (TumblingEventTimeWindows.of(1000), EventTimeTrigger(), None, False, True),
        (TumblingEventTimeWindows.of(1000, 300), EventTimeTrigger(), None, False, True),
        (SlidingEventTimeWindows.of(2000, 500), EventTimeTrigger(), None, False, True),
        (SlidingEventTimeWindows.of(1500, 1000), EventTimeTrigger(), None, False, True),
        (TumblingEventTimeWindows.of(1000, 0, WindowStagger.RANDOM), EventTimeTrigger(), None, False, False),
        (TumblingEventTimeWindows.of(1000), EventTimeTrigger(), None, True, False),  # BATCH: key by key
        (TumblingEventTimeWindows.of(1000), _Sub(), None, False, False),
        (TumblingEventTimeWindows.of(1000), ContinuousEventTimeTrigger.of(100), None, False, False),
        (TumblingEventTimeWindows.of(1000), EventTimeTrigger(), CountEvictor.of(2), False, False),
        (TumblingProcessingTimeWindows.of(1000), EventTimeTrigger(), None, False, False),
        (EventTimeSessionWindows.with_gap(100), EventTimeTrigger(), None, False, False),
        (GlobalWindows.create(), CountTrigger.of(2), None, False, False),
    ],
)
def test_the_aligned_operator_is_picked_for_tumbling_and_sliding_event_time_windows_only(
    assigner: Any, trigger: Any, evictor: Any, batch: bool, aligned: bool
) -> None:
    assert uses_aligned_window_operator(assigner, trigger, evictor, batch=batch) is aligned
    op = window_operator(
        key_selector=key0,
        assigner=assigner,
        trigger=trigger,
        evictor=evictor,
        window_function=internal_window_function(None, keyed=True, reduce=add_pairs, evicting=evictor is not None),
        contents="reduce",
        reduce_function=add_pairs,
        batch=batch,
    )
    assert type(op) is (AlignedWindowOperator if aligned else WindowOperator)


@pytest.mark.parametrize("mode", ["STREAMING", "BATCH"])
def test_a_windowed_stream_builds_the_operator_the_rule_picks(mode: str) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(mode)
    keyed = env.from_collection([("a", 1)]).key_by(key0)
    tumbling = keyed.window(TumblingEventTimeWindows.of(1000)).reduce(add_pairs)
    sessions = keyed.window(EventTimeSessionWindows.with_gap(10)).reduce(add_pairs)
    aligned = type(operator_of(tumbling.get_transformation()))
    assert aligned is (AlignedWindowOperator if mode == "STREAMING" else WindowOperator)
    assert type(operator_of(sessions.get_transformation())) is WindowOperator


def test_the_aligned_operator_refuses_windows_it_does_not_cover() -> None:
    with pytest.raises(InvalidProgramError, match="AlignedWindowOperator"):
        AlignedWindowOperator(
            key_selector=key0,
            assigner=EventTimeSessionWindows.with_gap(10),
            trigger=EventTimeTrigger(),
            evictor=None,
            window_function=internal_window_function(None, keyed=True, reduce=add_pairs),
            contents="reduce",
            reduce_function=add_pairs,
        )


# A savepoint of the window operator before the split into AlignedWindowOperator and WindowOperator (its fast path,
# strom at 548a80b): TumblingEventTimeWindows.of(1000), SumCount, allowed lateness 700; the elements (a, 1)@100,
# (b, 2)@900, (a, 3)@1500, (c, 4)@2100 and the watermark 999 (the window [0, 1000) fired and waits for its cleanup).
_SAVEPOINT_BEFORE_THE_SPLIT = (
    "eJxrYJl6lokBDGqnaHjzOz9uYJ16gwEu0sNellpUnJmfN8WbsYclN7UkcUrtlB7+8sy8lPxy3eT8vJLUvJLiKT3cienpRanpiSWZeelTOtumFPe"
    "wFZcklqQWTwEZohBfkpmbWhQPFtJPLQPqiYcaAZYAqQIay5gMVi1dXFKUn6uXWJCpB1EENBPKAtrEFQLUEQ7mTZk8xfcCu+8O7rYpjVN8twOpjg"
    "wh32I+IF1a3DYlgwVkagYPEAt5s3gzAl0FFC0t1Zvibe78F+jPTwPlz0SS/enN4PuCGezNxWwgbwoAuUC/g0XOs4NERH27uTA8rgH0OSPI5xm"
    "i3swguhQWAjbON4EhcG6gQiAJRFIQAMXo8cuEHL+legBRlR+e"
)


@pytest.mark.parametrize("operator", ["picked", "general"])
def test_a_savepoint_taken_before_the_split_restores_into_the_operator_the_graph_picks(operator: str) -> None:
    keyed = pickle.loads(zlib.decompress(base64.b64decode(_SAVEPOINT_BEFORE_THE_SPLIT)))
    trigger = EventTimeTrigger() if operator == "picked" else _GeneralEventTimeTrigger()
    op = _op(TumblingEventTimeWindows.of(1000), trigger, lateness=700)
    assert type(op) is (AlignedWindowOperator if operator == "picked" else WindowOperator)
    h = OperatorHarness(op).open(restore=OperatorSnapshot(keyed=keyed))
    h.process_elements([(("a", 5), 1200), (("c", 6), 2500), (("d", 7), 2999), (("b", 8), 1999)])
    h.process_watermark(1999)
    h.process_elements([(("a", 9), 1800)])  # within the allowed lateness of [1000, 2000): fires at once
    h.process_watermark(5000)
    # what the operator before the split emitted after this restore, and without the restore
    assert by_watermark(h.extract_output()) == [
        Record(("a", 1000, 2000, 2), 1999),
        Record(("b", 1000, 2000, 1), 1999),
        WatermarkOut(1999),
        Record(("a", 1000, 2000, 3), 1999),
        Record(("c", 2000, 3000, 2), 2999),
        Record(("d", 2000, 3000, 1), 2999),
        WatermarkOut(5000),
    ]
    assert h.side_output("late") == []


# --- errors name the record, on either operator -----------------------------------------------------------------


class _FailsOn(SumCount):
    def add(self, value: tuple[str, int], acc: tuple[int, int]) -> tuple[int, int]:
        if value[1] == 13:
            raise ValueError("thirteen")
        return super().add(value, acc)


@pytest.mark.parametrize("sliding", [False, True])
@pytest.mark.parametrize("where", ["key selector", "aggregate function"])
def test_both_operators_name_the_record_user_code_failed_on(sliding: bool, where: str) -> None:
    assigner = SlidingEventTimeWindows.of(2000, 500) if sliding else TumblingEventTimeWindows.of(1000)

    def key(t: tuple[str, int]) -> str:
        if where == "key selector" and t[1] == 13:
            raise KeyError("no key for thirteen")
        return t[0]

    def message(trigger: Any) -> str:
        agg = _FailsOn() if where == "aggregate function" else SumCount()
        op = window_operator(
            key_selector=key,
            assigner=assigner,
            trigger=trigger,
            evictor=None,
            window_function=internal_window_function(None, keyed=True, aggregate=agg),
            contents="aggregate",
            aggregate_function=agg,
        )
        op.name = "Window(Aggregate)"  # the transformation's name, as the stream graph sets it
        h = OperatorHarness(op).open()
        h.process_elements([(("a", 1), 100), (("b", 2), 1100)])
        with pytest.raises(UserFunctionError) as failed:  # the 13 is record #4, in the window of record #2
            h.process_elements([(("a", 3), 1200), (("b", 4), 300), (("c", 5), 1300), (("c", 13), 350)])
        return str(failed.value)

    aligned = message(EventTimeTrigger())
    assert "on input record #5 (('c', 13))" in aligned
    assert aligned == message(_GeneralEventTimeTrigger())


# --- BATCH execution --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lateness", [0, 700])
@pytest.mark.parametrize("sliding", [False, True])
def test_an_aligned_operator_in_batch_execution_fires_key_by_key_as_the_window_operator(
    sliding: bool, lateness: int
) -> None:
    """BATCH set after the window was built (the builder picks the WindowOperator for BATCH): the aligned operator
    hands its panes to the timers at the end of input, which fire them in Flink's batch order."""
    assigner = SlidingEventTimeWindows.of(2000, 500) if sliding else TumblingEventTimeWindows.of(1000)
    events = [((f"k{i % 7}", i), (i * 7919) % 5000) for i in range(60)]

    def run(trigger: Any) -> list[Any]:
        h = OperatorHarness(_op(assigner, trigger, lateness=lateness))
        ctx = h.operator.runtime_context
        assert ctx is not None
        ctx.info = dataclasses.replace(ctx.info, batch_execution=True)
        h.open()
        h.process_elements(events[:30])
        h.process_elements(events[30:])
        h.process_watermark(LONG_MAX)
        return h.extract_output()

    out = run(EventTimeTrigger())
    assert out == run(_GeneralEventTimeTrigger())  # the same order: key by key
    assert len(out) > 10


class _Ordered(ProcessWindowFunction):
    """Emits the pane as it is, in order (a pane's order is the order of its elements' arrival)."""

    def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
        yield (key, context.window().start, tuple(elements))


class _Sequence(AggregateFunction):
    """An aggregate whose result depends on the order of its inputs."""

    def create_accumulator(self) -> tuple[int, ...]:
        return ()

    def add(self, value: tuple[str, int], acc: tuple[int, ...]) -> tuple[int, ...]:
        return (*acc, value[1])

    def get_result(self, acc: tuple[int, ...]) -> tuple[int, ...]:
        return acc

    def merge(self, a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
        return a + b


def _then(a: tuple[str, Any], b: tuple[str, Any]) -> tuple[str, Any]:
    return (a[0], f"{a[1]}.{b[1]}")  # not commutative


@settings(max_examples=60, deadline=None)
@given(
    events=st.lists(st.tuples(st.sampled_from("ab"), st.integers(0, 99), st.integers(0, 3000)), max_size=60),
    watermarks=st.lists(st.integers(0, 3000), max_size=3),
    assigner=st.sampled_from(
        [TumblingEventTimeWindows.of(500), SlidingEventTimeWindows.of(1000, 250), SlidingEventTimeWindows.of(700, 300)]
    ),
    contents=st.sampled_from(["reduce", "list", "aggregate"]),
    lateness=st.sampled_from([0, 400]),
)
def test_both_operators_keep_the_arrival_order_in_a_pane(
    events: list[tuple[str, int, int]], watermarks: list[int], assigner: Any, contents: str, lateness: int
) -> None:
    """Out-of-order timestamps interleave windows (and slide intervals) within a batch: a pane still sees its
    elements in the order they arrived, so order-sensitive functions give the same results on both operators."""

    def run(trigger: Any) -> tuple[list[Any], list[Any]]:
        reduce = _then if contents == "reduce" else None
        agg = _Sequence() if contents == "aggregate" else None
        fn = _Ordered() if contents == "list" else None
        op = window_operator(
            key_selector=key0,
            assigner=assigner,
            trigger=trigger,
            evictor=None,
            window_function=internal_window_function(fn, keyed=True, reduce=reduce, aggregate=agg),
            contents=contents,
            reduce_function=reduce,
            aggregate_function=agg,
            allowed_lateness=lateness,
            late_data_tag="late",
        )
        h = OperatorHarness(op).open()
        half = len(events) // 2
        h.process_elements([((k, v), t) for k, v, t in events[:half]] or [(("z", 0), 0)])
        for mark in sorted(watermarks):
            h.process_watermark(mark)
        h.process_elements([((k, v), t) for k, v, t in events[half:]] or [(("z", 0), 0)])
        h.process_watermark(1 << 62)
        return by_watermark(h.extract_output()), h.side_output("late")

    assert run(EventTimeTrigger()) == run(_GeneralEventTimeTrigger())


@pytest.mark.parametrize("sliding", [False, True])
def test_both_operators_name_the_earliest_of_several_failing_records(sliding: bool) -> None:
    assigner = SlidingEventTimeWindows.of(2000, 500) if sliding else TumblingEventTimeWindows.of(1000)

    def message(trigger: Any) -> str:
        agg = _FailsOn()
        op = window_operator(
            key_selector=key0,
            assigner=assigner,
            trigger=trigger,
            evictor=None,
            window_function=internal_window_function(None, keyed=True, aggregate=agg),
            contents="aggregate",
            aggregate_function=agg,
        )
        op.name = "Window(Aggregate)"
        h = OperatorHarness(op).open()
        with pytest.raises(UserFunctionError) as failed:  # the first 13 is record #1, in the second window
            h.process_elements([(("a", 1), 1100), (("b", 13), 100), (("c", 2), 1200), (("d", 13), 1300)])
        return str(failed.value)

    aligned = message(EventTimeTrigger())
    assert "on input record #1 (('b', 13))" in aligned
    assert aligned == message(_GeneralEventTimeTrigger())
