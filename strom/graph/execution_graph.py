"""``ExecutionGraph``: the parallel form of a JobGraph, kept by the JobMaster (Flink's
``ExecutionGraph`` with ``ExecutionJobVertex`` → ``ExecutionVertex`` → ``Execution``).

It also fixes the wiring of every job edge: which subpartition of which producer subtask each consumer
channel reads. ALL_TO_ALL edges connect every producer to every consumer; POINTWISE edges (forward,
rescale) connect ranges, as Flink's ``EdgeManagerBuildUtil.connectPointwise``.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from functools import cached_property

from strom.graph.job_graph import DistributionPattern, JobEdge, JobGraph, JobVertex
from strom.graph.pipelined_regions import ExecutionVertexID, PipelinedRegions
from strom.runtime.execution_state import ExecutionState, JobStatus, check_job_transition, check_transition

__all__ = ["Execution", "ExecutionGraph", "ExecutionJobVertex", "ExecutionVertex", "pointwise_wiring"]


@dataclass(slots=True, kw_only=True)
class SlotAssignment:
    tm_id: str
    slot_index: int
    allocation_id: str
    data_address: tuple[str, int]
    #: the resource id of the slot's TaskManager (local recovery prefers it again on a restart)
    resource_id: str = ""


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(slots=True, kw_only=True)
class Execution:
    """One attempt to run an ExecutionVertex.

    As Flink's ``Execution``, it keeps when it entered each state (``state_timestamps``) and when it left it
    (``state_end_timestamps``), epoch ms: the REST API's ``status-duration`` and subtask times read them. Every
    change of :attr:`state` records both, whether checked (:meth:`transition`) or set directly (the JobMaster's
    cancellations of attempts that never ran)."""

    vertex: ExecutionVertex
    attempt_number: int
    attempt_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    _state: ExecutionState = ExecutionState.CREATED
    slot: SlotAssignment | None = None
    pid: int = 0
    failure_text: str = ""
    state_timestamps: dict[ExecutionState, int] = field(default_factory=lambda: {ExecutionState.CREATED: _now_ms()})
    state_end_timestamps: dict[ExecutionState, int] = field(default_factory=dict)

    @property
    def state(self) -> ExecutionState:
        return self._state

    @state.setter
    def state(self, target: ExecutionState) -> None:
        if target is self._state:
            return
        now = _now_ms()
        self.state_end_timestamps[self._state] = now
        self.state_timestamps[target] = now
        self._state = target

    def transition(self, target: ExecutionState) -> bool:
        if self.state is target:
            return False
        if not check_transition(self.state, target):
            return False
        self.state = target
        return True


@dataclass(slots=True, kw_only=True)
class ExecutionVertex:
    job_vertex: ExecutionJobVertex
    subtask_index: int
    #: result id -> number of subpartitions this subtask produces
    produced: dict[str, int] = field(default_factory=dict)
    #: per input edge: (result id, [(producer subtask, subpartition index), ...])
    inputs: list[tuple[str, list[tuple[int, int]]]] = field(default_factory=list)
    current_execution: Execution | None = None
    #: attempts created so far (restarts and speculative attempts): the next attempt's number
    attempt_count: int = 0

    @property
    def name(self) -> str:
        jv = self.job_vertex
        return f"{jv.job_vertex.name} ({self.subtask_index + 1}/{jv.parallelism})"


@dataclass(slots=True, kw_only=True)
class ExecutionJobVertex:
    job_vertex: JobVertex
    task_vertices: list[ExecutionVertex] = field(default_factory=list)

    @property
    def parallelism(self) -> int:
        return self.job_vertex.parallelism


def pointwise_wiring(p_up: int, p_down: int) -> tuple[list[int], list[list[tuple[int, int]]]]:
    """Subpartition counts per producer, and per consumer its (producer, subpartition) channels."""
    produced = [0] * p_up
    consumers: list[list[tuple[int, int]]] = [[] for _ in range(p_down)]
    if p_up >= p_down:
        for j in range(p_down):
            lo, hi = j * p_up // p_down, (j + 1) * p_up // p_down
            for i in range(lo, hi):
                consumers[j].append((i, 0))
                produced[i] = 1
    else:
        for j in range(p_down):
            i = j * p_up // p_down
            consumers[j].append((i, produced[i]))
            produced[i] += 1
    return produced, consumers


class ExecutionGraph:
    def __init__(self, job_graph: JobGraph) -> None:
        self.job_graph = job_graph
        self.job_id = job_graph.job_id
        self.state = JobStatus.CREATED
        self.failure_text = ""
        self.failure: BaseException | None = None
        self.job_vertices: dict[str, ExecutionJobVertex] = {}
        self.executions: dict[str, Execution] = {}
        for jv in job_graph.topological_order():
            ejv = ExecutionJobVertex(job_vertex=jv)
            ejv.task_vertices = [ExecutionVertex(job_vertex=ejv, subtask_index=i) for i in range(jv.parallelism)]
            self.job_vertices[jv.id] = ejv
        self._producers: dict[str, ExecutionJobVertex] = {}  # result id -> its producer
        for edge in job_graph.edges():
            self._producers[edge.result_id] = self.job_vertices[edge.source_vertex_id]
            self._connect(edge)
        for ejv in self.job_vertices.values():  # sources get their splits from their enumerators (JobMaster)
            for ev in ejv.task_vertices:
                self._new_execution(ev)

    def _connect(self, edge: JobEdge) -> None:
        up = self.job_vertices[edge.source_vertex_id]
        down = self.job_vertices[edge.target_vertex_id]
        if edge.distribution_pattern == DistributionPattern.POINTWISE:
            produced, consumers = pointwise_wiring(up.parallelism, down.parallelism)
        else:
            produced = [down.parallelism] * up.parallelism
            consumers = [[(i, j) for i in range(up.parallelism)] for j in range(down.parallelism)]
        for i, ev in enumerate(up.task_vertices):
            ev.produced[edge.result_id] = produced[i]
        for j, ev in enumerate(down.task_vertices):
            ev.inputs.append((edge.result_id, consumers[j]))

    def _new_execution(self, ev: ExecutionVertex) -> Execution:
        ex = self.new_speculative_execution(ev)
        ev.current_execution = ex
        return ex

    def new_speculative_execution(self, ev: ExecutionVertex) -> Execution:
        """A new attempt of ``ev`` beside its current one (Flink's speculative execution): known to the graph, not
        its vertex's current attempt until it wins."""
        ex = Execution(vertex=ev, attempt_number=ev.attempt_count)
        ev.attempt_count += 1
        self.executions[ex.attempt_id] = ex
        return ex

    def reset_executions_for_restart(self) -> None:
        """Restart-all failover: every vertex gets a new attempt (CREATED, no slot)."""
        for ejv in self.job_vertices.values():
            for ev in ejv.task_vertices:
                self._new_execution(ev)

    def reset_vertices_for_restart(self, vertices: frozenset[ExecutionVertexID]) -> list[Execution]:
        """Region failover: the given subtasks get new attempts (CREATED, no slot); the others run on."""
        return [self._new_execution(self.job_vertices[vid].task_vertices[i]) for vid, i in sorted(vertices)]

    @cached_property
    def pipelined_regions(self) -> PipelinedRegions:
        """The pipelined regions of this graph, computed once (its wiring does not change)."""
        return PipelinedRegions.of(self)

    # -- queries -----------------------------------------------------------------------------------
    def all_executions(self) -> list[Execution]:
        return [
            ev.current_execution
            for ejv in self.job_vertices.values()
            for ev in ejv.task_vertices
            if ev.current_execution is not None
        ]

    def producer_execution(self, result_id: str, producer_subtask: int) -> Execution:
        ex = self._producers[result_id].task_vertices[producer_subtask].current_execution
        assert ex is not None
        return ex

    def edge(self, result_id: str) -> JobEdge:
        for e in self.job_graph.edges():
            if e.result_id == result_id:
                return e
        raise KeyError(result_id)

    def is_all_terminal(self) -> bool:
        return all(ex.state.is_terminal for ex in self.all_executions())

    def is_all_finished(self) -> bool:
        return all(ex.state is ExecutionState.FINISHED for ex in self.all_executions())

    def transition_state(self, target: JobStatus) -> bool:
        if self.state is target or not check_job_transition(self.state, target):
            return False
        self.state = target
        return True
