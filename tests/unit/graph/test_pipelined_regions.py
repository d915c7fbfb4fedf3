"""Pipelined regions of an ExecutionGraph (Flink's ``PipelinedRegionComputeUtil``) and the failover strategies
that restart them (``RestartPipelinedRegionFailoverStrategy``, ``RestartAllFailoverStrategy``)."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from strom import StreamExecutionEnvironment
from strom.api.functions import ProcessFunction
from strom.api.output_tag import OutputTag
from strom.config import Configuration
from strom.exceptions import ConfigurationError
from strom.graph.execution_graph import ExecutionGraph
from strom.graph.pipelined_regions import PipelinedRegions, compute_pipelined_regions
from strom.runtime.scheduler.failover_strategy import (
    RestartAllFailoverStrategy,
    RestartPipelinedRegionFailoverStrategy,
    failover_strategy_from_configuration,
)


def _env(parallelism: int, *, chaining: bool = True) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    if not chaining:
        env.disable_operator_chaining()
    return env


def _regions(env: StreamExecutionEnvironment) -> tuple[ExecutionGraph, PipelinedRegions]:
    graph = ExecutionGraph(env.get_job_graph())
    return graph, graph.pipelined_regions


def _names(graph: ExecutionGraph, region: frozenset[tuple[str, int]]) -> set[str]:
    return {graph.job_vertices[vid].task_vertices[i].name for vid, i in region}


def test_components_of_a_plain_channel_list() -> None:
    vertices = [("a", 0), ("a", 1), ("b", 0), ("b", 1), ("c", 0)]
    channels = [(("a", 0), ("b", 0)), (("a", 1), ("b", 1))]
    assert compute_pipelined_regions(vertices, channels) == [
        frozenset({("a", 0), ("b", 0)}),
        frozenset({("a", 1), ("b", 1)}),
        frozenset({("c", 0)}),
    ]


def test_forward_only_chain_at_p4_has_one_region_per_subtask() -> None:
    env = _env(4, chaining=False)  # source -> map -> sink as three vertices joined by forward edges
    env.from_sequence(1, 100).map(lambda x: x).add_sink(lambda v: None)
    graph, regions = _regions(env)
    assert len(graph.job_vertices) == 3
    assert len(regions.regions) == 4
    for i, region in enumerate(regions.regions):
        assert len(region) == 3
        assert {sub for _, sub in region} == {i}
    assert all(not c for c in regions.consumers.values())


def test_key_by_joins_every_subtask_into_one_region() -> None:
    env = _env(4)
    env.from_sequence(1, 100).key_by(lambda x: x % 7).reduce(lambda a, b: a + b).add_sink(lambda v: None)
    graph, regions = _regions(env)
    assert len(regions.regions) == 1
    assert len(regions.regions[0]) == sum(ejv.parallelism for ejv in graph.job_vertices.values())


def test_independent_pipelines_are_separate_regions() -> None:
    env = _env(2)
    env.from_sequence(1, 10).key_by(lambda x: x).reduce(lambda a, b: a + b).add_sink(lambda v: None)
    env.from_sequence(1, 10).map(lambda x: x).add_sink(lambda v: None)
    graph, regions = _regions(env)
    # the keyed pipeline is one region; the forward-only pipeline (chained into one vertex) one per subtask
    assert sorted(len(r) for r in regions.regions) == [1, 1, 4]
    keyed = next(r for r in regions.regions if len(r) == 4)
    assert any("Keyed Reduce" in name for name in _names(graph, keyed))


def test_union_of_forward_inputs_keeps_subtasks_apart() -> None:
    env = _env(2, chaining=False)
    a = env.from_sequence(1, 10)
    b = env.from_sequence(11, 20)
    a.union(b).map(lambda x: x).add_sink(lambda v: None)
    graph, regions = _regions(env)
    assert len(regions.regions) == 2
    for i, region in enumerate(regions.regions):
        assert {sub for _, sub in region} == {i}
        assert len(region) == len(graph.job_vertices)  # both sources, the map and the sink of subtask i


def test_union_with_a_rebalanced_input_joins_all() -> None:
    env = _env(2, chaining=False)
    a = env.from_sequence(1, 10)
    b = env.from_sequence(11, 20).rebalance()
    a.union(b).map(lambda x: x).add_sink(lambda v: None)
    _, regions = _regions(env)
    assert len(regions.regions) == 1


def test_side_output_consumers_join_their_producer_subtask() -> None:
    env = _env(3, chaining=False)
    late = OutputTag("odd")

    class Split(ProcessFunction[int, int]):
        def process_element(self, value: int, ctx: ProcessFunction.Context) -> Iterable[int]:
            if value % 2:
                ctx.output(late, value)
            else:
                yield value

    main = env.from_sequence(1, 30).process(Split())
    main.add_sink(lambda v: None)
    main.get_side_output(late).add_sink(lambda v: None)
    graph, regions = _regions(env)
    assert len(regions.regions) == 3
    for i, region in enumerate(regions.regions):
        assert {sub for _, sub in region} == {i}
        assert len(region) == len(graph.job_vertices)


def test_region_strategy_restarts_the_failed_subtasks_region_only() -> None:
    env = _env(4, chaining=False)
    env.from_sequence(1, 100).map(lambda x: x).add_sink(lambda v: None)
    graph, regions = _regions(env)
    strategy = RestartPipelinedRegionFailoverStrategy(regions)
    map_vertex = list(graph.job_vertices)[1]
    assert strategy.get_tasks_needing_restart((map_vertex, 2)) == regions.regions[2]
    assert RestartAllFailoverStrategy(regions).get_tasks_needing_restart((map_vertex, 2)) == frozenset(
        regions.region_of
    )


def test_region_strategy_involves_consumer_and_producer_regions() -> None:
    # regions joined by non-pipelined channels (as blocking exchanges would): a -> b -> c
    channels = [(("a", 0), ("b", 0)), (("b", 0), ("c", 0))]
    regions = PipelinedRegions.from_components(
        [frozenset({("a", 0)}), frozenset({("b", 0)}), frozenset({("c", 0)}), frozenset({("d", 0)})], channels
    )
    strategy = RestartPipelinedRegionFailoverStrategy(regions)
    assert strategy.get_tasks_needing_restart(("c", 0)) == {("a", 0), ("b", 0), ("c", 0)}
    assert strategy.get_tasks_needing_restart(("d", 0)) == {("d", 0)}


def test_strategy_from_configuration() -> None:
    env = _env(1)
    env.from_sequence(1, 3).add_sink(lambda v: None)
    _, regions = _regions(env)
    assert isinstance(
        failover_strategy_from_configuration(Configuration(), regions), RestartPipelinedRegionFailoverStrategy
    )
    full = Configuration({"jobmanager.execution.failover-strategy": "Full"})
    assert isinstance(failover_strategy_from_configuration(full, regions), RestartAllFailoverStrategy)
    with pytest.raises(ConfigurationError, match="expected `region` or `full`"):
        failover_strategy_from_configuration(Configuration({"jobmanager.execution.failover-strategy": "x"}), regions)
