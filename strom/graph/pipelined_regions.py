"""Pipelined regions of an ExecutionGraph (Flink's ``SchedulingPipelinedRegion``, computed as
``PipelinedRegionComputeUtil`` does).

A pipelined region is a set of subtasks linked by pipelined data exchanges: a producer and its consumers run at the
same time and fail together, since a pipelined partition cannot be read again. Flink builds the regions as the
connected components of the graph whose vertices are the execution vertices and whose edges are the *actual*
producer → consumer channels of pipelined results (blocking results do not join). A region is a connected component
of the subtask graph linked by pipelined channels:

- a forward (POINTWISE) edge joins only the subtasks it wires (``map (2/4)`` reads only ``source (2/4)``), so a
  forward-only job of parallelism 4 has 4 regions;
- an ALL_TO_ALL edge (keyBy, rebalance, broadcast) joins every producer subtask with every consumer subtask;
- independent pipelines of one job are separate regions.

A BLOCKING edge (BATCH execution) joins nothing: its producer and consumer subtasks are in different regions, the
consumer's region waits for the producer's (``blocking_inputs``), so the regions are the job's stages. Flink also
merges regions that form a cycle through blocking edges (``mergeRegionsOnCycles``); strom's job graphs are acyclic and
their edges of one kind per job, so no such cycle exists. Regions are computed once per ExecutionGraph: they depend on
its wiring only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from strom.graph.execution_graph import ExecutionGraph

__all__ = ["ExecutionVertexID", "PipelinedRegions", "compute_pipelined_regions"]

#: (job vertex id, subtask index): Flink's ``ExecutionVertexID``
ExecutionVertexID = tuple[str, int]


def compute_pipelined_regions(
    vertices: Iterable[ExecutionVertexID], channels: Iterable[tuple[ExecutionVertexID, ExecutionVertexID]]
) -> list[frozenset[ExecutionVertexID]]:
    """The connected components of ``vertices`` linked by pipelined ``channels`` (producer, consumer), in the order
    of each component's first vertex in ``vertices``."""
    order = list(vertices)
    parent: dict[ExecutionVertexID, ExecutionVertexID] = {v: v for v in order}

    def find(v: ExecutionVertexID) -> ExecutionVertexID:
        root = v
        while parent[root] != root:
            root = parent[root]
        while parent[v] != root:  # path compression
            parent[v], v = root, parent[v]
        return root

    for producer, consumer in channels:
        a, b = find(producer), find(consumer)
        if a != b:
            parent[b] = a
    members: dict[ExecutionVertexID, list[ExecutionVertexID]] = {}
    for v in order:
        members.setdefault(find(v), []).append(v)
    return [frozenset(group) for group in members.values()]


@dataclass(frozen=True, slots=True)
class PipelinedRegions:
    """The pipelined regions of one ExecutionGraph, and the region of each subtask."""

    regions: tuple[frozenset[ExecutionVertexID], ...]
    region_of: dict[ExecutionVertexID, int]
    #: region index -> the regions consuming its results through channels that leave it (blocking ones; kept for
    #: Flink's rule that consumers of a restarted region's results restart too)
    consumers: dict[int, frozenset[int]]
    #: region index -> the producer subtasks whose blocking partitions it reads (empty for a region of a streaming job)
    blocking_inputs: dict[int, frozenset[ExecutionVertexID]] = field(default_factory=dict)

    @staticmethod
    def of(graph: ExecutionGraph) -> PipelinedRegions:
        vertices: list[ExecutionVertexID] = []
        pipelined: list[tuple[ExecutionVertexID, ExecutionVertexID]] = []
        blocking: list[tuple[ExecutionVertexID, ExecutionVertexID]] = []
        edges = {e.result_id: e for e in graph.job_graph.edges()}
        for vid, ejv in graph.job_vertices.items():
            for ev in ejv.task_vertices:
                vertices.append((vid, ev.subtask_index))
                for result_id, wired in ev.inputs:
                    edge = edges[result_id]
                    into = blocking if edge.partition_type.is_blocking else pipelined
                    into.extend(((edge.source_vertex_id, p), (vid, ev.subtask_index)) for p, _ in wired)
        regions = compute_pipelined_regions(vertices, pipelined)
        return PipelinedRegions.from_components(regions, pipelined + blocking, blocking)

    @staticmethod
    def from_components(
        regions: list[frozenset[ExecutionVertexID]],
        channels: Iterable[tuple[ExecutionVertexID, ExecutionVertexID]],
        blocking_channels: Iterable[tuple[ExecutionVertexID, ExecutionVertexID]] = (),
    ) -> PipelinedRegions:
        region_of = {v: i for i, region in enumerate(regions) for v in region}
        consumers: dict[int, set[int]] = {i: set() for i in range(len(regions))}
        for producer, consumer in channels:
            a, b = region_of[producer], region_of[consumer]
            if a != b:
                consumers[a].add(b)
        inputs: dict[int, set[ExecutionVertexID]] = {i: set() for i in range(len(regions))}
        for producer, consumer in blocking_channels:
            inputs[region_of[consumer]].add(producer)
        return PipelinedRegions(
            regions=tuple(regions),
            region_of=region_of,
            consumers={i: frozenset(c) for i, c in consumers.items()},
            blocking_inputs={i: frozenset(p) for i, p in inputs.items()},
        )

    def region(self, vertex: ExecutionVertexID) -> frozenset[ExecutionVertexID]:
        return self.regions[self.region_of[vertex]]
