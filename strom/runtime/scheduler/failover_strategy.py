"""Failover strategies: which subtasks a task failure restarts (Flink's ``FailoverStrategy`` with
``RestartPipelinedRegionFailoverStrategy`` and ``RestartAllFailoverStrategy``), chosen by
``jobmanager.execution.failover-strategy`` (``region``, the default, or ``full``).

Pure functions of the pipelined regions (:mod:`strom.graph.pipelined_regions`): the scheduler asks
:meth:`FailoverStrategy.get_tasks_needing_restart` for a failed subtask and restarts what comes back. The region
strategy involves regions as Flink's ``getRegionsToRestart``:

1. the region of the failed subtask;
2. for an involved region, the region producing any of its inputs that is not available — a blocking partition
   whose producer FINISHED (or still runs, or waits for its turn) on a TaskManager that still holds it is read
   again (Flink's result partition availability checker), one lost with its TaskManager is recomputed by its
   producer's region (a pipelined exchange never leaves its region);
3. for an involved region, every region consuming its results — but one that FINISHED (BATCH): it read the old
   results to their end, and what it wrote stays valid (Flink restarts a finished consumer unless its whole consumer
   group finished; strom skips each finished one, so a finished sink does not commit its output twice).

Whether a restart happens at all, and when, is the restart strategy's answer, asked once per failure.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable

from strom.config import Configuration, JobManagerOptions
from strom.exceptions import ConfigurationError
from strom.graph.pipelined_regions import ExecutionVertexID, PipelinedRegions

__all__ = [
    "FailoverStrategy",
    "RestartAllFailoverStrategy",
    "RestartPipelinedRegionFailoverStrategy",
    "failover_strategy_from_configuration",
]


class FailoverStrategy(ABC):
    """Which subtasks to restart when one fails (Flink's ``FailoverStrategy``)."""

    NAME: str

    def __init__(self, regions: PipelinedRegions) -> None:
        self.regions = regions

    @abstractmethod
    def get_tasks_needing_restart(self, failed: ExecutionVertexID) -> frozenset[ExecutionVertexID]: ...

    def all_tasks(self) -> frozenset[ExecutionVertexID]:
        return frozenset(self.regions.region_of)


class RestartAllFailoverStrategy(FailoverStrategy):
    """``full``: every subtask of the job restarts (Flink's ``RestartAllFailoverStrategy``)."""

    NAME = "full"

    def get_tasks_needing_restart(self, failed: ExecutionVertexID) -> frozenset[ExecutionVertexID]:
        return self.all_tasks()


class RestartPipelinedRegionFailoverStrategy(FailoverStrategy):
    """``region``: the failed subtask's pipelined region and the regions involved with it (see the module)."""

    NAME = "region"

    def __init__(
        self, regions: PipelinedRegions, is_available: Callable[[ExecutionVertexID], bool] | None = None
    ) -> None:
        """``is_available(producer)``: whether the blocking partitions of that producer subtask can be read again
        (default: none can)."""
        super().__init__(regions)
        producers: dict[int, set[int]] = {i: set() for i in range(len(regions.regions))}
        for producer, consumers in regions.consumers.items():
            for consumer in consumers:
                producers[consumer].add(producer)
        self._producers = producers
        self.is_available: Callable[[ExecutionVertexID], bool] = is_available or (lambda v: False)
        #: whether a region FINISHED (only BATCH regions can finish while others run on)
        self.is_finished: Callable[[int], bool] = lambda region: False

    def _inputs_available(self, region: int, producer_region: int) -> bool:
        wanted = self.regions.blocking_inputs.get(region, frozenset()) & self.regions.regions[producer_region]
        return bool(wanted) and all(self.is_available(v) for v in wanted)

    def get_regions_to_restart(self, failed_region: int) -> list[int]:
        visited = {failed_region}
        queue = deque([failed_region])
        involved: list[int] = []
        while queue:
            region = queue.popleft()
            involved.append(region)
            # a partition that cannot be consumed again (pipelined, or lost) is recomputed by its producer's region
            producers = {p for p in self._producers[region] if not self._inputs_available(region, p)}
            consumers = {c for c in self.regions.consumers[region] if not self.is_finished(c)}
            for other in sorted(producers | consumers):
                if other not in visited:
                    visited.add(other)
                    queue.append(other)
        return involved

    def get_tasks_needing_restart(self, failed: ExecutionVertexID) -> frozenset[ExecutionVertexID]:
        region_of = self.regions.region_of
        if failed not in region_of:
            raise KeyError(f"expected a subtask of the job; got {failed!r}")
        tasks: set[ExecutionVertexID] = set()
        for region in self.get_regions_to_restart(region_of[failed]):
            tasks |= self.regions.regions[region]
        return frozenset(tasks)


_STRATEGIES: dict[str, type[FailoverStrategy]] = {
    "region": RestartPipelinedRegionFailoverStrategy,
    "full": RestartAllFailoverStrategy,
}


def failover_strategy_from_configuration(config: Configuration, regions: PipelinedRegions) -> FailoverStrategy:
    name = config.get(JobManagerOptions.EXECUTION_FAILOVER_STRATEGY).strip().lower()
    strategy = _STRATEGIES.get(name)
    if strategy is None:
        raise ConfigurationError(
            f"expected `region` or `full` for {JobManagerOptions.EXECUTION_FAILOVER_STRATEGY.key}; got {name!r}; "
            "hint: `region` restarts only the failed task's pipelined region, `full` the whole job"
        )
    return strategy(regions)
