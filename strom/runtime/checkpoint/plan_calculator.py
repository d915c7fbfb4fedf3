"""``DefaultCheckpointPlanCalculator``: which execution attempts a checkpoint triggers, waits for and commits to
(Flink's ``CheckpointPlanCalculator`` / ``DefaultCheckpointPlanCalculator``), read from the job's ExecutionGraph.

A checkpoint starts only while the job runs and every task runs or has finished; triggered are the running tasks
none of whose producers still runs (the sources, and tasks whose inputs have all finished), the others get the
barrier from upstream; every running task acknowledges (FLIP-147: finished tasks take no part). The calculator
also tells the checkpoint driver the shape of a subtask and of an operator, for the checkpoint's metadata.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from strom.graph.execution_graph import ExecutionGraph
from strom.runtime.execution_state import ExecutionState, JobStatus

__all__ = ["CheckpointPlan", "DefaultCheckpointPlanCalculator"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointPlan:
    """The attempts to trigger and to acknowledge, or (``not_ready``) why no checkpoint can start now."""

    tasks_to_trigger: tuple[str, ...] = ()
    tasks_to_ack: tuple[str, ...] = ()
    not_ready: str = ""


class DefaultCheckpointPlanCalculator:
    """``not_leader``: why this JobManager may not checkpoint the job ("" while it may: high availability)."""

    def __init__(self, graph: ExecutionGraph, *, not_leader: Callable[[], str]) -> None:
        self._graph = graph
        self._not_leader = not_leader

    def calculate_checkpoint_plan(self) -> CheckpointPlan:
        graph = self._graph
        if graph.state is not JobStatus.RUNNING:
            return CheckpointPlan(not_ready=f"the job is {graph.state.value}")
        if reason := self._not_leader():
            return CheckpointPlan(not_ready=reason)
        to_trigger: list[str] = []
        to_ack: list[str] = []
        for ex in graph.all_executions():
            if ex.state is ExecutionState.FINISHED:
                continue
            if ex.state is not ExecutionState.RUNNING:
                return CheckpointPlan(not_ready=f"task '{ex.vertex.name}' is {ex.state.value}, not RUNNING")
            to_ack.append(ex.attempt_id)
            producers = (
                graph.producer_execution(result_id, subtask)
                for result_id, channels in ex.vertex.inputs
                for subtask, _ in channels
            )
            if all(p.state is ExecutionState.FINISHED for p in producers):
                to_trigger.append(ex.attempt_id)
        return CheckpointPlan(tasks_to_trigger=tuple(to_trigger), tasks_to_ack=tuple(to_ack))

    def subtask_of(self, attempt_id: str) -> tuple[int, int, int]:
        """(subtask index, parallelism, max parallelism) of an execution attempt."""
        ex = self._graph.executions[attempt_id]
        jv = ex.vertex.job_vertex.job_vertex
        return ex.vertex.subtask_index, jv.parallelism, jv.max_parallelism

    def operator_shape(self, operator_id: str) -> tuple[int, int]:
        """(parallelism, max parallelism) of the vertex holding ``operator_id``."""
        for v in self._graph.job_graph.vertices.values():
            if any(cfg.operator_id == operator_id for cfg in v.chain):
                return v.parallelism, v.max_parallelism
        raise KeyError(operator_id)
