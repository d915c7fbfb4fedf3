"""Replayable sources: read part, snapshot, restore a fresh reader from the snapshot, read the rest — the
concatenation is a straight read, with nothing lost and nothing repeated."""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strom import InvalidProgramError, Source, SourceReader, SourceReaderContext, SourceSplit
from strom.connectors import CollectionSource, DataGeneratorSource, NumberSequenceSource


class ManualClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def reader_for(
    source: Source[Any], splits: Sequence[SourceSplit], batch_size: int, *, index: int = 0, p: int = 1
) -> SourceReader[Any]:
    reader = source.create_reader(SourceReaderContext(subtask_index=index, parallelism=p, batch_size=batch_size))
    reader.add_splits(splits)
    return reader


def drain(reader: SourceReader[Any], *, max_polls: int | None = None) -> list[Any]:
    out: list[Any] = []
    polls = 0
    while max_polls is None or polls < max_polls:
        batch = reader.poll_batch()
        polls += 1
        if batch is None:
            break
        out.extend(batch)
    return out


def subtask_splits(source: Source[Any], parallelism: int, index: int) -> list[SourceSplit]:
    """The splits the ExecutionGraph assigns to subtask ``index``."""
    return [s for k, s in enumerate(source.create_splits(parallelism)) if k % parallelism == index]


def straight_read(source: Source[Any], parallelism: int, batch_size: int) -> list[list[Any]]:
    return [
        drain(reader_for(source, subtask_splits(source, parallelism, i), batch_size, index=i, p=parallelism))
        for i in range(parallelism)
    ]


def read_with_restore(
    source: Source[Any], parallelism: int, polls_before: int, batch_before: int, batch_after: int
) -> list[list[Any]]:
    """Each subtask polls ``polls_before`` batches, snapshots (the snapshot crosses a pickle, as it does into
    the checkpoint), and a fresh reader restored from the snapshot reads the rest."""
    out = []
    for i in range(parallelism):
        first = reader_for(source, subtask_splits(source, parallelism, i), batch_before, index=i, p=parallelism)
        before = drain(first, max_polls=polls_before)
        snapshot = first.snapshot_state(checkpoint_id=1)
        assert all(isinstance(s, SourceSplit) for s in snapshot)
        drain(first)  # reading on after the snapshot must not change it
        restored = pickle.loads(pickle.dumps(snapshot))
        assert restored == snapshot
        second = reader_for(source, restored, batch_after, index=i, p=parallelism)
        out.append(before + drain(second))
    return out


def sources() -> dict[str, Callable[[], Source[Any]]]:
    return {
        "collection": lambda: CollectionSource([f"e{i}" for i in range(37)]),
        "sequence": lambda: NumberSequenceSource(5, 66),
        "datagen": lambda: DataGeneratorSource(lambda i: (i % 3, i * i), 53),
    }


@pytest.mark.parametrize("name", sorted(sources()))
@pytest.mark.parametrize("parallelism", [1, 2, 3])
def test_restore_continues_after_the_last_emitted_record(name: str, parallelism: int) -> None:
    source = sources()[name]()
    p = 1 if not source.parallel else parallelism
    expected = straight_read(source, p, 4)
    assert read_with_restore(source, p, polls_before=2, batch_before=4, batch_after=5) == expected


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(sorted(sources())),
    parallelism=st.integers(1, 4),
    polls_before=st.integers(0, 30),
    batch_before=st.integers(1, 20),
    batch_after=st.integers(1, 20),
)
def test_any_snapshot_point_loses_and_repeats_nothing(
    name: str, parallelism: int, polls_before: int, batch_before: int, batch_after: int
) -> None:
    source = sources()[name]()
    p = 1 if not source.parallel else parallelism
    expected = straight_read(source, p, 7)
    assert read_with_restore(source, p, polls_before, batch_before, batch_after) == expected


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=8))
def test_repeated_snapshots_and_restores(batches: list[int]) -> None:
    """A chain of restores, each from the snapshot of the previous reader."""
    source = NumberSequenceSource(0, 40)
    splits: list[SourceSplit] = list(source.create_splits(1))
    out: list[int] = []
    for cid, size in enumerate(batches, start=1):
        reader = reader_for(source, splits, size)
        out.extend(drain(reader, max_polls=1))
        splits = reader.snapshot_state(cid)
    out.extend(drain(reader_for(source, splits, 3)))
    assert out == list(range(41))


def test_snapshot_holds_positions_not_records() -> None:
    big = CollectionSource(list(range(10_000)))
    reader = reader_for(big, big.create_splits(1), 100)
    reader.poll_batch()
    assert reader.snapshot_state(1) == [SourceSplit(split_id="collection-0", payload=100)]

    seq = NumberSequenceSource(1, 100)
    reader = reader_for(seq, seq.create_splits(2), 10)
    reader.poll_batch()
    assert reader.snapshot_state(1) == [
        SourceSplit(split_id="seq-0", payload=(11, 51)),
        SourceSplit(split_id="seq-1", payload=(51, 101)),
    ]


def test_finished_splits_leave_the_snapshot() -> None:
    source = DataGeneratorSource(str, 6)
    reader = reader_for(source, source.create_splits(2), 10)  # both splits on one reader
    assert reader.poll_batch() == ["0", "1", "2"]
    assert reader.snapshot_state(1) == [SourceSplit(split_id="datagen-1", payload=(3, 6))]
    assert reader.poll_batch() == ["3", "4", "5"]
    assert reader.snapshot_state(2) == []
    assert reader.poll_batch() is None


def test_splits_are_redistributed_on_rescale() -> None:
    """A snapshot of 3 subtasks restored into 2: each split's rest is read once."""
    source = NumberSequenceSource(0, 299)
    snapshots: list[SourceSplit] = []
    before: list[int] = []
    for i in range(3):
        reader = reader_for(source, subtask_splits(source, 3, i), 25, index=i, p=3)
        before += drain(reader, max_polls=i + 1)
        snapshots += reader.snapshot_state(1)
    after = [drain(reader_for(source, snapshots[i::2], 11, index=i, p=2)) for i in range(2)]
    assert sorted(before + after[0] + after[1]) == list(range(300))


def test_empty_inputs() -> None:
    empty: list[Source[Any]] = [CollectionSource([]), DataGeneratorSource(str, 0)]
    for source in empty:
        reader = reader_for(source, source.create_splits(1), 4)
        assert reader.snapshot_state(1) == []
        assert reader.poll_batch() is None


def test_collection_reader_rejects_a_foreign_split() -> None:
    source = CollectionSource([1, 2, 3])
    with pytest.raises(InvalidProgramError, match=r"offset in \[0, 3\]; got int 9 in split 'collection-0'"):
        reader_for(source, [SourceSplit(split_id="collection-0", payload=9)], 2)


def test_range_reader_rejects_a_foreign_split() -> None:
    with pytest.raises(InvalidProgramError, match=r"expected a split payload \(lo, hi\) of two ints; got 'x'"):
        reader_for(NumberSequenceSource(1, 2), [SourceSplit(split_id="seq-0", payload="x")], 2)


def test_reader_without_snapshot_support_says_so() -> None:
    class Legacy(SourceReader[int]):
        def add_splits(self, splits: Sequence[SourceSplit]) -> None:
            pass

        def poll_batch(self) -> list[int] | None:
            return None

    with pytest.raises(InvalidProgramError) as info:
        Legacy().snapshot_state(1)
    message = str(info.value)
    assert "expected the source reader" in message and "Legacy" in message
    assert "snapshot_state(checkpoint_id)" in message and "got none; hint:" in message


# -- DataGeneratorSource ----------------------------------------------------------------------------------------
def test_generator_indices_are_split_contiguously() -> None:
    source = DataGeneratorSource(lambda i: i, 10)
    assert [s.payload for s in source.create_splits(3)] == [(0, 3), (3, 6), (6, 10)]
    assert straight_read(source, 3, 2) == [[0, 1, 2], [3, 4, 5], [6, 7, 8, 9]]


def test_rate_limit_without_sleeping() -> None:
    clock = ManualClock()
    source = DataGeneratorSource(lambda i: i, 1_000, records_per_second=100, clock=clock)
    # parallelism 2: each reader gets 50 records per second
    reader = reader_for(source, subtask_splits(source, 2, 0), 512, index=0, p=2)
    assert reader.poll_batch() == [0]  # the first record right away
    assert reader.poll_batch() == []  # ahead of schedule: nothing, and no waiting
    clock.now += 0.1
    assert reader.poll_batch() == [1, 2, 3, 4, 5]
    assert reader.poll_batch() == []
    clock.now += 1.0
    assert len(reader.poll_batch() or []) == 50
    clock.now += 100.0  # far behind: catch up, but never more than a batch at a time
    assert len(reader.poll_batch() or []) == 444
    assert reader.poll_batch() is None


def test_rate_limited_reader_returns_quickly() -> None:
    import time

    source = DataGeneratorSource(lambda i: i, 10, records_per_second=0.001)
    reader = reader_for(source, source.create_splits(1), 4)
    assert reader.poll_batch() == [0]
    start = time.monotonic()
    for _ in range(100):
        assert reader.poll_batch() == []
    assert time.monotonic() - start < 0.5


def test_rate_limited_source_pickles() -> None:
    source = DataGeneratorSource(str, 5, records_per_second=10)
    clone = pickle.loads(pickle.dumps(source))
    assert drain(reader_for(clone, clone.create_splits(1), 10), max_polls=1) == ["0"]


def failing(i: int) -> int:
    if i == 7:
        raise ZeroDivisionError("boom")
    return i


def test_generator_failure_names_the_index() -> None:
    source = DataGeneratorSource(failing, 10)
    reader = reader_for(source, source.create_splits(1), 5)
    assert reader.poll_batch() == [0, 1, 2, 3, 4]
    with pytest.raises(ZeroDivisionError, match="boom") as info:
        reader.poll_batch()
    assert "DataGeneratorSource: generator_function failed for index 7" in (info.value.__notes__ or [])
    assert reader.snapshot_state(1) == [SourceSplit(split_id="datagen-0", payload=(5, 10))]


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (("not callable", 5), {}, "expects a generator_function that maps an index to a record; got a str; hint:"),
        ((str, -1), {}, "expects count to be an int ≥ 0; got -1; hint:"),
        ((str, 2.5), {}, "expects count to be an int ≥ 0; got 2.5; hint:"),
        ((str, True), {}, "expects count to be an int ≥ 0; got True; hint:"),
        ((str, 5, 0), {}, "expects records_per_second > 0 or None; got 0; hint:"),
        ((str, 5, float("inf")), {}, "expects records_per_second > 0 or None; got inf; hint:"),
        ((str, 5, "fast"), {}, "expects records_per_second > 0 or None; got 'fast'; hint:"),
        ((str, 5), {"clock": 3}, "expects clock to be a callable returning seconds; got 3; hint:"),
    ],
)
def test_generator_argument_validation(args: tuple[Any, ...], kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidProgramError) as info:
        DataGeneratorSource(*args, **kwargs)
    assert message in str(info.value)
