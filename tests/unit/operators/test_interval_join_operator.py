"""IntervalJoinOperator: the cases of Flink's ``IntervalJoinOperatorTest`` with its inputs and expected outputs
(each run with the left input ahead and with the right input ahead), plus the cleanup timers' times and
namespaces, rescaling of the buffers by key group, the join context and the API's build-time checks."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from operator_harness import Record, TwoInputOperatorHarness, WatermarkOut

from strom import OutputTag, StreamExecutionEnvironment
from strom.api.co_functions import ProcessJoinFunction
from strom.exceptions import InvalidProgramError, UserFunctionError
from strom.runtime.checkpoint.snapshot import OperatorSnapshot
from strom.runtime.operators.co.interval_join import (
    CLEANUP_NAMESPACE_LEFT,
    CLEANUP_NAMESPACE_RIGHT,
    CLEANUP_TIMER_NAME,
    IntervalJoinOperator,
)
from strom.runtime.state.key_groups import assign_to_key_group


@dataclass(frozen=True, slots=True)
class Elem:
    """Flink's ``TestElem``: every element has the key ``"key"``."""

    ts: int
    source: str
    key: str = "key"


class Passthrough(ProcessJoinFunction[Elem, Elem, tuple[Elem, Elem]]):
    def process_element(self, left: Elem, right: Elem, ctx: ProcessJoinFunction.Context) -> Iterator[tuple[Elem, Elem]]:
        yield (left, right)


def key_of(e: Elem) -> str:
    return e.key


def make_operator(
    lower: int,
    lower_inclusive: bool,
    upper: int,
    upper_inclusive: bool,
    *,
    fn: object = None,
    left_late: OutputTag | None = None,
    right_late: OutputTag | None = None,
) -> IntervalJoinOperator:
    return IntervalJoinOperator(
        fn if fn is not None else Passthrough(),
        key_of,
        key_of,
        lower_bound=lower,
        upper_bound=upper,
        lower_bound_inclusive=lower_inclusive,
        upper_bound_inclusive=upper_inclusive,
        left_late_data_output_tag=left_late,
        right_late_data_output_tag=right_late,
    )


def harness_of(operator: IntervalJoinOperator, restore: OperatorSnapshot | None = None) -> TwoInputOperatorHarness:
    return TwoInputOperatorHarness(operator).open(restore)  # type: ignore[return-value]


def setup_harness(lower: int, lower_inclusive: bool, upper: int, upper_inclusive: bool) -> TwoInputOperatorHarness:
    return harness_of(make_operator(lower, lower_inclusive, upper, upper_inclusive))


def element1(h: TwoInputOperatorHarness, ts: int) -> None:
    h.process_element1(Elem(ts, "lhs"), ts)


def element2(h: TwoInputOperatorHarness, ts: int) -> None:
    h.process_element2(Elem(ts, "rhs"), ts)


def process_elements_and_watermarks(h: TwoInputOperatorHarness, first: int, last: int, lhs_faster: bool) -> None:
    """Flink's ``processElementsAndWatermarks``: one input's elements, each followed by its watermark, then the
    other input's."""
    sides = [(element1, h.process_watermark1), (element2, h.process_watermark2)]
    for element, watermark in sides if lhs_faster else sides[::-1]:
        for i in range(first, last + 1):
            element(h, i)
            watermark(i)


def record_of(lhs_ts: int, rhs_ts: int) -> Record:
    """Flink's ``streamRecordOf``: the joined pair, stamped with the larger timestamp."""
    return Record((Elem(lhs_ts, "lhs"), Elem(rhs_ts, "rhs")), max(lhs_ts, rhs_ts))


def expect(h: TwoInputOperatorHarness, *pairs: tuple[int, int]) -> None:
    """Flink's ``andExpect`` + ``noLateRecords``: these records in any order, none behind a watermark before it."""
    events = h.extract_output()
    records = [e for e in events if isinstance(e, Record)]
    assert Counter(map(repr, records)) == Counter(repr(record_of(*p)) for p in pairs)
    watermark = -(1 << 63)
    for e in events:
        if isinstance(e, WatermarkOut):
            watermark = e.timestamp
        elif isinstance(e, Record):
            assert e.timestamp is not None and e.timestamp > watermark, f"late record {e} after watermark {watermark}"


def buffer_timestamps(buffer: dict[Any, dict[int, Any]], key: str = "key") -> set[int]:
    return set(buffer.get(key, {}))


@pytest.fixture(params=[True, False], ids=["lhs-faster", "rhs-faster"])
def lhs_faster(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


# --- correctness: Flink's bound tests ------------------------------------------------------------------------------


def test_implementation_mirrors_correctly(lhs_faster: bool) -> None:
    h = setup_harness(1, True, 3, False)
    process_elements_and_watermarks(h, 1, 4, lhs_faster)
    expect(h, (1, 2), (1, 3), (2, 3), (2, 4), (3, 4))

    h = setup_harness(-3, False, -1, True)
    process_elements_and_watermarks(h, 1, 4, lhs_faster)
    expect(h, (2, 1), (3, 1), (3, 2), (4, 2), (4, 3))


@pytest.mark.parametrize(
    ("bounds", "pairs"),
    [
        pytest.param((-2, True, -1, True), [(2, 1), (3, 1), (3, 2), (4, 2), (4, 3)], id="negative-incl-negative-incl"),
        pytest.param(
            (-1, True, 1, True),
            [(1, 1), (1, 2), (2, 1), (2, 2), (2, 3), (3, 2), (3, 3), (3, 4), (4, 3), (4, 4)],
            id="negative-incl-positive-incl",
        ),
        pytest.param((1, True, 2, True), [(1, 2), (1, 3), (2, 3), (2, 4), (3, 4)], id="positive-incl-positive-incl"),
        pytest.param((-3, False, -1, False), [(3, 1), (4, 2)], id="negative-excl-negative-excl"),
        pytest.param((-1, False, 1, False), [(1, 1), (2, 2), (3, 3), (4, 4)], id="negative-excl-positive-excl"),
        pytest.param((1, False, 3, False), [(1, 3), (2, 4)], id="positive-excl-positive-excl"),
    ],
)
def test_bounds(lhs_faster: bool, bounds: tuple[int, bool, int, bool], pairs: list[tuple[int, int]]) -> None:
    h = setup_harness(*bounds)
    process_elements_and_watermarks(h, 1, 4, lhs_faster)
    expect(h, *pairs)


# --- state cleanup ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bounds", "after_1", "after_4"),
    [
        pytest.param((-1, True, 0, True), ({2, 3, 4, 5}, {1, 2, 3, 4, 5}), ({5}, {4, 5}), id="neg-incl-neg-incl"),
        pytest.param((-2, False, 1, False), ({2, 3, 4, 5}, {1, 2, 3, 4, 5}), ({5}, {4, 5}), id="neg-pos-excl"),
        pytest.param((0, True, 1, True), ({1, 2, 3, 4, 5}, {2, 3, 4, 5}), ({4, 5}, {5}), id="pos-incl-pos-incl"),
        pytest.param((-1, False, 2, False), ({1, 2, 3, 4, 5}, {2, 3, 4, 5}), ({4, 5}, {5}), id="pos-excl-pos-excl"),
    ],
)
def test_state_cleanup(
    bounds: tuple[int, bool, int, bool], after_1: tuple[set[int], set[int]], after_4: tuple[set[int], set[int]]
) -> None:
    op = make_operator(*bounds)
    h = harness_of(op)
    for ts in range(1, 6):
        element1(h, ts)
    for ts in range(1, 6):
        element2(h, ts)  # both buffers filled
    for watermark, (left, right) in ((1, after_1), (4, after_4), (6, (set(), set()))):
        h.process_watermark1(watermark)
        h.process_watermark2(watermark)  # the common watermark: cleanup timers fire
        assert buffer_timestamps(op.left_buffer) == left
        assert buffer_timestamps(op.right_buffer) == right
    assert op.left_buffer == {} and op.right_buffer == {}  # no empty per-key maps left behind
    assert op.time_service_manager is not None
    assert op.time_service_manager.services[CLEANUP_TIMER_NAME].num_event_time_timers() == 0


@pytest.mark.parametrize(
    ("bounds", "left_time", "right_time"),
    [
        # relative upper > 0 -> ts + relative upper; else ts (left: upper; right: -lower), after exclusiveness
        pytest.param((-2, True, 1, True), 10 + 1, 10 + 2, id="around"),
        pytest.param((-2, False, 1, False), 10 + 0, 10 + 1, id="around-exclusive"),
        pytest.param((1, True, 3, True), 10 + 3, 10, id="after"),
        pytest.param((-3, True, -1, True), 10, 10 + 3, id="before"),
        pytest.param((0, True, 0, True), 10, 10, id="equal"),
    ],
)
def test_cleanup_timers_have_flinks_times_and_namespaces(
    bounds: tuple[int, bool, int, bool], left_time: int, right_time: int
) -> None:
    op = make_operator(*bounds)
    h = harness_of(op)
    element1(h, 10)
    element2(h, 10)
    assert op.time_service_manager is not None
    service = op.time_service_manager.services[CLEANUP_TIMER_NAME]
    assert sorted(service._event.items(), key=repr) == sorted(
        [(left_time, "key", CLEANUP_NAMESPACE_LEFT), (right_time, "key", CLEANUP_NAMESPACE_RIGHT)], key=repr
    )
    h.process_watermark(min(left_time, right_time) - 1)
    assert buffer_timestamps(op.left_buffer) == {10} and buffer_timestamps(op.right_buffer) == {10}
    h.process_watermark(max(left_time, right_time))
    assert op.left_buffer == {} and op.right_buffer == {}


# --- snapshot and restore ---------------------------------------------------------------------------------------------


def test_restore_from_snapshot() -> None:
    h = setup_harness(-1, True, 1, True)
    for ts in (1, 2, 3):
        element1(h, ts)
        h.process_watermark1(ts)
        element2(h, ts)
        h.process_watermark2(ts)
    snapshot = h.snapshot()
    expect(h, (1, 1), (1, 2), (2, 1), (2, 2), (2, 3), (3, 2), (3, 3))

    restored = harness_of(make_operator(-1, True, 1, True), restore=snapshot)
    element1(restored, 4)
    restored.process_watermark1(4)
    element2(restored, 4)
    restored.process_watermark2(4)
    expect(restored, (3, 4), (4, 3), (4, 4))


def test_buffers_and_timers_are_redistributed_by_key_group_on_rescaling() -> None:
    max_parallelism = 128
    keys = [f"k{i}" for i in range(8)]
    op = make_operator(-5, True, 5, True)
    h = harness_of(op)
    for k in keys:
        h.process_element1(Elem(10, "lhs", k), 10)
        h.process_element2(Elem(12, "rhs", k), 12)
    h.extract_output()
    snapshot = h.snapshot()
    halves = [
        {kg: blob for kg, blob in snapshot.keyed.items() if (kg < max_parallelism // 2) == first}
        for first in (True, False)
    ]
    seen: list[str] = []
    for part in halves:
        restored_op = make_operator(-5, True, 5, True)
        restored = harness_of(restored_op, restore=OperatorSnapshot(keyed=part))
        owned = {
            k for k in keys if (assign_to_key_group(k, max_parallelism) < max_parallelism // 2) == (part is halves[0])
        }
        assert set(restored_op.left_buffer) == owned and set(restored_op.right_buffer) == owned
        for k in keys:  # a left element of every key: only the owned keys find their right partner
            restored.process_element1(Elem(14, "lhs", k), 14)
        joined = {v[0].key for v in restored.records()}
        assert joined == owned
        seen.extend(joined)
        restored.process_watermark(20)  # the restored cleanup timers (15 and 17) fire
        assert restored_op.left_buffer == {} and restored_op.right_buffer == {}
    assert sorted(seen) == sorted(keys)


# --- the join context -----------------------------------------------------------------------------------------------


class ContextProbe(ProcessJoinFunction[Elem, Elem, Any]):
    side = OutputTag("pairs")

    def process_element(self, left: Elem, right: Elem, ctx: ProcessJoinFunction.Context) -> Iterable[Any]:
        assert ctx.get_left_timestamp() == left.ts
        assert ctx.get_right_timestamp() == right.ts
        assert ctx.get_timestamp() == max(left.ts, right.ts)
        ctx.output(self.side, (left.ts, right.ts))
        return [(left.ts, right.ts)]


def test_context_gives_left_right_and_result_timestamps(lhs_faster: bool) -> None:
    """Flink's testContextCorrectLeftTimestamp, testContextCorrectRightTimestamp, testReturnsCorrectTimestamp;
    side outputs carry the pair's timestamp too."""
    h = harness_of(make_operator(-1, True, 1, True, fn=ContextProbe()))
    process_elements_and_watermarks(h, 1, 4, lhs_faster)
    main = [(e.value, e.timestamp) for e in h.extract_output() if isinstance(e, Record)]
    side = [(r.value, r.timestamp) for r in h.side_output("pairs")]
    assert len(main) == 10
    assert sorted(main) == sorted(side) == sorted(((lt, rt), max(lt, rt)) for (lt, rt), _ in main)


def test_a_plain_callable_is_a_join_function() -> None:
    h = harness_of(
        make_operator(0, True, 0, True, fn=lambda left, right, ctx: [(left.ts, right.ts, ctx.get_timestamp())])
    )
    element1(h, 5)
    element2(h, 5)
    element2(h, 6)
    assert h.records() == [(5, 5, 5)]


def test_pairs_come_in_ascending_timestamp_of_the_other_side() -> None:
    h = setup_harness(-10, True, 10, True)
    for ts in (7, 3, 9, 3, 5):
        element2(h, ts)
    element1(h, 6)
    assert [right.ts for _, right in h.records()] == [3, 3, 5, 7, 9]
    h = setup_harness(-1000, True, 1000, True)  # a wide interval: the other path of the lookup
    for ts in (7, 3, 9):
        element1(h, ts)
    element2(h, 6)
    assert [left.ts for left, _ in h.records()] == [3, 7, 9]


# --- missing timestamps, late data ---------------------------------------------------------------------------------


@pytest.mark.parametrize("side", [1, 2])
def test_fails_with_no_timestamps(side: int) -> None:
    h = setup_harness(0, True, 0, True)
    process = h.process_element1 if side == 1 else h.process_element2
    with pytest.raises(InvalidProgramError, match="interval join needs event timestamps") as info:
        process(Elem(0, "lhs" if side == 1 else "rhs"))  # no timestamp
    message = str(info.value)
    assert ("first input" if side == 1 else "second input") in message
    assert "'IntervalJoinOperator'" in message and "hint: assign_timestamps_and_watermarks" in message


def test_discards_late_data() -> None:
    h = setup_harness(-1, True, 1, True)
    for ts in (1, 2, 3):
        element1(h, ts)
        element2(h, ts)
    h.process_watermark1(3)
    h.process_watermark2(3)
    element1(h, 1)  # late: not joined again
    for ts in (4, 5):
        element1(h, ts)
        element2(h, ts)
    expect(h, (1, 1), (1, 2), (2, 1), (2, 2), (2, 3), (3, 2), (3, 3), (3, 4), (4, 3), (4, 4), (4, 5), (5, 4), (5, 5))


def test_late_data_goes_to_the_side_outputs() -> None:
    left_late, right_late = OutputTag("left_late"), OutputTag("right_late")
    h = harness_of(make_operator(-1, True, 1, True, left_late=left_late, right_late=right_late))
    element1(h, 3)
    element2(h, 3)
    h.process_watermark1(3)
    h.process_watermark2(3)
    element1(h, 4)
    element2(h, 4)
    element1(h, 1)  # late on the left
    element2(h, 2)  # late on the right
    element1(h, 5)
    element2(h, 5)
    expect(h, (3, 3), (3, 4), (4, 3), (4, 4), (4, 5), (5, 4), (5, 5))
    assert h.side_output("left_late") == [Record(Elem(1, "lhs"), 1)]
    assert h.side_output("right_late") == [Record(Elem(2, "rhs"), 2)]


def test_an_element_at_the_watermark_is_not_late() -> None:
    h = setup_harness(0, True, 0, True)
    h.process_watermark(5)
    element1(h, 5)
    element2(h, 5)
    assert h.records() == [(Elem(5, "lhs"), Elem(5, "rhs"))]


def test_a_failing_join_function_is_wrapped_with_the_input_record() -> None:
    def boom(left: Elem, right: Elem, ctx: Any) -> None:
        raise ZeroDivisionError("no")

    h = harness_of(make_operator(0, True, 0, True, fn=boom))
    element1(h, 1)
    with pytest.raises(UserFunctionError, match="ZeroDivisionError: no") as info:
        element2(h, 1)
    assert "Elem(ts=1, source='rhs'" in str(info.value)


def test_lower_bound_above_upper_bound_is_rejected_by_the_operator() -> None:
    with pytest.raises(InvalidProgramError, match="lower bound"):
        make_operator(2, True, 1, True)


# --- the API --------------------------------------------------------------------------------------------------------


def keyed_pair(env: StreamExecutionEnvironment) -> tuple[Any, Any]:
    left = env.from_collection([("a", 1)]).key_by(lambda e: e[0])
    right = env.from_collection([("a", 2)]).key_by(lambda e: e[0])
    return left, right


def test_between_takes_ints_and_timedeltas_and_the_flags_reach_the_operator() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    left, right = keyed_pair(env)
    late = OutputTag("late-left"), OutputTag("late-right")
    joined = (
        left.interval_join(right)
        .between(timedelta(seconds=-2), 1000)
        .lower_bound_exclusive()
        .upper_bound_exclusive()
        .side_output_left_late_data(late[0])
        .side_output_right_late_data(late[1])
        .process(Passthrough())
    )
    t = joined.get_transformation()
    op = t.operator  # type: ignore[attr-defined]
    assert isinstance(op, IntervalJoinOperator)
    assert (op.lower_bound, op.upper_bound) == (-1999, 999)
    assert (op.left_late_data_output_tag, op.right_late_data_output_tag) == late
    assert t.name == "Interval Join"
    assert [i.name for i in t.inputs] == [left.get_transformation().name, right.get_transformation().name]
    joined.get_side_output(late[0])  # a side output of the join operator


def test_api_misuse_is_rejected_at_build_time() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    left, right = keyed_pair(env)
    with pytest.raises(InvalidProgramError, match="expects a KeyedStream"):
        left.interval_join(env.from_collection([1]))
    with pytest.raises(InvalidProgramError, match="lower bound of between"):
        left.interval_join(right).between(2, 1)
    with pytest.raises(InvalidProgramError, match=r"datetime\.timedelta"):
        left.interval_join(right).between(-1.5, 1)
    with pytest.raises(InvalidProgramError, match="only supported in event time"):
        left.interval_join(right).in_processing_time().between(-1, 1)
    with pytest.raises(InvalidProgramError, match="expects an OutputTag"):
        left.interval_join(right).between(-1, 1).side_output_left_late_data("late")  # type: ignore[arg-type]
    with pytest.raises(InvalidProgramError, match="the class Passthrough"):
        left.interval_join(right).between(-1, 1).process(Passthrough)  # type: ignore[arg-type]
    with pytest.raises(InvalidProgramError, match="ProcessJoinFunction instance or a callable"):
        left.interval_join(right).between(-1, 1).process(42)  # type: ignore[arg-type]
    left.interval_join(right).between(0, 0).lower_bound_exclusive().process(Passthrough())  # empty, but allowed
