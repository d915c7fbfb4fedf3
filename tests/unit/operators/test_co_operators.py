"""Two-input operators: co-map / co-flat-map / co-process, keyed co-process with timers, and the broadcast
state pattern's operators — driven input by input with a manual clock, as Flink's
``KeyedTwoInputStreamOperatorTestHarness`` tests do."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from operator_harness import Record, TwoInputOperatorHarness, WatermarkOut

from strom.api.co_functions import (
    BroadcastProcessFunction,
    BroadcastState,
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    KeyedBroadcastProcessFunction,
    KeyedCoProcessFunction,
)
from strom.api.output_tag import OutputTag
from strom.api.state import MapStateDescriptor, ValueStateDescriptor
from strom.exceptions import UserFunctionError
from strom.runtime.operators.co.co_broadcast import CoBroadcastWithKeyedOperator, CoBroadcastWithNonKeyedOperator
from strom.runtime.operators.co.co_process import (
    CoProcessOperator,
    CoStreamFlatMap,
    CoStreamMap,
    KeyedCoProcessOperator,
)

pytestmark = pytest.mark.timeout(30)


class Tag(CoMapFunction):
    def map1(self, value: Any) -> Any:
        return ("one", value)

    def map2(self, value: Any) -> Any:
        return ("two", value)


def test_co_map_keeps_each_records_timestamp_and_combines_the_watermarks_of_both_inputs() -> None:
    h = TwoInputOperatorHarness(CoStreamMap(Tag())).open()
    h.process_element1("a", 5)
    h.process_element2("b", 3)
    h.process_watermark1(10)  # input 2 is still at the beginning of time: nothing yet
    h.process_watermark2(4)
    h.process_watermark2(20)
    h.process_watermark1(15)
    assert h.extract_output() == [
        Record(("one", "a"), 5),
        Record(("two", "b"), 3),
        WatermarkOut(4),
        WatermarkOut(10),
        WatermarkOut(15),
    ]


def test_an_idle_input_does_not_hold_back_event_time_and_both_idle_is_idle() -> None:
    h = TwoInputOperatorHarness(CoStreamMap(Tag())).open()
    h.process_watermark1(100)
    h.process_watermark_status2(True)  # input 2 idle: input 1 alone decides
    h.process_watermark_status1(True)
    h.process_watermark_status1(False)
    assert h.extract_output() == [WatermarkOut(100), "idle", "active"]


class Split(CoFlatMapFunction):
    def flat_map1(self, value: str) -> Iterable[str]:
        return value.split()

    def flat_map2(self, value: int) -> Iterable[int]:
        yield from range(value)


def test_co_flat_map_emits_any_number_of_records_per_input_record() -> None:
    h = TwoInputOperatorHarness(CoStreamFlatMap(Split())).open()
    h.process_element1("to be", 1)
    h.process_element2(2, 7)
    h.process_element2(0, 8)
    assert h.extract_output() == [Record("to", 1), Record("be", 1), Record(0, 7), Record(1, 7)]


class ControlFunction(CoFlatMapFunction):
    """Flink's training example: words of a key are dropped once the control stream named that key."""

    def open(self, ctx: Any) -> None:
        self.blocked = ctx.get_state(ValueStateDescriptor("blocked"))

    def flat_map1(self, control: str) -> None:
        self.blocked.update(True)

    def flat_map2(self, word: str) -> Iterable[str]:
        if not self.blocked.value():
            yield word


def test_keyed_co_flat_map_scopes_state_to_the_key_of_each_input_record() -> None:
    h = TwoInputOperatorHarness(CoStreamFlatMap(ControlFunction(), str, str)).open()
    h.process_element1("DROP")
    h.process_element1("IGNORE")
    for word in ["Apache", "DROP", "Flink", "IGNORE"]:
        h.process_element2(word)
    assert h.records() == ["Apache", "Flink"]


class Sides(CoProcessFunction):
    def __init__(self, tag: OutputTag) -> None:
        self.tag = tag

    def process_element1(self, value: Any, ctx: Any) -> Iterable[Any]:
        yield (value, ctx.timestamp(), ctx.timer_service().current_watermark())

    def process_element2(self, value: Any, ctx: Any) -> None:
        ctx.output(self.tag, value)


def test_co_process_sees_timestamps_and_the_combined_watermark_and_writes_side_outputs() -> None:
    h = TwoInputOperatorHarness(CoProcessOperator(Sides(OutputTag("second")))).open()
    h.process_watermark(50)
    h.process_element1("x", 60)
    h.process_element2("y", 70)
    assert h.records() == [("x", 60, 50)]
    assert h.side_output("second") == [Record("y", 70)]


class Match(KeyedCoProcessFunction):
    """Orders wait for their payment until 100 ms of event time after the order; then they are reported."""

    def open(self, ctx: Any) -> None:
        self.order = ctx.get_state(ValueStateDescriptor("order"))
        self.paid = ctx.get_state(ValueStateDescriptor("paid"))

    def process_element1(self, order: tuple[str, int], ctx: Any) -> Iterable[Any]:
        if self.paid.value():
            yield ("paid", ctx.get_current_key())
            self.paid.clear()
        else:
            self.order.update(order)
            ctx.timer_service().register_event_time_timer(ctx.timestamp() + 100)

    def process_element2(self, payment: tuple[str, int], ctx: Any) -> Iterable[Any]:
        if self.order.value() is not None:
            yield ("paid", ctx.get_current_key())
            self.order.clear()
        else:
            self.paid.update(True)

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any]:
        if self.order.value() is not None:
            yield ("unpaid", ctx.get_current_key(), timestamp, ctx.time_domain().name)
            self.order.clear()


def _key(e: tuple[str, int]) -> str:
    return e[0]


def test_keyed_co_process_shares_state_and_timers_of_a_key_across_both_inputs_and_restores_them() -> None:
    h = TwoInputOperatorHarness(KeyedCoProcessOperator(Match(), _key, _key)).open()
    h.process_element1(("o1", 0), 0)
    h.process_element2(("o2", 5), 5)  # paid before ordered
    h.process_element1(("o2", 10), 10)
    h.process_element1(("o3", 20), 20)
    snap = h.snapshot()
    assert h.records() == [("paid", "o2")]

    restored = TwoInputOperatorHarness(KeyedCoProcessOperator(Match(), _key, _key)).open(restore=snap)
    restored.process_element2(("o3", 30), 30)
    restored.process_watermark(150)
    assert restored.extract_output() == [
        Record(("paid", "o3"), 30),
        Record(("unpaid", "o1", 100, "EVENT_TIME"), 100),
        WatermarkOut(150),
    ]


RULES = MapStateDescriptor("rules")


class Threshold(BroadcastProcessFunction):
    def process_element(self, value: int, ctx: Any) -> Iterable[Any]:
        limit = ctx.get_broadcast_state(RULES).get("limit")
        if limit is not None and value > limit:
            yield value

    def process_broadcast_element(self, value: tuple[str, int], ctx: Any) -> None:
        ctx.get_broadcast_state(RULES).put(*value)


def test_broadcast_elements_update_the_state_the_data_side_reads_and_it_is_checkpointed() -> None:
    h = TwoInputOperatorHarness(CoBroadcastWithNonKeyedOperator(Threshold(), (RULES,))).open()
    h.process_element1(100)  # no rule yet
    h.process_element2(("limit", 10))
    h.process_element1(5)
    h.process_element1(11)
    snap = h.snapshot()
    assert h.records() == [11]
    restored = TwoInputOperatorHarness(CoBroadcastWithNonKeyedOperator(Threshold(), (RULES,))).open(restore=snap)
    restored.process_element1(12)
    assert restored.records() == [12]


class Writes(BroadcastProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> None:
        state = ctx.get_broadcast_state(RULES)
        assert not isinstance(state, BroadcastState)
        state.put("x", 1)  # read-only: no put

    def process_broadcast_element(self, value: Any, ctx: Any) -> None:
        ctx.get_broadcast_state(MapStateDescriptor("undeclared"))


def test_the_data_side_cannot_write_broadcast_state_and_undeclared_states_are_named() -> None:
    h = TwoInputOperatorHarness(CoBroadcastWithNonKeyedOperator(Writes(), (RULES,))).open()
    with pytest.raises(UserFunctionError, match="put"):
        h.process_element1(1)
    with pytest.raises(UserFunctionError, match=r"declared in broadcast.*'rules'"):
        h.process_element2(1)


class ShapeRules(KeyedBroadcastProcessFunction):
    """Counts items per color; a broadcast "reset" clears every color's count (``apply_to_keyed_state``)."""

    def open(self, ctx: Any) -> None:
        self.count = ctx.get_state(ValueStateDescriptor("count"))

    def process_element(self, item: tuple[str, str], ctx: Any) -> Iterable[Any]:
        self.count.update((self.count.value() or 0) + 1)
        if ctx.get_broadcast_state(RULES).contains(item[1]):
            yield (ctx.get_current_key(), item[1], self.count.value())
        ctx.timer_service().register_event_time_timer(1000)

    def process_broadcast_element(self, rule: str, ctx: Any) -> None:
        if rule == "reset":
            ctx.apply_to_keyed_state(ValueStateDescriptor("count"), lambda key, state: state.clear())
        else:
            ctx.get_broadcast_state(RULES).put(rule, True)

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any]:
        yield ("timer", ctx.get_current_key(), self.count.value(), ctx.get_broadcast_state(RULES).keys())


def test_keyed_broadcast_reads_rules_per_key_visits_all_keys_and_fires_timers_after_restore() -> None:
    def make() -> CoBroadcastWithKeyedOperator:
        return CoBroadcastWithKeyedOperator(ShapeRules(), (RULES,), _key)

    h = TwoInputOperatorHarness(make()).open()
    h.process_element2("square", 0)
    h.process_element1(("red", "square"), 1)
    h.process_element1(("blue", "circle"), 2)
    h.process_element1(("red", "circle"), 3)
    assert h.records() == [("red", "square", 1)]
    h.process_element2("reset", 4)
    h.process_element1(("red", "square"), 5)
    snap = h.snapshot()
    assert h.records() == [("red", "square", 1)]
    restored = TwoInputOperatorHarness(make()).open(restore=snap)
    restored.process_watermark(1000)
    assert sorted(restored.records()) == [("timer", "blue", None, ["square"]), ("timer", "red", 1, ["square"])]
