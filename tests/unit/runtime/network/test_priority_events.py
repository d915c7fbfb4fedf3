"""Priority events on the receiver side: an unaligned checkpoint's barrier overtakes the buffers queued in its input
channel (remote: the channel's received queue; local: the producer's subpartition), the gate polls it ahead of
every channel's data — blocked channels too — and the remote channel hands over what it overtook, pickled."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from strom.api.serialization import BatchSerializer, PickleBatchSerializer
from strom.runtime.network import messages as m
from strom.runtime.network.events import CheckpointBarrier, CheckpointOptions, WatermarkEvent, is_priority_event
from strom.runtime.network.input_channel import LocalInputChannel, RemoteInputChannel
from strom.runtime.network.input_gate import InputGate
from strom.runtime.network.partition_manager import ResultPartitionManager
from strom.runtime.network.result_partition import ResultPartition, ResultPartitionID

pytestmark = pytest.mark.timeout(30)

PID = ResultPartitionID("r", 0, "a" * 32)


def _barrier(cid: int, *, unaligned: bool = True) -> CheckpointBarrier:
    return CheckpointBarrier(cid, 1000 + cid, CheckpointOptions(unaligned=unaligned))


class _JsonSerializer(BatchSerializer):
    """A serializer whose bytes are no pickle: overtaken buffers must be converted."""

    def serialize(self, batch: list[Any]) -> bytes:
        return repr(batch).encode()

    def deserialize(self, data: bytes | memoryview) -> list[Any]:
        value: list[Any] = eval(bytes(data).decode())  # test data only
        return value


def _remote(gate: InputGate, index: int, serializer: BatchSerializer | None = None) -> RemoteInputChannel:
    return RemoteInputChannel(
        gate,
        index,
        PID,
        index,
        serializer=serializer or PickleBatchSerializer(),
        request=lambda ch: None,
        recycle=lambda ch: None,
        cancel_request=lambda ch: None,
    )


def _data(ch: RemoteInputChannel, batch: list[Any]) -> None:
    ch.on_buffer(m.DATA_BUFFER, ch.serializer.serialize(batch))


def _drain(gate: InputGate) -> list[tuple[int, Any]]:
    out = []
    while (polled := gate.poll_next()) is not None:
        out.append(polled)
    return out


def test_only_an_unaligned_barrier_is_a_priority_event() -> None:
    assert is_priority_event(_barrier(1))
    assert not is_priority_event(_barrier(1, unaligned=False))
    assert not is_priority_event(WatermarkEvent(3))


@pytest.mark.parametrize("serializer", [PickleBatchSerializer(), _JsonSerializer()], ids=["pickle", "other"])
def test_a_priority_barrier_overtakes_the_remote_channels_queue_and_hands_over_what_it_overtook(
    serializer: BatchSerializer,
) -> None:
    wakes: list[int] = []
    gate = InputGate(0, lambda: wakes.append(1))
    ch0, ch1 = _remote(gate, 0, serializer), _remote(gate, 1, serializer)
    gate.set_channels([ch0, ch1])
    _data(ch0, [1, 2])
    _data(ch1, [10])
    _data(ch0, [3])
    ch0.on_buffer(m.EVENT_BUFFER, pickle.dumps(WatermarkEvent(7)))
    ch0.on_buffer(m.PRIORITY_EVENT_BUFFER, pickle.dumps(_barrier(4)))
    _data(ch0, [4])  # after the barrier: not overtaken
    assert gate.has_available()
    assert gate.poll_next() == (0, _barrier(4))  # ahead of both channels' data
    overtaken = gate.take_overtaken(0)
    assert [pickle.loads(b) for b in overtaken] == [[1, 2], [3]]  # data only, pickled, in order
    assert gate.take_overtaken(0) == []  # handed over once
    # the overtaken buffers are still processed, in order, after the barrier
    assert _drain(gate) == [(0, [1, 2]), (1, [10]), (0, [3]), (0, WatermarkEvent(7)), (0, [4])]


def test_priority_events_keep_their_order_and_each_hands_over_its_own_overtaken_buffers() -> None:
    gate = InputGate(0, lambda: None)
    ch = _remote(gate, 0)
    gate.set_channels([ch])
    _data(ch, [1])
    ch.on_buffer(m.PRIORITY_EVENT_BUFFER, pickle.dumps(_barrier(1)))
    _data(ch, [2])
    ch.on_buffer(m.PRIORITY_EVENT_BUFFER, pickle.dumps(_barrier(2)))
    assert gate.poll_next() == (0, _barrier(1))
    assert [pickle.loads(b) for b in gate.take_overtaken(0)] == [[1]]
    assert gate.poll_next() == (0, _barrier(2))
    assert [pickle.loads(b) for b in gate.take_overtaken(0)] == [[1], [2]]
    assert _drain(gate) == [(0, [1]), (0, [2])]


def test_a_priority_barrier_is_polled_from_a_blocked_channel_whose_data_stays_blocked() -> None:
    gate = InputGate(0, lambda: None)
    ch0, ch1 = _remote(gate, 0), _remote(gate, 1)
    gate.set_channels([ch0, ch1])
    gate.block(0)
    _data(ch0, [1])
    ch0.on_buffer(m.PRIORITY_EVENT_BUFFER, pickle.dumps(_barrier(9)))
    _data(ch1, [5])
    assert gate.poll_next() == (0, _barrier(9))
    assert _drain(gate) == [(1, [5])]  # channel 0's data waits for the unblock
    gate.unblock_all()
    assert _drain(gate) == [(0, [1])]


def test_a_priority_event_the_data_path_took_first_is_not_polled_twice() -> None:
    gate = InputGate(0, lambda: None)
    ch = _remote(gate, 0)
    gate.set_channels([ch])
    ch.on_buffer(m.PRIORITY_EVENT_BUFFER, pickle.dumps(_barrier(3)))
    assert ch.poll() == _barrier(3)  # as a channel read outside the gate's priority queue would
    _data(ch, [1])
    assert _drain(gate) == [(0, [1])]


def test_a_local_channel_polls_the_barrier_its_producer_put_at_the_head_first() -> None:
    manager = ResultPartitionManager()
    partition = ResultPartition(PID, 1, pool_size=8, max_buffers_per_subpartition=8)
    manager.register_result_partition(partition)
    gate = InputGate(0, lambda: None)
    local = LocalInputChannel(gate, 0, PID, 0, manager)
    remote = _remote(gate, 1)
    gate.set_channels([local, remote])
    local.request_subpartition()
    _data(remote, [100])
    partition.emit(0, [1])
    partition.emit(0, [2])
    overtaken = partition.broadcast_priority_event(_barrier(5))
    assert overtaken == [[[1], [2]]]  # the producer's output state, not the consumer's
    assert gate.poll_next() == (0, _barrier(5))
    assert gate.take_overtaken(0) == []
    assert _drain(gate) == [(1, [100]), (0, [1]), (0, [2])]


def _timeoutable(cid: int) -> CheckpointBarrier:
    return CheckpointBarrier(cid, 1000 + cid, CheckpointOptions(aligned_timeout_ms=50))


def test_a_remote_channel_converts_a_queued_aligned_barrier_into_a_priority_event() -> None:
    gate = InputGate(0, lambda: None)
    ch = _remote(gate, 0)
    gate.set_channels([ch])
    _data(ch, [1])
    _data(ch, [2])
    ch.on_buffer(m.EVENT_BUFFER, pickle.dumps(_timeoutable(6)))
    _data(ch, [3])
    gate.convert_to_priority(0, 6)
    polled = gate.poll_next()
    assert polled is not None and polled[1].checkpoint_id == 6
    assert polled[1].options.unaligned and polled[1].options.aligned_timeout_ms == 50
    assert [pickle.loads(b) for b in gate.take_overtaken(0)] == [[1], [2]]
    assert _drain(gate) == [(0, [1]), (0, [2]), (0, [3])]


def test_a_remote_channel_converts_the_aligned_barrier_when_it_arrives() -> None:
    gate = InputGate(0, lambda: None)
    ch = _remote(gate, 0)
    gate.set_channels([ch])
    _data(ch, [1])
    gate.convert_to_priority(0, 6)  # not here yet
    _data(ch, [2])
    ch.on_buffer(m.EVENT_BUFFER, pickle.dumps(_timeoutable(5)))  # an older one: not converted
    ch.on_buffer(m.EVENT_BUFFER, pickle.dumps(_timeoutable(6)))
    _data(ch, [3])
    polled = gate.poll_next()
    assert polled is not None and polled[1].checkpoint_id == 6 and polled[1].options.unaligned
    assert [pickle.loads(b) for b in gate.take_overtaken(0)] == [[1], [2]]
    assert _drain(gate) == [(0, [1]), (0, [2]), (0, _timeoutable(5)), (0, [3])]
    ch.on_buffer(m.EVENT_BUFFER, pickle.dumps(_timeoutable(6)))  # converted once only
    assert _drain(gate) == [(0, _timeoutable(6))]


def _local_gate() -> tuple[ResultPartition, InputGate]:
    manager = ResultPartitionManager()
    partition = ResultPartition(PID, 1, pool_size=8, max_buffers_per_subpartition=8)
    manager.register_result_partition(partition)
    gate = InputGate(0, lambda: None)
    local = LocalInputChannel(gate, 0, PID, 0, manager)
    gate.set_channels([local])
    local.request_subpartition()
    return partition, gate


def test_a_local_channel_converts_the_aligned_barrier_queued_in_its_subpartition() -> None:
    partition, gate = _local_gate()
    partition.emit(0, [1])
    partition.broadcast_event(_timeoutable(2))
    partition.emit(0, [2])
    gate.convert_to_priority(0, 2)
    polled = gate.poll_next()
    assert polled is not None and polled[1].checkpoint_id == 2 and polled[1].options.unaligned
    assert [pickle.loads(b) for b in gate.take_overtaken(0)] == [[1]]  # the consumer's state, pickled
    assert _drain(gate) == [(0, [1]), (0, [2])]


def test_a_local_channel_converts_the_aligned_barrier_when_its_producer_adds_it() -> None:
    partition, gate = _local_gate()
    partition.emit(0, [1])
    gate.convert_to_priority(0, 3)
    partition.emit(0, [2])
    partition.broadcast_event(_timeoutable(3))
    partition.emit(0, [3])
    polled = gate.poll_next()
    assert polled is not None and polled[1].checkpoint_id == 3 and polled[1].options.unaligned
    assert [pickle.loads(b) for b in gate.take_overtaken(0)] == [[1], [2]]
    assert _drain(gate) == [(0, [1]), (0, [2]), (0, [3])]


def test_a_watched_aligned_barrier_reports_once_it_left_every_subpartition() -> None:
    partition = ResultPartition(PID, 2, pool_size=8, max_buffers_per_subpartition=8)
    sent: list[int] = []
    partition.emit(0, [1])
    partition.broadcast_watched_barrier(_timeoutable(4), sent.append)
    assert partition.subpartitions[1].poll() == _timeoutable(4)
    assert sent == []
    assert partition.subpartitions[0].poll() == [1]
    assert partition.subpartitions[0].poll() == _timeoutable(4)
    assert sent == [4]


def test_the_producers_aligned_checkpoint_timeout_makes_the_queued_barrier_overtake_the_data_ahead() -> None:
    partition = ResultPartition(PID, 2, pool_size=8, max_buffers_per_subpartition=8)
    sent: list[int] = []
    partition.emit(0, [1])
    partition.emit(0, [2])
    partition.broadcast_watched_barrier(_timeoutable(4), sent.append)
    partition.emit(0, [3])
    assert partition.subpartitions[1].poll() == _timeoutable(4)  # this one left in time: nothing to overtake
    assert partition.timeout_aligned_barrier(4) == {0: [[1], [2]]}  # the producer's output state
    head = partition.subpartitions[0].poll()
    assert head is not None and head.checkpoint_id == 4 and head.options.unaligned
    assert [partition.subpartitions[0].poll() for _ in range(3)] == [[1], [2], [3]]
    assert sent == []  # written by the timeout, not reported as sent
    assert partition.timeout_aligned_barrier(4) == {}
