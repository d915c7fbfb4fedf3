"""A savepoint as a job writes it, made without a cluster: the state backends' snapshots written through
``CheckpointStorageLocation`` per subtask, key groups split by the subtasks' ranges, ``_metadata`` last."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from strom.api.functions import RuntimeContext
from strom.api.state import ListStateDescriptor, MapStateDescriptor, StateTtlConfig, ValueStateDescriptor
from strom.runtime.checkpoint.metadata import CheckpointMetadata, OperatorState, StateHandle
from strom.runtime.checkpoint.storage import CheckpointStorageLocation
from strom.runtime.state.key_groups import compute_key_group_range_for_operator_index
from strom.runtime.state.operator_state_backend import OperatorStateBackend
from strom.runtime.state.state_backend import KeyedStateBackend, create_keyed_state_backend
from strom.state import KeyedStateReaderFunction

KEYS = [f"k{i}" for i in range(40)]


def expected_row(i: int) -> dict[str, Any]:
    return {"key": f"k{i}", "count": i, "seen": [i, i + 1], "tags": {"t": i}}


def keyed_backend(max_parallelism: int, backend_type: str = "hashmap") -> KeyedStateBackend:
    """``count`` (value), ``seen`` (list), ``tags`` (map), ``fresh`` (value with a TTL of 11 days) for every key of
    KEYS, and an event-time timer per key of a KeyedProcessFunction, in a backend of ``state.backend.type``."""
    backend = create_keyed_state_backend(backend_type, max_parallelism=max_parallelism)
    count = backend.get_state(ValueStateDescriptor("count"))
    seen = backend.get_state(ListStateDescriptor("seen"))
    tags = backend.get_state(MapStateDescriptor("tags"))
    fresh_descriptor = ValueStateDescriptor("fresh")
    fresh_descriptor.enable_time_to_live(StateTtlConfig.new_builder(10**9).build())
    fresh = backend.get_state(fresh_descriptor)
    timers = backend.get_namespaced_table("_timer_state/event_user-timers")
    for i, key in enumerate(KEYS):
        backend.current_key = key
        count.update(i)
        seen.add_all([i, i + 1])
        tags.put("t", i)
        fresh.update(-i)
        timers[key] = {(None, 5_000 + i): True}
    return backend


def operator_backend(subtask: int) -> OperatorStateBackend:
    backend = OperatorStateBackend()
    backend.get_list_state(ListStateDescriptor("offsets")).update([subtask * 10, subtask * 10 + 1])
    backend.get_union_list_state(ListStateDescriptor("files")).update([f"file-{subtask}"])
    backend.get_broadcast_state(MapStateDescriptor("rules")).put_all({"a": 1, "b": 2})
    return backend


def write_job_savepoint(
    directory: Path, *, parallelism: int = 2, max_parallelism: int = 128, backend_type: str = "hashmap"
) -> Path:
    """Operator ``counts`` (keyed state of a ``backend_type`` backend) and operator ``source`` (list, union and
    broadcast state), written by ``parallelism`` subtasks as a running job writes them."""
    location = CheckpointStorageLocation(uri=str(directory))
    blobs = keyed_backend(max_parallelism, backend_type).snapshot()
    keyed: dict[int, StateHandle] = {}
    operator: dict[int, StateHandle] = {}
    for subtask in range(parallelism):
        owned = compute_key_group_range_for_operator_index(max_parallelism, parallelism, subtask)
        part = {kg: blob for kg, blob in blobs.items() if kg in owned}
        keyed.update(location.write_state_slices(f"counts-keyed-{subtask}", part))
        snapshot = operator_backend(subtask).snapshot()
        assert snapshot is not None
        operator[subtask] = location.write_state(f"source-op-{subtask}", snapshot)
    states = {
        "counts": OperatorState("counts", parallelism, max_parallelism, keyed=keyed),
        "source": OperatorState("source", parallelism, max_parallelism, operator=operator),
    }
    location.write_metadata(
        CheckpointMetadata(
            checkpoint_id=7,
            job_id="0123456789abcdef",
            timestamp_ms=1,
            is_savepoint=True,
            operator_states=states,
            external_pointer=location.uri,
        )
    )
    return directory


class AllStates(KeyedStateReaderFunction[str, dict[str, Any]]):
    def open(self, runtime_context: RuntimeContext) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("count"))
        self.seen = runtime_context.get_list_state(ListStateDescriptor("seen"))
        self.tags = runtime_context.get_map_state(MapStateDescriptor("tags"))

    def read_key(self, key: str, ctx: KeyedStateReaderFunction.Context) -> Iterator[dict[str, Any]]:
        yield {"key": key, "count": self.count.value(), "seen": self.seen.get(), "tags": dict(self.tags.items())}
