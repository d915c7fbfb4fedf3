"""Key-group snapshots of every keyed state backend (``make_backend``): round trips, rescaling, TTL, errors."""

from __future__ import annotations

import pickle
import threading
from typing import Any

import pytest

from strom.api.state import (
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)
from strom.exceptions import InvalidProgramError, SerializationError
from strom.runtime.state.heap_keyed_state_backend import HeapKeyedStateBackend
from strom.runtime.state.key_groups import assign_to_key_group, compute_key_group_range_for_operator_index

pytestmark = pytest.mark.timeout(30)

MAX_P = 16


def _fill(backend: HeapKeyedStateBackend, keys: list[Any]) -> None:
    value = backend.get_state(ValueStateDescriptor("v"))
    lst = backend.get_state(ListStateDescriptor("l"))
    m = backend.get_state(MapStateDescriptor("m"))
    r = backend.get_state(ReducingStateDescriptor("r", lambda a, b: a + b))
    reduce_table = backend.get_table("_reduce:op")
    for key in keys:
        backend.current_key = key
        value.update(f"v-{key}")
        lst.add_all([key, key])
        m.put("k", key)
        r.add(1)
        r.add(2)
        reduce_table[key] = ("reduced", key)
        backend.set_current_namespace(("window", key))
        value.update(f"w-{key}")
        backend.set_current_namespace(None)


def _check(backend: HeapKeyedStateBackend, keys: list[Any]) -> None:
    value = backend.get_state(ValueStateDescriptor("v"))
    lst = backend.get_state(ListStateDescriptor("l"))
    m = backend.get_state(MapStateDescriptor("m"))
    r = backend.get_state(ReducingStateDescriptor("r", lambda a, b: a + b))
    for key in keys:
        backend.current_key = key
        assert value.value() == f"v-{key}"
        assert lst.get() == [key, key]
        assert m.items() == [("k", key)]
        assert r.get() == 3
        assert backend.get_table("_reduce:op")[key] == ("reduced", key)
        backend.set_current_namespace(("window", key))
        assert value.value() == f"w-{key}"
        backend.set_current_namespace(None)
    assert backend.num_keys() == len(keys)


def _keys_covering_all_key_groups() -> list[Any]:
    keys: list[Any] = []
    seen: set[int] = set()
    i = 0
    while len(seen) < MAX_P:
        key: Any = f"key-{i}" if i % 2 else i
        keys.append(key)
        seen.add(assign_to_key_group(key, MAX_P))
        i += 1
    return keys


def test_snapshot_groups_by_key_group_and_round_trips(make_backend: Any) -> None:
    keys = _keys_covering_all_key_groups()
    a = make_backend(max_parallelism=MAX_P)
    _fill(a, keys)
    blobs = a.snapshot()
    assert sorted(blobs) == list(range(MAX_P))
    assert all(isinstance(b, bytes) for b in blobs.values())
    b = make_backend(max_parallelism=MAX_P)
    b.restore(blobs)  # before any state is registered
    _check(b, keys)


def test_snapshot_contains_only_non_empty_key_groups(make_backend: Any) -> None:
    backend = make_backend(max_parallelism=MAX_P)
    assert backend.snapshot() == {}
    backend.get_state(ValueStateDescriptor("v"))
    assert backend.snapshot() == {}
    backend.current_key = "only"
    backend.get_state(ValueStateDescriptor("v")).update(1)
    assert list(backend.snapshot()) == [assign_to_key_group("only", MAX_P)]


def test_restore_into_two_subtasks_of_a_new_parallelism(make_backend: Any) -> None:
    keys = _keys_covering_all_key_groups()
    a = make_backend(max_parallelism=MAX_P)
    _fill(a, keys)
    blobs = a.snapshot()
    restored_keys: list[Any] = []
    for index in range(2):
        owned = compute_key_group_range_for_operator_index(MAX_P, 2, index)
        b = make_backend(max_parallelism=MAX_P)
        _check(b, [])  # states registered first, restored afterwards
        b.restore({kg: blob for kg, blob in blobs.items() if kg in owned})
        mine = [k for k in keys if assign_to_key_group(k, MAX_P) in owned]
        assert mine
        _check(b, mine)
        assert set(b.get_table("v")) == set(mine)
        restored_keys.extend(mine)
    assert sorted(map(str, restored_keys)) == sorted(map(str, keys))


def test_snapshot_is_a_consistent_copy(make_backend: Any) -> None:
    backend = make_backend(max_parallelism=MAX_P)
    lst = backend.get_state(ListStateDescriptor("l"))
    backend.current_key = "k"
    lst.add([1])
    blobs = backend.snapshot()
    lst.add([2])
    backend.get_table("l")["k"][0].append("mutated in place")
    other = make_backend(max_parallelism=MAX_P)
    other.restore(blobs)
    other.current_key = "k"
    assert other.get_state(ListStateDescriptor("l")).get() == [[1]]


def test_expired_entries_are_left_out_of_snapshots(make_backend: Any) -> None:
    now = [0]
    backend = make_backend(max_parallelism=MAX_P, ttl_time_provider=lambda: now[0])
    d = ValueStateDescriptor("v")
    d.enable_time_to_live(StateTtlConfig(ttl_ms=100))
    v = backend.get_state(d)
    ld = ListStateDescriptor("l")
    ld.enable_time_to_live(StateTtlConfig(ttl_ms=100))
    lst = backend.get_state(ld)
    backend.current_key = "old"
    v.update(1)
    lst.add("old")
    backend.set_current_namespace("w")
    v.update(2)
    backend.set_current_namespace(None)
    now[0] = 50
    backend.current_key = "new"
    v.update(3)
    lst.add("new")
    backend.current_key = "old"
    lst.add("newer")
    now[0] = 120
    blobs = backend.snapshot()
    restored = make_backend(max_parallelism=MAX_P, ttl_time_provider=lambda: now[0])
    restored.restore(blobs)
    assert restored.get_table("v").keys() == {"new"}
    assert restored.get_namespaced_table("v") == {}
    v2, l2 = restored.get_state(d), restored.get_state(ld)
    restored.current_key = "old"
    assert (v2.value(), l2.get()) == (None, ["newer"])
    restored.current_key = "new"
    assert (v2.value(), l2.get()) == (3, ["new"])


def test_restore_rejects_a_changed_state_type_or_ttl(make_backend: Any) -> None:
    backend = make_backend(max_parallelism=MAX_P)
    backend.current_key = "k"
    backend.get_state(ValueStateDescriptor("s")).update(1)
    blobs = backend.snapshot()
    other = make_backend(max_parallelism=MAX_P)
    other.restore(blobs)
    with pytest.raises(InvalidProgramError, match="restored as value state without TTL"):
        other.get_state(ListStateDescriptor("s"))
    with_ttl = ValueStateDescriptor("s")
    with_ttl.enable_time_to_live(StateTtlConfig(ttl_ms=1))
    with pytest.raises(InvalidProgramError, match="new name"):
        other.get_state(with_ttl)
    registered_first = make_backend(max_parallelism=MAX_P)
    registered_first.get_state(MapStateDescriptor("s"))
    with pytest.raises(InvalidProgramError, match="registered as map state"):
        registered_first.restore(blobs)


def test_unpicklable_value_raises_serialization_error_naming_the_state(make_backend: Any) -> None:
    backend = make_backend(max_parallelism=MAX_P)
    fine = backend.get_state(ValueStateDescriptor("fine"))
    bad = backend.get_state(ListStateDescriptor("connections"))
    backend.current_key = "k"
    fine.update(1)
    with pytest.raises(SerializationError, match=r"'connections'.*'lock'.*hint") as info:
        bad.add({"lock": threading.Lock()})  # RocksDB serializes on write (as Flink's), the heap at the snapshot
        backend.snapshot()
    assert "fine" not in str(info.value)


def test_restore_of_garbage_raises_serialization_error(make_backend: Any) -> None:
    backend = make_backend(max_parallelism=MAX_P)
    with pytest.raises(SerializationError, match="key group 3"):
        backend.restore({3: b"not a pickle"})


def test_values_of_local_classes_are_pickled_by_value(make_backend: Any) -> None:
    class Local:
        def __init__(self, n: int) -> None:
            self.n = n

    backend = make_backend(max_parallelism=MAX_P)
    backend.current_key = "k"
    backend.get_state(ValueStateDescriptor("v")).update(Local(3))
    (blob,) = backend.snapshot().values()
    assert pickle.loads(blob)["states"]["v"][0]["k"].n == 3
