"""What the RocksDB backend adds to the backend contract: its key encoding, snapshots that do not see later writes,
restores across backends and parallelisms, the table facades, compact typed values, TTL clean-up, its directory."""

from __future__ import annotations

import enum
import math
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strom.api.state import (
    ListStateDescriptor,
    MapStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)
from strom.api.windowing.windows import GlobalWindow, TimeWindow
from strom.common import Types
from strom.exceptions import ConfigurationError, InvalidProgramError
from strom.runtime.state.key_groups import compute_key_group_range_for_operator_index
from strom.runtime.state.rocksdb.rocksdb_key_serialization_utils import (
    decode_key,
    decode_namespace,
    encode_key,
    encode_namespace,
)
from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend
from strom.runtime.state.rocksdb.rocksdb_memory_controller_utils import (
    RocksDBMemoryConfiguration,
    shared_resources,
)
from strom.runtime.state.state_backend import KeyedStateBackendParameters, create_keyed_state_backend

pytestmark = pytest.mark.timeout(60)

MAX_P = 16


class Color(enum.Enum):
    RED = 1


class Point(NamedTuple):
    x: int
    y: int


@dataclass(frozen=True)
class Account:
    bank: str
    number: int


# --- keys ------------------------------------------------------------------------------------------------


def test_equal_keys_encode_to_equal_bytes() -> None:
    assert encode_key(1) == encode_key(1.0) == encode_key(True)
    assert encode_key((1, "a")) == encode_key(Point(1, "a"))  # type: ignore[arg-type]
    assert encode_key(frozenset({1, 2})) == encode_key(frozenset({2.0, 1}))
    assert encode_key(-0.0) == encode_key(0)
    assert encode_key("a") != encode_key(b"a") != encode_key(("a",))


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.integers() | st.text() | st.binary() | st.floats(allow_nan=False),
        lambda inner: st.tuples(inner, inner) | st.lists(inner, max_size=3).map(tuple),
        max_leaves=8,
    )
)
def test_keys_round_trip_and_encodings_are_prefix_free(key: Any) -> None:
    data = encode_key(key)
    decoded, end = decode_key(data + b"tail", 0)
    assert decoded == key and end == len(data)
    assert encode_key(decoded) == data


def test_namespaces_keep_their_class() -> None:
    for ns in (TimeWindow(-5, 10), GlobalWindow.get(), Point(1, 2), (TimeWindow(0, 5), 4), Color.RED, None, "w"):
        decoded, _ = decode_namespace(encode_namespace(ns), 0)
        assert decoded == ns and type(decoded) is type(ns)
    decoded, _ = decode_key(encode_key(Account("b", 7)), 0)
    assert decoded == Account("b", 7)


@pytest.mark.parametrize("key", [math.nan, (1, math.nan), object(), [1], {"a": 1}])
def test_a_key_without_a_deterministic_encoding_is_refused_with_a_hint(key: Any, tmp_path: Path) -> None:
    backend = RocksDBKeyedStateBackend(max_parallelism=MAX_P, path=str(tmp_path / "db"))
    state = backend.get_state(ValueStateDescriptor("v"))
    backend.current_key = key
    try:
        with pytest.raises((InvalidProgramError, TypeError), match=r"key|hashable"):
            state.update(1)
    finally:
        backend.dispose()


# --- snapshots, rescaling, cross-backend restore -----------------------------------------------------------------


def _fill(backend: Any, keys: list[Any]) -> None:
    v = backend.get_state(ValueStateDescriptor("v"))
    lst = backend.get_state(ListStateDescriptor("l"))
    m = backend.get_state(MapStateDescriptor("m"))
    for key in keys:
        backend.current_key = key
        v.update(key)
        lst.add_all([key, 1])
        m.put(("u", key), key)
        backend.set_current_namespace(TimeWindow(0, 10))
        lst.add(key)
        backend.set_current_namespace(None)
        backend.get_table("_reduce:op")[key] = [key]


def _read(backend: Any, keys: list[Any]) -> dict[Any, Any]:
    v = backend.get_state(ValueStateDescriptor("v"))
    lst = backend.get_state(ListStateDescriptor("l"))
    m = backend.get_state(MapStateDescriptor("m"))
    out = {}
    for key in keys:
        backend.current_key = key
        flat = (v.value(), lst.get(), m.items(), backend.get_table("_reduce:op").get(key))
        backend.set_current_namespace(TimeWindow(0, 10))
        out[key] = (*flat, lst.get())
        backend.set_current_namespace(None)
    return out


KEYS = [f"k{i}" for i in range(40)] + list(range(40))


@pytest.mark.parametrize("source", ["hashmap", "rocksdb"])
@pytest.mark.parametrize("target", ["hashmap", "rocksdb"])
@pytest.mark.parametrize("new_parallelism", [1, 3])
def test_a_snapshot_at_parallelism_2_restores_into_either_backend_at_1_and_3(
    source: str, target: str, new_parallelism: int, make_any_backend: Callable[[str], Any]
) -> None:
    reference = make_any_backend("hashmap")(max_parallelism=MAX_P)
    _fill(reference, KEYS)
    expected = _read(reference, KEYS)
    blobs: dict[int, bytes] = {}
    for index in range(2):
        owned = compute_key_group_range_for_operator_index(MAX_P, 2, index)
        old = make_any_backend(source)(max_parallelism=MAX_P)
        _fill(old, [k for k in KEYS if _kg(k) in owned])
        blobs.update(old.snapshot())
    got: dict[Any, Any] = {}
    for index in range(new_parallelism):
        owned = compute_key_group_range_for_operator_index(MAX_P, new_parallelism, index)
        new = make_any_backend(target)(max_parallelism=MAX_P)
        new.restore({kg: blob for kg, blob in blobs.items() if kg in owned})
        got.update(_read(new, [k for k in KEYS if _kg(k) in owned]))
    assert got == expected


def _kg(key: Any) -> int:
    from strom.runtime.state.key_groups import assign_to_key_group

    return assign_to_key_group(key, MAX_P)


def test_the_supplier_of_an_async_snapshot_does_not_see_later_writes(tmp_path: Path) -> None:
    backend = RocksDBKeyedStateBackend(max_parallelism=MAX_P, path=str(tmp_path / "db"))
    try:
        _fill(backend, KEYS[:10])
        before = backend.snapshot()
        supplier = backend.async_snapshot()
        _fill(backend, KEYS[10:20])  # the task goes on writing
        backend.current_key = KEYS[0]
        backend.get_state(ValueStateDescriptor("v")).update("changed")
        result: list[dict[int, bytes]] = []
        thread = threading.Thread(target=lambda: result.append(supplier()))  # off the task thread
        thread.start()
        thread.join(30)
        assert result == [before]
    finally:
        backend.dispose()


def test_a_streamed_full_snapshot_is_the_state_of_the_synchronous_part_key_group_by_key_group(tmp_path: Path) -> None:
    """Flink's RocksFullSnapshotStrategy: the synchronous part only flushes and pins a point-in-time view; the writes
    the task makes after it returns — flushed into RocksDB, while the stream is half read — never leak in."""
    from strom.runtime.state.full_snapshot_async_writer import KeyGroupStreamSupplier

    backend = RocksDBKeyedStateBackend(max_parallelism=MAX_P, path=str(tmp_path / "db"))
    try:
        _fill(backend, KEYS[:30])
        expected = backend.snapshot()
        expected_values = _read(backend, KEYS[:30])
        supplier = backend.async_snapshot()
        assert isinstance(supplier, KeyGroupStreamSupplier)
        _fill(backend, KEYS[30:])  # after the synchronous part returned
        backend.current_key = KEYS[0]
        backend.get_state(ValueStateDescriptor("v")).update("changed")
        backend.flush()  # into RocksDB itself, not only the write cache
        stream = supplier.stream()
        pairs = [next(stream)]
        backend.current_key = KEYS[1]
        backend.get_state(ListStateDescriptor("l")).clear()  # while the asynchronous part runs
        backend.get_state(MapStateDescriptor("m")).put("late", 1)
        backend.flush()
        pairs += list(stream)
        groups = [kg for kg, _ in pairs]
        assert groups == sorted(set(groups)), "one blob per key group, in key-group order"
        assert dict(pairs) == expected
        restored = RocksDBKeyedStateBackend(max_parallelism=MAX_P, path=str(tmp_path / "restored"))
        try:
            restored.restore(dict(pairs))
            assert _read(restored, KEYS[:30]) == expected_values
            assert restored.num_keys() == 30  # none of the keys written after the synchronous part
        finally:
            restored.dispose()
    finally:
        backend.dispose()


def test_a_full_snapshot_copies_the_write_caches_entries_as_they_were_at_the_synchronous_part(tmp_path: Path) -> None:
    """The synchronous part flushes nothing it can copy: dirty entries of immutable forms are laid over RocksDB's
    view, a mutable one is written at once — a list changed in place after the snapshot, values updated or deleted
    after it, and a key deleted before it (over an entry RocksDB holds) all come out as they were."""
    backend = RocksDBKeyedStateBackend(max_parallelism=MAX_P, path=str(tmp_path / "db"))
    try:
        v = backend.get_state(ValueStateDescriptor("v"))
        table = backend.get_namespaced_table("w")
        for k in range(20):
            backend.current_key = k
            v.update(b"old-%d" % k)
            table[k] = {TimeWindow(0, 5): k}
        backend.flush()  # in RocksDB
        backend.current_key = 0
        v.clear()  # deleted before the snapshot, over RocksDB's entry
        backend.current_key = 1
        v.update(b"new-1")  # dirty, immutable: copied
        mutable = [1]
        backend.current_key = 2
        v.update(mutable)  # dirty, mutable: written now
        backend.current_key = 99
        v.update(("fresh", 99))  # only in the cache: a key group RocksDB may not hold
        table[3] = {TimeWindow(0, 5): 3, TimeWindow(5, 10): 33}
        expected = {k: b"old-%d" % k for k in range(3, 20)} | {1: b"new-1", 2: [1], 99: ("fresh", 99)}
        expected_windows = {k: {TimeWindow(0, 5): k} for k in range(20)} | {
            3: {TimeWindow(0, 5): 3, TimeWindow(5, 10): 33}
        }
        supplier = backend.async_snapshot()
        mutable.append(2)  # after the synchronous part: in place, and updated
        backend.current_key = 2
        v.update(mutable)
        for k in (1, 3, 99):
            backend.current_key = k
            v.update(b"later")
        backend.current_key = 4
        v.clear()
        table[5] = {}
        del table[6]
        blobs = supplier()
        restored = RocksDBKeyedStateBackend(max_parallelism=MAX_P, path=str(tmp_path / "restored"))
        try:
            restored.restore(blobs)
            assert dict(restored.get_table("v")) == expected
            assert {k: dict(w) for k, w in restored.get_namespaced_table("w").items()} == expected_windows
        finally:
            restored.dispose()
    finally:
        backend.dispose()


def test_a_full_snapshot_is_taken_once(tmp_path: Path) -> None:
    from strom.exceptions import CheckpointError

    backend = RocksDBKeyedStateBackend(max_parallelism=MAX_P, path=str(tmp_path / "db"))
    try:
        _fill(backend, KEYS[:3])
        supplier = backend.async_snapshot()
        assert supplier()
        with pytest.raises(CheckpointError, match="once"):
            supplier()
        cancelled = backend.async_snapshot()
        cancelled.cancel()
        with pytest.raises(CheckpointError, match="cancelled"):
            cancelled.stream()
    finally:
        backend.dispose()


# --- tables -------------------------------------------------------------------------------------------------


def test_the_namespaced_table_writes_through_at_both_levels(tmp_path: Path) -> None:
    backend = RocksDBKeyedStateBackend(max_parallelism=MAX_P, path=str(tmp_path / "db"))
    try:
        table = backend.get_namespaced_table("t")
        assert table.get("k") is None and "k" not in table and len(table) == 0
        table["k"] = {TimeWindow(0, 5): 1}
        per_key = table["k"]
        per_key[TimeWindow(5, 10)] = 2  # write-through view
        assert dict(table["k"]) == {TimeWindow(0, 5): 1, TimeWindow(5, 10): 2}
        assert per_key.pop(TimeWindow(0, 5)) == 1
        table["j"] = table["k"]
        table.update({"i": {None: 3}})  # None is the void namespace: kept apart
        assert sorted(table) == ["j", "k"] and table == {"j": {TimeWindow(5, 10): 2}, "k": {TimeWindow(5, 10): 2}}
        assert backend.get_table("t") == {"i": 3}
        del table["k"]
        table.clear()
        assert len(table) == 0 and backend.get_table("t") == {"i": 3}
        flat = backend.get_table("t")
        flat.setdefault("x", [1])
        assert flat.pop("x") == [1] and "x" not in flat
        with pytest.raises(KeyError):
            del flat["x"]
    finally:
        backend.dispose()


# --- values, TTL ------------------------------------------------------------------------------------------


def test_typed_values_are_compact_and_untyped_ones_pickled(tmp_path: Path) -> None:
    backend = RocksDBKeyedStateBackend(max_parallelism=MAX_P, path=str(tmp_path / "db"))
    try:
        typed = backend.get_state(ValueStateDescriptor("typed", Types.LONG()))
        untyped = backend.get_state(ValueStateDescriptor("untyped"))
        backend.current_key = "k"
        typed.update(7)
        untyped.update(7)
        assert [len(v) for _, v in backend.column_family("typed").items()] == [9]  # tag + 8 bytes
        assert typed.value() == 7 and untyped.value() == 7
        with pytest.raises(InvalidProgramError, match="expected a value of"):
            typed.update("seven")
    finally:
        backend.dispose()


def test_expired_entries_a_snapshot_finds_are_deleted_at_the_next_one(tmp_path: Path) -> None:
    now = [0]
    backend = RocksDBKeyedStateBackend(
        max_parallelism=MAX_P, path=str(tmp_path / "db"), ttl_time_provider=lambda: now[0]
    )
    try:
        state = backend.get_state(ValueStateDescriptor("v", ttl_config=StateTtlConfig.new_builder(10).build()))
        for key in range(5):
            backend.current_key = key
            state.update(key)
        now[0] = 20
        backend.current_key = 0
        state.update("fresh")  # written after expiry: must survive the clean-up
        assert len(backend.snapshot()) == 1
        assert len(list(backend.column_family("v").keys())) == 5  # nothing deleted by reading alone
        backend.async_snapshot()
        assert len(list(backend.column_family("v").keys())) == 1
        now[0] = 100
        backend.cleanup_expired_state()
        assert list(backend.column_family("v").keys()) == []
    finally:
        backend.dispose()


# --- the factory: directories, memory -----------------------------------------------------------------------


def test_the_factory_puts_each_subtask_in_its_directory_and_removes_it(tmp_path: Path) -> None:
    params = KeyedStateBackendParameters(
        max_parallelism=MAX_P,
        job_id="j1",
        operator_id="op/1",
        subtask_index=2,
        options={"state.backend.rocksdb.localdir": str(tmp_path)},
    )
    stale = tmp_path / "job_j1" / "op_op_1_2" / "attempt_0_dead"
    stale.mkdir(parents=True)
    (stale / "LOCK").write_bytes(b"")  # a killed process's instance: its LOCK is no longer locked
    other_job = tmp_path / "job_j0" / "op_x_0" / "attempt_0_dead"
    other_job.mkdir(parents=True)
    os.utime(other_job, (0, 0))  # never opened, long ago
    backend: Any = create_keyed_state_backend("rocksdb", max_parallelism=MAX_P, parameters=params)
    assert not stale.exists() and not other_job.exists()  # a fresh start reuses nothing
    assert Path(backend.path).parent == stale.parent and os.path.isdir(backend.path)
    second: Any = create_keyed_state_backend("rocksdb", max_parallelism=MAX_P, parameters=params)
    assert os.path.isdir(backend.path)  # a live instance is never stale
    backend.dispose()
    second.dispose()
    assert not os.path.exists(backend.path)


def test_one_shared_cache_per_process_sized_as_flink() -> None:
    config = RocksDBMemoryConfiguration(managed_memory_bytes=300 << 20)
    shared = shared_resources(config)
    assert shared is not None and shared is shared_resources(config)
    assert shared.write_buffer_manager.get_buffer_size() == 100 << 20
    assert shared_resources(RocksDBMemoryConfiguration(use_managed_memory=False)) is None


def test_an_unknown_timer_service_factory_is_refused_with_a_hint() -> None:
    from strom import Configuration
    from strom.runtime.state.state_backend import state_backend_options

    key = "state.backend.rocksdb.timer-service.factory"
    conf = Configuration({"state.backend.type": "rocksdb", key: "DISK"})
    with pytest.raises(
        ConfigurationError, match=r"expected state\.backend\.rocksdb\.timer-service\.factory to be ROCKSDB or HEAP"
    ):
        state_backend_options(conf)
    assert state_backend_options(Configuration({"state.backend.type": "hashmap"})) == {}
    assert state_backend_options(Configuration({"state.backend.type": "rocksdb"}))[key] == "ROCKSDB"  # Flink's default
    assert state_backend_options(Configuration({"state.backend.type": "rocksdb", key: "heap"}))[key] == "HEAP"
