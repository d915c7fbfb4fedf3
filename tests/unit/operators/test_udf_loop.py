"""The one UDF operator loop: every operator around a user function — map, filter, flat_map, process, their keyed
forms, the co-operators of ``connect`` and the broadcast operators, both inputs — slices its output by bytes,
names the failing record, explains an unhashable key and carries timestamps over in the same way."""

from __future__ import annotations

import pickle
import re
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from operator_harness import OperatorHarness, Record, TwoInputOperatorHarness

from strom.api.co_functions import (
    BroadcastProcessFunction,
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    KeyedBroadcastProcessFunction,
    KeyedCoProcessFunction,
)
from strom.api.functions import KeyedProcessFunction
from strom.api.output_tag import OutputTag
from strom.api.state import MapStateDescriptor, ValueStateDescriptor
from strom.exceptions import UserFunctionError
from strom.runtime.operators.base import StreamOperator
from strom.runtime.operators.batch_budget import FIRST_BATCH, sizeof
from strom.runtime.operators.co.co_broadcast import CoBroadcastWithKeyedOperator, CoBroadcastWithNonKeyedOperator
from strom.runtime.operators.co.co_process import (
    CoProcessOperator,
    CoStreamFlatMap,
    CoStreamMap,
    KeyedCoProcessOperator,
)
from strom.runtime.operators.keyed import KeyedProcessOperator, KeyedStreamFilter, KeyedStreamFlatMap, KeyedStreamMap
from strom.runtime.operators.simple import ProcessOperator, StreamFilter, StreamFlatMap, StreamMap
from strom.runtime.streamrecord import timestamps_of, with_timestamps

pytestmark = pytest.mark.timeout(60)

BIG = 200_000
MIB = 1 << 20
RULES = MapStateDescriptor("rules")


def _fails_on_7(v: int) -> int:
    if v == 7:
        raise ZeroDivisionError("seven")
    return v


class _Both(
    CoMapFunction,
    CoFlatMapFunction,
    CoProcessFunction,
    KeyedCoProcessFunction,
    KeyedBroadcastProcessFunction,
    BroadcastProcessFunction,
):
    """Every shape of function at once, failing on record 7 (as a map / filter / flat_map / process function of
    either input)."""

    def map1(self, v: int) -> int:
        return _fails_on_7(v)

    map2 = map1

    def flat_map1(self, v: int) -> Iterable[int]:
        yield v
        _fails_on_7(v)  # a generator fails while its records are taken

    flat_map2 = flat_map1

    def process_element(self, v: int, ctx: Any) -> Iterable[int]:
        return [_fails_on_7(v)]

    process_element1 = process_element2 = process_broadcast_element = process_element


def _one(op: StreamOperator) -> Callable[[list[Any]], None]:
    h = OperatorHarness(op).open()
    return h.operator.process_batch


def _two(op: StreamOperator, side: int) -> Callable[[list[Any]], None]:
    h = TwoInputOperatorHarness(op).open()
    return getattr(h.operator, f"process_batch{side}")  # type: ignore[no-any-return]


def _key(v: Any) -> Any:
    return v % 3


FAILING: dict[str, Callable[[], Callable[[list[Any]], None]]] = {
    "map": lambda: _one(StreamMap(_fails_on_7)),
    "filter": lambda: _one(StreamFilter(_fails_on_7)),
    "flat_map": lambda: _one(StreamFlatMap(_Both().flat_map1)),
    "process": lambda: _one(ProcessOperator(_Both().process_element)),
    "keyed map": lambda: _one(KeyedStreamMap(_fails_on_7, _key)),
    "keyed flat_map": lambda: _one(KeyedStreamFlatMap(_Both().flat_map1, _key)),
    "keyed process": lambda: _one(KeyedProcessOperator(_Both().process_element, _key)),
    "co-map 2": lambda: _two(CoStreamMap(_Both()), 2),
    "co-flat-map 1": lambda: _two(CoStreamFlatMap(_Both()), 1),
    "co-process 1": lambda: _two(CoProcessOperator(_Both()), 1),
    "co-process 2": lambda: _two(CoProcessOperator(_Both()), 2),
    "keyed co-process 2": lambda: _two(KeyedCoProcessOperator(_Both(), _key, _key), 2),
    "broadcast data": lambda: _two(CoBroadcastWithNonKeyedOperator(_Both(), (RULES,)), 1),
    "broadcast side": lambda: _two(CoBroadcastWithNonKeyedOperator(_Both(), (RULES,)), 2),
    "keyed broadcast data": lambda: _two(CoBroadcastWithKeyedOperator(_Both(), (RULES,), _key), 1),
}


@pytest.mark.parametrize("name", sorted(FAILING))
def test_every_operator_names_the_failing_record_in_the_same_message_shape(name: str) -> None:
    process = FAILING[name]()
    process(list(range(5)))  # input positions count across batches
    with pytest.raises(UserFunctionError) as info:
        process(with_timestamps([5, 6, 7, 8], [50, 60, 70, 80]))
    message = re.sub(r"operator '[^']*'", "operator 'X'", str(info.value))
    assert message == (
        "ZeroDivisionError: seven — raised by the user function of operator 'X' (subtask 1/1, attempt 0) "
        "on input record #7 (7)"
    )
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    assert "_fails_on_7" in info.value.user_traceback


class _Ambiguous:
    """A filter result whose truth cannot be told (as a NumPy array of several elements)."""

    def __bool__(self) -> bool:
        raise ValueError("truth value is ambiguous")


def _ambiguous_on_7(v: int) -> object:
    return _Ambiguous() if v == 7 else v % 2 == 0


@pytest.mark.parametrize("timestamps", [None, [50, 60, 70, 80]], ids=["plain", "timestamped"])
def test_a_filter_result_without_a_truth_value_names_its_record(timestamps: list[int] | None) -> None:
    process = _one(StreamFilter(_ambiguous_on_7))
    with pytest.raises(UserFunctionError, match=r"truth value is ambiguous .* on input record #2 \(7\)"):
        process(with_timestamps([5, 6, 7, 8], timestamps))


class _Counts(KeyedProcessFunction, KeyedCoProcessFunction, KeyedBroadcastProcessFunction):
    """Keyed state in a (co-)process function: its key must be hashable."""

    def open(self, ctx: Any) -> None:
        self.count = ctx.get_state(ValueStateDescriptor("count"))

    def process_element(self, v: Any, ctx: Any) -> None:
        self.count.update((self.count.value() or 0) + 1)

    process_element1 = process_element2 = process_element

    def process_broadcast_element(self, v: Any, ctx: Any) -> None:
        pass


def _list_key(v: Any) -> list[Any]:
    return [v]


UNHASHABLE: dict[str, Callable[[], Callable[[list[Any]], None]]] = {
    "keyed process": lambda: _one(KeyedProcessOperator(_Counts(), _list_key)),
    "keyed co-process 1": lambda: _two(KeyedCoProcessOperator(_Counts(), _list_key, _list_key), 1),
    "keyed co-process 2": lambda: _two(KeyedCoProcessOperator(_Counts(), _list_key, _list_key), 2),
    "keyed broadcast data": lambda: _two(CoBroadcastWithKeyedOperator(_Counts(), (RULES,), _list_key), 1),
}


@pytest.mark.parametrize("name", sorted(UNHASHABLE))
def test_an_unhashable_key_is_explained_on_either_input(name: str) -> None:
    with pytest.raises(UserFunctionError) as info:
        UNHASHABLE[name]()(["a"])
    assert re.search(r"InvalidProgramError: a key must be hashable; got a 'list'.*hint", str(info.value))
    assert "on input record #0 ('a')" in str(info.value)


class _Large(CoFlatMapFunction, CoProcessFunction, BroadcastProcessFunction):
    def process_element(self, i: int, ctx: Any) -> list[Any]:
        return [(i, b"y" * BIG), (i, b"z" * BIG)]

    process_element1 = process_element2 = process_broadcast_element = process_element

    def flat_map1(self, i: int) -> list[Any]:
        return self.process_element(i, None)

    flat_map2 = flat_map1


GROWING: dict[str, Callable[[], StreamOperator]] = {
    "co-flat-map": lambda: CoStreamFlatMap(_Large()),
    "co-process": lambda: CoProcessOperator(_Large()),
    "broadcast": lambda: CoBroadcastWithNonKeyedOperator(_Large(), (RULES,)),
}


@pytest.mark.parametrize("side", [1, 2])
@pytest.mark.parametrize("name", sorted(GROWING))
def test_two_input_operators_that_make_large_records_emit_them_in_bounded_batches(name: str, side: int) -> None:
    h = TwoInputOperatorHarness(GROWING[name]()).open()
    batches: list[list[Any]] = []
    h.operator.output = _Batches(batches)
    getattr(h.operator, f"process_batch{side}")(with_timestamps(list(range(1024)), list(range(1000, 2024))))
    assert [v for b in batches for v in b] == [(i, c * BIG) for i in range(1024) for c in (b"y", b"z")]
    assert [t for b in batches for t in timestamps_of(b) or []] == [1000 + i for i in range(1024) for _ in (0, 1)]
    # the first slice measures (16 inputs); after it every batch stays within 1 MiB + one input's records
    assert all(sum(sizeof(v) for v in b) <= MIB + 2 * (BIG + 100) for b in batches[1:])
    assert max(len(b) for b in batches) <= 2 * FIRST_BATCH


class _Batches:
    def __init__(self, batches: list[list[Any]]) -> None:
        self.batches = batches

    def emit(self, batch: list[Any]) -> None:
        self.batches.append(batch)

    def emit_side(self, tag_id: str, batch: list[Any]) -> None:
        raise AssertionError("no side outputs here")


LATE = OutputTag("late")
SEEN = OutputTag("seen")


class _Stamps(CoProcessFunction):
    """Input 1 emits each record with its timestamp, and odd ones to a side output; input 2 only to the side."""

    def process_element1(self, v: int, ctx: Any) -> Iterable[Any]:
        if v % 2:
            ctx.output(LATE, ("odd", v))
        yield (v, ctx.timestamp())

    def process_element2(self, v: str, ctx: Any) -> None:
        ctx.output(SEEN, (v, ctx.timestamp()))


def test_co_process_carries_timestamps_of_both_inputs_to_main_and_side_outputs() -> None:
    h = TwoInputOperatorHarness(CoProcessOperator(_Stamps())).open()
    h.operator.process_batch1(with_timestamps([1, 2, 3], [10, 20, None]))
    h.operator.process_batch2(with_timestamps(["a", "b"], [5, 6]))
    h.operator.process_batch2(["c"])  # a batch without timestamps
    h.operator.process_batch1([4])
    assert h.extract_output() == [
        Record((1, 10), 10),
        Record((2, 20), 20),
        Record((3, None), None),
        Record((4, None), None),
    ]
    assert h.side_output(LATE.tag_id) == [Record(("odd", 1), 10), Record(("odd", 3), None)]
    assert h.side_output(SEEN.tag_id) == [Record(("a", 5), 5), Record(("b", 6), 6), Record(("c", None), None)]


class _KeyedStamps(KeyedCoProcessFunction):
    """Per-key sums over both inputs, with the record's timestamp and key."""

    def open(self, ctx: Any) -> None:
        self.total = ctx.get_state(ValueStateDescriptor("total"))

    def process_element1(self, v: tuple[str, int], ctx: Any) -> Iterable[Any]:
        self.total.update((self.total.value() or 0) + v[1])
        yield (ctx.get_current_key(), self.total.value(), ctx.timestamp())

    def process_element2(self, v: tuple[str, int], ctx: Any) -> None:
        self.total.update((self.total.value() or 0) * v[1])
        ctx.output(SEEN, (ctx.get_current_key(), self.total.value()))


def test_keyed_co_process_sets_each_records_key_on_both_inputs_within_one_batch() -> None:
    h = TwoInputOperatorHarness(KeyedCoProcessOperator(_KeyedStamps(), _first, _first)).open()
    h.operator.process_batch1(with_timestamps([("a", 1), ("b", 10), ("a", 2)], [1, 2, 3]))
    h.operator.process_batch2(with_timestamps([("b", 3), ("a", 5)], [4, 5]))
    h.operator.process_batch1([("a", 1)])
    assert h.extract_output() == [
        Record(("a", 1, 1), 1),
        Record(("b", 10, 2), 2),
        Record(("a", 3, 3), 3),
        Record(("a", 16, None), None),
    ]
    assert h.side_output(SEEN.tag_id) == [Record(("b", 30), 4), Record(("a", 15), 5)]


def _first(v: tuple[str, int]) -> str:
    return v[0]


class _Rules(KeyedBroadcastProcessFunction):
    """Rules arrive on the broadcast side (and are echoed to a side output); data records of a key count matches."""

    def open(self, ctx: Any) -> None:
        self.hits = ctx.get_state(ValueStateDescriptor("hits"))

    def process_element(self, v: tuple[str, str], ctx: Any) -> Iterable[Any]:
        if ctx.get_broadcast_state(RULES).contains(v[1]):
            self.hits.update((self.hits.value() or 0) + 1)
            yield (ctx.get_current_key(), v[1], self.hits.value(), ctx.timestamp())

    def process_broadcast_element(self, rule: str, ctx: Any) -> None:
        ctx.get_broadcast_state(RULES).put(rule, True)
        ctx.output(SEEN, rule)


def test_keyed_broadcast_process_reads_the_state_written_by_whole_broadcast_batches_and_restores_it() -> None:
    h = TwoInputOperatorHarness(CoBroadcastWithKeyedOperator(_Rules(), (RULES,), _first)).open()
    h.operator.process_batch2(with_timestamps(["red", "blue"], [1, 2]))
    h.operator.process_batch1(with_timestamps([("k1", "red"), ("k2", "green"), ("k1", "blue")], [3, 4, 5]))
    assert h.extract_output() == [Record(("k1", "red", 1, 3), 3), Record(("k1", "blue", 2, 5), 5)]
    assert h.side_output(SEEN.tag_id) == [Record("red", 1), Record("blue", 2)]
    snap = h.snapshot()
    restored = TwoInputOperatorHarness(CoBroadcastWithKeyedOperator(_Rules(), (RULES,), _first)).open(restore=snap)
    restored.operator.process_batch1([("k1", "red"), ("k2", "blue")])
    assert restored.records() == [("k1", "red", 3, None), ("k2", "blue", 1, None)]


class _Count(KeyedProcessFunction):
    def open(self, ctx: Any) -> None:
        self.n = ctx.get_state(ValueStateDescriptor("n"))

    def bump(self, v: tuple[str, int]) -> int:
        n: int = (self.n.value() or 0) + 1
        self.n.update(n)
        return n


@pytest.mark.parametrize("kind", ["map", "flat_map", "filter"])
def test_keyed_map_flat_map_and_filter_run_each_record_in_its_key_context(kind: str) -> None:
    f = _Count()
    fn: Any = {
        "map": lambda v: (v[0], f.bump(v)),
        "flat_map": lambda v: [(v[0], f.bump(v))] * v[1],
        "filter": lambda v: f.bump(v) > 1,
    }[kind]
    op = {"map": KeyedStreamMap, "flat_map": KeyedStreamFlatMap, "filter": KeyedStreamFilter}[kind](fn, _first)
    h = OperatorHarness(op)
    f.open(h.operator.runtime_context)
    h.open()
    h.operator.process_batch(with_timestamps([("a", 1), ("b", 2), ("a", 0), ("a", 1)], [1, 2, 3, 4]))
    expected = {
        "map": [Record(("a", 1), 1), Record(("b", 1), 2), Record(("a", 2), 3), Record(("a", 3), 4)],
        "flat_map": [Record(("a", 1), 1), Record(("b", 1), 2), Record(("b", 1), 2), Record(("a", 3), 4)],
        "filter": [Record(("a", 0), 3), Record(("a", 1), 4)],
    }[kind]
    assert h.extract_output() == expected


class _Tagged(CoFlatMapFunction, CoProcessFunction):
    """Yields ``(OutputTag, value)`` pairs as PyFlink's functions do."""

    def flat_map1(self, v: int) -> Iterable[Any]:
        yield v
        yield SEEN, ("one", v)

    def flat_map2(self, v: int) -> Iterable[Any]:
        yield LATE, ("two", v)

    def process_element1(self, v: int, ctx: Any) -> Iterable[Any]:
        return self.flat_map1(v)

    def process_element2(self, v: int, ctx: Any) -> Iterable[Any]:
        return self.flat_map2(v)


@pytest.mark.parametrize("make", [CoStreamFlatMap, CoProcessOperator], ids=["co-flat-map", "co-process"])
def test_yielded_output_tags_of_either_input_go_to_their_side_outputs_with_the_records_timestamp(make: Any) -> None:
    h = TwoInputOperatorHarness(make(_Tagged()), yielded_output_tags=True).open()
    h.operator.process_batch1(with_timestamps([1, 2], [10, 20]))
    h.operator.process_batch2([3])
    assert h.extract_output() == [Record(1, 10), Record(2, 20)]
    assert h.side_output(SEEN.tag_id) == [Record(("one", 1), 10), Record(("one", 2), 20)]
    assert h.side_output(LATE.tag_id) == [Record(("two", 3), None)]


def _double(v: int) -> int:
    return 2 * v


SHIPPED: dict[str, Callable[[], StreamOperator]] = {
    "map": lambda: StreamMap(_double),
    "keyed flat_map": lambda: KeyedStreamFlatMap(_Both().flat_map1, _key),
    "keyed process": lambda: KeyedProcessOperator(_Both().process_element, _key),
    "co-flat-map": lambda: CoStreamFlatMap(_Both(), _key, _key),
    "keyed co-process": lambda: KeyedCoProcessOperator(_Both(), _key, _key),
    "keyed broadcast": lambda: CoBroadcastWithKeyedOperator(_Both(), (RULES,), _key),
}


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_operators_ship_to_their_task_manager_as_plain_pickles_and_build_their_loops_there(name: str) -> None:
    shipped = pickle.loads(pickle.dumps(SHIPPED[name]()))  # no closure is made before open()
    h = OperatorHarness(shipped) if not hasattr(shipped, "process_batch1") else TwoInputOperatorHarness(shipped)
    h.open()
    process = getattr(h.operator, "process_batch1", h.operator.process_batch)
    process(with_timestamps([1, 2], [10, 20]))
    assert [e.timestamp for e in h.extract_output()] == [10, 20]
