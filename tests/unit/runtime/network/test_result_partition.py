"""The producer side of a subpartition read from another TaskManager: buffers are serialized as they are added,
errors name the producing operator, and an unaligned checkpoint still gets the overtaken records back."""

from __future__ import annotations

import threading

import pytest

from strom.exceptions import SerializationError
from strom.runtime.network.events import CheckpointBarrier, CheckpointOptions
from strom.runtime.network.result_partition import ResultPartition, ResultPartitionID, SerializedBatch
from strom.runtime.streamrecord import TimestampedBatch

pytestmark = pytest.mark.timeout(30)


def _partition() -> ResultPartition:
    p = ResultPartition(ResultPartitionID("r1", 1, "attempt-1"), 2, pool_size=8, max_buffers_per_subpartition=4)
    p.producer_name = "enrich"
    return p


def test_a_remote_subpartition_holds_serialized_buffers_a_local_one_the_objects() -> None:
    p = _partition()
    local, remote = p.subpartitions
    remote.remote = True
    batch = TimestampedBatch([(1, "a"), (2, "b")], [10, 20])
    p.emit(0, batch)
    p.emit(1, batch)
    assert local.poll() is batch
    sent = remote.poll()
    assert isinstance(sent, SerializedBatch) and sent.num_records == 2
    back = p.serializer.deserialize(sent.data)
    assert back == batch and back.timestamps == [10, 20]
    assert p.observed_bytes_per_record == len(sent.data) / 2
    assert p.buffers_in_use() == 0 and remote.backlog() == 0


def test_a_record_that_cannot_be_serialized_fails_the_producer_naming_its_operator() -> None:
    p = _partition()
    p.subpartitions[1].remote = True
    with pytest.raises(SerializationError) as info:
        p.emit(1, [(1, threading.Lock())])
    message = str(info.value)
    assert "the output of operator 'enrich' (subtask 2) cannot leave its TaskManager" in message
    assert "lock" in message and "hint: records crossing TaskManagers must be picklable" in message
    assert p.buffers_in_use() == 0  # nothing was queued


def test_an_overtaking_barrier_gets_the_queued_records_back_as_batches() -> None:
    p = _partition()
    sp = p.subpartitions[1]
    p.emit(1, [1, 2])  # queued before the data server attached: still objects
    sp.remote = True
    p.emit(1, [3, 4])
    overtaken = sp.add_priority(CheckpointBarrier(7, 0, CheckpointOptions(unaligned=True)))
    assert overtaken == [[1, 2], [3, 4]]
    assert isinstance(sp.poll(), CheckpointBarrier)
    assert sp.poll() == [1, 2] and isinstance(sp.poll(), SerializedBatch)
