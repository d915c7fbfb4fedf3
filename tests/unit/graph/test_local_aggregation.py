"""BATCH local aggregation: a keyed reduce gets a combiner chained to each producer of its hash exchange
(``execution.batch.local-aggregation.enabled``), and nothing else changes."""

from __future__ import annotations

from typing import Any

from strom import Configuration, StreamExecutionEnvironment
from strom.api.execution_mode import RuntimeExecutionMode
from strom.runtime.operators.reduce_combine import ReduceCombineOperator


def _env(mode: RuntimeExecutionMode = RuntimeExecutionMode.BATCH, **config: Any) -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment(Configuration(config))
    env.set_parallelism(2)
    env.set_runtime_mode(mode)
    return env


def _count(env: StreamExecutionEnvironment) -> None:
    env.from_sequence(1, 100).map(lambda x: (x % 3, 1)).key_by(lambda t: t[0]).sum(1).add_sink(lambda v: None)


def _names(env: StreamExecutionEnvironment) -> list[str]:
    return [v.name for v in env.get_job_graph().vertices.values()]


def test_the_combiner_chains_to_the_producer_in_batch() -> None:
    env = _env()
    _count(env)
    jg = env.get_job_graph()
    assert [v.name for v in jg.vertices.values()] == [
        "Source: Sequence Source -> Map -> Local Keyed Aggregation",
        "Keyed Aggregation -> Sink: Unnamed",
    ]
    (edge,) = jg.edges()
    assert edge.ship_strategy == "HASH"


def test_the_combiner_runs_the_reduce_function_with_the_configured_bound() -> None:
    env = _env(**{"execution.batch.local-aggregation.max-keys": 7})
    _count(env)
    graph = env.get_stream_graph()
    (combiner,) = [n.operator for n in graph.nodes.values() if isinstance(n.operator, ReduceCombineOperator)]
    assert combiner.max_keys == 7


def test_no_combiner_in_streaming_or_when_disabled() -> None:
    streaming = _env(RuntimeExecutionMode.STREAMING)
    _count(streaming)
    disabled = _env(**{"execution.batch.local-aggregation.enabled": False})
    _count(disabled)
    expected = ["Source: Sequence Source -> Map", "Keyed Aggregation -> Sink: Unnamed"]
    assert _names(streaming) == expected
    assert _names(disabled) == expected


def test_no_combiner_where_it_could_not_chain() -> None:
    env = _env()
    env.disable_operator_chaining()
    _count(env)
    assert not any("Local" in name for name in _names(env))
    unchained = _env()
    (
        unchained.from_sequence(1, 100)
        .map(lambda x: (x % 3, 1))
        .disable_chaining()
        .key_by(lambda t: t[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .add_sink(lambda v: None)
    )
    assert not any("Local" in name for name in _names(unchained))


def test_a_union_gets_a_combiner_per_input() -> None:
    env = _env()
    a = env.from_sequence(1, 10).map(lambda x: (x % 2, x))
    b = env.from_sequence(1, 10).map(lambda x: (x % 2, -x))
    a.union(b).key_by(lambda t: t[0]).reduce(lambda x, y: (x[0], x[1] + y[1])).add_sink(lambda v: None)
    names = _names(env)
    assert sum(name.endswith("-> Local Keyed Reduce") for name in names) == 2
    assert "Keyed Reduce -> Sink: Unnamed" in names
