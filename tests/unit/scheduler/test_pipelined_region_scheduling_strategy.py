"""Scheduling by stages (Flink's ``PipelinedRegionSchedulingStrategy``) as a pure state machine, over the pipelined
regions of real BATCH job graphs: which regions are schedulable as producers finish, restart and lose their
partitions; and the region failover strategy with partition availability (a consumer re-runs alone while its
producers' partitions are there; a lost partition re-runs its producer)."""

from __future__ import annotations

from strom import StreamExecutionEnvironment
from strom.api.execution_mode import RuntimeExecutionMode
from strom.graph.execution_graph import ExecutionGraph
from strom.graph.pipelined_regions import ExecutionVertexID, PipelinedRegions
from strom.runtime.network.result_partition_type import ResultPartitionType
from strom.runtime.scheduler.failover_strategy import RestartPipelinedRegionFailoverStrategy
from strom.runtime.scheduler.pipelined_region_scheduling_strategy import PipelinedRegionSchedulingStrategy


def _batch_graph(parallelism: int = 4, *, mode: RuntimeExecutionMode = RuntimeExecutionMode.BATCH) -> ExecutionGraph:
    """source → keyBy → reduce → map (chained) → sink (chained): two stages of ``parallelism`` tasks; and a
    rebalance into a third vertex of parallelism 2."""
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    env.set_runtime_mode(mode)
    (
        env.from_sequence(1, 1000)
        .key_by(lambda x: x % 7)
        .reduce(lambda a, b: a + b)
        .map(lambda x: x)
        .rebalance()
        .map(lambda x: x)
        .set_parallelism(2)
        .add_sink(lambda v: None)
        .set_parallelism(2)
    )
    return ExecutionGraph(env.get_job_graph())


def _stages(graph: ExecutionGraph) -> list[list[ExecutionVertexID]]:
    return [[(vid, i) for i in range(ejv.parallelism)] for vid, ejv in graph.job_vertices.items()]


def _region_set(regions: PipelinedRegions, vertices: list[ExecutionVertexID]) -> list[int]:
    return sorted({regions.region_of[v] for v in vertices})


def test_blocking_edges_make_every_subtask_its_own_region_and_the_stages_wait_for_their_producers() -> None:
    graph = _batch_graph()
    assert {e.partition_type for e in graph.job_graph.edges()} == {ResultPartitionType.BLOCKING}
    regions = graph.pipelined_regions
    source, second, third = _stages(graph)
    assert len(regions.regions) == 4 + 4 + 2
    for r in _region_set(regions, second):  # ALL_TO_ALL: every reducer reads every source
        assert regions.blocking_inputs[r] == frozenset(source)
    for r in _region_set(regions, source):
        assert regions.blocking_inputs[r] == frozenset()
    for r in _region_set(regions, third):  # rebalance: ALL_TO_ALL too
        assert regions.blocking_inputs[r] == frozenset(second)


def test_a_streaming_job_has_no_blocking_inputs_and_schedules_everything_at_once() -> None:
    graph = _batch_graph(mode=RuntimeExecutionMode.STREAMING)
    assert {e.partition_type for e in graph.job_graph.edges()} == {ResultPartitionType.PIPELINED}
    regions = graph.pipelined_regions
    strategy = PipelinedRegionSchedulingStrategy(regions, regions.blocking_inputs)
    assert strategy.start_scheduling() == list(range(len(regions.regions)))
    strategy.validate()


def test_regions_become_schedulable_stage_after_stage_as_their_producers_finish() -> None:
    graph = _batch_graph()
    regions = graph.pipelined_regions
    source, second, third = _stages(graph)
    strategy = PipelinedRegionSchedulingStrategy(regions, regions.blocking_inputs)
    assert strategy.start_scheduling() == _region_set(regions, source)
    strategy.validate()
    for v in source[:-1]:  # the second stage needs every source's partition (ALL_TO_ALL)
        assert strategy.on_execution_finished(v) == []
        strategy.validate()
    assert strategy.on_execution_finished(source[-1]) == _region_set(regions, second)
    assert strategy.on_execution_finished(source[-1]) == []  # scheduled once
    for v in second[:-1]:
        assert strategy.on_execution_finished(v) == []
    assert strategy.on_execution_finished(second[-1]) == _region_set(regions, third)
    for v in third:
        strategy.on_execution_finished(v)
    assert all(strategy.is_region_finished(r) for r in range(len(regions.regions)))
    strategy.validate()


def test_a_restarted_consumer_is_schedulable_at_once_while_its_inputs_are_finished() -> None:
    graph = _batch_graph()
    regions = graph.pipelined_regions
    source, second, _ = _stages(graph)
    strategy = PipelinedRegionSchedulingStrategy(regions, regions.blocking_inputs)
    strategy.start_scheduling()
    for v in source:
        strategy.on_execution_finished(v)
    assert strategy.restart_tasks([second[2]]) == [regions.region_of[second[2]]]
    strategy.validate()


def test_lost_partitions_hold_their_consumers_back_until_the_producers_re_ran() -> None:
    graph = _batch_graph()
    regions = graph.pipelined_regions
    source, second, _ = _stages(graph)
    strategy = PipelinedRegionSchedulingStrategy(regions, regions.blocking_inputs)
    strategy.start_scheduling()
    for v in source:
        strategy.on_execution_finished(v)
    strategy.on_partitions_lost([source[1]])
    assert not any(strategy.is_ready(r) for r in _region_set(regions, second))  # a queued consumer is held back
    # the failover resets the lost producer and the consumers: only the producer may run now
    assert strategy.restart_tasks([source[1], *second]) == [regions.region_of[source[1]]]
    assert strategy.on_execution_finished(source[1]) == _region_set(regions, second)
    strategy.validate()


def test_region_failover_re_runs_a_consumer_alone_while_its_producers_partitions_are_available() -> None:
    graph = _batch_graph()
    regions = graph.pipelined_regions
    source, second, third = _stages(graph)
    lost: set[ExecutionVertexID] = set()
    strategy = RestartPipelinedRegionFailoverStrategy(regions, is_available=lambda v: v not in lost)
    # a reducer fails: it re-runs with the consumers of its (new) output, never the sources
    assert strategy.get_tasks_needing_restart(second[1]) == frozenset({second[1], *third})
    # a sink fails: alone
    assert strategy.get_tasks_needing_restart(third[0]) == frozenset({third[0]})
    # source 3's partition is lost: the failing reducer's restart takes source 3 along, and source 3's consumers
    lost.add(source[3])
    assert strategy.get_tasks_needing_restart(second[1]) == frozenset({source[3], *second, *third})
    # without availability checks (a pipelined exchange), every producer re-runs
    assert RestartPipelinedRegionFailoverStrategy(regions).get_tasks_needing_restart(third[0]) >= set(source)


def test_region_failover_leaves_a_finished_consumer_alone() -> None:
    graph = _batch_graph()
    regions = graph.pipelined_regions
    source, second, third = _stages(graph)
    lost = {source[0]}
    finished = {regions.region_of[third[0]]}
    strategy = RestartPipelinedRegionFailoverStrategy(regions, is_available=lambda v: v not in lost)
    strategy.is_finished = lambda region: region in finished
    # source 0's partition is lost while a sink already finished: that sink read everything and does not re-run
    assert strategy.get_tasks_needing_restart(second[1]) == frozenset({source[0], *second, third[1]})
