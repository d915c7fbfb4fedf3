"""The CheckpointedFunction / CheckpointListener API and its contexts."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from strom.api.checkpoint import (
    CheckpointedFunction,
    CheckpointListener,
    FunctionInitializationContext,
    FunctionSnapshotContext,
)
from strom.api.state import ListState, ListStateDescriptor, ValueStateDescriptor
from strom.exceptions import InvalidProgramError
from strom.runtime.state.heap_keyed_state_backend import HeapKeyedStateBackend
from strom.runtime.state.operator_state_backend import OperatorStateBackend

pytestmark = pytest.mark.timeout(30)


class BufferingFunction(CheckpointedFunction, CheckpointListener):
    def __init__(self) -> None:
        self.buffer: list[Any] = []
        self.state: ListState[Any] | None = None
        self.completed: list[int] = []

    def initialize_state(self, context: FunctionInitializationContext) -> None:
        self.state = context.get_operator_state_store().get_list_state(ListStateDescriptor("buffer"))
        if context.is_restored():
            self.buffer = list(self.state.get())

    def snapshot_state(self, context: FunctionSnapshotContext) -> None:
        assert self.state is not None
        self.state.update([*self.buffer, ("checkpoint", context.checkpoint_id)])

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        self.completed.append(checkpoint_id)


def test_snapshot_and_restore_through_the_contexts() -> None:
    fn = BufferingFunction()
    store = OperatorStateBackend()
    fn.initialize_state(FunctionInitializationContext(store, None, None))
    fn.buffer += ["a", "b"]
    fn.snapshot_state(FunctionSnapshotContext(7, 123))
    fn.notify_checkpoint_complete(7)
    fn.notify_checkpoint_aborted(8)  # the default does nothing
    assert fn.completed == [7]

    restored_store = OperatorStateBackend()
    restored_store.restore([store.snapshot()], subtask_index=0, parallelism=1)
    again = BufferingFunction()
    ctx = FunctionInitializationContext(restored_store, None, 7)
    again.initialize_state(ctx)
    assert ctx.is_restored() and ctx.get_restored_checkpoint_id() == 7
    assert again.buffer == ["a", "b", ("checkpoint", 7)]


def test_context_accessors() -> None:
    snapshot = FunctionSnapshotContext(checkpoint_id=3, checkpoint_timestamp=99)
    assert (snapshot.get_checkpoint_id(), snapshot.get_checkpoint_timestamp()) == (3, 99)
    with pytest.raises(dataclasses.FrozenInstanceError):
        snapshot.checkpoint_id = 4  # type: ignore[misc]
    operator_store = OperatorStateBackend()
    keyed = HeapKeyedStateBackend(max_parallelism=8)
    ctx = FunctionInitializationContext(operator_store, keyed, None)
    assert not ctx.is_restored() and ctx.get_restored_checkpoint_id() is None
    assert ctx.get_operator_state_store() is operator_store
    assert ctx.get_keyed_state_store() is keyed
    keyed.current_key = "k"
    ctx.get_keyed_state_store().get_state(ValueStateDescriptor("v")).update(1)
    assert keyed.get_table("v") == {"k": 1}


def test_keyed_state_store_needs_a_keyed_stream() -> None:
    ctx = FunctionInitializationContext(OperatorStateBackend(), None, None)
    with pytest.raises(InvalidProgramError, match=r"key_by\(\.\.\.\)"):
        ctx.get_keyed_state_store()


def test_abstract_methods() -> None:
    with pytest.raises(TypeError):
        CheckpointedFunction()  # type: ignore[abstract]

    class OnlyAbort(CheckpointListener):
        pass

    with pytest.raises(TypeError):
        OnlyAbort()  # type: ignore[abstract]
