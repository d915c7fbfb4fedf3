"""Asynchronous snapshots of the heap backend (``HeapSnapshotStrategy``): a forked child serializes a point-in-time
copy while the task goes on; failures and kills decline, never hang, and leave no process behind."""

from __future__ import annotations

import os
import pickle
import signal
import threading
import time
from typing import Any

import pytest
from snapshot_fixtures import Slow, fill, mutate, reaped

from strom.api.state import (
    AggregateFunction,
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)
from strom.exceptions import CheckpointError, SerializationError
from strom.runtime.state.heap_keyed_state_backend import HeapKeyedStateBackend
from strom.runtime.state.heap_snapshot_strategy import FORK_SUPPORTED, ForkedSnapshot, HeapSnapshotStrategy

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(not FORK_SUPPORTED, reason="fork-based snapshots need Linux"),
]

MAX_P = 32


def _forking(clock: list[int]) -> HeapKeyedStateBackend:
    return HeapKeyedStateBackend(
        max_parallelism=MAX_P,
        ttl_time_provider=lambda: clock[0],
        snapshot_strategy=HeapSnapshotStrategy(use_fork=True, fork_min_entries=0, sync_max_bytes=0),
    )


def test_the_supplier_is_a_point_in_time_copy_while_the_task_goes_on_mutating() -> None:
    clock = [1_000]
    backend = _forking(clock)
    fill(backend, 500)
    expected = dict(backend.write_key_groups(clock[0]))  # what a synchronous snapshot sees now
    supplier = backend.async_snapshot()
    assert isinstance(supplier, ForkedSnapshot)
    clock[0] += 10_000  # TTL entries expire for the task, not for the snapshot
    mutate(backend, 500)
    assert supplier() == expected  # byte for byte the canonical format of that moment
    restored = HeapKeyedStateBackend(max_parallelism=MAX_P, ttl_time_provider=lambda: 1_000)
    restored.restore(expected)
    fill(reference := HeapKeyedStateBackend(max_parallelism=MAX_P, ttl_time_provider=lambda: 1_000), 500)
    assert dict(restored.write_key_groups(1_000)) == dict(reference.write_key_groups(1_000))
    assert reaped(supplier.pid)


def test_snapshot_equals_the_resolved_async_snapshot_and_small_state_does_not_fork() -> None:
    clock = [5]
    small = HeapKeyedStateBackend(max_parallelism=MAX_P, ttl_time_provider=lambda: clock[0])
    fill(small, 20)
    supplier = small.async_snapshot()
    assert not isinstance(supplier, ForkedSnapshot)  # below fork_min_entries: pickled at once
    mutate(small, 20)
    forked = _forking(clock)
    fill(forked, 20)
    assert supplier() == forked.snapshot()
    assert HeapKeyedStateBackend(max_parallelism=MAX_P).async_snapshot()() == {}


def test_an_unpicklable_value_fails_the_supplier_naming_the_state() -> None:
    backend = _forking([0])
    backend.current_key = "k"
    backend.get_state(ValueStateDescriptor("fine")).update(1)
    backend.get_state(ListStateDescriptor("connections")).add({"lock": threading.Lock()})
    supplier = backend.async_snapshot()  # the synchronous part cannot know yet
    assert isinstance(supplier, ForkedSnapshot)
    with pytest.raises(SerializationError, match=r"'connections'.*'lock'.*hint") as info:
        supplier()
    assert "fine" not in str(info.value)
    assert reaped(supplier.pid)


def test_a_child_killed_mid_snapshot_fails_the_supplier_and_is_reaped() -> None:
    backend = _forking([0])
    fill(backend, 50)
    backend.current_key = "slow"
    backend.get_state(ValueStateDescriptor("slow")).update(Slow(30.0))
    supplier = backend.async_snapshot()
    assert isinstance(supplier, ForkedSnapshot)
    os.kill(supplier.pid, signal.SIGKILL)
    t0 = time.monotonic()
    with pytest.raises(CheckpointError, match=r"killed by SIGKILL.*hint"):
        supplier()
    assert time.monotonic() - t0 < 10
    assert reaped(supplier.pid)
    with pytest.raises(CheckpointError, match="once"):
        supplier()


def test_cancel_stops_a_read_in_progress_and_a_dropped_supplier_leaves_no_process() -> None:
    backend = _forking([0])
    backend.current_key = "slow"
    backend.get_state(ValueStateDescriptor("slow")).update(Slow(30.0))
    supplier = backend.async_snapshot()
    assert isinstance(supplier, ForkedSnapshot)
    failure: list[BaseException] = []

    def read() -> None:
        try:
            supplier()
        except CheckpointError as exc:
            failure.append(exc)

    reader = threading.Thread(target=read)
    reader.start()
    time.sleep(0.2)
    supplier.cancel()
    reader.join(10)
    assert not reader.is_alive() and failure and "SIGKILL" in str(failure[0])
    assert reaped(supplier.pid)

    dropped = backend.async_snapshot()
    assert isinstance(dropped, ForkedSnapshot)
    pid = dropped.pid
    del dropped  # never read: its checkpoint failed elsewhere
    assert reaped(pid)

    untouched = backend.async_snapshot()
    assert isinstance(untouched, ForkedSnapshot)
    pid = untouched.pid
    stream = untouched.stream()  # taken for a checkpoint whose writing failed before it got to this operator
    del untouched, stream
    assert reaped(pid)


def test_aggregating_and_namespaced_state_survive_the_fork() -> None:
    class Mean(AggregateFunction[int, list[int], float]):
        def create_accumulator(self) -> list[int]:
            return [0, 0]

        def add(self, value: int, acc: list[int]) -> list[int]:
            acc[0] += value  # mutated in place: a shallow copy would not be a snapshot
            acc[1] += 1
            return acc

        def get_result(self, acc: list[int]) -> float:
            return acc[0] / acc[1]

        def merge(self, a: list[int], b: list[int]) -> list[int]:
            return [a[0] + b[0], a[1] + b[1]]

    backend = _forking([0])
    mean = backend.get_state(AggregatingStateDescriptor("mean", Mean()))
    for k in range(100):
        backend.current_key = k
        backend.set_current_namespace(("w", k % 3))
        mean.add(k)
    backend.set_current_namespace(None)
    expected = backend.snapshot()
    supplier = backend.async_snapshot()
    for k in range(100):
        backend.current_key = k
        backend.set_current_namespace(("w", k % 3))
        mean.add(1_000)
    assert supplier() == expected


def test_ttl_state_is_purged_at_the_synchronous_part_time() -> None:
    clock = [0]
    backend = _forking(clock)
    d = MapStateDescriptor("m")
    d.enable_time_to_live(StateTtlConfig(ttl_ms=100))
    m = backend.get_state(d)
    for k in range(10):
        backend.current_key = k
        m.put("x", k)
    clock[0] = 60
    for k in range(5):
        backend.current_key = k
        m.put("y", k)
    clock[0] = 120  # the entries of t=0 are expired now, those of t=60 are not
    supplier = backend.async_snapshot()
    clock[0] = 1_000  # everything expired for the task afterwards
    restored = HeapKeyedStateBackend(max_parallelism=MAX_P, ttl_time_provider=lambda: 120)
    restored.restore(supplier())
    r = restored.get_state(d)
    got: dict[Any, Any] = {}
    for k in range(10):
        restored.current_key = k
        got[k] = r.items()
    assert got == {k: ([("y", k)] if k < 5 else []) for k in range(10)}


def test_key_groups_larger_than_a_pipe_arrive_whole_and_no_descriptor_is_left_open() -> None:
    blobs = [(kg, os.urandom(300_000 + kg)) for kg in range(0, 40, 3)]  # 4 MB in all: many pipes-full
    before = len(os.listdir("/proc/self/fd"))
    assert ForkedSnapshot.start(lambda: iter(blobs))() == dict(blobs)
    cancelled = ForkedSnapshot.start(lambda: iter(blobs))
    cancelled.cancel()
    assert len(os.listdir("/proc/self/fd")) == before


def test_multi_state_int_and_str_keys_snapshot_the_same_forked_or_not() -> None:
    backend = HeapKeyedStateBackend(max_parallelism=128)
    a = backend.get_state(ValueStateDescriptor("a"))
    b = backend.get_state(ValueStateDescriptor("b"))
    for k in [*range(-300, 3_000), *(f"k{i}" for i in range(500)), 2**40, (1, "x")]:
        backend.current_key = k
        a.update(k)
        if isinstance(k, int) and k % 3 == 0:
            b.update(-1)
    forked = HeapSnapshotStrategy(use_fork=True, fork_min_entries=0, sync_max_bytes=0)
    inline = HeapSnapshotStrategy(use_fork=False)
    backend.snapshot_strategy = forked
    snap = backend.snapshot()
    backend.snapshot_strategy = inline
    assert snap == backend.snapshot()
    restored = HeapKeyedStateBackend(max_parallelism=128)
    restored.restore(snap)
    assert restored.get_table("a") == backend.get_table("a")
    assert restored.get_table("b") == backend.get_table("b")
    assert all(backend.key_group_of(k) == kg for kg, blob in snap.items() for k in _keys_of(blob))


def _keys_of(blob: bytes) -> list[Any]:
    return [k for flat, _ in pickle.loads(blob)["states"].values() for k in flat]


def test_small_state_is_pickled_on_the_task_thread_once_its_size_is_known() -> None:
    strategy = HeapSnapshotStrategy(use_fork=True, fork_min_entries=10, sync_max_entries=1_000, sync_max_bytes=50_000)
    backend = HeapKeyedStateBackend(max_parallelism=MAX_P, snapshot_strategy=strategy)
    state = backend.get_state(ValueStateDescriptor("v"))
    for k in range(100):
        backend.current_key = k
        state.update(bytes([k % 256]) * 100)
    first = backend.async_snapshot()
    assert isinstance(first, ForkedSnapshot)  # no size known yet: forked as before
    expected = first()
    assert strategy.bytes_per_entry is not None and 100 < strategy.bytes_per_entry < 200
    second = backend.async_snapshot()
    assert not isinstance(second, ForkedSnapshot)  # ~13 kB: pickled at once
    assert second() == expected
    for k in range(100, 400):
        backend.current_key = k
        state.update(bytes([k % 256]) * 100)
    assert isinstance(backend.async_snapshot(), ForkedSnapshot)  # ~50 kB estimated: forked again
    assert not strategy.forks(9) and strategy.forks(1_000)


def test_a_forked_snapshot_pickles_what_only_cloudpickle_can_as_the_synchronous_one_does() -> None:
    backend = _forking([0])
    state = backend.get_state(ValueStateDescriptor("f"))
    for k in range(50):
        backend.current_key = k
        state.update(lambda x, k=k: x + k)  # a lambda: plain pickle cannot name it
    forked = backend.async_snapshot()
    assert isinstance(forked, ForkedSnapshot)
    blobs = forked()
    backend.snapshot_strategy = HeapSnapshotStrategy(use_fork=False)
    assert blobs == backend.snapshot()
    restored = HeapKeyedStateBackend(max_parallelism=MAX_P)
    restored.restore(blobs)
    assert sorted(f(1) for f in restored.get_table("f").values()) == [1 + k for k in range(50)]
