"""The RocksDB backend's write-back cache: what it holds reaches RocksDB before every snapshot, iteration, restore
and TTL clean-up, an evicted dirty entry is written, not lost, and a backend with a tiny cache behaves as the heap
backend under random operations."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from strom import AggregateFunction
from strom.api.state import (
    AggregatingStateDescriptor,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)
from strom.api.windowing.windows import TimeWindow
from strom.exceptions import InvalidProgramError
from strom.runtime.state.heap_keyed_state_backend import HeapKeyedStateBackend
from strom.runtime.state.rocksdb.rocksdb_key_serialization_utils import encode_key, encode_namespace, key_group_prefix
from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend
from strom.runtime.state.rocksdb.rocksdb_options import memory_configuration, write_cache_capacity

pytestmark = pytest.mark.timeout(60)

MAX_P = 16


def _rocksdb(tmp_path: Path, name: str = "db", **kwargs: Any) -> RocksDBKeyedStateBackend:
    return RocksDBKeyedStateBackend(max_parallelism=MAX_P, path=str(tmp_path / name), **kwargs)


def _raw(backend: RocksDBKeyedStateBackend, name: str, key: Any, namespace: Any = None) -> bytes | None:
    """The entry RocksDB holds itself, behind the cache."""
    entry = key_group_prefix(backend.key_group_of(key)) + encode_key(key) + encode_namespace(namespace)
    data: bytes | None = backend.db_column_family(name).get(entry)
    return data


def _values(backend: Any, name: str, keys: list[Any]) -> dict[Any, Any]:
    state = backend.get_state(ValueStateDescriptor(name))
    out = {}
    for key in keys:
        backend.current_key = key
        out[key] = state.value()
    return out


def test_writes_stay_in_the_cache_until_a_flush_writes_them_in_one_batch(tmp_path: Path) -> None:
    backend = _rocksdb(tmp_path)
    try:
        state = backend.get_state(ValueStateDescriptor("v"))
        backend.current_key = "a"
        state.update(1)
        assert _raw(backend, "v", "a") is None and state.value() == 1  # a write-back cache, not write-through
        backend.flush()
        assert _raw(backend, "v", "a") is not None
        state.update(None)
        backend.flush()
        assert _raw(backend, "v", "a") is None and state.value() is None
    finally:
        backend.dispose()


def test_a_snapshot_holds_what_only_the_cache_held(tmp_path: Path) -> None:
    backend = _rocksdb(tmp_path)
    try:
        state = backend.get_state(ValueStateDescriptor("v"))
        keys = [f"k{i}" for i in range(20)]
        for i, key in enumerate(keys):
            backend.current_key = key
            state.update(i)
        supplier = backend.async_snapshot()  # the synchronous part flushes
        backend.current_key = "k0"
        state.update("later")  # after the synchronous part: not in this snapshot
        restored = HeapKeyedStateBackend(max_parallelism=MAX_P)
        restored.restore(supplier())
        assert _values(restored, "v", keys) == {key: i for i, key in enumerate(keys)}
    finally:
        backend.dispose()


def test_iteration_over_tables_sees_cached_writes(tmp_path: Path) -> None:
    backend = _rocksdb(tmp_path)
    try:
        state = backend.get_state(ValueStateDescriptor("v"))
        total = backend.get_state(ReducingStateDescriptor("r", lambda a, b: a + b))
        for key in ("a", "b"):
            backend.current_key = key
            state.update(key.upper())
            backend.set_current_namespace(TimeWindow(0, 10))
            total.add(2)
            total.add(3)
            backend.set_current_namespace(None)
        assert dict(backend.get_table("v")) == {"a": "A", "b": "B"}
        assert len(backend.get_table("v")) == 2 and backend.num_keys() == 2
        window = TimeWindow(0, 10)
        assert backend.get_namespaced_table("r").items() == [("a", {window: 5}), ("b", {window: 5})]
        backend.current_key = "a"
        state.update("A2")  # cached again; a table's read goes through the cache too
        assert backend.get_table("v")["a"] == "A2"
        backend.get_table("v")["a"] = "A3"  # and a table's write reaches the state
        assert state.value() == "A3"
        backend.get_namespaced_table("r").clear()
        backend.set_current_namespace(TimeWindow(0, 10))
        assert total.get() is None
    finally:
        backend.dispose()


def test_a_restore_is_not_overwritten_by_older_cached_writes(tmp_path: Path) -> None:
    source = _rocksdb(tmp_path, "source")
    target = _rocksdb(tmp_path, "target")
    try:
        state = source.get_state(ValueStateDescriptor("v"))
        source.current_key = "k"
        state.update("restored")
        blobs = source.snapshot()
        mine = target.get_state(ValueStateDescriptor("v"))
        target.current_key = "k"
        mine.update("stale")  # dirty in the cache
        target.current_key = "j"
        assert mine.value() is None  # cached as absent
        target.restore(blobs)
        target.flush()
        assert _values(target, "v", ["k", "j"]) == {"k": "restored", "j": None}
        target.current_key = "k"
        assert _raw(target, "v", "k") is not None and target.snapshot() == blobs
    finally:
        source.dispose()
        target.dispose()


@pytest.mark.parametrize("capacity", [0, 1, 7])
def test_an_evicted_dirty_entry_is_written_not_lost(tmp_path: Path, capacity: int) -> None:
    backend = _rocksdb(tmp_path, write_cache_size=capacity)
    try:
        state = backend.get_state(ValueStateDescriptor("v"))
        keys = list(range(100))
        for _ in range(3):
            for key in keys:
                backend.current_key = key
                state.update((state.value() or 0) + 1)
            assert len(backend.write_cache) <= max(capacity, 1) + 1
        assert all(_raw(backend, "v", key) is not None for key in keys[:50])  # written when evicted
        assert _values(backend, "v", keys) == dict.fromkeys(keys, 3)
        restored = HeapKeyedStateBackend(max_parallelism=MAX_P)
        restored.restore(backend.snapshot())
        assert _values(restored, "v", keys) == dict.fromkeys(keys, 3)
    finally:
        backend.dispose()


def test_ttl_clean_up_does_not_leave_expired_values_in_the_cache(tmp_path: Path) -> None:
    now = [0]
    backend = _rocksdb(tmp_path, ttl_time_provider=lambda: now[0])
    try:
        ttl = StateTtlConfig.new_builder(10).build()
        state = backend.get_state(ValueStateDescriptor("v", ttl_config=ttl))
        backend.current_key = "a"
        state.update(1)
        now[0] = 20
        backend.cleanup_expired_state()
        assert _raw(backend, "v", "a") is None
        assert state.value() is None
        assert list(backend.get_table("v")) == []
    finally:
        backend.dispose()


def test_a_key_without_an_encoding_is_refused_at_the_write_and_leaves_nothing_cached(tmp_path: Path) -> None:
    backend = _rocksdb(tmp_path)
    try:
        state = backend.get_state(ValueStateDescriptor("v"))
        backend.current_key = float("nan")
        with pytest.raises(InvalidProgramError, match="key"):
            state.update(1)
        assert len(backend.write_cache) == 0
        backend.flush()
        assert backend.snapshot() == {}
    finally:
        backend.dispose()


class _Sum(AggregateFunction):
    def create_accumulator(self) -> list[int]:
        return [0]

    def add(self, value: int, acc: list[int]) -> list[int]:
        return [acc[0] + value]

    def get_result(self, acc: list[int]) -> int:
        return acc[0]

    def merge(self, a: list[int], b: list[int]) -> list[int]:
        return [a[0] + b[0]]


def _random_ops(backend: Any, rng: random.Random, snapshots: list[dict[int, bytes]]) -> list[Any]:
    """Random value/reducing/aggregating/table operations and snapshots; what each read saw."""
    windows = [TimeWindow(0, 10), TimeWindow(10, 20), TimeWindow(0, 20)]
    value = backend.get_state(ValueStateDescriptor("v"))
    reducing = backend.get_state(ReducingStateDescriptor("r", lambda a, b: a + b))
    aggregating = backend.get_state(AggregatingStateDescriptor("g", _Sum()))
    seen: list[Any] = []
    for step in range(1500):
        backend.current_key = rng.randrange(30)
        backend.current_namespace = rng.choice([None, TimeWindow(0, 10), TimeWindow(10, 20)])
        op = rng.randrange(14)
        if op == 0:
            value.update(rng.choice([None, step]))
        elif op == 1:
            seen.append(value.value())
        elif op == 2:
            reducing.add(step)
        elif op == 3:
            seen.append(reducing.get())
        elif op == 4:
            aggregating.add(1)
        elif op == 5:
            seen.append(aggregating.get())
        elif op == 6:
            rng.choice([value, reducing, aggregating]).clear()
        elif op == 7 and backend.current_namespace is not None:
            reducing.merge_namespaces(TimeWindow(0, 20), [TimeWindow(0, 10), TimeWindow(10, 20)])
        elif op == 8:
            seen.append(sorted(backend.get_table("v").items()))
        elif op == 9 and rng.random() < 0.1:
            snapshots.append(backend.snapshot())
        elif op == 10:
            seen.append(sorted(dict(backend.get_namespaced_table("r").get(backend.current_key) or {}).items()))
        elif op == 11:
            backend.get_namespaced_table("r")[backend.current_key] = {rng.choice(windows): step}
        elif op == 12:
            per_key = backend.get_namespaced_table("r").get(backend.current_key)
            if per_key:
                per_key.pop(rng.choice(windows), None)
        elif op == 13 and rng.random() < 0.05:
            backend.get_namespaced_table("r").clear()
    backend.current_namespace = None
    return seen


@pytest.mark.parametrize("capacity", [2, 50])
def test_random_operations_see_what_the_heap_backend_sees(tmp_path: Path, capacity: int) -> None:
    heap_snapshots: list[dict[int, bytes]] = []
    rocks_snapshots: list[dict[int, bytes]] = []
    heap = HeapKeyedStateBackend(max_parallelism=MAX_P)
    rocks = _rocksdb(tmp_path, write_cache_size=capacity)
    try:
        assert _random_ops(rocks, random.Random(5), rocks_snapshots) == _random_ops(
            heap, random.Random(5), heap_snapshots
        )
        assert len(rocks_snapshots) == len(heap_snapshots) > 0
        for got, expected in zip(rocks_snapshots, heap_snapshots, strict=True):
            a, b = HeapKeyedStateBackend(max_parallelism=MAX_P), HeapKeyedStateBackend(max_parallelism=MAX_P)
            a.restore(got)
            b.restore(expected)
            assert a.get_table("v") == b.get_table("v")
            assert a.get_namespaced_table("r") == b.get_namespaced_table("r")
            assert a.get_namespaced_table("g") == b.get_namespaced_table("g")
    finally:
        rocks.dispose()


def test_the_capacity_is_configured_and_charged_to_managed_memory() -> None:
    assert write_cache_capacity({}) == 100_000
    assert write_cache_capacity({"python.state.cache-size": 0}) == 0
    tight = {"taskmanager.memory.managed.size": "64 mb", "taskmanager.numberOfTaskSlots": 4}
    assert write_cache_capacity(tight) == (64 << 20) // 4 // 4 // 256
    assert memory_configuration(tight).managed_memory_bytes == (64 << 20) * 3 // 4  # the quarter left to the caches
    off = {**tight, "python.state.cache-size": 0}
    assert memory_configuration(off).managed_memory_bytes == 64 << 20
