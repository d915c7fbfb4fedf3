"""``PipelinedRegionSchedulingStrategy`` (Flink's): which pipelined regions may be scheduled now — a pure state machine.

With blocking exchanges (BATCH execution) a job's pipelined regions are its *stages*: a region is schedulable once
every blocking partition it consumes is finished (consumable), i.e. once every producer subtask wired to it through a
blocking edge has FINISHED (Flink's ``ConsumedPartitionGroup`` of a region is consumable when all its partitions
are). Regions without blocking inputs (the sources' stage, and every region of a streaming job) are schedulable at
once.

Events in — :meth:`start_scheduling`, :meth:`on_execution_finished`, :meth:`restart_tasks`,
:meth:`on_partitions_lost` — and, out of each, the regions to schedule now, in region order. No I/O, no clock:
the driver (:mod:`strom.runtime.scheduler.pipelined_region_scheduler`) allocates slots and deploys. A region is
scheduled once until it is restarted; :meth:`validate` checks the invariants.
"""

from __future__ import annotations

from collections.abc import Iterable

from strom.graph.pipelined_regions import ExecutionVertexID, PipelinedRegions

__all__ = ["PipelinedRegionSchedulingStrategy"]


class PipelinedRegionSchedulingStrategy:
    def __init__(
        self, regions: PipelinedRegions, blocking_inputs: dict[int, frozenset[ExecutionVertexID]] | None = None
    ) -> None:
        """``blocking_inputs``: per region, the producer subtasks whose blocking partitions it consumes."""
        self.regions = regions
        self.blocking_inputs: dict[int, frozenset[ExecutionVertexID]] = {
            r: (blocking_inputs or {}).get(r, frozenset()) for r in range(len(regions.regions))
        }
        #: producer subtask -> the regions consuming its blocking partitions
        self._consumers: dict[ExecutionVertexID, set[int]] = {}
        for region, producers in self.blocking_inputs.items():
            for producer in producers:
                self._consumers.setdefault(producer, set()).add(region)
        self.finished: set[ExecutionVertexID] = set()  # subtasks whose current attempt FINISHED
        self.scheduled: set[int] = set()  # regions scheduled (deploying, running or finished) since their last reset
        self._started = False

    # -- queries ------------------------------------------------------------------------------------
    def is_schedulable(self, region: int) -> bool:
        return region not in self.scheduled and self.blocking_inputs[region] <= self.finished

    def is_ready(self, region: int) -> bool:
        """Whether ``region`` was scheduled and its inputs are still all finished (none lost since)."""
        return region in self.scheduled and self.blocking_inputs[region] <= self.finished

    def is_region_finished(self, region: int) -> bool:
        return self.regions.regions[region] <= self.finished

    def _schedulable(self, candidates: Iterable[int]) -> list[int]:
        ready = sorted(r for r in set(candidates) if self.is_schedulable(r))
        self.scheduled.update(ready)
        return ready

    # -- events -------------------------------------------------------------------------------------
    def start_scheduling(self) -> list[int]:
        """The job starts: every region whose inputs are all available (no blocking input, for a start)."""
        self._started = True
        return self._schedulable(range(len(self.regions.regions)))

    def on_execution_finished(self, vertex: ExecutionVertexID) -> list[int]:
        """``vertex``'s current attempt FINISHED: its blocking partitions are consumable."""
        if vertex not in self.regions.region_of:
            raise KeyError(f"expected a subtask of the job; got {vertex!r}")
        self.finished.add(vertex)
        if not self._started:
            return []
        return self._schedulable(self._consumers.get(vertex, ()))

    def restart_tasks(self, vertices: Iterable[ExecutionVertexID]) -> list[int]:
        """Failover reset these subtasks (new attempts, CREATED): their regions are scheduled again as soon as their
        inputs are available — at once when they are (a consumer re-reading persisted partitions), else when the
        producers re-ran."""
        regions = set()
        for v in vertices:
            self.finished.discard(v)
            regions.add(self.regions.region_of[v])
        self.scheduled -= regions
        return self._schedulable(regions)

    def on_partitions_lost(self, producers: Iterable[ExecutionVertexID]) -> None:
        """The partitions of these FINISHED producers are gone (their TaskManager was lost): the regions consuming
        them wait until the producers re-ran (the failover strategy restarts them)."""
        for p in producers:
            self.finished.discard(p)

    def validate(self) -> None:
        """Invariants: only subtasks and regions of the job; no region reads a blocking input of its own."""
        known = set(self.regions.region_of)
        assert self.finished <= known, self.finished - known
        assert self.scheduled <= set(range(len(self.regions.regions))), self.scheduled
        for region, producers in self.blocking_inputs.items():
            assert producers <= known, (region, producers - known)
            assert region not in {self.regions.region_of[p] for p in producers}, f"region {region} consumes itself"
