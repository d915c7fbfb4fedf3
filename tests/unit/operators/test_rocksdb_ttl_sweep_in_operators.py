"""The RocksDB backend's TTL sweep in a keyed operator: ``setup`` hands it the task's processing-time service, whose
callbacks (on the task thread) delete expired entries that nothing reads."""

from __future__ import annotations

from typing import Any

import pytest
from operator_harness import OperatorHarness

from strom import KeyedProcessFunction
from strom.api.state import StateTtlConfig, ValueStateDescriptor
from strom.runtime.operators.keyed import KeyedProcessOperator
from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend
from strom.runtime.state.rocksdb.rocksdb_ttl_compact_filters_manager import SWEEP_INTERVAL_MS

pytestmark = pytest.mark.timeout(60)


class Clock:
    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now


def _entries(backend: RocksDBKeyedStateBackend, name: str) -> int:
    return sum(1 for _ in backend.column_family(name).items())


class Remember(KeyedProcessFunction):
    def open(self, runtime_context: Any) -> None:
        ttl = StateTtlConfig.new_builder(1_000).build()
        self.last = runtime_context.get_state(ValueStateDescriptor("last", ttl_config=ttl))

    def process_element(self, value: tuple[str, int], ctx: Any) -> Any:
        self.last.update(value[1])
        return ()


def test_a_keyed_operator_on_rocksdb_sweeps_its_ttl_state_on_its_tasks_processing_time() -> None:
    harness = OperatorHarness(KeyedProcessOperator(Remember(), lambda t: t[0]), state_backend="rocksdb")
    backend = harness.operator.keyed_backend
    assert isinstance(backend, RocksDBKeyedStateBackend)
    ttl_clock = Clock()
    backend.ttl_time_provider = ttl_clock  # before open(): the state's TTL reads this clock
    harness.open()
    try:
        harness.process_elements([((f"k{i}", i), i) for i in range(50)])
        assert _entries(backend, "last") == 50
        ttl_clock.now = 5_000
        for step in range(1, 4):  # the sweep's callbacks, on the harness's (the task's) processing-time service
            harness.set_processing_time(step * SWEEP_INTERVAL_MS)
        assert _entries(backend, "last") == 0
    finally:
        harness.operator.close()
        backend.dispose()
