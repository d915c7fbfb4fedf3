"""The RecordWriter cuts buffers at the segment size from the first buffer on, and records that cannot be serialized
fail the writer even when every channel stays in the TaskManager, naming the record and its position."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from strom.exceptions import SerializationError
from strom.runtime.network.partitioner import RebalancePartitioner
from strom.runtime.network.record_writer import RecordWriter
from strom.runtime.network.result_partition import ResultPartition, ResultPartitionID
from strom.runtime.streamrecord import timestamps_of, with_timestamps

pytestmark = pytest.mark.timeout(30)

SEGMENT = 32 * 1024


class _Owner:
    name = "enrich"

    def user_error(self, exc: BaseException, batch: Any, *, role: str = "") -> BaseException:
        return exc


def _writer(channels: int = 2) -> tuple[RecordWriter, ResultPartition]:
    partition = ResultPartition(
        ResultPartitionID("r1", 1, "attempt-1"), channels, pool_size=10_000, max_buffers_per_subpartition=10_000
    )
    writer = RecordWriter(
        partition,
        RebalancePartitioner(),
        max_records_per_buffer=1024,
        segment_size=SEGMENT,
        flush_always=False,
        subtask_index=1,
        owner=_Owner(),
    )
    return writer, partition


def _queued(partition: ResultPartition) -> list[list[Any]]:
    out = []
    for sp in partition.subpartitions:
        while (buf := sp.poll()) is not None:
            out.append(buf)
    return out


def test_the_first_buffer_of_large_records_holds_one_record() -> None:
    writer, partition = _writer()
    for i in range(0, 40, 5):  # batches of five 200 KB records, as a source polls them
        writer.emit([bytes([i + k]) * 200_000 for k in range(5)])
    buffers = _queued(partition)
    assert len(buffers) == 40 and all(len(b) == 1 for b in buffers)  # nothing waits for 1,024 records


def test_small_records_fill_buffers_to_the_segment_size() -> None:
    writer, partition = _writer(channels=1)
    for _ in range(8):
        writer.emit([(i, "k%d" % i, i * 2) for i in range(1024)])  # noqa: UP031
    sizes = [len(b) for b in _queued(partition)]
    per_record = len(partition.serializer.serialize([(i, "k%d" % i, i * 2) for i in range(64)])) / 64  # noqa: UP031
    assert sizes and all(n == min(1024, int(SEGMENT / per_record)) for n in sizes[:-1])


def test_an_unpicklable_record_fails_a_local_writer_naming_record_and_position() -> None:
    writer, partition = _writer()
    with pytest.raises(SerializationError) as info:
        writer.emit([(0, "fine"), (1, threading.Lock())])  # no channel is remote
    text = str(info.value)
    assert "the output of operator 'enrich' (subtask 2) cannot leave its TaskManager" in text
    assert "output record #1 ((1, <unlocked _thread.lock object at" in text
    assert "cannot pickle '_thread.lock' object" in text
    assert "must be picklable" in text and "DataStream.set_serializer()" in text
    assert partition.buffers_in_use() == 0  # nothing was queued


def test_the_position_counts_the_records_the_writer_emitted_before() -> None:
    writer, _ = _writer()
    for _ in range(16):  # the first batch and every 16th after are checked
        writer.emit([(i, "fine") for i in range(100)])
    with pytest.raises(SerializationError, match=r"output record #1603 \(\(3, <unlocked _thread.lock"):
        writer.emit([(0, "a"), (1, "b"), (2, "c"), (3, threading.Lock())])


def test_a_long_repr_is_cut() -> None:
    writer, _ = _writer()

    class Unpicklable:
        def __reduce__(self) -> Any:
            raise TypeError("no")

        def __repr__(self) -> str:
            return "U" * 10_000

    with pytest.raises(SerializationError) as info:
        writer.emit([Unpicklable()])
    text = str(info.value)
    assert "U" * 190 in text and "U" * 201 not in text and "...)" in text


def test_timestamps_travel_with_their_records_and_records_without_one_get_none() -> None:
    writer, partition = _writer(channels=2)
    writer.emit(["p0", "p1"])  # before the stream carried event time: plain buffers
    writer.flush()
    writer.emit(with_timestamps(["a", "b", "c"], [1, 2, 3]))
    writer.emit(["d"])  # a batch without timestamps on a timed stream
    writer.flush()
    buffers = _queued(partition)
    assert all(timestamps_of(b) is None for b in buffers if set(b) <= {"p0", "p1"})
    timed = [b for b in buffers if not set(b) <= {"p0", "p1"}]
    pairs = sorted(p for b in timed for p in zip(b, timestamps_of(b) or [], strict=True))
    assert pairs == [("a", 1), ("b", 2), ("c", 3), ("d", None)]
