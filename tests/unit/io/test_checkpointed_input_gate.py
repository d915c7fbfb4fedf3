"""CheckpointedInputGate over a fake gate: it keeps barriers and cancel markers, carries out the barrier handler's
actions (block/unblock, alignment timing, unaligned input channel state, abort) and hands on the rest."""

from __future__ import annotations

import pickle
import threading

import pytest
from input_fakes import (
    EOD,
    EOP,
    FakeClock,
    FakeInputGate,
    RecordingTask,
    barrier,
    cancel,
    checkpointed,
    idle,
    watermark,
)

from strom.runtime.io.checkpointing import checkpointed_input_gate
from strom.runtime.io.checkpointing.barrier_handler import BarrierAligner, BarrierTracker
from strom.runtime.io.checkpointing.checkpointed_input_gate import CheckpointedInputGate
from strom.runtime.network.events import EndOfPartitionEvent

pytestmark = pytest.mark.timeout(30)


def _drain(cgate: CheckpointedInputGate) -> list[tuple[int, object]]:
    out = []
    while (polled := cgate.poll_next()) is not None:
        cgate.validate()
        out.append(polled)
    return out


def test_the_gate_picks_the_handler_of_the_checkpointing_mode() -> None:
    task = RecordingTask()
    assert isinstance(checkpointed(FakeInputGate([[], []]), task).barrier_handler, BarrierAligner)
    assert isinstance(checkpointed(FakeInputGate([[]]), task, exactly_once=False).barrier_handler, BarrierTracker)
    assert checkpointed(FakeInputGate([[]]), task, checkpointing=False).barrier_handler is None


def test_aligned_blocks_the_channels_with_the_barrier_until_all_have_it_and_times_the_alignment() -> None:
    gate = FakeInputGate([[barrier(1), [1]], [[2], [3], barrier(1), [4]]])
    task = RecordingTask()
    cgate = checkpointed(gate, task)
    # channel 0's barrier blocks it: its record after the barrier waits; channel 1's records before theirs come
    assert cgate.poll_next() == (1, [2])
    assert gate.block_calls == [0] and gate.blocked == {0}
    assert cgate.poll_next() == (1, [3])
    assert task.triggered == []
    # the second barrier completes the alignment: all unblocked, the checkpoint triggered with its own barrier
    assert cgate.poll_next() == (0, [1])
    assert gate.unblock_calls == 1 and gate.blocked == set()
    [(b, alignment_ms)] = task.triggered
    assert b == barrier(1) and alignment_ms >= 0.0
    assert cgate.poll_next() == (1, [4])
    assert cgate.poll_next() is None


def test_at_least_once_never_blocks_and_triggers_once_every_channel_delivered_the_barrier() -> None:
    gate = FakeInputGate([[barrier(3), [1]], [[2], barrier(3)]])
    task = RecordingTask()
    cgate = checkpointed(gate, task, exactly_once=False)
    assert cgate.poll_next() == (0, [1])  # nothing blocked: channel 0 goes on after its barrier
    assert task.triggered == []
    assert cgate.poll_next() == (1, [2])
    assert cgate.poll_next() is None
    assert [(b.checkpoint_id, ms) for b, ms in task.triggered] == [(3, 0.0)]
    assert gate.block_calls == []


def test_unaligned_triggers_on_the_first_barrier_and_records_the_channels_still_owing_it() -> None:
    gate = FakeInputGate([[], [], []])
    task = RecordingTask()
    cgate = checkpointed(gate, task)
    gate.push(1, barrier(4, unaligned=True), [10])
    assert cgate.poll_next() == (1, [10])  # not recorded: its barrier is in
    assert task.triggered_ids == [4]
    assert cgate.recording == frozenset({0, 2})
    gate.push(0, [1], [2])
    gate.push(2, [5])
    assert _drain(cgate) == [(0, [1]), (0, [2]), (2, [5])]  # handed on and recorded
    gate.push(0, barrier(4, unaligned=True), [3])  # StopRecording(0): nothing after its barrier is recorded
    assert cgate.poll_next() == (0, [3])
    assert cgate.recording == frozenset({2})
    assert task.channel_states == {}
    gate.push(2, EOP)  # the last channel owing the barrier ends: the channel state is complete
    assert cgate.poll_next() == (2, EOP)  # EndOfPartition is the processor's too
    assert cgate.recording == frozenset()
    state = task.channel_states[4]
    assert {c: [pickle.loads(b) for b in blobs] for c, blobs in state.items()} == {0: [[1], [2]], 2: [[5]]}
    assert gate.block_calls == [] and task.aborted == []


def test_a_newer_barrier_aborts_an_unaligned_checkpoint_and_drops_its_recording() -> None:
    gate = FakeInputGate([[barrier(5, unaligned=True)], [[1], barrier(6, unaligned=True), [2]]])
    task = RecordingTask()
    cgate = checkpointed(gate, task)
    assert cgate.poll_next() == (1, [1])
    assert cgate.recording == frozenset({1})
    assert cgate.poll_next() == (1, [2])
    assert task.aborted == [(5, "checkpoint 6 began before 5 was aligned", False)]  # subsumed: no failure
    assert task.triggered_ids == [5, 6]
    assert cgate.recording == frozenset({0})
    assert 5 not in task.channel_states


def test_a_cancel_marker_aborts_the_alignment_unblocks_and_later_barriers_of_it_are_ignored() -> None:
    gate = FakeInputGate([[barrier(5), [1]], [cancel(5), [2], barrier(5), [3]]])
    task = RecordingTask()
    cgate = checkpointed(gate, task)
    assert _drain(cgate) == [(0, [1]), (1, [2]), (1, [3])]  # the marker unblocked channel 0 at once
    assert gate.block_calls == [0] and gate.unblock_calls == 1
    assert task.aborted == [(5, "cancelled upstream", False)]
    assert task.triggered == []


def test_a_record_that_cannot_be_pickled_aborts_the_unaligned_checkpoint() -> None:
    lock = threading.Lock()
    gate = FakeInputGate([[barrier(2, unaligned=True)], [[lock], [4], barrier(2, unaligned=True)]])
    task = RecordingTask()
    cgate = checkpointed(gate, task)
    assert _drain(cgate) == [(1, [lock]), (1, [4])]  # the records still reach the processor
    [(cid, reason, counts)] = task.aborted
    assert cid == 2 and counts is True
    assert reason.startswith("in-flight records of input channel 1 cannot be pickled")
    assert cgate.recording == frozenset()


def test_without_checkpointing_barriers_and_cancel_markers_are_dropped() -> None:
    gate = FakeInputGate([[barrier(1), [1], cancel(2), EOP], [barrier(1, unaligned=True), [2], EOP]])
    task = RecordingTask()
    cgate = checkpointed(gate, task, checkpointing=False)
    assert _drain(cgate) == [(0, [1]), (0, EOP), (1, [2]), (1, EOP)]
    assert task.triggered == [] and task.aborted == [] and gate.block_calls == []


def test_watermarks_statuses_and_end_of_data_are_handed_on() -> None:
    gate = FakeInputGate([[watermark(7), idle(), EOD, EOP]])
    cgate = checkpointed(gate, RecordingTask())
    polled = _drain(cgate)
    assert [e for _, e in polled] == [watermark(7), idle(), EOD, EOP]
    assert isinstance(polled[-1][1], EndOfPartitionEvent)
    assert cgate.is_finished()


def test_an_ended_channel_counts_as_aligned() -> None:
    gate = FakeInputGate([[barrier(1), [1]], [EOP]])
    task = RecordingTask()
    cgate = checkpointed(gate, task)
    assert cgate.poll_next() == (1, EOP)
    assert task.triggered_ids == [1] and gate.blocked == set()
    assert cgate.poll_next() == (0, [1])


def test_the_buffers_an_unaligned_barrier_overtook_in_its_channel_are_that_channels_state_at_once() -> None:
    gate = FakeInputGate([[], [], []])
    task = RecordingTask()
    cgate = checkpointed(gate, task)
    # the first barrier overtook two queued buffers of channel 1: they are its state, though not processed yet
    gate.overtaken[1] = [pickle.dumps([20]), pickle.dumps([21])]
    gate.push(1, barrier(7, unaligned=True), [20], [21])
    assert _drain(cgate) == [(1, [20]), (1, [21])]  # processed after the barrier as usual, not recorded again
    gate.push(0, [1])
    assert _drain(cgate) == [(0, [1])]  # recorded: channel 0 still owes the barrier
    assert task.triggered_ids == [7]
    assert cgate.recording == frozenset({0, 2})
    # channel 0's barrier overtook one buffer: after what channel 0 delivered since the checkpoint began
    gate.overtaken[0] = [pickle.dumps([2])]
    gate.push(0, barrier(7, unaligned=True), [2])
    gate.push(2, barrier(7, unaligned=True))
    assert _drain(cgate) == [(0, [2])]
    state = task.channel_states[7]
    recorded = {c: [pickle.loads(b) for b in blobs] for c, blobs in state.items()}
    assert recorded == {0: [[1], [2]], 1: [[20], [21]], 2: []}
    assert gate.overtaken == {} and task.aborted == []


def test_an_unaligned_barrier_on_a_single_channel_completes_its_state_with_what_it_overtook() -> None:
    gate = FakeInputGate([[]])
    task = RecordingTask()
    cgate = checkpointed(gate, task)
    gate.overtaken[0] = [pickle.dumps([5])]
    gate.push(0, barrier(2, unaligned=True), [5])
    assert _drain(cgate) == [(0, [5])]
    assert task.triggered_ids == [2]
    assert {c: [pickle.loads(b) for b in bs] for c, bs in task.channel_states[2].items()} == {0: [[5]]}


def test_the_overtaken_buffers_of_a_stale_unaligned_barrier_are_dropped() -> None:
    gate = FakeInputGate([[], []])
    task = RecordingTask()
    cgate = checkpointed(gate, task)
    gate.push(0, barrier(3, unaligned=True))
    gate.push(1, barrier(3, unaligned=True))
    assert _drain(cgate) == []
    gate.overtaken[0] = [pickle.dumps([9])]
    gate.push(0, barrier(2, unaligned=True))  # older than 3: ignored, and so is what it overtook
    assert _drain(cgate) == []
    assert task.triggered_ids == [3] and list(task.channel_states) == [3] and gate.overtaken == {}


def test_a_timeoutable_barrier_aligns_and_switches_to_unaligned_when_the_alignment_times_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock()
    monkeypatch.setattr(checkpointed_input_gate, "time", clock)
    now_ms = int(clock.now * 1000)
    gate = FakeInputGate([[], [], []])
    task = RecordingTask()
    cgate = checkpointed(gate, task)
    gate.push(0, barrier(3, timeout_ms=200, timestamp_ms=now_ms), [1])
    gate.push(1, [10], [11], barrier(3, timeout_ms=200, timestamp_ms=now_ms), [12])
    assert cgate.poll_next() == (1, [10])  # channel 0 delivered its barrier: blocked, aligning
    assert gate.blocked == {0} and task.triggered == []
    assert cgate.seconds_until_alignment_timeout(1.0) == pytest.approx(0.2)
    clock.advance(0.25)
    assert cgate.seconds_until_alignment_timeout(1.0) == 0.0
    # timed out: unblocked, snapshot taken with the barrier turned unaligned, the queued barriers converted
    assert cgate.poll_next() == (0, [1])
    assert gate.blocked == set() and task.triggered_ids == [3]
    assert task.triggered[0][0].options.unaligned and task.triggered[0][0].options.aligned_timeout_ms == 200
    assert gate.converted == [(1, 3), (2, 3)]
    assert cgate.seconds_until_alignment_timeout(1.0) == 1.0
    # channel 1's converted barrier overtook [11]: that is its state, processed after the barrier as usual
    assert _drain(cgate) == [(1, [11]), (1, [12])]
    assert cgate.recording == frozenset({2})
    gate.push(2, [20], barrier(3, timeout_ms=200, timestamp_ms=now_ms))
    assert _drain(cgate) == [(2, [20])]
    state = {c: [pickle.loads(b) for b in blobs] for c, blobs in task.channel_states[3].items()}
    assert state == {1: [[11]], 2: [[20]]}
    assert task.aborted == []


def test_a_timeoutable_barrier_that_comes_later_than_the_timeout_starts_the_checkpoint_unaligned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock()
    monkeypatch.setattr(checkpointed_input_gate, "time", clock)
    triggered_ms = int(clock.now * 1000) - 500  # the checkpoint began 500 ms ago; the timeout is 100 ms
    gate = FakeInputGate([[barrier(4, timeout_ms=100, timestamp_ms=triggered_ms), [1]], [[7], [8]]])
    task = RecordingTask()
    cgate = checkpointed(gate, task)
    assert cgate.poll_next() == (0, [1])
    assert task.triggered_ids == [4] and task.triggered[0][0].options.unaligned
    assert gate.block_calls == [] and gate.converted == [(1, 4)]
    assert cgate.recording == frozenset({1})


def test_a_timeoutable_alignment_that_completes_in_time_stays_aligned(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    monkeypatch.setattr(checkpointed_input_gate, "time", clock)
    now_ms = int(clock.now * 1000)
    gate = FakeInputGate(
        [[barrier(5, timeout_ms=100, timestamp_ms=now_ms)], [[1], barrier(5, timeout_ms=100, timestamp_ms=now_ms)]]
    )
    task = RecordingTask()
    cgate = checkpointed(gate, task)
    assert _drain(cgate) == [(1, [1])]
    clock.advance(1.0)
    assert _drain(cgate) == []
    assert task.triggered_ids == [5] and not task.triggered[0][0].options.unaligned
    assert task.channel_states == {} and gate.converted == []
