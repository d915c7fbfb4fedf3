"""The window join and co-group as built (no cluster): the misuse messages, the graph Flink builds for them
(tag, union, key, window), and the functions that split a pane and run the nested-loop join."""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any

import pytest

from strom import (
    CountEvictor,
    CountTrigger,
    DataStream,
    KeySelector,
    StreamExecutionEnvironment,
    TumblingEventTimeWindows,
)
from strom.api.checkpoint import CheckpointedFunction, CheckpointListener
from strom.api.functions import CoGroupFunction, FlatJoinFunction, JoinFunction, RuntimeContext
from strom.api.join import (
    CoGroupWindowFunction,
    FlatJoinCoGroupFunction,
    JoinCoGroupFunction,
    TaggedUnion,
    UnionKeySelector,
)
from strom.api.transformations import OneInputTransformation, PartitionTransformation, UnionTransformation
from strom.exceptions import InvalidProgramError
from strom.runtime.operators.base import StreamingRuntimeContext, TaskInfo
from strom.runtime.operators.windowing.window_operator import WindowOperator

WINDOW = TumblingEventTimeWindows.of(timedelta(milliseconds=3))


@pytest.fixture
def streams() -> tuple[DataStream[Any], DataStream[Any]]:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    return env.from_collection([("a", 1)]), env.from_collection([("a", 2)])


class Key(KeySelector[Any, Any]):
    def get_key(self, value: Any) -> Any:
        return value[0]


class Concat(JoinFunction[Any, Any, str]):
    def join(self, first: Any, second: Any) -> str:
        return f"{first}:{second}"


class Sides(CoGroupFunction[Any, Any, Any]):
    def co_group(self, first: Iterable[Any], second: Iterable[Any]) -> Iterable[Any]:
        yield list(first), list(second)


def join_window(a: DataStream[Any], b: DataStream[Any]) -> Any:
    return a.join(b).where(Key()).equal_to(Key()).window(WINDOW)


def co_group_window(a: DataStream[Any], b: DataStream[Any]) -> Any:
    return a.co_group(b).where(Key()).equal_to(Key()).window(WINDOW)


MISUSES: list[tuple[str, Callable[[Any, Any], Any], str]] = [
    ("apply before where", lambda a, b: a.join(b).apply(Concat()), r"join\(\): expected \.where\(key_selector\)"),
    ("window before equal_to", lambda a, b: a.co_group(b).where(Key()).window(WINDOW), r"expected \.equal_to"),
    ("trigger before window", lambda a, b: a.join(b).where(Key()).equal_to(Key()).trigger(None), r"\.window\("),
    ("non-callable key", lambda a, b: a.join(b).where(0), r"KeySelector or a callable for where\(\); got a 'int'"),
    ("key selector class", lambda a, b: a.join(b).where(Key).equal_to(Key), r"got the class Key; hint: .*Key\(\)"),
    ("non-assigner", lambda a, b: a.join(b).where(Key()).equal_to(Key()).window(3), r"expected a WindowAssigner"),
    ("non-trigger", lambda a, b: join_window(a, b).trigger(3), r"expected a Trigger"),
    ("negative lateness", lambda a, b: join_window(a, b).allowed_lateness(-1), ">= 0"),
    ("co-group fn to join", lambda a, b: join_window(a, b).apply(Sides()), "a JoinFunction or a callable"),
    ("join fn to co_group", lambda a, b: co_group_window(a, b).apply(Concat()), "a CoGroupFunction or a callable"),
    ("not a stream", lambda a, b: a.join([1, 2]), r"expected a DataStream to join with; got a list; hint:"),
    ("other environment", lambda a, b: a.co_group(StreamExecutionEnvironment().from_collection([1])), "same env"),
]  # fmt: skip


@pytest.mark.parametrize(("build", "message"), [m[1:] for m in MISUSES], ids=[m[0] for m in MISUSES])
def test_misuse_fails_at_build_time_with_expected_got_hint(
    streams: tuple[DataStream[Any], DataStream[Any]], build: Callable[[Any, Any], Any], message: str
) -> None:
    with pytest.raises(InvalidProgramError, match=message) as info:
        build(*streams)
    assert "expected" in str(info.value) and "got" in str(info.value)


def test_a_join_is_two_taggers_a_union_a_key_by_and_a_window_as_in_flink(
    streams: tuple[DataStream[Any], DataStream[Any]],
) -> None:
    a, b = streams
    lateness_ms = 7
    trigger, evictor = CountTrigger.of(2), CountEvictor.of(5)
    with_window = a.join(b).where(Key()).equal_to(lambda e: e[0]).window(WINDOW)  # a KeySelector and a callable
    configured = with_window.trigger(trigger).evictor(evictor).allowed_lateness(lateness_ms)
    assert configured is not with_window  # each step is a new object, as Flink's WithWindow
    joined = configured.apply(Concat())

    window = joined.get_transformation()
    assert isinstance(window, OneInputTransformation) and window.name == "EvictingWindow(Join)"
    op = window.operator
    assert isinstance(op, WindowOperator)
    assert (op.assigner, op.trigger, op.evictor, op.allowed_lateness) == (WINDOW, trigger, evictor, lateness_ms)
    assert isinstance(op.key_selector, UnionKeySelector)
    keyed = window.inputs[0]
    assert isinstance(keyed, PartitionTransformation) and keyed.partitioner.ship_strategy == "HASH"
    union = keyed.inputs[0]
    assert isinstance(union, UnionTransformation)
    taggers = union.inputs
    assert [t.inputs[0] for t in taggers] == [a.get_transformation(), b.get_transformation()]
    assert [t.parallelism for t in taggers] == [1, 1]  # the sources' parallelism: the taggers chain to them

    plain = co_group_window(a, b).apply(Sides()).get_transformation()
    assert plain.name == "Window(CoGroup)"
    assert plain.operator.trigger is not trigger and plain.operator.allowed_lateness == 0  # type: ignore[attr-defined]


def test_the_window_function_splits_a_pane_by_tag_in_arrival_order() -> None:
    pane = [TaggedUnion.one("a0"), TaggedUnion.two("b0"), TaggedUnion.one("a1"), TaggedUnion.two("b1")]
    fn = CoGroupWindowFunction(None, lambda first, second: [(first, second)])
    assert list(fn.apply("k", None, pane) or []) == [(["a0", "a1"], ["b0", "b1"])]
    assert list(fn.apply("k", None, pane[1:2]) or []) == [([], ["b0"])]


def test_the_join_is_a_nested_loop_over_first_then_second() -> None:
    join = JoinCoGroupFunction(None, lambda left, right: left + right)
    assert join.co_group(["a", "b"], ["1", "2"]) == ["a1", "a2", "b1", "b2"]
    assert join.co_group(["a", "b"], []) == [] and join.co_group([], ["1"]) == []

    def flat(left: str, right: str) -> Iterable[str] | None:
        return None if right == "skip" else [left + right, right + left]

    assert FlatJoinCoGroupFunction(None, flat).co_group(["a"], ["1", "skip"]) == ["a1", "1a"]


def test_rich_user_functions_are_opened_and_closed_through_the_wrappers() -> None:
    calls: list[Any] = []

    class Rich(FlatJoinFunction[Any, Any, Any]):
        def open(self, runtime_context: RuntimeContext) -> None:
            calls.append(("open", runtime_context))

        def close(self) -> None:
            calls.append("close")

        def join(self, first: Any, second: Any) -> Iterable[Any]:
            return [(first, second)]

    user = Rich()
    wrapped = FlatJoinCoGroupFunction(user, user.join)
    window_function = CoGroupWindowFunction(wrapped, wrapped.co_group)
    context: Any = object()
    window_function.open(context)
    window_function.close()
    assert calls == [("open", context), "close"]


def test_tagged_union_round_trips_and_the_union_key_selector_picks_the_side() -> None:
    one, two = TaggedUnion.one(("a", 1)), TaggedUnion.two({"id": "a"})
    assert pickle.loads(pickle.dumps([one, two], 5)) == [one, two]
    assert (one.is_one(), one.is_two(), two.is_two()) == (True, False, True)
    keys = UnionKeySelector(lambda e: e[0], lambda e: e["id"])
    assert keys.get_key(one) == keys.get_key(two) == "a"
    assert TaggedUnion.one(None) != TaggedUnion.two(None)  # the tag, not None-ness, tells the sides apart


class CheckpointedJoin(JoinFunction[Any, Any, str], CheckpointedFunction, CheckpointListener):
    def __init__(self) -> None:
        self.calls: list[str] = []

    def join(self, first: Any, second: Any) -> str:
        return f"{first}:{second}"

    def initialize_state(self, context: Any) -> None:
        self.calls.append("initialize")

    def snapshot_state(self, context: Any) -> None:
        self.calls.append(f"snapshot {context.checkpoint_id}")

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        self.calls.append(f"complete {checkpoint_id}")


def test_a_checkpointed_join_function_is_reached_through_the_wrappers(
    streams: tuple[DataStream[Any], DataStream[Any]],
) -> None:
    a, b = streams
    fn = CheckpointedJoin()
    op = a.join(b).where(Key()).equal_to(Key()).window(WINDOW).apply(fn).get_transformation().operator  # type: ignore[attr-defined]
    info = TaskInfo(
        job_id="j", job_name="j", task_name="t", subtask_index=0, parallelism=1, max_parallelism=8, attempt_number=0
    )
    op.setup(StreamingRuntimeContext(info, operator_name=op.name), None)
    op.initialize_state(None)
    op.snapshot_state(3, 0)
    op.notify_checkpoint_complete(3)
    assert fn.calls == ["initialize", "snapshot 3", "complete 3"]
