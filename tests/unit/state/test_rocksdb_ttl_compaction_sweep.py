"""TTL cleanup without reads on the RocksDB backend (Flink's compaction-filter cleanup, a sweep on the task thread
here): expired entries leave the column family although nothing reads them; fresh writes survive; the builder
turns it on and off as Flink's does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from strom.api.state import ListStateDescriptor, MapStateDescriptor, StateTtlConfig, ValueStateDescriptor
from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend
from strom.runtime.state.rocksdb.rocksdb_ttl_compact_filters_manager import SWEEP_ENTRIES_PER_STEP, SWEEP_INTERVAL_MS
from strom.runtime.tasks.processing_time_service import ProcessingTimeService

pytestmark = pytest.mark.timeout(60)


class Clock:
    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now


def _backend(tmp_path: Path, clock: Clock) -> RocksDBKeyedStateBackend:
    return RocksDBKeyedStateBackend(max_parallelism=128, path=str(tmp_path / "db"), ttl_time_provider=clock)


def _entries(backend: RocksDBKeyedStateBackend, name: str) -> int:
    return sum(1 for _ in backend.column_family(name).items())


class Task:
    """The task's processing-time service on its own clock (the TTL clock stays where a test puts it)."""

    def __init__(self) -> None:
        self.clock = Clock()
        self.timers = ProcessingTimeService(clock=self.clock)

    def run_sweep(self, steps: int) -> None:
        """``steps`` sweep steps as the task's loop runs them: processing-time callbacks on this (the task) thread."""
        for _ in range(steps):
            self.clock.now += SWEEP_INTERVAL_MS
            self.timers.fire_due()


def test_expired_entries_leave_the_column_family_without_being_read(tmp_path: Path) -> None:
    clock = Clock()
    backend = _backend(tmp_path, clock)
    try:
        task = Task()
        backend.ttl_compact_filters.attach(task.timers)  # what every operator's setup does with its task's service
        ttl = StateTtlConfig.new_builder(1_000).build()  # Flink's defaults: compaction-filter cleanup is on
        assert ttl.rocksdb_compact_filter_query_time_after_num_entries == 1000
        value = backend.get_state(ValueStateDescriptor("v", ttl_config=ttl))
        elements = backend.get_state(ListStateDescriptor("l", ttl_config=ttl))
        entries = backend.get_state(MapStateDescriptor("m", ttl_config=ttl))
        n = 3 * SWEEP_ENTRIES_PER_STEP  # more than one step's worth: the sweep resumes where it stopped
        for key in range(n):
            backend.current_key = key
            value.update(key)
            elements.add(key)
            entries.put("a", key)
        assert [_entries(backend, s) for s in "vlm"] == [n, n, n]
        clock.now = 500  # not expired yet: the sweep deletes nothing
        task.run_sweep(3 * 3 + 3)
        assert [_entries(backend, s) for s in "vlm"] == [n, n, n]
        clock.now = 2_000
        backend.current_key = 0
        value.update("fresh")  # written after the others expired: survives
        elements.add("fresh")  # the list keeps this element, loses the expired one
        deleted_before = backend.ttl_compact_filters.num_deleted
        task.run_sweep(3 * 3 + 3)  # ≥ one full round over the three states, nothing read by the task
        assert [_entries(backend, s) for s in "vlm"] == [1, 1, 0]
        assert backend.ttl_compact_filters.num_deleted - deleted_before == 3 * n - 1
        assert value.value() == "fresh" and list(elements.get()) == ["fresh"]
    finally:
        backend.dispose()


def test_a_step_visits_a_bounded_number_of_entries_round_robin(tmp_path: Path) -> None:
    clock = Clock()
    backend = _backend(tmp_path, clock)
    try:
        ttl = StateTtlConfig.new_builder(10).cleanup_in_rocksdb_compact_filter(50).build()
        a = backend.get_state(ValueStateDescriptor("a", ttl_config=ttl))
        b = backend.get_state(ValueStateDescriptor("b", ttl_config=ttl))
        for key in range(300):
            backend.current_key = key
            a.update(key)
            b.update(key)
        clock.now = 100
        sweep = backend.ttl_compact_filters
        assert sweep.sweep_step(budget=200) == 200  # 200 of a
        assert (_entries(backend, "a"), _entries(backend, "b")) == (100, 300)
        assert sweep.sweep_step(budget=200) == 200  # the rest of a, then 100 of b
        assert (_entries(backend, "a"), _entries(backend, "b")) == (0, 200)
        assert sweep.sweep_step(budget=1000) == 200
        assert (_entries(backend, "a"), _entries(backend, "b")) == (0, 0)
        assert sweep.sweep_step(budget=1000) == 0  # every state visited once per step at most: no endless loop
    finally:
        backend.dispose()


@pytest.mark.parametrize(
    ("builder", "swept"),
    [
        (lambda b: b, True),
        (lambda b: b.disable_cleanup_in_background(), False),
        (lambda b: b.disable_cleanup_in_background().cleanup_in_rocksdb_compact_filter(10), True),
    ],
    ids=["default", "disabled", "explicit"],
)
def test_the_builder_turns_the_cleanup_on_and_off_as_flink(tmp_path: Path, builder: Any, swept: bool) -> None:
    clock = Clock()
    backend = _backend(tmp_path, clock)
    try:
        task = Task()
        backend.ttl_compact_filters.attach(task.timers)
        state = backend.get_state(ValueStateDescriptor("v", ttl_config=builder(StateTtlConfig.new_builder(10)).build()))
        for key in range(20):
            backend.current_key = key
            state.update(key)
        clock.now = 100
        task.run_sweep(2)
        assert _entries(backend, "v") == (0 if swept else 20)
        assert bool(task.timers.queue) is swept  # no periodic callback without a state to sweep
    finally:
        backend.dispose()


def test_query_time_after_num_entries_must_be_positive() -> None:
    with pytest.raises(ValueError, match="expected a positive int of entries"):
        StateTtlConfig.new_builder(10).cleanup_in_rocksdb_compact_filter(0).build()
