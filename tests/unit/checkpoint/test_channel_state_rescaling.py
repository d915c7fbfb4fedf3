"""Rescaling the in-flight data of an unaligned checkpoint: every old channel's records (the consumer's received
buffers, then the producer's queued ones) reach exactly one new subtask — the owner of their key group on a keyed
edge, old consumer s's new subtask s mod p' on a rebalance — in order; broadcast edges are refused."""

from __future__ import annotations

import pickle
from collections import Counter
from typing import Any

import pytest

from strom import StreamExecutionEnvironment
from strom.exceptions import CheckpointError
from strom.graph.job_graph import JobGraph, JobVertex
from strom.runtime.checkpoint.channel_state_rescaling import is_rescaled, redistribute
from strom.runtime.checkpoint.metadata import CheckpointMetadata, OperatorState, StateHandle
from strom.runtime.checkpoint.state_assignment import check_channel_state_matches, restore_descriptors
from strom.runtime.state.key_groups import compute_key_group_range_for_operator_index, key_group_assigner

OLD_P = 2


def _graph(parallelism: int, exchange: str) -> JobGraph:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(parallelism)
    stream = env.from_collection(list(range(10))).uid("src").map(lambda x: x).uid("up").disable_chaining()
    if exchange == "keyed":
        stream = stream.key_by(lambda r: r[0] % 7).map(lambda x: x).uid("down")
    elif exchange == "rebalance":
        stream = stream.rebalance().map(lambda x: x).uid("down")
    else:
        stream = stream.broadcast().map(lambda x: x).uid("down")
    stream.print().uid("sink")
    return env.get_job_graph()


def _consumer(graph: JobGraph) -> JobVertex:
    """The vertex after the exchange under test (its producer is the map, which has an input of its own)."""
    return next(v for v in graph.vertices.values() if v.inputs and graph.vertices[v.inputs[0].source_vertex_id].inputs)


def _checkpoint(exchange: str) -> tuple[CheckpointMetadata, dict[StateHandle, Any]]:
    """A checkpoint taken at OLD_P: every old channel p→s of the exchange holds records (s, p, n) — n = 0, 1 received
    by the consumer, n = 2, 3 still queued at the producer; every task's head saved channel state."""
    graph = _graph(OLD_P, exchange)
    files: dict[StateHandle, Any] = {}
    states = {}
    consumer = _consumer(graph)
    producer = graph.vertices[consumer.inputs[0].source_vertex_id]
    for v in graph.vertices.values():
        head = v.chain[0].operator_id
        channel = {}
        for j in range(v.parallelism):
            output: dict[tuple[int, int], list[bytes]] = {}
            inputs: dict[int, list[bytes]] = {}
            if v is producer:
                output = {(0, s): [pickle.dumps([(s, j, 2)]), pickle.dumps([(s, j, 3)])] for s in range(OLD_P)}
            if v is consumer:
                inputs = {p: [pickle.dumps([(j, p, 0), (j, p, 1)])] for p in range(OLD_P)}
            handle = StateHandle(uri=f"file:///{head}/{j}", size=1)
            files[handle] = (output, inputs)
            channel[j] = handle
        states[head] = OperatorState(operator_id=head, parallelism=v.parallelism, max_parallelism=128, channel=channel)
    return CheckpointMetadata(1, "job", 0, False, states, "file:///chk-1"), files


def _records_at(graph: JobGraph, exchange: str) -> dict[int, list[Any]]:
    metadata, files = _checkpoint(exchange)
    consumer = _consumer(graph)
    out = {}
    for i in range(consumer.parallelism):
        head = restore_descriptors(metadata, graph, consumer, i)[consumer.chain[0].operator_id]
        assert head.channel is None  # rescaled: nothing restores as it was saved
        inputs = redistribute(
            head.rescaled_channels,
            files.__getitem__,
            subtask_index=i,
            parallelism=consumer.parallelism,
            first_channel=lambda logical: 0,
        )
        out[i] = [r for blobs in inputs.values() for b in blobs for r in pickle.loads(b)]
    return out


@pytest.mark.parametrize("new_p", [3, 1])
def test_a_keyed_exchange_hands_every_record_to_the_owner_of_its_key_group_in_channel_order(new_p: int) -> None:
    graph = _graph(new_p, "keyed")
    metadata, _ = _checkpoint("keyed")
    assert is_rescaled(metadata, graph)
    check_channel_state_matches(metadata, graph)
    got = _records_at(graph, "keyed")
    everything = [(s, p, n) for s in range(OLD_P) for p in range(OLD_P) for n in range(4)]
    assert Counter(r for rs in got.values() for r in rs) == Counter(everything)  # each record once
    key_group = key_group_assigner(128)
    for i, records in got.items():
        owned = compute_key_group_range_for_operator_index(128, new_p, i)
        assert all(key_group(r[0] % 7) in owned for r in records)
        for s in range(OLD_P):  # each old channel: received before queued, in order
            for p in range(OLD_P):
                mine = [r[2] for r in records if r[:2] == (s, p)]
                assert mine == sorted(mine)


@pytest.mark.parametrize("new_p", [3, 1])
def test_a_rebalance_hands_old_consumer_s_channels_whole_to_new_subtask_s_mod_p(new_p: int) -> None:
    graph = _graph(new_p, "rebalance")
    got = _records_at(graph, "rebalance")
    for i, records in got.items():
        expected = [(s, p, n) for s in range(OLD_P) if s % new_p == i for p in range(OLD_P) for n in range(4)]
        assert records == expected


def test_a_broadcast_exchange_is_refused_at_another_parallelism_and_restores_at_the_same() -> None:
    metadata, _ = _checkpoint("broadcast")
    check_channel_state_matches(metadata, _graph(OLD_P, "broadcast"))  # same parallelism: as saved
    with pytest.raises(CheckpointError, match="BROADCAST edge"):
        check_channel_state_matches(metadata, _graph(3, "broadcast"))
