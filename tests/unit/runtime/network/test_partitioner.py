"""Routing: every record reaches the subtask its partitioner picks (key-group owner, round robin, ...), in arrival
order, and on a stream with event time its timestamp travels with it — through each partitioner's one ``route``."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strom.exceptions import InvalidProgramError
from strom.runtime.network.partitioner import (
    BroadcastPartitioner,
    CustomPartitionerWrapper,
    ForwardPartitioner,
    KeyGroupStreamPartitioner,
    RebalancePartitioner,
    RescalePartitioner,
    ShufflePartitioner,
    StreamPartitioner,
)
from strom.runtime.state.key_groups import assign_key_to_parallel_operator
from strom.runtime.streamrecord import with_timestamps

pytestmark = pytest.mark.timeout(60)


@settings(max_examples=60, deadline=None)
@given(
    channels=st.sampled_from([1, 2, 3, 8, 9, 16]),
    records=st.lists(st.tuples(st.one_of(st.integers(), st.text(max_size=5)), st.integers()), max_size=300),
)
def test_each_record_goes_to_the_owner_of_its_key_group_in_order(
    channels: int, records: list[tuple[object, int]]
) -> None:
    p = KeyGroupStreamPartitioner(lambda r: r[0], max_parallelism=128)
    p.setup(channels, 0)
    outs: list[list[tuple[object, int]]] = [[] for _ in range(channels)]
    half = len(records) // 2
    p.route(records[:half], outs)  # two batches: the key cache carries over
    p.route(records[half:], outs)
    for c, out in enumerate(outs):
        assert out == [r for r in records if assign_key_to_parallel_operator(r[0], 128, channels) == c]
    # with event timestamps: each timestamp travels with its record
    outs = [[] for _ in range(channels)]
    touts: list[list[object]] = [[] for _ in range(channels)]
    p.route(with_timestamps(records[:half], [r[1] for r in records[:half]]), outs, touts)
    p.route(with_timestamps(records[half:], [r[1] for r in records[half:]]), outs, touts)
    for c, (out, tout) in enumerate(zip(outs, touts, strict=True)):
        assert out == [r for r in records if assign_key_to_parallel_operator(r[0], 128, channels) == c]
        assert tout == [r[1] for r in out]


def test_an_unhashable_key_is_explained() -> None:
    p = KeyGroupStreamPartitioner(lambda r: [r], max_parallelism=128)
    p.setup(2, 0)
    with pytest.raises(InvalidProgramError, match=r"key must be hashable.*hint"):
        p.route([1, 2], [[], []])


PARTITIONERS: dict[str, Any] = {
    "forward": ForwardPartitioner,
    "rebalance": RebalancePartitioner,
    "rescale": RescalePartitioner,
    "shuffle": ShufflePartitioner,
    "broadcast": BroadcastPartitioner,
    "hash": lambda: KeyGroupStreamPartitioner(lambda r: r[0], max_parallelism=128),
    "custom": lambda: CustomPartitionerWrapper(lambda k, n: k % n, lambda r: r[0]),
}


def _route_twice(p: StreamPartitioner, channels: int, batches: list[list[Any]], *, timed: bool) -> list[Any]:
    """What each channel received from ``batches``, as (record, timestamp) pairs (timestamp ``None`` when the
    stream is not timed)."""
    p.setup(channels, 0)
    outs: list[list[Any]] = [[] for _ in range(channels)]
    touts: list[list[Any]] | None = [[] for _ in range(channels)] if timed else None
    for batch in batches:
        p.route(batch, outs, touts)
    if touts is None:
        return [[(v, None) for v in out] for out in outs]
    assert [len(t) for t in touts] == [len(o) for o in outs]
    return [list(zip(out, tout, strict=True)) for out, tout in zip(outs, touts, strict=True)]


@pytest.mark.parametrize("name", sorted(PARTITIONERS))
@pytest.mark.parametrize("channels", [1, 2, 3, 9])
def test_one_route_moves_timestamps_with_their_records_and_plain_batches_stay_plain(name: str, channels: int) -> None:
    if name == "forward" and channels > 1:
        channels = 1  # pointwise: a forward edge has one channel
    records = [(i % 7, i) for i in range(50)]
    timed = [with_timestamps(records[:20], [1000 + r[1] for r in records[:20]]), records[20:]]
    got = _route_twice(PARTITIONERS[name](), channels, timed, timed=True)
    # a record keeps its timestamp; records of a plain batch on a timed stream have none
    for out in got:
        for (_, i), t in out:
            assert t == (1000 + i if i < 20 else None)
    received = sorted(r for out in got for r, _ in out)
    assert received == sorted(records * (channels if name == "broadcast" else 1))
    for out in got:  # arrival order kept per channel
        assert [i for (_, i), _ in out] == sorted(i for (_, i), _ in out)
    if name not in ("shuffle", "rebalance", "rescale"):  # deterministic: the plain route picks the same channels
        plain = _route_twice(PARTITIONERS[name](), channels, [records[:20], records[20:]], timed=False)
        assert [[r for r, _ in out] for out in plain] == [[r for r, _ in out] for out in got]


def test_rebalance_deals_records_round_robin_across_batches_with_their_timestamps() -> None:
    p = RebalancePartitioner()
    p.setup(3, 0)
    p._next = 1
    outs: list[list[Any]] = [[], [], []]
    touts: list[list[Any]] = [[], [], []]
    p.route(with_timestamps([0, 1, 2, 3], [10, 11, 12, 13]), outs, touts)
    p.route([4, 5], outs, touts)
    assert outs == [[2, 5], [0, 3], [1, 4]]
    assert touts == [[12, None], [10, 13], [11, None]]
