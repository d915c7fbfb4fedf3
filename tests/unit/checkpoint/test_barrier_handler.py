"""The barrier handlers as pure state machines: random channel interleavings, then what each snapshot saw."""

from __future__ import annotations

from collections import deque

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strom.runtime.checkpoint.barrier_handler import (
    AbortCheckpoint,
    BarrierAligner,
    BarrierTracker,
    BlockChannel,
    ChannelStateComplete,
    StopRecording,
    TriggerCheckpoint,
    UnblockAllChannels,
)

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


def _run(handler: BarrierAligner | BarrierTracker, streams: list[list[Item]], picks: list[int]) -> tuple:  # type: ignore[type-arg]
    queues = [deque(s) for s in streams]
    processed: list[int] = []
    snapshots: dict[int, set[int]] = {}
    aborted: list[int] = []
    blocked: set[int] = set()
    pick = iter(picks)
    while any(queues):
        ready = [c for c, q in enumerate(queues) if q and c not in blocked]
        assert ready, "deadlock: every channel with data is blocked"
        c = ready[next(pick, 0) % len(ready)]
        kind, value = queues[c].popleft()
        if kind == "rec":
            processed.append(value)
            continue
        actions = handler.on_barrier(c, value) if kind == "barrier" else handler.on_end_of_partition(c)
        for a in actions:
            if isinstance(a, BlockChannel):
                blocked.add(a.channel)
            elif isinstance(a, UnblockAllChannels):
                blocked.clear()
            elif isinstance(a, TriggerCheckpoint):
                assert a.checkpoint_id not in snapshots
                snapshots[a.checkpoint_id] = set(processed)
            elif isinstance(a, AbortCheckpoint):
                aborted.append(a.checkpoint_id)
    return processed, snapshots, aborted


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
    processed, snapshots, aborted = _run(BarrierAligner(len(streams)), streams, picks)
    assert sorted(processed) == sorted(v for s in streams for k, v in s if k == "rec")  # nothing lost or doubled
    assert aborted == []
    carried = {v for s in streams for k, v in s if k == "barrier"}
    assert set(snapshots) == carried  # every checkpoint some channel carried triggers, once
    for cid, seen in snapshots.items():
        assert seen == _before(streams, cid), f"checkpoint {cid}"


@settings(max_examples=400, deadline=None)
@given(data=channel_streams(), picks=st.lists(st.integers(0, 7), max_size=200))
def test_unaligned_tracking_loses_nothing(data: tuple[list[list[Item]], int], picks: list[int]) -> None:
    streams, _ = data
    processed, snapshots, _ = _run(BarrierTracker(len(streams)), streams, picks)
    assert sorted(processed) == sorted(v for s in streams for k, v in s if k == "rec")
    for cid, seen in snapshots.items():
        assert _before(streams, cid) <= seen, f"checkpoint {cid} missed records before its barrier"
    assert list(snapshots) == sorted(snapshots)  # triggered in order


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


def test_a_single_channel_triggers_at_once_and_a_duplicate_barrier_is_an_error() -> None:
    assert BarrierAligner(1).on_barrier(0, 1) == [UnblockAllChannels(), TriggerCheckpoint(1)]
    h = BarrierAligner(2)
    h.on_barrier(0, 1)
    with pytest.raises(ValueError, match="expected one barrier 1 on channel 0"):
        h.on_barrier(0, 1)


def _run_unaligned(streams: list[list[Item]], picks: list[int]) -> tuple[list[int], dict[int, set[int]], list[int]]:
    """Drive the handler in unaligned mode as a task does: snapshot at the trigger, then record the records of
    the channels still owing the barrier until each delivers it; the checkpoint's state is the union."""
    handler = BarrierAligner(len(streams))
    queues = [deque(s) for s in streams]
    processed: list[int] = []
    completed: dict[int, set[int]] = {}
    aborted: list[int] = []
    pending: dict[int, set[int]] = {}
    recording: set[int] = set()
    current = -1
    pick = iter(picks)
    while any(queues):
        ready = [c for c, q in enumerate(queues) if q]
        c = ready[next(pick, 0) % len(ready)]
        assert not handler.blocked, "unaligned checkpoints never block a channel"
        kind, value = queues[c].popleft()
        if kind == "rec":
            processed.append(value)
            if c in recording:
                pending[current].add(value)
            continue
        if kind == "barrier":
            actions = handler.on_barrier(c, value, unaligned=True)
        else:
            recording.discard(c)
            actions = handler.on_end_of_partition(c)
        for a in actions:
            assert not isinstance(a, BlockChannel | UnblockAllChannels)
            if isinstance(a, TriggerCheckpoint):
                assert a.unaligned and a.checkpoint_id not in pending and a.checkpoint_id not in completed
                current = a.checkpoint_id
                pending[current] = set(processed)
                recording = set(a.record_channels)
            elif isinstance(a, StopRecording):
                recording.remove(a.channel)
            elif isinstance(a, ChannelStateComplete):
                assert a.checkpoint_id == current and not recording
                completed[current] = pending.pop(current)
            elif isinstance(a, AbortCheckpoint):
                assert a.checkpoint_id in pending
                pending.pop(a.checkpoint_id)
                recording = set()
                aborted.append(a.checkpoint_id)
    assert not pending, f"checkpoints {sorted(pending)} neither completed nor aborted"
    return processed, completed, aborted


@settings(max_examples=400, deadline=None)
@given(data=channel_streams(), picks=st.lists(st.integers(0, 7), max_size=200))
def test_unaligned_snapshot_plus_channel_state_is_exactly_the_records_before_the_barriers(
    data: tuple[list[list[Item]], int], picks: list[int]
) -> None:
    streams, _ = data
    processed, completed, aborted = _run_unaligned(streams, picks)
    assert sorted(processed) == sorted(v for s in streams for k, v in s if k == "rec")
    assert list(completed) == sorted(completed)  # completed in order
    assert not set(completed) & set(aborted)
    for cid, state in completed.items():
        assert state == _before(streams, cid), f"checkpoint {cid}"


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
