"""Per-split watermarks (Flink's ``WatermarkOutputMultiplexer`` and ``ReaderOutput.createOutputForSplit``): the
combined watermark is the minimum over the active splits, an idle or released split does not hold it back, and the
TimestampsAndWatermarksOperator feeds each split's records of a ``SplitBatch`` to that split's generator."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from operator_harness import OperatorHarness, Record, WatermarkOut

from strom import WatermarkGenerator, WatermarkStrategy
from strom.api.eventtime import Watermark
from strom.runtime.operators.timestamps_and_watermarks import TimestampsAndWatermarksOperator
from strom.runtime.operators.watermark_output_multiplexer import WatermarkOutputMultiplexer
from strom.runtime.streamrecord import SplitBatch, batch_slice


class Out:
    def __init__(self) -> None:
        self.events: list[Any] = []

    def emit_watermark(self, watermark: Watermark) -> None:
        self.events.append(watermark.timestamp)

    def mark_idle(self) -> None:
        self.events.append("idle")

    def mark_active(self) -> None:
        if self.events and self.events[-1] == "idle":
            self.events.append("active")


def test_the_combined_watermark_is_the_minimum_over_active_splits() -> None:
    out = Out()
    m = WatermarkOutputMultiplexer(out)
    a, b = m.register_new_output("a"), m.register_new_output("b")
    a.emit_watermark(Watermark(100))
    assert out.events == []  # b still at the start of time
    b.emit_watermark(Watermark(10))
    b.emit_watermark(Watermark(50))
    a.emit_watermark(Watermark(90))  # a lower watermark of a split is ignored
    assert out.events == [10, 50]
    b.mark_idle()
    assert out.events == [10, 50, 100]
    a.mark_idle()
    assert out.events == [10, 50, 100, "idle"]
    b.emit_watermark(Watermark(60))  # active again, below the combined watermark: no step back
    assert out.events == [10, 50, 100, "idle", "active"]
    b.emit_watermark(Watermark(120))
    assert out.events[-1] == 120


def test_a_released_split_no_longer_holds_the_watermark_back() -> None:
    out = Out()
    m = WatermarkOutputMultiplexer(out)
    a, b = m.register_new_output("a"), m.register_new_output("b")
    a.emit_watermark(Watermark(30))
    b.emit_watermark(Watermark(5))
    assert out.events == [5]
    m.unregister_output("b")
    assert out.events == [5, 30]


def test_when_every_split_turns_idle_the_highest_watermark_goes_out_first() -> None:
    out = Out()
    m = WatermarkOutputMultiplexer(out)
    full, empty = m.register_new_output("full"), m.register_new_output("empty")
    full.emit_watermark(Watermark(70))
    full.mark_idle()  # idle before the empty split was: its watermark was never the minimum
    empty.mark_idle()
    assert out.events == [70, "idle"]


def _operator(strategy: WatermarkStrategy[Any]) -> OperatorHarness:
    op = TimestampsAndWatermarksOperator(strategy)
    h = OperatorHarness(op, processing_time=0)
    ctx = op.runtime_context
    assert ctx is not None
    ctx.info = replace(ctx.info, auto_watermark_interval_ms=10)
    return h.open()


def test_each_split_has_its_own_generator_and_the_slowest_split_holds_the_watermark() -> None:
    h = _operator(WatermarkStrategy.for_bounded_out_of_orderness(0))
    op = h.operator
    assert isinstance(op, TimestampsAndWatermarksOperator) and op.generates_watermarks
    op.create_output_for_split("p0")
    op.create_output_for_split("p1")
    op.process_batch(SplitBatch(["a", "b", "c"], [1000, 10, 1010], ["p0", "p1", "p0"]))
    h.set_processing_time(10)
    # one generator over all records would say 1009; per split the old partition p1 holds it at 9
    assert h.extract_output() == [Record("a", 1000), Record("b", 10), Record("c", 1010), WatermarkOut(9)]
    op.process_batch(SplitBatch(["d"], [2000], ["p1"]))
    h.set_processing_time(20)
    assert h.extract_output() == [Record("d", 2000), WatermarkOut(1009)]
    op.release_output_for_split("p0")
    assert h.extract_output() == [WatermarkOut(1999)]


def test_an_announced_split_without_records_holds_the_watermark_until_it_is_idle() -> None:
    class IdleWithoutEvents(WatermarkGenerator):
        def __init__(self) -> None:
            self.max = None

        def on_event(self, event: Any, event_timestamp: int, output: Any) -> None:
            self.max = event_timestamp

        def on_periodic_emit(self, output: Any) -> None:
            if self.max is None:
                output.mark_idle()
            else:
                output.emit_watermark(Watermark(self.max))

    h = _operator(WatermarkStrategy.for_generator(lambda ctx: IdleWithoutEvents()))
    op = h.operator
    assert isinstance(op, TimestampsAndWatermarksOperator)
    op.create_output_for_split("full")
    op.create_output_for_split("empty")
    op.process_batch(SplitBatch(["x"], [500], ["full"]))
    h.set_processing_time(10)
    assert h.extract_output() == [Record("x", 500), WatermarkOut(500)]  # the empty split went idle


def test_a_punctuated_generator_per_split_and_an_unannounced_split() -> None:
    class EveryTen(WatermarkGenerator):
        def on_event(self, event: Any, event_timestamp: int, output: Any) -> None:
            if event_timestamp % 10 == 0:
                output.emit_watermark(Watermark(event_timestamp))

        def on_periodic_emit(self, output: Any) -> None:
            pass

    h = _operator(WatermarkStrategy.for_generator(lambda ctx: EveryTen()))
    op = h.operator
    assert isinstance(op, TimestampsAndWatermarksOperator)
    op.process_batch(SplitBatch(["a", "b", "c"], [20, 10, 30], ["p0", "p1", "p0"]))
    assert h.extract_output() == [Record("a", 20), Record("b", 10), WatermarkOut(10), Record("c", 30)]


def test_no_watermarks_makes_no_split_outputs_and_slices_keep_the_split_column() -> None:
    h = _operator(WatermarkStrategy.no_watermarks())
    op = h.operator
    assert isinstance(op, TimestampsAndWatermarksOperator) and not op.generates_watermarks
    part = batch_slice(SplitBatch([1, 2, 3], [1, 2, 3], ["a", "b", "c"]), 1, 3)
    assert isinstance(part, SplitBatch) and part.split_ids == ["b", "c"] and part.timestamps == [2, 3]
