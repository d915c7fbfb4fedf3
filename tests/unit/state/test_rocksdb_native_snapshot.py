"""A RocksDB checkpoint's full snapshot in RocksDB's own bytes (Flink's RocksDB full snapshot format): what it
holds equals the canonical snapshot of the same moment, it restores into a RocksDB backend as is and into the heap
backend (and the state processor API) through the canonical form, at any parallelism; savepoints stay canonical."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from strom.api.state import ListStateDescriptor, MapStateDescriptor, StateTtlConfig, ValueStateDescriptor
from strom.api.windowing.windows import TimeWindow
from strom.exceptions import CheckpointError
from strom.runtime.state import incremental_state_handler
from strom.runtime.state.heap_keyed_state_backend import HeapKeyedStateBackend
from strom.runtime.state.key_groups import compute_key_group_range_for_operator_index
from strom.runtime.state.rocksdb import rocksdb_stored_forms
from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend
from strom.runtime.state.rocksdb.rocksdb_native_key_groups import canonical_payload, decode_key_group, is_native
from strom.state.savepoint import decode_key_group as read_key_group

pytestmark = pytest.mark.timeout(60)

MAX_P = 16


def _backend(tmp_path: Path, name: str, **kwargs: Any) -> RocksDBKeyedStateBackend:
    return RocksDBKeyedStateBackend(max_parallelism=MAX_P, path=str(tmp_path / name), **kwargs)


def _fill(b: Any, keys: range) -> None:
    v = b.get_state(ValueStateDescriptor("v"))
    lst = b.get_state(ListStateDescriptor("l"))
    m = b.get_state(MapStateDescriptor("m"))
    for key in keys:
        b.current_key = key
        v.update(("v", key))
        lst.add_all([key, "a", key])
        m.put(f"u{key}", key)
        b.set_current_namespace(TimeWindow(0, 10))
        v.update(key * 2)
        b.set_current_namespace(None)
        b.get_table("_reduce:op")[key] = [key]
    if b.priority_queue_factory is not None:
        queue = b.priority_queue_factory.create("event_t")
        for key in keys:
            queue.add(100 + key, key, TimeWindow(0, 10))


def _native(b: RocksDBKeyedStateBackend) -> dict[int, bytes]:
    b.prepare_full_snapshot(native=True)
    return dict(b.async_snapshot()())


def _canonical(blobs: dict[int, bytes]) -> dict[int, Any]:
    """Each key group's canonical payload, whatever its format."""
    return {kg: canonical_payload(blob) if is_native(blob) else pickle.loads(blob) for kg, blob in blobs.items()}


def test_a_checkpoints_key_groups_hold_what_the_canonical_snapshot_holds(tmp_path: Path) -> None:
    b = _backend(tmp_path, "a")
    try:
        _fill(b, range(60))
        native = _native(b)
        assert native and all(is_native(blob) for blob in native.values())
        canonical = b.snapshot()  # a snapshot not prepared as a checkpoint's (a savepoint's) stays canonical
        assert not any(is_native(blob) for blob in canonical.values())
        assert _canonical(native) == _canonical(canonical)
        meta, sections = decode_key_group(next(iter(native.values())))
        assert meta["l"] == ("list", False) and "_timer_queue/event_t" in {name for name, _, _ in sections}
    finally:
        b.dispose()


def test_a_checkpoint_lays_the_write_caches_entries_of_the_synchronous_part_over_rocksdb(tmp_path: Path) -> None:
    b = _backend(tmp_path, "a")
    try:
        v = b.get_state(ValueStateDescriptor("v"))
        for key in range(100):
            b.current_key = key
            v.update(key)
        b.flush()
        for key in range(0, 100, 3):
            b.current_key = key
            v.clear() if key % 2 else v.update("new")  # dirty in the cache: deleted or replaced
        b.prepare_full_snapshot(native=True)
        supplier = b.async_snapshot()
        expected = _canonical(b.snapshot())
        for key in range(100):  # written after the synchronous part: not in the checkpoint
            b.current_key = key
            v.update("later")
        assert _canonical(dict(supplier())) == expected
    finally:
        b.dispose()


@pytest.mark.parametrize("target", ["hashmap", "rocksdb"])
@pytest.mark.parametrize("new_parallelism", [1, 3])
def test_a_checkpoint_at_parallelism_2_restores_into_either_backend_at_1_and_3(
    target: str, new_parallelism: int, make_any_backend: Callable[[str], Any]
) -> None:
    reference = make_any_backend("rocksdb")(max_parallelism=MAX_P)
    _fill(reference, range(80))
    expected = _canonical(reference.snapshot())
    blobs: dict[int, bytes] = {}
    for index in range(2):
        owned = compute_key_group_range_for_operator_index(MAX_P, 2, index)
        old = make_any_backend("rocksdb")(max_parallelism=MAX_P)
        _fill(old, range(80))
        blobs.update({kg: blob for kg, blob in _native(old).items() if kg in owned})
    got: dict[int, Any] = {}
    for index in range(new_parallelism):
        owned = compute_key_group_range_for_operator_index(MAX_P, new_parallelism, index)
        new = make_any_backend(target)(max_parallelism=MAX_P)
        new.restore({kg: blob for kg, blob in blobs.items() if kg in owned}, owned)
        got.update(_canonical(new.snapshot()))
    assert got == expected


def test_restored_timers_reach_the_timer_queue_or_the_heap_timers_table(tmp_path: Path) -> None:
    b = _backend(tmp_path, "a")
    try:
        _fill(b, range(30))
        assert b.priority_queue_factory is not None
        expected = b.priority_queue_factory.create("event_t").items()
        blobs = _native(b)
        in_rocksdb = _backend(tmp_path, "b")
        in_rocksdb.restore(blobs)
        assert in_rocksdb.priority_queue_factory is not None
        assert in_rocksdb.priority_queue_factory.create("event_t").items() == expected
        queue_first = _backend(tmp_path, "c")  # a queue created before the restore takes the timers in too
        assert queue_first.priority_queue_factory is not None
        queue = queue_first.priority_queue_factory.create("event_t")
        queue_first.restore(blobs)
        assert queue.items() == expected and queue.peek() == 100
        heap_timers = _backend(tmp_path, "d", timer_service_factory="HEAP")
        heap_timers.restore(blobs)
        table = heap_timers.get_namespaced_table("_timer_state/event_t")
        assert {(key, entry) for key, entries in table.items() for entry in entries} == {
            (key, (ns, t)) for t, key, ns in expected
        }
        for other in (in_rocksdb, queue_first, heap_timers):
            other.dispose()
    finally:
        b.dispose()


def test_list_elements_added_after_a_restore_in_a_new_process_come_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = _backend(tmp_path, "a")
    try:
        lst = b.get_state(ListStateDescriptor("l"))
        b.current_key = "k"
        lst.add_all([1, 2])
        blobs = _native(b)
        monkeypatch.setattr(rocksdb_stored_forms, "_sequence", iter(range(10)))  # a process whose count starts low
        restored = _backend(tmp_path, "b")
        restored.restore(blobs)
        restored.current_key = "k"
        restored_list = restored.get_state(ListStateDescriptor("l"))
        restored_list.add(3)
        assert list(restored_list.get()) == [1, 2, 3]
        restored.dispose()
    finally:
        b.dispose()


def test_expired_ttl_entries_are_left_out_and_deleted_at_the_next_snapshot(tmp_path: Path) -> None:
    now = [0]
    b = _backend(tmp_path, "a", ttl_time_provider=lambda: now[0])
    ttl = StateTtlConfig.new_builder(10).build()
    try:
        v = b.get_state(ValueStateDescriptor("v", ttl_config=ttl))
        lst = b.get_state(ListStateDescriptor("l", ttl_config=ttl))
        for key in range(6):
            b.current_key = key
            v.update(key)
            lst.add(key)
        b.flush()
        now[0] = 5
        for key in range(3):
            b.current_key = key
            lst.add(-key)  # a second element, written later: survives its list's first one
        now[0] = 12
        b.current_key = 0
        v.update("fresh")
        native = _native(b)
        assert _canonical(native) == _canonical(b.snapshot())
        states = [p["states"] for p in _canonical(native).values()]
        assert {k: s.value for p in states for k, s in p.get("v", ({}, {}))[0].items()} == {0: "fresh"}
        assert sorted(tv.value for p in states for s in p["l"][0].values() for tv in s) == [-2, -1, 0]
        _native(b)  # the next snapshot's synchronous part deletes what the last one found expired
        assert len(list(b.column_family("v").keys())) == 1
        assert len(list(b.column_family("l").keys())) == 3
    finally:
        b.dispose()


def test_the_checkpoint_handler_asks_checkpoints_for_rocksdbs_bytes_and_savepoints_for_the_canonical_form(
    tmp_path: Path,
) -> None:
    b = _backend(tmp_path, "a")
    try:
        _fill(b, range(10))

        class Op:
            keyed_backend = b
            runtime_context = type(
                "Ctx",
                (),
                {
                    "info": type(
                        "Info",
                        (),
                        {"max_parallelism": MAX_P, "parallelism": 1, "subtask_index": 0, "state_backend_options": ()},
                    )
                },
            )

        incremental_state_handler.prepare_keyed_snapshot(Op, 1, is_savepoint=False)
        assert all(is_native(blob) for blob in b.async_snapshot()().values())
        incremental_state_handler.prepare_keyed_snapshot(Op, 2, is_savepoint=True)
        assert not any(is_native(blob) for blob in b.async_snapshot()().values())
        assert not any(is_native(blob) for blob in b.async_snapshot()().values())  # the request is taken once
    finally:
        b.dispose()


def test_the_state_processor_api_reads_a_checkpoints_key_group(tmp_path: Path) -> None:
    b = _backend(tmp_path, "a")
    try:
        _fill(b, range(20))
        kg, blob = next(iter(_native(b).items()))
        state = read_key_group(blob, kg)
        assert state.meta["m"] == ("map", False)
        assert state.states == pickle.loads(b.snapshot()[kg])["states"]
    finally:
        b.dispose()


def test_a_damaged_key_group_is_refused_naming_it(tmp_path: Path) -> None:
    b = _backend(tmp_path, "a")
    try:
        _fill(b, range(10))
        kg, blob = next(iter(_native(b).items()))
        for damaged in (blob[:-3], blob[:40], blob + b"xx"):
            fresh = _backend(tmp_path, f"d{len(damaged)}")
            with pytest.raises(CheckpointError, match=f"keyed state of key group {kg}"):
                fresh.restore({kg: damaged})
            fresh.dispose()
            with pytest.raises(CheckpointError, match="do not parse"):
                HeapKeyedStateBackend(max_parallelism=MAX_P).restore({kg: damaged})
    finally:
        b.dispose()
