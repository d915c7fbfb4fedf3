"""A snapshot's placing of keys into key groups: at once for many int keys, cached between snapshots for few keys
of exact int / str / bytes type, the same key groups either way."""

from __future__ import annotations

from typing import Any

import pytest

from strom.api.state import ValueStateDescriptor
from strom.runtime.state import key_group_partitioner
from strom.runtime.state.heap_keyed_state_backend import HeapKeyedStateBackend
from strom.runtime.state.heap_snapshot_strategy import HeapSnapshotStrategy
from strom.runtime.state.int_key_groups import int_key_group_assigner, int_key_groups_of
from strom.runtime.state.key_group_partitioner import KeyGroupPartitioner
from strom.runtime.state.key_groups import key_group_assigner


def _reference(table: dict[Any, Any], assign: Any) -> dict[int, dict[Any, Any]]:
    out: dict[int, dict[Any, Any]] = {}
    for key, value in table.items():
        out.setdefault(assign(key), {})[key] = value
    return out


def test_many_int_keys_are_placed_at_once_as_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numpy")
    monkeypatch.setattr(key_group_partitioner, "VECTOR_MIN_KEYS", 10)
    direct = int_key_group_assigner(128, None, key_group_assigner(128))
    calls: list[int] = []

    def counted(key: Any) -> int:
        calls.append(key)
        return direct(key)

    partitioner = KeyGroupPartitioner(counted, lambda keys: int_key_groups_of(keys, 128, None))
    table = {k * 7919: str(k) for k in range(-500, 500)}
    parts = partitioner.partition(table, total=len(table))
    assert parts == _reference(table, direct)
    assert {kg: list(p) for kg, p in parts.items()} == {kg: list(p) for kg, p in _reference(table, direct).items()}
    assert not calls  # none placed one by one
    mixed = {**table, "a": 1, True: 2}
    assert partitioner.partition(mixed, total=len(mixed)) == _reference(mixed, direct)


def test_few_keys_reuse_their_key_groups_between_snapshots_but_never_across_types() -> None:
    reference = key_group_assigner(128)
    calls: list[Any] = []

    def counted(key: Any) -> int:
        calls.append(key)
        return reference(key)

    partitioner = KeyGroupPartitioner(counted)
    table: dict[Any, Any] = {"a": 1, 1: 2, b"c": 3, (4, 5): 4}
    assert partitioner.partition(table, total=4) == _reference(table, reference)
    assert partitioner.partition(table, total=4) == _reference(table, reference)
    assert sorted(map(repr, calls)) == sorted(map(repr, ["a", 1, b"c", (4, 5), (4, 5)]))  # tuples are not kept
    del table[1]
    table[True] = 6  # equal to a cached key of another type: placed by its own hash
    calls.clear()
    assert partitioner.partition(table, total=4) == _reference(table, reference)
    assert sorted(map(repr, calls)) == ["(4, 5)", "True"]  # True placed by its own hash, not 1's cached group


def test_large_snapshots_do_not_fill_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(key_group_partitioner, "CACHE_MAX_KEYS", 3)
    reference = key_group_assigner(128)
    partitioner = KeyGroupPartitioner(reference)
    assign = partitioner.start(10, shared_keys=True)
    assert [assign(k) for k in "abcab"] == [reference(k) for k in "abcab"]
    assert partitioner.start(3, shared_keys=False)("z") == reference("z")
    assert partitioner._cache == {"z": reference("z")}


@pytest.mark.parametrize("vector", [0, 10**9])
def test_a_heap_snapshot_restores_the_same_whichever_way_keys_were_placed(
    vector: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(key_group_partitioner, "VECTOR_MIN_KEYS", vector)
    backend = HeapKeyedStateBackend(max_parallelism=128, snapshot_strategy=HeapSnapshotStrategy(use_fork=False))
    state = backend.get_state(ValueStateDescriptor("v"))
    other = backend.get_state(ValueStateDescriptor("w"))
    for k in range(3000):
        backend.current_key = k * 31 - 40_000
        state.update(k)
        if k % 3 == 0:
            other.update(-k)
    blobs = backend.snapshot()
    restored = HeapKeyedStateBackend(max_parallelism=128)
    restored.restore(blobs)
    assert restored.get_table("v") == backend.get_table("v")
    assert restored.get_table("w") == backend.get_table("w")
    placed = key_group_assigner(128)
    for kg, blob in blobs.items():
        single = HeapKeyedStateBackend(max_parallelism=128)
        single.restore({kg: blob})
        assert {placed(k) for k in single.get_table("v")} == {kg}
