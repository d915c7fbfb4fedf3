"""Keyed state types of the heap backend: value, list, map, reducing, aggregating; TTL; namespaces."""

from __future__ import annotations

import pickle
from typing import Any

import cloudpickle
import pytest

from strom.api.functions import ReduceFunction
from strom.api.state import (
    AggregateFunction,
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateDescriptor,
    StateTtlConfig,
    StateVisibility,
    UpdateType,
    ValueStateDescriptor,
)
from strom.exceptions import InvalidProgramError
from strom.runtime.state.heap_keyed_state_backend import VOID_NAMESPACE, HeapKeyedStateBackend

pytestmark = pytest.mark.timeout(30)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000

    def __call__(self) -> int:
        return self.now


class Average(AggregateFunction[int, tuple[int, int], float]):
    def create_accumulator(self) -> tuple[int, int]:
        return (0, 0)

    def add(self, value: int, accumulator: tuple[int, int]) -> tuple[int, int]:
        return (accumulator[0] + value, accumulator[1] + 1)

    def get_result(self, accumulator: tuple[int, int]) -> float:
        return accumulator[0] / accumulator[1]

    def merge(self, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
        return (a[0] + b[0], a[1] + b[1])


class Max(ReduceFunction[int]):
    def reduce(self, value1: int, value2: int) -> int:
        return max(value1, value2)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def backend(clock: FakeClock, make_backend: Any) -> HeapKeyedStateBackend:
    return make_backend(max_parallelism=128, ttl_time_provider=clock)  # type: ignore[no-any-return]


def ttl(ms: int, update: UpdateType, visibility: StateVisibility) -> StateTtlConfig:
    return StateTtlConfig.new_builder(ms).set_update_type(update).set_state_visibility(visibility).build()


# --- plain state ------------------------------------------------------------------------------------


def test_value_state_per_key_and_default(backend: HeapKeyedStateBackend) -> None:
    count = backend.get_state(ValueStateDescriptor("count"))
    with_default = backend.get_state(ValueStateDescriptor("d", default_value=0))
    backend.current_key = "a"
    assert count.value() is None and with_default.value() == 0
    count.update(1)
    backend.set_current_key("b")
    assert count.value() is None
    count.update(5)
    backend.current_key = "a"
    assert count.value() == 1
    count.update(None)  # None clears, as in Flink
    assert count.value() is None
    assert backend.get_table("count") == {"b": 5}
    backend.current_key = "b"
    count.clear()
    assert backend.num_keys() == 0


def test_get_state_returns_the_same_object_and_rejects_a_type_clash(backend: HeapKeyedStateBackend) -> None:
    assert backend.get_state(ValueStateDescriptor("s")) is backend.get_state(ValueStateDescriptor("s"))
    with pytest.raises(InvalidProgramError, match="distinct state names"):
        backend.get_state(ListStateDescriptor("s"))
    with pytest.raises(InvalidProgramError, match="expected a ListStateDescriptor"):
        backend.get_list_state(MapStateDescriptor("m"))  # type: ignore[arg-type]
    with pytest.raises(InvalidProgramError, match=r"descriptors of strom\.api\.state"):
        backend.get_state(StateDescriptor("plain"))


def test_get_table_is_the_state_table(backend: HeapKeyedStateBackend) -> None:
    table = backend.get_table("v")
    table["k"] = 7
    state = backend.get_state(ValueStateDescriptor("v"))
    backend.current_key = "k"
    assert state.value() == 7


def test_list_state(backend: HeapKeyedStateBackend) -> None:
    s = backend.get_list_state(ListStateDescriptor("l"))
    backend.current_key = 1
    assert s.get() == []
    s.add("a")
    s.add_all(["b", "c"])
    got = s.get()
    got.append("mutating the copy")
    assert s.get() == ["a", "b", "c"]
    s.update(["x"])
    assert s.get() == ["x"]
    s.update([])
    assert s.get() == [] and backend.num_keys() == 0
    s.add("y")
    s.clear()
    assert s.get() == []


def test_map_state(backend: HeapKeyedStateBackend) -> None:
    m = backend.get_map_state(MapStateDescriptor("m"))
    backend.current_key = "k"
    assert m.is_empty() and m.get("a") is None and not m.contains("a")
    m.put("a", 1)
    m.put_all({"b": 2, "c": None})
    assert m.get("a") == 1 and m.contains("c") and m.get("c") is None
    assert sorted(m.keys()) == ["a", "b", "c"]
    assert sorted(m.items(), key=lambda kv: kv[0]) == [("a", 1), ("b", 2), ("c", None)]
    keys = m.keys()  # a copy: safe to mutate while iterating
    for key in keys:
        m.remove(key)
    assert m.is_empty() and backend.num_keys() == 0
    m.put("z", 26)
    backend.current_key = "other"
    assert m.values() == []
    backend.current_key = "k"
    assert m.values() == [26]
    m.clear()
    assert m.is_empty()


@pytest.mark.parametrize("reduce_function", [lambda a, b: max(a, b), Max()])
def test_reducing_state(backend: HeapKeyedStateBackend, reduce_function: Any) -> None:
    r = backend.get_reducing_state(ReducingStateDescriptor("max", reduce_function))
    backend.current_key = "k"
    assert r.get() is None
    for v in (3, 9, 4):
        r.add(v)
    assert r.get() == 9
    r.clear()
    assert r.get() is None


def test_reducing_descriptor_rejects_a_non_callable() -> None:
    with pytest.raises(TypeError, match="instantiate it"):
        ReducingStateDescriptor("r", Max)
    with pytest.raises(TypeError, match="ReduceFunction or a callable"):
        ReducingStateDescriptor("r", 42)


def test_aggregating_state(backend: HeapKeyedStateBackend) -> None:
    a = backend.get_aggregating_state(AggregatingStateDescriptor("avg", Average()))
    backend.current_key = "k"
    assert a.get() is None
    a.add(2)
    a.add(4)
    assert a.get() == 3.0
    a.clear()
    assert a.get() is None
    with pytest.raises(TypeError, match=r"instantiate it: Average\(\)"):
        AggregatingStateDescriptor("x", Average)
    with pytest.raises(TypeError, match="expects an AggregateFunction"):
        AggregatingStateDescriptor("x", lambda: 0)


def test_descriptors_pickle_with_their_ttl() -> None:
    d = ListStateDescriptor("l")
    d.enable_time_to_live(StateTtlConfig(ttl_ms=5))
    back = pickle.loads(cloudpickle.dumps(d))
    assert back == d and back.ttl_config == StateTtlConfig(ttl_ms=5)
    r = pickle.loads(cloudpickle.dumps(ReducingStateDescriptor("r", lambda a, b: a + b)))
    assert r.get_reduce_callable()(1, 2) == 3


def test_ttl_config_validation() -> None:
    with pytest.raises(ValueError, match="positive int of milliseconds"):
        StateTtlConfig(ttl_ms=0)
    with pytest.raises(TypeError, match="StateTtlConfig"):
        ValueStateDescriptor("v").enable_time_to_live(1000)  # type: ignore[arg-type]
    config = StateTtlConfig.new_builder(5).update_ttl_on_read_and_write().return_expired_if_not_cleaned_up().build()
    assert config.update_type is UpdateType.OnReadAndWrite
    assert config.state_visibility is StateVisibility.ReturnExpiredIfNotCleanedUp
    assert StateTtlConfig.new_builder(5).cleanup_full_snapshot().build().cleanup_in_full_snapshot


# --- TTL ----------------------------------------------------------------------------------------------


def test_value_ttl_never_return_expired(backend: HeapKeyedStateBackend, clock: FakeClock) -> None:
    d = ValueStateDescriptor("v")
    d.enable_time_to_live(ttl(100, UpdateType.OnCreateAndWrite, StateVisibility.NeverReturnExpired))
    v = backend.get_state(d)
    backend.current_key = "k"
    v.update("x")
    clock.now += 99
    assert v.value() == "x"  # reading does not refresh with OnCreateAndWrite
    clock.now += 1
    assert v.value() is None
    assert backend.num_keys() == 0  # dropped lazily on access


def test_value_ttl_return_expired_if_not_cleaned_up(backend: HeapKeyedStateBackend, clock: FakeClock) -> None:
    d = ValueStateDescriptor("v")
    d.enable_time_to_live(ttl(100, UpdateType.OnCreateAndWrite, StateVisibility.ReturnExpiredIfNotCleanedUp))
    v = backend.get_state(d)
    backend.current_key = "k"
    v.update("x")
    clock.now += 500
    assert v.value() == "x"  # expired, but not cleaned up yet: returned once ...
    assert v.value() is None  # ... and cleaned up by that access


def test_value_ttl_on_read_and_write_refreshes(backend: HeapKeyedStateBackend, clock: FakeClock) -> None:
    d = ValueStateDescriptor("v")
    d.enable_time_to_live(ttl(100, UpdateType.OnReadAndWrite, StateVisibility.NeverReturnExpired))
    v = backend.get_state(d)
    backend.current_key = "k"
    v.update("x")
    for _ in range(5):
        clock.now += 60
        assert v.value() == "x"
    clock.now += 100
    assert v.value() is None


def test_value_ttl_write_refreshes(backend: HeapKeyedStateBackend, clock: FakeClock) -> None:
    d = ValueStateDescriptor("v", default_value=-1)
    d.enable_time_to_live(StateTtlConfig(ttl_ms=100))
    v = backend.get_state(d)
    backend.current_key = "k"
    v.update(1)
    clock.now += 60
    v.update(2)
    clock.now += 60
    assert v.value() == 2
    clock.now += 40
    assert v.value() == -1


def test_list_ttl_is_per_element(backend: HeapKeyedStateBackend, clock: FakeClock) -> None:
    d = ListStateDescriptor("l")
    d.enable_time_to_live(StateTtlConfig(ttl_ms=100))
    s = backend.get_state(d)
    backend.current_key = "k"
    s.add("old")
    clock.now += 50
    s.add_all(["new1", "new2"])
    assert s.get() == ["old", "new1", "new2"]
    clock.now += 50
    assert s.get() == ["new1", "new2"]
    clock.now += 50
    assert s.get() == [] and backend.num_keys() == 0


def test_list_ttl_return_expired_and_refresh_on_read(backend: HeapKeyedStateBackend, clock: FakeClock) -> None:
    d = ListStateDescriptor("l")
    d.enable_time_to_live(ttl(100, UpdateType.OnReadAndWrite, StateVisibility.ReturnExpiredIfNotCleanedUp))
    s = backend.get_state(d)
    backend.current_key = "k"
    s.add("a")
    clock.now += 60
    s.add("b")
    clock.now += 60  # "a" expired, "b" is 60 ms old
    assert s.get() == ["a", "b"]  # returned one last time
    clock.now += 90  # "b" was refreshed by the read
    assert s.get() == ["b"]


def test_map_ttl_is_per_entry(backend: HeapKeyedStateBackend, clock: FakeClock) -> None:
    d = MapStateDescriptor("m")
    d.enable_time_to_live(StateTtlConfig(ttl_ms=100))
    m = backend.get_state(d)
    backend.current_key = "k"
    m.put("a", 1)
    clock.now += 50
    m.put("b", 2)
    clock.now += 50
    assert not m.contains("a") and m.get("a") is None
    assert m.items() == [("b", 2)]
    clock.now += 50
    assert m.is_empty() and backend.num_keys() == 0


def test_map_ttl_return_expired_and_refresh_on_read(backend: HeapKeyedStateBackend, clock: FakeClock) -> None:
    d = MapStateDescriptor("m")
    d.enable_time_to_live(ttl(100, UpdateType.OnReadAndWrite, StateVisibility.ReturnExpiredIfNotCleanedUp))
    m = backend.get_state(d)
    backend.current_key = "k"
    m.put_all({"a": 1, "b": 2})
    clock.now += 80
    assert m.get("a") == 1  # refreshes "a" only
    clock.now += 80
    assert sorted(m.items()) == [("a", 1), ("b", 2)]  # "b" expired: returned once, then cleaned up
    assert m.keys() == ["a"]


def test_reducing_and_aggregating_ttl(backend: HeapKeyedStateBackend, clock: FakeClock) -> None:
    rd = ReducingStateDescriptor("sum", lambda a, b: a + b)
    rd.enable_time_to_live(StateTtlConfig(ttl_ms=100))
    ad = AggregatingStateDescriptor("avg", Average())
    ad.enable_time_to_live(StateTtlConfig(ttl_ms=100))
    r, a = backend.get_state(rd), backend.get_state(ad)
    backend.current_key = "k"
    r.add(1)
    a.add(10)
    clock.now += 50
    r.add(2)
    a.add(20)
    assert (r.get(), a.get()) == (3, 15.0)
    clock.now += 100
    r.add(5)  # the expired sum is not reduced into the new one
    a.add(7)
    assert (r.get(), a.get()) == (5, 7.0)
    clock.now += 100
    assert (r.get(), a.get()) == (None, None)


# --- namespaces ----------------------------------------------------------------------------------------


def test_namespaces_are_isolated(backend: HeapKeyedStateBackend) -> None:
    v = backend.get_state(ValueStateDescriptor("v"))
    lst = backend.get_state(ListStateDescriptor("l"))
    m = backend.get_state(MapStateDescriptor("m"))
    backend.current_key = "k"
    v.update("void")
    lst.add("void")
    m.put("x", "void")
    for window in ("w1", "w2"):
        backend.set_current_namespace(window)
        assert v.value() is None and lst.get() == [] and m.is_empty()
        v.update(window)
        lst.add(window)
        m.put("x", window)
    backend.set_current_namespace("w1")
    assert (v.value(), lst.get(), m.get("x")) == ("w1", ["w1"], "w1")
    v.clear()
    lst.clear()
    m.clear()
    assert v.value() is None
    backend.set_current_namespace("w2")
    assert (v.value(), lst.get(), m.get("x")) == ("w2", ["w2"], "w2")
    backend.set_current_namespace(VOID_NAMESPACE)
    assert (v.value(), lst.get(), m.get("x")) == ("void", ["void"], "void")
    assert backend.get_table("v") == {"k": "void"}  # the void namespace stays flat
    assert backend.get_namespaced_table("v") == {"k": {"w2": "w2"}}
    backend.current_key = "other"
    backend.set_current_namespace("w2")
    assert v.value() is None
    assert backend.num_keys() == 1


def test_merge_namespaces(backend: HeapKeyedStateBackend) -> None:
    lst = backend.get_state(ListStateDescriptor("l"))
    r = backend.get_state(ReducingStateDescriptor("r", lambda a, b: a + b))
    a = backend.get_state(AggregatingStateDescriptor("a", Average()))
    backend.current_key = "k"
    for ns, value in (("w1", 1), ("w2", 2), ("w3", 6)):
        backend.set_current_namespace(ns)
        lst.add(value)
        r.add(value)
        a.add(value)
    backend.set_current_namespace("w1")
    for state in (lst, r, a):
        state.merge_namespaces("merged", ["w1", "w2", "w3"])
    assert (lst.get(), r.get(), a.get()) == ([], None, None)
    backend.set_current_namespace("merged")
    assert (lst.get(), r.get(), a.get()) == ([1, 2, 6], 9, 3.0)
    assert backend.get_current_namespace() == "merged"
    with pytest.raises(InvalidProgramError, match="merge namespaces"):
        backend.get_state(ValueStateDescriptor("v")).merge_namespaces("x", ["y"])


def test_a_type_as_value_state_default_is_refused_with_a_hint() -> None:
    expected = r"'count' takes a default value or a TypeInformation; got the class int.*hint.*Types.LONG\(\)"
    with pytest.raises(TypeError, match=expected):
        ValueStateDescriptor("count", int)
    assert ValueStateDescriptor("count", 0).default_value == 0
