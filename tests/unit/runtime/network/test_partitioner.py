"""Key-group routing: every record reaches the subtask owning its key group, in arrival order."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strom.exceptions import InvalidProgramError
from strom.runtime.network.partitioner import KeyGroupStreamPartitioner
from strom.runtime.state.key_groups import assign_key_to_parallel_operator

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
    p.route_timestamped(records[:half], [r[1] for r in records[:half]], outs, touts)
    p.route_timestamped(records[half:], [r[1] for r in records[half:]], outs, touts)
    for c, (out, tout) in enumerate(zip(outs, touts, strict=True)):
        assert out == [r for r in records if assign_key_to_parallel_operator(r[0], 128, channels) == c]
        assert tout == [r[1] for r in out]


def test_an_unhashable_key_is_explained() -> None:
    p = KeyGroupStreamPartitioner(lambda r: [r], max_parallelism=128)
    p.setup(2, 0)
    with pytest.raises(InvalidProgramError, match=r"key must be hashable.*hint"):
        p.route([1, 2], [[], []])
