"""``StreamGraph``: one node per operator, edges carrying partitioners (Flink's ``StreamGraph``).

``StreamGraphGenerator`` walks the transformations; virtual partition and union transformations become
edge properties. The default partitioner of an edge is *forward* when both ends have the same
parallelism and *rebalance* otherwise, as in Flink.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from strom.api.serialization import BatchSerializer, PickleBatchSerializer
from strom.api.transformations import (
    PartitionTransformation,
    SideOutputTransformation,
    SinkTransformation,
    SourceTransformation,
    Transformation,
    TwoInputTransformation,
    UnionTransformation,
)
from strom.exceptions import InvalidProgramError
from strom.runtime.network.partitioner import (
    ForwardPartitioner,
    KeyGroupStreamPartitioner,
    RebalancePartitioner,
    StreamPartitioner,
)
from strom.runtime.operators.base import ChainingStrategy, StreamOperator
from strom.runtime.state.key_groups import check_parallelism

__all__ = ["StreamEdge", "StreamGraph", "StreamGraphGenerator", "StreamNode"]

DEFAULT_SLOT_SHARING_GROUP = "default"

_Upstream = tuple[int, StreamPartitioner | None, str | None]
"""An input of a node to be: (upstream node id, partitioner or ``None``, side output tag or ``None``)."""


@dataclass(slots=True, kw_only=True)
class StreamNode:
    id: int
    name: str
    operator: StreamOperator
    parallelism: int
    max_parallelism: int
    slot_sharing_group: str
    chaining_strategy: ChainingStrategy
    uid: str | None = None
    is_source: bool = False
    is_sink: bool = False
    serializer: BatchSerializer = field(default_factory=PickleBatchSerializer)
    in_edges: list[StreamEdge] = field(default_factory=list)
    out_edges: list[StreamEdge] = field(default_factory=list)


@dataclass(slots=True, kw_only=True)
class StreamEdge:
    source_id: int
    target_id: int
    partitioner: StreamPartitioner
    #: which input of a two-input target the edge feeds (1 or 2, Flink's typeNumber); 0: a one-input target
    type_number: int = 0
    #: the side output this edge carries (``OutputTag.tag_id``); ``None``: the main output
    output_tag: str | None = None


class StreamGraph:
    def __init__(self, *, job_name: str, chaining_enabled: bool) -> None:
        self.job_name = job_name
        self.chaining_enabled = chaining_enabled
        self.nodes: dict[int, StreamNode] = {}
        #: BATCH execution (``execution.runtime-mode`` BATCH, or AUTOMATIC with bounded sources): every exchange that
        #: is not chained is blocking (Flink's ``GlobalStreamExchangeMode.ALL_EDGES_BLOCKING``)
        self.batch_execution = False

    @property
    def sources(self) -> list[StreamNode]:
        return [n for n in self.nodes.values() if n.is_source]

    def add_edge(
        self,
        source_id: int,
        target_id: int,
        partitioner: StreamPartitioner | None,
        output_tag: str | None = None,
        type_number: int = 0,
    ) -> None:
        up, down = self.nodes[source_id], self.nodes[target_id]
        if partitioner is None:
            partitioner = ForwardPartitioner() if up.parallelism == down.parallelism else RebalancePartitioner()
        elif isinstance(partitioner, ForwardPartitioner) and up.parallelism != down.parallelism:
            raise InvalidProgramError(
                f"forward partitioning needs equal parallelism; got '{up.name}' at {up.parallelism} and "
                f"'{down.name}' at {down.parallelism}; hint: use rebalance() or rescale()"
            )
        if isinstance(partitioner, KeyGroupStreamPartitioner):
            partitioner.max_parallelism = down.max_parallelism
        edge = StreamEdge(
            source_id=source_id,
            target_id=target_id,
            partitioner=partitioner,
            output_tag=output_tag,
            type_number=type_number,
        )
        up.out_edges.append(edge)
        down.in_edges.append(edge)

    def topological_order(self) -> list[StreamNode]:
        return [self.nodes[i] for i in sorted(self.nodes)]

    def get_execution_plan(self) -> str:
        """The plan as JSON in the shape of Flink's ``getExecutionPlan()``."""
        nodes: list[dict[str, Any]] = []
        for n in self.topological_order():
            pact = "Data Source" if n.is_source else "Data Sink" if n.is_sink else "Operator"
            entry: dict[str, Any] = {
                "id": n.id,
                "type": n.name,
                "pact": pact,
                "contents": n.name,
                "parallelism": n.parallelism,
            }
            if n.in_edges:
                entry["predecessors"] = [
                    {"id": e.source_id, "ship_strategy": e.partitioner.ship_strategy, "side": _side(i)}
                    for i, e in enumerate(n.in_edges)
                ]
            nodes.append(entry)
        return json.dumps({"nodes": nodes}, indent=2)


class StreamGraphGenerator:
    def __init__(
        self,
        transformations: list[Transformation],
        *,
        job_name: str,
        default_parallelism: int,
        max_parallelism: int,
        chaining_enabled: bool,
    ) -> None:
        self.transformations = transformations
        self.job_name = job_name
        self.default_parallelism = default_parallelism
        self.max_parallelism = max_parallelism
        self.chaining_enabled = chaining_enabled
        # transformation id -> [(node id, partitioner or None, side output tag or None)]
        self._done: dict[int, list[_Upstream]] = {}

    def generate(self) -> StreamGraph:
        if not any(isinstance(t, SinkTransformation) for t in self.transformations):
            raise InvalidProgramError(
                "expected at least one sink in the program; got none; "
                "hint: add print(), sink_to(...), add_sink(...) or use execute_and_collect()"
            )
        graph = StreamGraph(job_name=self.job_name, chaining_enabled=self.chaining_enabled)
        self._graph = graph
        for t in self.transformations:
            self._transform(t)
        return graph

    def _transform(self, t: Transformation) -> list[_Upstream]:
        done = self._done.get(t.id)
        if done is not None:
            return done
        if isinstance(t, PartitionTransformation):
            ups = self._transform(t.inputs[0])
            result: list[_Upstream] = [(node_id, _copy_partitioner(t.partitioner), tag) for node_id, _, tag in ups]
        elif isinstance(t, SideOutputTransformation):
            result = [(node_id, partitioner, t.tag_id) for node_id, partitioner, _ in self._transform(t.inputs[0])]
        elif isinstance(t, UnionTransformation):
            result = [x for inp in t.inputs for x in self._transform(inp)]
        else:
            two_inputs = isinstance(t, TwoInputTransformation)
            inputs = [(i + 1 if two_inputs else 0, x) for i, inp in enumerate(t.inputs) for x in self._transform(inp)]
            node = self._add_node(t)
            for type_number, (up_id, partitioner, tag) in inputs:
                self._graph.add_edge(up_id, node.id, partitioner, tag, type_number)
            result = [(node.id, None, None)]
        self._done[t.id] = result
        return result

    def _add_node(self, t: Transformation) -> StreamNode:
        operator: StreamOperator = t.operator  # type: ignore[attr-defined]
        is_source = isinstance(t, SourceTransformation)
        parallelism = t.parallelism or self.default_parallelism
        if is_source and not t.parallel:  # type: ignore[attr-defined]
            parallelism = 1
        max_parallelism = t.max_parallelism or self.max_parallelism
        check_parallelism(parallelism, max_parallelism, f"operator '{t.name}'")
        chaining = t.chaining_strategy or operator.chaining_strategy
        node = StreamNode(
            id=t.id,
            name=t.name,
            operator=operator,
            parallelism=parallelism,
            max_parallelism=max_parallelism,
            slot_sharing_group=self._slot_sharing_group(t),
            chaining_strategy=chaining,
            uid=t.uid,
            is_source=is_source,
            is_sink=isinstance(t, SinkTransformation),
            serializer=t.serializer or PickleBatchSerializer(),
        )
        operator.name = t.name
        operator.operator_id = t.uid or f"op-{t.id}"
        self._graph.nodes[node.id] = node
        return node

    def _slot_sharing_group(self, t: Transformation) -> str:
        """Flink's rule: the group set on the operator; else its inputs' group if they all share one;
        else the default group."""
        if t.slot_sharing_group is not None:
            return t.slot_sharing_group
        groups = {self._graph.nodes[node_id].slot_sharing_group for node_id in self._input_nodes(t)}
        return groups.pop() if len(groups) == 1 else DEFAULT_SLOT_SHARING_GROUP

    def _input_nodes(self, t: Transformation) -> list[int]:
        return [node_id for inp in t.inputs for node_id, _, _ in self._transform(inp)]


def _side(input_index: int) -> str:
    """Flink's JSONGenerator: the first input edge of a node is its "first" side, the others "second"."""
    return "first" if input_index == 0 else "second"


def _copy_partitioner(p: StreamPartitioner) -> StreamPartitioner:
    # one partitioner object per edge: a transformation reused by several consumers shares none
    import copy

    return copy.copy(p)
