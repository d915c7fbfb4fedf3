"""``DefaultSpeculativeExecutionHandler`` on a real BATCH execution graph, its region scheduler faked: a slow subtask
of a vertex without source or sink gets a speculative attempt on another TaskManager; the first attempt to finish
wins (a speculative winner becomes the current attempt), the others are cancelled and their partitions released."""

from __future__ import annotations

import asyncio
from typing import Any

from strom import StreamExecutionEnvironment
from strom.api.execution_mode import RuntimeExecutionMode
from strom.graph.execution_graph import Execution, ExecutionGraph, ExecutionVertex, SlotAssignment
from strom.runtime.execution_state import ExecutionState, JobStatus
from strom.runtime.scheduler.slow_task_detector import ExecutionTimeBasedSlowTaskDetector
from strom.runtime.scheduler.speculative_execution import (
    DefaultSpeculativeExecutionHandler,
    supports_concurrent_attempts,
)


def _graph() -> ExecutionGraph:
    """source → rebalance → map (its own vertex, 3 subtasks) → keyBy → map → sink."""
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(3)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.from_sequence(1, 100).rebalance().map(lambda x: x).key_by(lambda x: x % 2).map(lambda x: x).add_sink(print)
    graph = ExecutionGraph(env.get_job_graph())
    graph.state = JobStatus.RUNNING
    return graph


def _slot(tm: str) -> SlotAssignment:
    return SlotAssignment(tm_id=tm, slot_index=0, allocation_id=f"{tm}-slot", data_address=("127.0.0.1", 1))


class FakeRegions:
    def __init__(self, free: list[SlotAssignment]) -> None:
        self.free = free
        self.deployed: list[Execution] = []
        self.released: list[Execution] = []

    async def free_slot(self, avoid: set[str]) -> SlotAssignment | None:
        return next((s for s in self.free if s.tm_id not in avoid), None)

    async def deploy_attempts(self, executions: list[Execution]) -> None:
        for ex in executions:
            ex.transition(ExecutionState.DEPLOYING)
        self.deployed += executions

    def release_partitions_of(self, attempts: list[Execution], *, finished_only: bool) -> None:
        self.released += attempts

    def wake(self) -> None:
        """Nothing to wake: the test calls the handler itself."""


def _run(ex: Execution, tm: str, state: ExecutionState = ExecutionState.RUNNING) -> None:
    ex.slot = _slot(tm)
    for s in (ExecutionState.SCHEDULED, ExecutionState.DEPLOYING, ExecutionState.INITIALIZING, ExecutionState.RUNNING):
        ex.transition(s)
    if state is not ExecutionState.RUNNING:
        ex.transition(state)


def _setup() -> tuple[
    ExecutionGraph, list[ExecutionVertex], FakeRegions, DefaultSpeculativeExecutionHandler, list[Any]
]:
    graph = _graph()
    middle = next(ejv for ejv in graph.job_vertices.values() if supports_concurrent_attempts(ejv.task_vertices[0]))
    vertices = middle.task_vertices
    for ev, tm in zip(vertices, ("tm-1", "tm-2", "tm-3"), strict=True):
        assert ev.current_execution is not None
        _run(ev.current_execution, tm, ExecutionState.RUNNING if ev.subtask_index == 0 else ExecutionState.FINISHED)
    regions = FakeRegions([_slot("tm-1"), _slot("tm-2")])
    cancelled: list[Any] = []

    def cancel(executions: list[Execution]) -> None:
        cancelled.extend(executions)
        for ex in executions:
            ex.transition(ExecutionState.CANCELING)

    detector = ExecutionTimeBasedSlowTaskDetector(
        baseline_ratio=0.5, baseline_multiplier=1.0, baseline_lower_bound_ms=0
    )
    handler = DefaultSpeculativeExecutionHandler(
        graph,
        regions,
        detector,
        max_concurrent_executions=2,
        check_interval_s=0.01,
        cancel=cancel,
    )
    return graph, vertices, regions, handler, cancelled


def _make_slow(ev: ExecutionVertex) -> None:
    assert ev.current_execution is not None
    ev.current_execution.state_timestamps[ExecutionState.DEPLOYING] -= 60_000  # started a minute before its peers


def test_only_vertices_without_sources_sinks_or_coordinators_are_speculated() -> None:
    graph = _graph()
    allowed = [
        ejv.job_vertex.name for ejv in graph.job_vertices.values() if supports_concurrent_attempts(ejv.task_vertices[0])
    ]
    assert allowed == ["Map"]


def test_a_speculative_winner_becomes_the_current_attempt_and_the_original_is_cancelled() -> None:
    _, vertices, regions, handler, cancelled = _setup()
    slow = vertices[0]
    original = slow.current_execution
    assert original is not None
    _make_slow(slow)
    asyncio.run(handler.check_slow_tasks())
    (spec,) = regions.deployed
    assert spec.vertex is slow and spec.attempt_number == 1 and spec.slot is not None and spec.slot.tm_id == "tm-2"
    asyncio.run(handler.check_slow_tasks())  # at most two attempts at once
    assert regions.deployed == [spec]
    spec.transition(ExecutionState.INITIALIZING)
    spec.transition(ExecutionState.RUNNING)
    assert handler.accept(spec, ExecutionState.FINISHED)  # the JobMaster handles it as the current attempt now
    assert slow.current_execution is spec
    spec.transition(ExecutionState.FINISHED)
    handler.on_current_finished(spec)
    assert cancelled == [original]
    assert not handler.accept(original, ExecutionState.CANCELED)
    assert original.state is ExecutionState.CANCELED and handler.others == {}
    assert regions.released == [original]


def test_an_original_that_finishes_first_cancels_its_speculative_attempt() -> None:
    _, vertices, regions, handler, cancelled = _setup()
    slow = vertices[0]
    _make_slow(slow)
    asyncio.run(handler.check_slow_tasks())
    (spec,) = regions.deployed
    original = slow.current_execution
    assert original is not None
    original.transition(ExecutionState.FINISHED)
    handler.on_current_finished(original)
    assert cancelled == [spec]
    assert not handler.accept(spec, ExecutionState.FINISHED)  # finished while cancelled: counts as cancelled
    assert spec.state is ExecutionState.CANCELED and slow.current_execution is original
    assert regions.released == [spec]  # its partitions are deleted


def test_a_failing_speculative_attempt_is_dropped_and_a_lost_task_manager_takes_its_attempts() -> None:
    _, vertices, regions, handler, _ = _setup()
    _make_slow(vertices[0])
    asyncio.run(handler.check_slow_tasks())
    (spec,) = regions.deployed
    assert not handler.accept(spec, ExecutionState.FAILED)
    assert handler.others == {} and vertices[0].current_execution is not spec
    asyncio.run(handler.check_slow_tasks())
    second = regions.deployed[-1]
    assert second is not spec and second.attempt_number == 2
    handler.on_task_manager_lost("tm-2")
    assert second.state is ExecutionState.FAILED and handler.others == {}
