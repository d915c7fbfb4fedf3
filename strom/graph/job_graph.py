"""``JobGraph``: chained operators as JobVertices (Flink's ``StreamingJobGraphGenerator``).

In BATCH execution every edge that is not chained is BLOCKING (Flink's ``ALL_EDGES_BLOCKING``), else PIPELINED.

An edge ``up → down`` is chained when Flink's ``isChainable`` holds: ``down`` has exactly one input,
both are in the same slot-sharing group, have the same parallelism, the partitioner is forward,
``down``'s chaining strategy is ALWAYS, ``up``'s is not NEVER, and chaining is enabled.

Each operator of a chain is serialized here, at compile time, so a function that cannot be shipped is
reported before anything starts, with the operator's name.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import cloudpickle

from strom.api.serialization import BatchSerializer
from strom.exceptions import SerializationError
from strom.graph.stream_graph import StreamEdge, StreamGraph, StreamNode
from strom.runtime.network.partitioner import ForwardPartitioner, StreamPartitioner
from strom.runtime.network.result_partition_type import ResultPartitionType
from strom.runtime.operators.base import ChainingStrategy
from strom.runtime.operators.sink import CollectSinkOperator

__all__ = [
    "ChainedOperatorConfig",
    "DistributionPattern",
    "JobEdge",
    "JobGraph",
    "JobVertex",
    "StreamingJobGraphGenerator",
    "is_chainable",
]


class DistributionPattern:
    ALL_TO_ALL = "ALL_TO_ALL"
    POINTWISE = "POINTWISE"


@dataclass(frozen=True, slots=True, kw_only=True)
class ChainedOperatorConfig:
    """One operator of a chain: its serialized operator and where its output goes."""

    node_id: int
    name: str
    operator_id: str
    serialized_operator: bytes
    chained_outputs: tuple[int, ...]  # indices into the chain
    network_outputs: tuple[str, ...]  # result ids (JobEdge.result_id)
    is_source: bool
    chained_side_outputs: tuple[tuple[str, int], ...] = ()  # (output tag id, index into the chain)
    network_side_outputs: tuple[tuple[str, str], ...] = ()  # (output tag id, result id)


@dataclass(slots=True, kw_only=True)
class JobEdge:
    result_id: str
    source_vertex_id: str
    target_vertex_id: str
    partitioner: StreamPartitioner
    serializer: BatchSerializer
    distribution_pattern: str
    source_node_id: int
    target_node_id: int
    #: which input of a two-input head operator this edge feeds (1 or 2); 0: one input
    type_number: int = 0
    #: PIPELINED, or BLOCKING in BATCH execution (the producer writes its output to files first)
    partition_type: ResultPartitionType = ResultPartitionType.PIPELINED

    @property
    def ship_strategy(self) -> str:
        return self.partitioner.ship_strategy


@dataclass(slots=True, kw_only=True)
class JobVertex:
    id: str
    name: str
    parallelism: int
    max_parallelism: int
    slot_sharing_group: str
    chain: list[ChainedOperatorConfig]
    operator_names: list[str]
    is_source: bool
    inputs: list[JobEdge] = field(default_factory=list)
    outputs: list[JobEdge] = field(default_factory=list)
    #: the source at the head of the chain, if any (its splits are assigned by the JobMaster)
    source: object | None = None
    #: ids of the collect sinks in this chain (execute_and_collect)
    collect_sink_ids: list[str] = field(default_factory=list)
    #: operator id -> the provider of its coordinator on the JobMaster (sources, collect sinks)
    coordinator_providers: dict[str, Any] = field(default_factory=dict)
    #: whether a sink is in this chain (BATCH speculative execution runs no second attempt of it)
    contains_sink: bool = False


@dataclass(slots=True, kw_only=True)
class JobGraph:
    job_id: str
    job_name: str
    vertices: dict[str, JobVertex]
    config: dict[str, object]  # what the tasks need (shipped in every deployment descriptor)
    #: the job's whole Configuration (checkpointing, restart strategy, savepoint restore), for the JobMaster
    job_configuration: dict[str, object] = field(default_factory=dict)

    def topological_order(self) -> list[JobVertex]:
        return list(self.vertices.values())

    def edges(self) -> list[JobEdge]:
        return [e for v in self.vertices.values() for e in v.outputs]


def is_chainable(edge: StreamEdge, graph: StreamGraph) -> bool:
    up, down = graph.nodes[edge.source_id], graph.nodes[edge.target_id]
    return (
        graph.chaining_enabled
        and len(down.in_edges) == 1
        and up.slot_sharing_group == down.slot_sharing_group
        and up.parallelism == down.parallelism
        and isinstance(edge.partitioner, ForwardPartitioner)
        and down.chaining_strategy is ChainingStrategy.ALWAYS
        and up.chaining_strategy is not ChainingStrategy.NEVER
    )


class StreamingJobGraphGenerator:
    def __init__(self, graph: StreamGraph, *, job_id: str, config: dict[str, object]) -> None:
        self.graph = graph
        self.job_id = job_id
        self.config = config
        self._result_ids = itertools.count(1)

    def create_job_graph(self) -> JobGraph:
        g = self.graph
        heads = [n for n in g.topological_order() if not (len(n.in_edges) == 1 and is_chainable(n.in_edges[0], g))]
        vertex_of_node: dict[int, str] = {}
        chains: dict[str, list[StreamNode]] = {}
        for head in heads:
            vid = f"v{head.id}"
            members: list[StreamNode] = []
            self._collect_chain(head, members)
            chains[vid] = members
            for n in members:
                vertex_of_node[n.id] = vid

        vertices: dict[str, JobVertex] = {}
        pending_edges: list[tuple[StreamEdge, str]] = []
        for vid, members in chains.items():
            index_of = {n.id: i for i, n in enumerate(members)}
            configs = []
            for n in members:
                chained: list[int] = []
                network: list[str] = []
                chained_side: list[tuple[str, int]] = []
                network_side: list[tuple[str, str]] = []
                for e in n.out_edges:
                    if e.target_id in index_of and is_chainable(e, g):
                        if e.output_tag is None:
                            chained.append(index_of[e.target_id])
                        else:
                            chained_side.append((e.output_tag, index_of[e.target_id]))
                    else:
                        rid = f"r{next(self._result_ids)}-{e.source_id}-{e.target_id}"
                        if e.output_tag is None:
                            network.append(rid)
                        else:
                            network_side.append((e.output_tag, rid))
                        pending_edges.append((e, rid))
                configs.append(
                    ChainedOperatorConfig(
                        node_id=n.id,
                        name=n.name,
                        operator_id=n.operator.operator_id,
                        serialized_operator=_serialize_operator(n),
                        chained_outputs=tuple(chained),
                        network_outputs=tuple(network),
                        is_source=n.is_source,
                        chained_side_outputs=tuple(chained_side),
                        network_side_outputs=tuple(network_side),
                    )
                )
            head = members[0]
            vertices[vid] = JobVertex(
                id=vid,
                name=" -> ".join(_display_name(n) for n in members),
                parallelism=head.parallelism,
                max_parallelism=head.max_parallelism,
                slot_sharing_group=head.slot_sharing_group,
                chain=configs,
                operator_names=[n.name for n in members],
                is_source=head.is_source,
                source=getattr(head.operator, "source", None) if head.is_source else None,
                collect_sink_ids=[n.operator.sink_id for n in members if isinstance(n.operator, CollectSinkOperator)],
                contains_sink=any(n.is_sink for n in members),
                coordinator_providers={
                    n.operator.operator_id: n.operator.coordinator_provider()
                    for n in members
                    if hasattr(n.operator, "coordinator_provider")
                },
            )
        for e, rid in pending_edges:
            pointwise = e.partitioner.is_pointwise
            je = JobEdge(
                result_id=rid,
                source_vertex_id=vertex_of_node[e.source_id],
                target_vertex_id=vertex_of_node[e.target_id],
                partitioner=e.partitioner,
                serializer=g.nodes[e.source_id].serializer,
                distribution_pattern=DistributionPattern.POINTWISE if pointwise else DistributionPattern.ALL_TO_ALL,
                source_node_id=e.source_id,
                target_node_id=e.target_id,
                type_number=e.type_number,
                partition_type=ResultPartitionType.BLOCKING if g.batch_execution else ResultPartitionType.PIPELINED,
            )
            vertices[je.source_vertex_id].outputs.append(je)
            vertices[je.target_vertex_id].inputs.append(je)
        return JobGraph(job_id=self.job_id, job_name=g.job_name, vertices=vertices, config=dict(self.config))

    def _collect_chain(self, node: StreamNode, members: list[StreamNode]) -> None:
        members.append(node)
        for e in node.out_edges:
            if is_chainable(e, self.graph):
                self._collect_chain(self.graph.nodes[e.target_id], members)


def _display_name(n: StreamNode) -> str:
    return f"Source: {n.name}" if n.is_source and not n.name.startswith("Source") else n.name


def _serialize_operator(n: StreamNode) -> bytes:
    try:
        return cloudpickle.dumps(n.operator, protocol=5)  # type: ignore[no-any-return]
    except Exception as exc:
        raise SerializationError(
            f"the function of operator '{n.name}' must be serializable with cloudpickle to ship it to "
            f"TaskManagers; got {type(exc).__name__}: {exc}; hint: do not capture locks, sockets, open "
            "files or generators in the function — create them in open()"
        ) from exc
