"""Every partitioner delivers every record exactly once to the subtask it should (broadcast: to all)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from strom import DataStream, MapFunction, RuntimeContext, StreamExecutionEnvironment
from strom.runtime.state.key_groups import assign_key_to_parallel_operator

N = 20_000


class Tag(MapFunction):
    """(producer subtask, value) -> (producer subtask, consumer subtask, value)."""

    def open(self, ctx: RuntimeContext) -> None:
        self.i = ctx.get_index_of_this_subtask()

    def map(self, v: Any) -> Any:
        return (*v, self.i) if isinstance(v, tuple) else (v, self.i)


def run(
    partition: Callable[[DataStream[Any]], DataStream[Any]], up: int = 2, down: int = 3
) -> list[tuple[int, int, int]]:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(up)
    produced = env.from_sequence(0, N - 1).map(lambda v: v).map(Tag()).map(lambda t: (t[1], t[0]))
    consumed = partition(produced).map(Tag()).set_parallelism(down)
    with consumed.execute_and_collect() as results:
        return [(src, dst, v) for src, v, dst in results]


def _exactly_once(rows: list[tuple[int, int, int]]) -> None:
    assert sorted(v for _, _, v in rows) == list(range(N))


@pytest.mark.timeout(60)
def test_rebalance_round_robins_over_all_subtasks() -> None:
    rows = run(lambda s: s.rebalance())
    _exactly_once(rows)
    per = Counter(dst for _, dst, _ in rows)
    assert set(per) == {0, 1, 2}
    assert max(per.values()) - min(per.values()) <= 2 * 2  # round robin per producer: off by one each


@pytest.mark.timeout(60)
def test_shuffle_delivers_each_record_once() -> None:
    rows = run(lambda s: s.shuffle())
    _exactly_once(rows)
    assert set(Counter(dst for _, dst, _ in rows)) == {0, 1, 2}


@pytest.mark.timeout(60)
def test_broadcast_delivers_every_record_to_every_subtask() -> None:
    rows = run(lambda s: s.broadcast())
    per_dst: dict[int, list[int]] = {}
    for _, dst, v in rows:
        per_dst.setdefault(dst, []).append(v)
    assert sorted(per_dst) == [0, 1, 2]
    for values in per_dst.values():
        assert sorted(values) == list(range(N))


@pytest.mark.timeout(60)
def test_key_by_routes_by_key_group() -> None:
    rows = run(lambda s: s.key_by(lambda t: t[1] % 97))
    _exactly_once(rows)
    for _, dst, v in rows:
        assert dst == assign_key_to_parallel_operator(v % 97, 128, 3)


@pytest.mark.timeout(60)
def test_partition_custom_uses_the_users_choice() -> None:
    rows = run(lambda s: s.partition_custom(lambda key, n: key % n, lambda t: t[1]))
    _exactly_once(rows)
    assert all(dst == v % 3 for _, dst, v in rows)


@pytest.mark.timeout(60)
def test_forward_keeps_records_in_their_subtask() -> None:
    rows = run(lambda s: s.forward(), up=2, down=2)
    _exactly_once(rows)
    assert all(src == dst for src, dst, _ in rows)


@pytest.mark.timeout(60)
def test_rescale_connects_each_producer_to_its_own_consumers() -> None:
    rows = run(lambda s: s.rescale(), up=2, down=4)
    _exactly_once(rows)
    assert {(src, dst) for src, dst, _ in rows} == {(0, 0), (0, 1), (1, 2), (1, 3)}


@pytest.mark.timeout(60)
def test_union_merges_streams() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    a = env.from_sequence(0, 999)
    b = env.from_sequence(1000, 1999)
    c = env.from_collection(list(range(2000, 2100)))
    with a.union(b, c).map(lambda v: v + 1).execute_and_collect() as results:
        assert sorted(results) == list(range(1, 2101))
