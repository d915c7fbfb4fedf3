"""Local (map-side) aggregation of keyed reduces in BATCH execution: strom's, not Flink DataStream's.

Flink's DataStream API runs a keyed ``reduce`` in BATCH by shuffling every record; its DataSet API combined a
``ReduceFunction`` before the shuffle (``ChainedReduceCombineDriver``) and its SQL planner splits a group aggregation
into a local and a global phase. strom does the same for the DataStream reduce: for every hash edge
``producer → StreamGroupedReduce`` of a BATCH stream graph (``reduce``, ``sum``, ``min``, ``max``, ``min_by``,
``max_by``), :func:`insert_local_aggregation` puts a :class:`ReduceCombineOperator` between them, chained to the
producer (a forward edge of the producer's parallelism), so the blocking shuffle carries one partial value per key
and producer. On with ``execution.batch.local-aggregation.enabled`` (default true); docs/design.md says why.

An edge gets no combiner when the combiner could not chain to its producer (chaining disabled, the producer's
chaining strategy NEVER): a combiner of its own would be a stage writing every record to files once more. Nor when
the producer's records are written by a serializer of their declared type (``output_type``): a partial value is
what the reduce function returns, which that serializer need not take.
"""

from __future__ import annotations

from strom.api.serialization import PickleBatchSerializer
from strom.graph.stream_graph import StreamEdge, StreamGraph, StreamNode
from strom.runtime.network.partitioner import ForwardPartitioner, KeyGroupStreamPartitioner
from strom.runtime.operators.base import ChainingStrategy
from strom.runtime.operators.keyed import StreamGroupedReduce
from strom.runtime.operators.reduce_combine import ReduceCombineOperator

__all__ = ["insert_local_aggregation"]


def insert_local_aggregation(graph: StreamGraph, *, max_keys: int) -> list[StreamNode]:
    """Put a combiner before every reduce on each hash edge that allows one; returns the combiners' nodes."""
    if not graph.chaining_enabled:
        return []
    added: list[StreamNode] = []
    for node in list(graph.nodes.values()):
        if not isinstance(node.operator, StreamGroupedReduce):
            continue
        for edge in list(node.in_edges):
            if _combinable(edge, graph):
                added.append(_insert(graph, edge, node, max_keys))
    return added


def _combinable(edge: StreamEdge, graph: StreamGraph) -> bool:
    up = graph.nodes[edge.source_id]
    return (
        isinstance(edge.partitioner, KeyGroupStreamPartitioner)
        and up.chaining_strategy is not ChainingStrategy.NEVER
        and type(up.serializer) is PickleBatchSerializer
    )


def _insert(graph: StreamGraph, edge: StreamEdge, reduce_node: StreamNode, max_keys: int) -> StreamNode:
    up = graph.nodes[edge.source_id]
    reduce_op = reduce_node.operator
    assert isinstance(reduce_op, StreamGroupedReduce)
    combiner = ReduceCombineOperator(reduce_op.user_function, reduce_op.key_selector, max_keys=max_keys)
    combiner.name = f"Local {reduce_node.name}"
    combiner.operator_id = f"{reduce_op.operator_id}-local-{up.id}"
    node = StreamNode(
        id=max(graph.nodes) + 1,
        name=combiner.name,
        operator=combiner,
        parallelism=up.parallelism,
        max_parallelism=up.max_parallelism,
        slot_sharing_group=up.slot_sharing_group,
        chaining_strategy=ChainingStrategy.ALWAYS,
        serializer=up.serializer,
    )
    graph.nodes[node.id] = node
    to_combiner = StreamEdge(
        source_id=up.id, target_id=node.id, partitioner=ForwardPartitioner(), output_tag=edge.output_tag
    )
    to_reduce = StreamEdge(
        source_id=node.id, target_id=reduce_node.id, partitioner=edge.partitioner, type_number=edge.type_number
    )
    _replace(up.out_edges, edge, to_combiner)
    node.in_edges.append(to_combiner)
    node.out_edges.append(to_reduce)
    _replace(reduce_node.in_edges, edge, to_reduce)
    return node


def _replace(edges: list[StreamEdge], old: StreamEdge, new: StreamEdge) -> None:
    edges[next(i for i, e in enumerate(edges) if e is old)] = new
