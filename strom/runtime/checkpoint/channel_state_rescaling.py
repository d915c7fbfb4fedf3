"""Rescaling the in-flight data of an unaligned checkpoint (Flink 1.13+'s ``InflightDataRescalingDescriptor`` with its
``RescaleMappings``, and the ``RecordFilter`` of ambiguous key groups), as pure functions.

An unaligned checkpoint holds, per old channel *producer i → consumer s*, the buffers the consumer had received and
not processed (its input channel state) and those still queued at the producer (its output channel state). When the
job restores at another parallelism, strom hands **both** to the new consumer subtasks — the producers re-send
nothing — and each new consumer processes its share before anything new (so every key's in-flight records keep their
order and come before its new ones):

* a keyed edge (``KeyGroupStreamPartitioner``): every new consumer reads the old channels of the edge and keeps the
  records whose key group it owns now (the partitioner, set up for the new parallelism, says so);
* forward, rebalance, rescale and shuffle edges: old consumer *s*'s channels go whole to new subtask *s mod p'*
  (Flink's round-robin mapping of old to new subtasks);
* broadcast and custom partitioning: every consumer held a copy, or only the user's function knows where a record
  goes — such checkpoints are refused at another parallelism (:func:`rescalable`).

:func:`plan_rescaled_channels` (JobMaster) lists the pieces one new subtask reads; :func:`redistribute` (the task,
while it restores) reads them and builds its input channel state.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from itertools import compress
from typing import Any

import cloudpickle

from strom.graph.execution_graph import pointwise_wiring
from strom.graph.job_graph import DistributionPattern, JobEdge, JobGraph, JobVertex
from strom.runtime.checkpoint.metadata import CheckpointMetadata
from strom.runtime.deployment import RescaledChannel
from strom.runtime.network.partitioner import (
    ForwardPartitioner,
    KeyGroupStreamPartitioner,
    RebalancePartitioner,
    ShufflePartitioner,
)
from strom.runtime.streamrecord import timestamps_of, with_timestamps

__all__ = ["is_rescaled", "plan_rescaled_channels", "redistribute", "rescalable"]

_MAPPED = (ForwardPartitioner, RebalancePartitioner, ShufflePartitioner)  # RescalePartitioner is a Rebalance


def is_rescaled(metadata: CheckpointMetadata, job_graph: JobGraph) -> bool:
    """The checkpoint holds in-flight data and some task now runs at another parallelism."""
    heads = [(v, metadata.operator_states.get(v.chain[0].operator_id)) for v in job_graph.vertices.values()]
    if not any(st is not None and st.channel for _, st in heads):
        return False
    return any(st is not None and st.parallelism != v.parallelism for v, st in heads)


def rescalable(edge: JobEdge) -> bool:
    """Whether the in-flight data of ``edge`` can be redistributed to another parallelism."""
    return isinstance(edge.partitioner, (KeyGroupStreamPartitioner, *_MAPPED))


def _edges_into(job_graph: JobGraph, vertex: JobVertex) -> list[JobEdge]:
    """The input edges of ``vertex`` in the order its input gate lays out their channels (the ExecutionGraph's)."""
    return [e for e in job_graph.edges() if e.target_vertex_id == vertex.id]


def _wiring(edge: JobEdge, old_up: int, old_down: int) -> list[list[tuple[int, int]]]:
    """Per old consumer: its channels of ``edge`` as (producer, subpartition), as the old ExecutionGraph wired them."""
    if edge.distribution_pattern == DistributionPattern.POINTWISE:
        return pointwise_wiring(old_up, old_down)[1]
    return [[(i, s) for i in range(old_up)] for s in range(old_down)]


def plan_rescaled_channels(
    metadata: CheckpointMetadata, job_graph: JobGraph, vertex: JobVertex, subtask_index: int
) -> tuple[RescaledChannel, ...]:
    """The old channels whose in-flight data new subtask ``subtask_index`` of ``vertex`` takes (all of a keyed
    edge's, filtered by key group on the task; the mapped ones of the others), in the order to process them."""
    head = metadata.operator_states[vertex.chain[0].operator_id]
    old_down = head.parallelism
    edges = _edges_into(job_graph, vertex)
    offsets = [0] * old_down  # per old consumer: its first channel of the edge at hand
    pieces: list[RescaledChannel] = []
    for edge in edges:
        producer = job_graph.vertices[edge.source_vertex_id]
        up = metadata.operator_states[producer.chain[0].operator_id]
        partition = [e.result_id for e in producer.outputs].index(edge.result_id)
        keyed = isinstance(edge.partitioner, KeyGroupStreamPartitioner)
        key_filter = cloudpickle.dumps(edge.partitioner, protocol=5) if keyed else None
        wiring = _wiring(edge, up.parallelism, old_down)
        for s in range(old_down):
            if keyed or s % vertex.parallelism == subtask_index:
                for k, (i, sp) in enumerate(wiring[s]):
                    pieces.append(
                        RescaledChannel(
                            logical_input=max(edge.type_number - 1, 0),
                            consumer_state=head.channel.get(s),
                            consumer_channel=offsets[s] + k,
                            producer_state=up.channel.get(i),
                            producer_key=(partition, sp),
                            serialized_filter=key_filter,
                        )
                    )
            offsets[s] += len(wiring[s])
    return tuple(pieces)


def redistribute(
    pieces: tuple[RescaledChannel, ...],
    read: Callable[[Any], tuple[dict[tuple[int, int], list[bytes]], dict[int, list[bytes]]]],
    *,
    subtask_index: int,
    parallelism: int,
    first_channel: Callable[[int], int],
) -> dict[int, list[bytes]]:
    """The input channel state of new subtask ``subtask_index``: per piece, the consumer's buffers of the old
    channel, then the producer's (older before newer), records of a keyed edge kept if their key group is this
    subtask's. ``read(handle)`` gives an old subtask's (output, input) channel state; ``first_channel(input)`` the
    channel of the new gate whose logical input the records feed. Every input's buffers go to that one channel,
    in order."""
    out: dict[int, list[bytes]] = {}
    filters: dict[bytes, Callable[[list[Any]], list[Any]]] = {}
    for piece in pieces:
        blobs: list[bytes] = []
        if piece.consumer_state is not None:
            blobs += read(piece.consumer_state)[1].get(piece.consumer_channel, [])
        if piece.producer_state is not None:
            blobs += read(piece.producer_state)[0].get(piece.producer_key, [])
        if not blobs:
            continue
        target = out.setdefault(first_channel(piece.logical_input), [])
        if piece.serialized_filter is None:
            target += blobs
            continue
        keep = filters.get(piece.serialized_filter)
        if keep is None:
            keep = filters[piece.serialized_filter] = _key_filter(piece.serialized_filter, subtask_index, parallelism)
        for blob in blobs:
            batch = keep(pickle.loads(blob))
            if batch:
                target.append(pickle.dumps(batch, protocol=5))
    return out


def _key_filter(serialized: bytes, subtask_index: int, parallelism: int) -> Callable[[list[Any]], list[Any]]:
    partitioner: KeyGroupStreamPartitioner = cloudpickle.loads(serialized)
    partitioner.setup(parallelism, subtask_index)
    select, channel_of_key = partitioner.key_selector, partitioner.channel_of_key

    def keep(batch: list[Any]) -> list[Any]:
        mine = [channel_of_key(select(r)) == subtask_index for r in batch]
        ts = timestamps_of(batch)
        values = list(compress(batch, mine))
        return with_timestamps(values, None if ts is None else list(compress(ts, mine)))

    return keep
