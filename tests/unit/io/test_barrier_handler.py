"""The barrier handlers: as pure state machines, and under random channel interleavings through the production
input side (CheckpointedInputGate + StreamOneInputProcessor over a fake gate), then what each snapshot saw."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from input_fakes import EOP, FakeClock, FakeInputGate, RecordingOutput, RecordingTask, barrier, checkpointed

from strom.runtime.io.checkpointing import checkpointed_input_gate
from strom.runtime.io.checkpointing.barrier_handler import (
    AbortCheckpoint,
    BarrierAligner,
    BarrierTracker,
    BlockChannel,
    ChannelStateComplete,
    StopRecording,
    TriggerCheckpoint,
    UnblockAllChannels,
)
from strom.runtime.io.stream_one_input_processor import StreamOneInputProcessor
from strom.runtime.network.events import CheckpointBarrier as Barrier
from strom.runtime.operators.source import InputStatus

pytestmark = pytest.mark.timeout(120)

Item = tuple[str, int]  # ("rec", seq) | ("barrier", checkpoint id) | ("eop", 0)


@st.composite
def channel_streams(draw: st.DrawFn) -> tuple[list[list[Item]], int]:
    n = draw(st.integers(1, 4))
    checkpoints = draw(st.integers(1, 5))
    streams = []
    seq = 0
    for _ in range(n):
        carried = draw(st.integers(0, checkpoints)) if draw(st.booleans()) else checkpoints  # ended early?
        items: list[Item] = []
        for cid in range(1, carried + 1):
            for _ in range(draw(st.integers(0, 4))):
                items.append(("rec", seq))
                seq += 1
            items.append(("barrier", cid))
        for _ in range(draw(st.integers(0, 4))):
            items.append(("rec", seq))
            seq += 1
        items.append(("eop", 0))
        streams.append(items)
    return streams, checkpoints


def _buffers(streams: list[list[Item]], *, unaligned: bool = False) -> list[list[Any]]:
    """The channels' items as what a gate delivers: one-record data buffers, barriers, EndOfPartition."""
    out: list[list[Any]] = []
    for s in streams:
        channel: list[Any] = []
        for kind, value in s:
            if kind == "rec":
                channel.append([value])
            elif kind == "barrier":
                channel.append(barrier(value, unaligned=unaligned))
            else:
                channel.append(EOP)
        out.append(channel)
    return out


def _run(
    streams: list[list[Item]], picks: list[int], *, exactly_once: bool = True, unaligned: bool = False
) -> tuple[list[int], RecordingTask]:
    """The production input side — a CheckpointedInputGate and a StreamOneInputProcessor — over a fake gate
    that delivers the channels in the order ``picks`` says; the fake task snapshots what was processed."""
    gate = FakeInputGate(_buffers(streams, unaligned=unaligned), picks)
    output = RecordingOutput()
    task = RecordingTask(processed=output.records)
    cgate = checkpointed(gate, task, exactly_once=exactly_once)
    processor = StreamOneInputProcessor(cgate, output.data_output(), lambda: None)
    while (status := processor.process_input()) is not InputStatus.END_OF_INPUT:
        cgate.validate()
        assert status is InputStatus.MORE_AVAILABLE, "deadlock: every channel with data is blocked"
        if unaligned:
            assert not gate.blocked, "unaligned checkpoints never block a channel"
    assert not gate.has_data_left()
    assert not cgate.recording, "every channel ended: no unaligned checkpoint may still record"
    return output.records, task


def _before(streams: list[list[Item]], cid: int) -> set[int]:
    """Records that precede barrier ``cid`` on each channel (all of a channel's records if it never had it)."""
    out: set[int] = set()
    for s in streams:
        for kind, value in s:
            if kind == "barrier" and value == cid:
                break
            if kind == "rec":
                out.add(value)
    return out


@settings(max_examples=400, deadline=None)
@given(data=channel_streams(), picks=st.lists(st.integers(0, 7), max_size=200))
def test_aligned_snapshots_hold_exactly_the_records_before_their_barrier(
    data: tuple[list[list[Item]], int], picks: list[int]
) -> None:
    streams, _ = data
    processed, task = _run(streams, picks)
    assert sorted(processed) == sorted(v for s in streams for k, v in s if k == "rec")  # nothing lost or doubled
    assert task.aborted == []
    carried = {v for s in streams for k, v in s if k == "barrier"}
    assert sorted(task.triggered_ids) == sorted(set(task.triggered_ids))  # each triggers once
    assert set(task.snapshots) == carried  # every checkpoint some channel carried triggers, once
    for cid, seen in task.snapshots.items():
        assert set(seen) == _before(streams, cid), f"checkpoint {cid}"


@settings(max_examples=400, deadline=None)
@given(data=channel_streams(), picks=st.lists(st.integers(0, 7), max_size=200))
def test_unaligned_tracking_loses_nothing(data: tuple[list[list[Item]], int], picks: list[int]) -> None:
    streams, _ = data
    processed, task = _run(streams, picks, exactly_once=False)
    assert sorted(processed) == sorted(v for s in streams for k, v in s if k == "rec")
    for cid, seen in task.snapshots.items():
        assert _before(streams, cid) <= set(seen), f"checkpoint {cid} missed records before its barrier"
    assert task.triggered_ids == sorted(task.triggered_ids)  # triggered in order


def test_a_newer_barrier_aborts_an_alignment_in_progress() -> None:
    h = BarrierAligner(2)
    assert h.on_barrier(0, 1) == [BlockChannel(0)]
    actions = h.on_barrier(1, 2)
    assert isinstance(actions[1], AbortCheckpoint) and actions[1].checkpoint_id == 1
    # subsumed, not failed (Flink's CHECKPOINT_DECLINED_SUBSUMED): it does not count against the tolerable
    # failures, or a savepoint triggered while a periodic checkpoint aligns would fail the job over
    assert actions[1].counts is False
    assert actions[2] == BlockChannel(1)
    assert h.on_barrier(0, 1) == []  # the old barrier is obsolete
    assert h.on_barrier(0, 2) == [UnblockAllChannels(), TriggerCheckpoint(2)]


def test_a_cancel_marker_aborts_and_later_barriers_of_it_are_ignored() -> None:
    h = BarrierAligner(3)
    h.on_barrier(0, 5)
    assert h.on_cancel_marker(1, 5) == [UnblockAllChannels(), AbortCheckpoint(5, "cancelled upstream", counts=False)]
    assert h.on_barrier(2, 5) == []
    assert h.on_cancel_marker(2, 5) == []
    assert h.on_barrier(0, 6) == [BlockChannel(0)]


def test_at_least_once_a_channel_ending_triggers_every_checkpoint_it_completes_oldest_first() -> None:
    """Channels 1 and 2 delivered barriers 1 and 2; channel 0 ends without them: both checkpoints are complete and
    both trigger, in order (Flink's CheckpointBarrierTracker) — the newer one used to wait for a later barrier."""
    h = BarrierTracker(3)
    for cid in (1, 2):
        for channel in (1, 2):
            assert h.on_barrier(channel, cid) == []
            h.validate()
    assert h.on_end_of_partition(0) == [TriggerCheckpoint(1), TriggerCheckpoint(2)]
    h.validate()
    assert h.pending == {} and h.latest == 2


def test_at_least_once_an_ended_channel_no_longer_counts_for_a_later_checkpoint() -> None:
    """A channel that delivered barrier 2 and then ended counts as aligned once, not twice: checkpoint 2 waits for
    the other open channel's barrier."""
    h = BarrierTracker(3)
    assert h.on_barrier(0, 1) == []
    assert h.on_barrier(0, 2) == []
    assert h.on_barrier(1, 2) == []
    assert h.on_end_of_partition(1) == []  # 1 lacks channel 2's barrier; 2 lacks channel 2's
    h.validate()
    assert h.on_barrier(2, 1) == [TriggerCheckpoint(1)]
    assert h.on_barrier(2, 2) == [TriggerCheckpoint(2)]
    h.validate()


def test_a_single_channel_triggers_at_once_and_a_duplicate_barrier_is_an_error() -> None:
    assert BarrierAligner(1).on_barrier(0, 1) == [UnblockAllChannels(), TriggerCheckpoint(1)]
    h = BarrierAligner(2)
    h.on_barrier(0, 1)
    with pytest.raises(ValueError, match="expected one barrier 1 on channel 0"):
        h.on_barrier(0, 1)


@settings(max_examples=400, deadline=None)
@given(data=channel_streams(), picks=st.lists(st.integers(0, 7), max_size=200))
def test_unaligned_snapshot_plus_channel_state_is_exactly_the_records_before_the_barriers(
    data: tuple[list[list[Item]], int], picks: list[int]
) -> None:
    streams, _ = data
    processed, task = _run(streams, picks, unaligned=True)
    assert sorted(processed) == sorted(v for s in streams for k, v in s if k == "rec")
    assert len(task.triggered_ids) == len(set(task.triggered_ids))  # each triggers once
    completed = list(task.channel_states)
    assert completed == sorted(completed)  # completed in order
    assert not set(completed) & set(task.aborted_ids)
    # every triggered checkpoint either completes its channel state or is aborted
    assert set(task.triggered_ids) == set(completed) | set(task.aborted_ids)
    for cid in completed:
        state = task.snapshots[cid] + task.recorded_records(cid)
        assert sorted(state) == sorted(_before(streams, cid)), f"checkpoint {cid}"


def test_unaligned_triggers_on_the_first_barrier_and_records_the_others() -> None:
    h = BarrierAligner(3)
    assert h.on_barrier(1, 4, unaligned=True) == [
        TriggerCheckpoint(4, unaligned=True, record_channels=frozenset({0, 2}))
    ]
    assert h.blocked == frozenset()
    assert h.on_barrier(0, 4, unaligned=True) == [StopRecording(0)]
    assert h.on_end_of_partition(2) == [ChannelStateComplete(4)]
    # a newer barrier aborts an unaligned checkpoint still owed barriers; no channel was ever blocked
    assert h.on_barrier(0, 5, unaligned=True) == [TriggerCheckpoint(5, unaligned=True, record_channels=frozenset({1}))]
    assert h.on_barrier(1, 6, unaligned=True) == [
        AbortCheckpoint(5, "checkpoint 6 began before 5 was aligned", counts=False),
        TriggerCheckpoint(6, unaligned=True, record_channels=frozenset({0})),
    ]


def test_an_aligned_savepoint_blocks_even_when_checkpoints_are_unaligned() -> None:
    h = BarrierAligner(2)
    assert h.on_barrier(0, 7, unaligned=False) == [BlockChannel(0)]
    assert h.blocked == frozenset({0})
    assert h.on_barrier(1, 7, unaligned=False) == [UnblockAllChannels(), TriggerCheckpoint(7)]


def test_an_alignment_that_times_out_goes_on_unaligned_and_records_the_channels_still_owing_the_barrier() -> None:
    h = BarrierAligner(3)
    assert h.on_barrier(0, 2, unaligned=False) == [BlockChannel(0)]
    assert h.on_alignment_timeout(1) == []  # not the checkpoint aligning
    assert h.on_alignment_timeout(2) == [
        UnblockAllChannels(),
        TriggerCheckpoint(2, unaligned=True, record_channels=frozenset({1, 2})),
    ]
    assert h.blocked == frozenset()
    assert h.on_alignment_timeout(2) == []  # once
    assert h.on_barrier(1, 2, unaligned=True) == [StopRecording(1)]  # a converted barrier
    assert h.on_barrier(2, 2, unaligned=False) == [StopRecording(2), ChannelStateComplete(2)]  # or one that was not
    assert h.on_alignment_timeout(2) == []  # complete: nothing to time out


def test_an_unaligned_barrier_of_an_aligning_checkpoint_switches_it_to_unaligned() -> None:
    """An upstream task's alignment timed out: its barrier comes unaligned, and this task goes unaligned too."""
    h = BarrierAligner(3)
    assert h.on_barrier(2, 8, unaligned=False) == [BlockChannel(2)]
    assert h.on_barrier(0, 8, unaligned=True) == [
        UnblockAllChannels(),
        TriggerCheckpoint(8, unaligned=True, record_channels=frozenset({1})),
    ]
    assert h.on_barrier(1, 8, unaligned=False) == [StopRecording(1), ChannelStateComplete(8)]


def _run_timeoutable(
    streams: list[list[Item]], picks: list[int], timeouts: set[int]
) -> tuple[list[int], RecordingTask]:
    """As ``_run`` with aligned barriers that may time out: before step ``i`` in ``timeouts`` the clock jumps past
    the aligned checkpoint timeout, so an alignment in progress then switches to unaligned."""
    clock = FakeClock()
    buffers = [
        [
            barrier(b.checkpoint_id, timeout_ms=100, timestamp_ms=int(clock.now * 1000))
            if isinstance(b, Barrier)
            else b
            for b in channel
        ]
        for channel in _buffers(streams)
    ]
    gate = FakeInputGate(buffers, picks)
    output = RecordingOutput()
    task = RecordingTask(processed=output.records)
    cgate = checkpointed(gate, task)
    processor = StreamOneInputProcessor(cgate, output.data_output(), lambda: None)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(checkpointed_input_gate, "time", clock)
        step = 0
        while (status := processor.process_input()) is not InputStatus.END_OF_INPUT:
            cgate.validate()
            assert status is InputStatus.MORE_AVAILABLE, "deadlock: every channel with data is blocked"
            step += 1
            if step in timeouts:
                clock.advance(1.0)
    assert not gate.has_data_left()
    assert not cgate.recording
    return output.records, task


@settings(max_examples=400, deadline=None)
@given(
    data=channel_streams(),
    picks=st.lists(st.integers(0, 7), max_size=200),
    timeouts=st.sets(st.integers(1, 60), max_size=8),
)
def test_checkpoints_switched_to_unaligned_by_the_timeout_hold_exactly_the_records_before_their_barriers(
    data: tuple[list[list[Item]], int], picks: list[int], timeouts: set[int]
) -> None:
    streams, _ = data
    processed, task = _run_timeoutable(streams, picks, timeouts)
    assert sorted(processed) == sorted(v for s in streams for k, v in s if k == "rec")
    carried = {v for s in streams for k, v in s if k == "barrier"}
    aborted = set(task.aborted_ids)
    assert len(task.triggered_ids) == len(set(task.triggered_ids))  # each triggers once
    assert carried <= set(task.triggered_ids) | aborted
    assert all(not counts for _, _, counts in task.aborted)  # only subsumed by a newer barrier: no failure
    for b, _ in task.triggered:
        cid = b.checkpoint_id
        if cid in aborted:
            continue
        # a switched checkpoint's barrier goes on unaligned, and its channel state completes the snapshot
        assert b.options.unaligned == (cid in task.channel_states)
        recorded = task.recorded_records(cid) if cid in task.channel_states else []
        assert sorted(task.snapshots[cid] + recorded) == sorted(_before(streams, cid)), f"checkpoint {cid}"
