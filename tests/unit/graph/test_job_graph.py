"""Chaining follows Flink's rules; the execution plan has Flink's JSON shape."""

from __future__ import annotations

import json

import pytest

from strom import InvalidProgramError, StreamExecutionEnvironment
from strom.exceptions import SerializationError
from strom.graph.execution_graph import pointwise_wiring


def _pipeline(env: StreamExecutionEnvironment) -> None:
    (
        env.from_sequence(1, 100)
        .map(lambda x: x + 1)
        .filter(lambda x: x % 2 == 0)
        .key_by(lambda x: x % 10)
        .reduce(lambda a, b: a + b)
        .add_sink(lambda v: None)
    )


def _names(env: StreamExecutionEnvironment) -> list[str]:
    return [v.name for v in env.get_job_graph().vertices.values()]


def test_equal_parallelism_chains_into_two_vertices() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(4)
    _pipeline(env)
    jg = env.get_job_graph()
    assert [v.name for v in jg.vertices.values()] == [
        "Source: Sequence Source -> Map -> Filter",
        "Keyed Reduce -> Sink: Unnamed",
    ]
    (edge,) = jg.edges()
    assert edge.ship_strategy == "HASH" and edge.distribution_pattern == "ALL_TO_ALL"


def test_disable_chaining_splits_the_chain() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.from_sequence(1, 10).map(lambda x: x).disable_chaining().filter(bool).add_sink(print)
    assert _names(env) == ["Source: Sequence Source", "Map", "Filter -> Sink: Unnamed"]


def test_start_new_chain_begins_a_vertex() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_sequence(1, 10).map(lambda x: x).filter(bool).start_new_chain().add_sink(print)
    assert _names(env) == ["Source: Sequence Source -> Map", "Filter -> Sink: Unnamed"]


def test_parallelism_change_splits_with_rebalance() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.from_sequence(1, 10).map(lambda x: x).set_parallelism(3).add_sink(print)
    jg = env.get_job_graph()
    # the sink keeps the default parallelism 2, so it is not chained to the map at 3 either
    assert [v.name for v in jg.vertices.values()] == ["Source: Sequence Source", "Map", "Sink: Unnamed"]
    assert [e.ship_strategy for e in jg.edges()] == ["REBALANCE", "REBALANCE"]


def test_non_parallel_source_feeds_parallel_operator_by_rebalance() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.from_collection([1, 2]).map(str).print()
    jg = env.get_job_graph()
    assert [v.parallelism for v in jg.vertices.values()] == [1, 2]
    assert [e.ship_strategy for e in jg.edges()] == ["REBALANCE"]


def test_disable_operator_chaining_for_the_whole_job() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.disable_operator_chaining()
    env.from_sequence(1, 10).map(lambda x: x).print()
    assert len(_names(env)) == 3


def test_slot_sharing_group_breaks_the_chain_and_is_inherited_downstream() -> None:
    # Flink: an operator without a group takes its inputs' group when they share one, so print joins "other"
    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_sequence(1, 10).map(lambda x: x).slot_sharing_group("other").print()
    assert _names(env) == ["Source: Sequence Source", "Map -> Print to Std. Out"]
    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_sequence(1, 10).map(lambda x: x).slot_sharing_group("other").print().slot_sharing_group("default")
    assert _names(env) == ["Source: Sequence Source", "Map", "Print to Std. Out"]


def test_forward_with_different_parallelism_is_rejected() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_sequence(1, 10).forward().map(lambda x: x).set_parallelism(2).print()
    with pytest.raises(InvalidProgramError, match="forward partitioning needs equal parallelism"):
        env.get_job_graph()


def test_execution_plan_has_flinks_shape() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    _pipeline(env)
    plan = json.loads(env.get_execution_plan())
    nodes = plan["nodes"]
    assert [n["type"] for n in nodes] == [
        "Source: Sequence Source",
        "Map",
        "Filter",
        "Keyed Reduce",
        "Sink: Unnamed",
    ]
    assert [n["pact"] for n in nodes] == ["Data Source", "Operator", "Operator", "Operator", "Data Sink"]
    assert all(set(n) >= {"id", "type", "pact", "contents", "parallelism"} for n in nodes)
    assert "predecessors" not in nodes[0]
    assert [p["ship_strategy"] for n in nodes[1:] for p in n["predecessors"]] == [
        "FORWARD",
        "FORWARD",
        "HASH",
        "FORWARD",
    ]
    assert nodes[1]["predecessors"][0]["id"] == nodes[0]["id"]


def test_program_without_sink_is_rejected_with_a_hint() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_sequence(1, 10).map(lambda x: x)
    with pytest.raises(InvalidProgramError, match=r"at least one sink.*print"):
        env.execute()


def test_unpicklable_function_is_named_at_compile_time() -> None:
    import threading

    lock = threading.Lock()
    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_sequence(1, 10).map(lambda x: (lock, x)).name("locked").print()
    with pytest.raises(SerializationError, match="operator 'locked'"):
        env.get_job_graph()


@pytest.mark.parametrize(("up", "down"), [(2, 2), (2, 4), (4, 2), (3, 5), (5, 3), (1, 4), (4, 1)])
def test_pointwise_wiring_connects_every_producer_and_consumer_once(up: int, down: int) -> None:
    produced, consumers = pointwise_wiring(up, down)
    channels = [(i, sp) for chans in consumers for i, sp in chans]
    assert len(channels) == len(set(channels)) == sum(produced)
    assert all(c for c in consumers) and all(n > 0 for n in produced)
    for i in range(up):
        assert sorted(sp for p, sp in channels if p == i) == list(range(produced[i]))
