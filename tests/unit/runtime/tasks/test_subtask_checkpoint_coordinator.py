"""``SubtaskCheckpointCoordinator`` with asynchronous keyed snapshots: the task goes on after the synchronous part
and the checkpoint still holds the state of the barrier; a supplier failing off the task thread declines the
checkpoint as a synchronous failure does; an aborted checkpoint's child is killed, not waited for."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from itertools import count
from pathlib import Path
from typing import Any

import psutil
import pytest
from snapshot_fixtures import Slow, fill, mutate, reaped

from strom.api.state import ListStateDescriptor, ValueStateDescriptor
from strom.exceptions import SerializationError
from strom.runtime.checkpoint.snapshot import OperatorSnapshot, OperatorSubtaskStateHandles
from strom.runtime.checkpoint.storage import CheckpointStorageLocation, read_state
from strom.runtime.network.events import CheckpointBarrier, CheckpointOptions
from strom.runtime.operators.base import StreamOperator
from strom.runtime.state.full_snapshot_async_writer import FullSnapshotAsyncWriter
from strom.runtime.state.heap_keyed_state_backend import HeapKeyedStateBackend
from strom.runtime.state.heap_snapshot_strategy import FORK_SUPPORTED, HeapSnapshotStrategy
from strom.runtime.state.key_groups import assign_to_key_group
from strom.runtime.tasks.subtask_checkpoint_coordinator import SubtaskCheckpointCoordinator

pytestmark = pytest.mark.timeout(60)

MAX_P = 16


class _KeyedOperator(StreamOperator):
    def __init__(self, *, fork: bool) -> None:
        super().__init__()
        self.operator_id = "op"
        strategy = HeapSnapshotStrategy(use_fork=fork, fork_min_entries=0, sync_max_bytes=0)
        self.keyed_backend = HeapKeyedStateBackend(
            max_parallelism=MAX_P, ttl_time_provider=lambda: 0, snapshot_strategy=strategy
        )
        self.aborted: list[int] = []

    def process_batch(self, batch: list[Any]) -> None:
        raise AssertionError("not driven")

    def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        self.aborted.append(checkpoint_id)


class _Chain:
    def __init__(self, op: StreamOperator) -> None:
        self.operators = [op]
        self.head = op
        self.record_writers: list[Any] = []


class _Responder:
    def __init__(self) -> None:
        self.acks: dict[int, tuple[dict[str, OperatorSubtaskStateHandles], dict[str, float]]] = {}
        self.declines: dict[int, str] = {}
        self.done = threading.Event()

    def acknowledge(self, checkpoint_id: int, states: dict[str, OperatorSubtaskStateHandles], stats: Any) -> None:
        self.acks[checkpoint_id] = (states, stats)
        self.done.set()

    def decline(self, checkpoint_id: int, reason: str, counts: bool = True) -> None:
        self.declines[checkpoint_id] = reason
        self.done.set()


def _coordinator(op: _KeyedOperator) -> tuple[SubtaskCheckpointCoordinator, _Responder]:
    responder = _Responder()
    coordinator = SubtaskCheckpointCoordinator(
        _Chain(op),  # type: ignore[arg-type]
        [],
        subtask_index=0,
        task_name="keyed (1/1)",
        responder=responder,
    )
    return coordinator, responder


def _barrier(tmp_path: Path, cid: int = 1) -> CheckpointBarrier:
    location = CheckpointStorageLocation(uri=str(tmp_path / f"chk-{cid}"))
    return CheckpointBarrier(cid, 0, CheckpointOptions(location=location))


@pytest.mark.parametrize("fork", [True, False] if FORK_SUPPORTED else [False])
def test_the_checkpoint_holds_the_state_of_the_barrier_while_the_task_goes_on(tmp_path: Path, fork: bool) -> None:
    op = _KeyedOperator(fork=fork)
    assert op.keyed_backend is not None
    backend: HeapKeyedStateBackend = op.keyed_backend  # type: ignore[assignment]
    fill(backend, 300)
    # pickled first (key group 0) and slowly: an asynchronous part that read the live tables would see the mutations
    backend.current_key = next(k for i in count() if assign_to_key_group(k := f"slow-{i}", MAX_P) == 0)
    backend.get_state(ValueStateDescriptor("slow")).update(Slow(0.3))
    expected = backend.snapshot()
    coordinator, responder = _coordinator(op)
    coordinator.checkpoint_state(_barrier(tmp_path))
    mutate(backend, 300)  # the task thread goes on at once
    coordinator.close()
    states, stats = responder.acks[1]
    written = {kg: read_state(h) for kg, h in states["op"].keyed.items()}
    assert written == expected
    assert stats["sync_duration_ms"] >= 0 and stats["async_duration_ms"] >= 0
    assert stats["state_size"] == sum(map(len, expected.values()))


def test_an_operator_whose_keyed_state_is_empty_writes_nothing(tmp_path: Path) -> None:
    coordinator, responder = _coordinator(_KeyedOperator(fork=True))
    coordinator.checkpoint_state(_barrier(tmp_path))
    coordinator.close()
    assert responder.acks[1][0] == {}


@pytest.mark.skipif(not FORK_SUPPORTED, reason="fork-based snapshots need Linux")
def test_an_unpicklable_value_declines_in_the_asynchronous_part_naming_the_state(tmp_path: Path) -> None:
    op = _KeyedOperator(fork=True)
    backend = op.keyed_backend
    assert backend is not None
    backend.current_key = "k"
    backend.get_state(ListStateDescriptor("connections")).add({"lock": threading.Lock()})
    coordinator, responder = _coordinator(op)
    coordinator.checkpoint_state(_barrier(tmp_path))
    coordinator.close()
    assert not responder.acks
    reason = responder.declines[1]
    assert reason.startswith("keyed (1/1): snapshot failed: SerializationError(")
    assert "'connections'" in reason and "hint" in reason


@pytest.mark.skipif(not FORK_SUPPORTED, reason="fork-based snapshots need Linux")
def test_an_aborted_checkpoint_kills_its_snapshot_process_instead_of_waiting(tmp_path: Path) -> None:
    op = _KeyedOperator(fork=True)
    backend = op.keyed_backend
    assert backend is not None
    backend.current_key = "k"
    backend.get_state(ValueStateDescriptor("slow")).update(Slow(60.0))
    coordinator, responder = _coordinator(op)
    coordinator.checkpoint_state(_barrier(tmp_path))
    time.sleep(0.2)  # the asynchronous part is reading from the child
    t0 = time.monotonic()
    coordinator.notify_checkpoint_aborted(1)  # e.g. the checkpoint timed out on the JobMaster
    assert responder.done.wait(10)
    coordinator.close()
    assert time.monotonic() - t0 < 10
    assert op.aborted == [1]
    assert "snapshot failed" in responder.declines[1] and "SIGKILL" in responder.declines[1]


@pytest.mark.skipif(not FORK_SUPPORTED, reason="fork-based snapshots need Linux")
def test_a_snapshot_process_killed_mid_snapshot_declines_the_checkpoint_and_is_reaped(tmp_path: Path) -> None:
    op = _KeyedOperator(fork=True)
    backend = op.keyed_backend
    assert backend is not None
    backend.current_key = "k"
    backend.get_state(ValueStateDescriptor("slow")).update(Slow(60.0))
    before = {p.pid for p in psutil.Process().children()}
    coordinator, responder = _coordinator(op)
    coordinator.checkpoint_state(_barrier(tmp_path))
    (child,) = [p.pid for p in psutil.Process().children() if p.pid not in before]
    os.kill(child, signal.SIGKILL)  # the OOM killer, say
    assert responder.done.wait(10)
    coordinator.close()
    assert not responder.acks
    assert "snapshot failed" in responder.declines[1] and "killed by SIGKILL" in responder.declines[1]
    assert reaped(child)


class _StreamingOperator(_KeyedOperator):
    """Keyed state whose supplier streams its key groups (as both backends' full snapshots do); ``fail_after``: the
    stream raises after that many key groups."""

    def __init__(self, fail_after: int | None = None) -> None:
        super().__init__(fork=False)
        self.fail_after = fail_after
        self.made: list[int] = []

    def snapshot_state(self, checkpoint_id: int, timestamp_ms: int) -> OperatorSnapshot | None:
        def write() -> Iterator[tuple[int, bytes]]:
            for kg in range(4):
                if self.fail_after is not None and kg == self.fail_after:
                    raise SerializationError("state 'blob' holds a value that cannot be pickled")
                self.made.append(kg)
                yield kg, bytes([kg]) * 10

        return OperatorSnapshot(keyed_supplier=FullSnapshotAsyncWriter(write))


def test_a_streamed_snapshot_is_written_key_group_by_key_group_and_acknowledged(tmp_path: Path) -> None:
    op = _StreamingOperator()
    coordinator, responder = _coordinator(op)
    coordinator.checkpoint_state(_barrier(tmp_path))
    coordinator.close()
    states, stats = responder.acks[1]
    assert {kg: read_state(h) for kg, h in states["op"].keyed.items()} == {kg: bytes([kg]) * 10 for kg in range(4)}
    assert stats["state_size"] == 40 and op.made == [0, 1, 2, 3]


def test_a_stream_failing_midway_declines_as_a_failed_snapshot(tmp_path: Path) -> None:
    coordinator, responder = _coordinator(_StreamingOperator(fail_after=2))
    coordinator.checkpoint_state(_barrier(tmp_path))
    coordinator.close()
    assert not responder.acks
    assert responder.declines[1].startswith("keyed (1/1): snapshot failed: SerializationError(")


def test_a_stream_that_cannot_be_written_declines_as_a_failed_write(tmp_path: Path) -> None:
    (tmp_path / "chk-1").write_text("a file where the checkpoint's directory should be")
    op = _StreamingOperator()
    coordinator, responder = _coordinator(op)
    coordinator.checkpoint_state(_barrier(tmp_path))
    coordinator.close()
    assert not responder.acks
    assert responder.declines[1].startswith("keyed (1/1): writing the state failed: CheckpointStorageError(")
