"""The CheckpointCoordinator as a pure state machine: events in, actions out."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strom.runtime.checkpoint.coordinator import (
    CheckpointCoordinator,
    CheckpointCoordinatorConfiguration,
    CheckpointStats,
    DisposeCheckpoint,
    FailJob,
    FinalizeCheckpoint,
    NotifyCheckpointAborted,
    NotifyCheckpointComplete,
    ScheduleTimeout,
    TriggerTasks,
)

pytestmark = pytest.mark.timeout(60)

SOURCES = ("src-0", "src-1")
ALL = ("src-0", "src-1", "sink-0")


def _coordinator(**kw: int) -> CheckpointCoordinator:
    return CheckpointCoordinator(CheckpointCoordinatorConfiguration(**kw))


def _trigger(c: CheckpointCoordinator, now: int = 0) -> int:
    actions, why = c.trigger(now, tasks_to_trigger=SOURCES, tasks_to_ack=ALL)
    assert why == ""
    trig = actions[0]
    assert isinstance(trig, TriggerTasks) and trig.executions == SOURCES
    assert isinstance(actions[1], ScheduleTimeout)
    return trig.checkpoint_id


def test_acknowledged_by_all_then_finalized_is_completed_and_notified() -> None:
    c = _coordinator()
    cid = _trigger(c)
    assert c.receive_acknowledge(cid, "src-0", "s0") == []
    assert c.receive_acknowledge(cid, "src-0", "again") == []  # duplicate ack ignored
    assert c.receive_acknowledge(cid, "src-1", "s1") == []
    (fin,) = c.receive_acknowledge(cid, "sink-0", "k0", {"state_size": 10})
    assert isinstance(fin, FinalizeCheckpoint) and fin.pending.states == {"src-0": "s0", "src-1": "s1", "sink-0": "k0"}
    assert c.on_finalized(cid, 50) == [NotifyCheckpointComplete(cid, ALL)]
    assert c.latest_completed is not None and c.latest_completed.checkpoint_id == cid
    assert _history(c)[cid].status == "COMPLETED" and _history(c)[cid].duration_ms == 50
    assert _history(c)[cid].state_size == 10


def test_ids_only_grow_and_a_restored_coordinator_continues_after_the_restored_id() -> None:
    c = _coordinator(max_concurrent=5)
    ids = [_trigger(c, t) for t in range(3)]
    assert ids == [1, 2, 3]
    assert _trigger(CheckpointCoordinator(CheckpointCoordinatorConfiguration(), first_checkpoint_id=8)) == 8


def test_decline_aborts_disposes_and_counts_against_tolerable_failures() -> None:
    c = _coordinator(tolerable_failures=1)
    cid = _trigger(c)
    actions = c.receive_decline(cid, "sink-0", "alignment overtaken")
    assert actions[0] == NotifyCheckpointAborted(cid, ALL, "declined by a task: alignment overtaken")
    assert actions[1] == DisposeCheckpoint(cid)
    assert len(actions) == 2  # one failure is tolerated
    cid2 = _trigger(c)
    assert any(isinstance(a, FailJob) for a in c.on_timeout(cid2))  # the second in a row is not


def test_timeout_aborts_and_the_next_checkpoint_completes() -> None:
    c = _coordinator(tolerable_failures=5)
    cid = _trigger(c)
    c.receive_acknowledge(cid, "src-0", None)
    assert isinstance(c.on_timeout(cid)[0], NotifyCheckpointAborted)
    assert c.receive_acknowledge(cid, "src-1", None) == []  # late ack of an expired checkpoint
    cid2 = _trigger(c, 10)
    for e in ALL:
        actions = c.receive_acknowledge(cid2, e, None)
    assert isinstance(actions[0], FinalizeCheckpoint)
    assert c.on_finalized(cid2, 20)[0] == NotifyCheckpointComplete(cid2, ALL)
    assert c.consecutive_failures == 0


def test_max_concurrent_and_min_pause_hold_back_periodic_triggers_but_not_savepoints() -> None:
    c = _coordinator(min_pause_ms=100)
    cid = _trigger(c, 0)
    actions, why = c.trigger(5, tasks_to_trigger=SOURCES, tasks_to_ack=ALL)
    assert actions == [] and "pending" in why
    actions, why = c.trigger(5, tasks_to_trigger=SOURCES, tasks_to_ack=ALL, is_savepoint=True)
    assert why == ""
    for e in ALL:
        c.receive_acknowledge(cid, e, None)
    c.on_finalized(cid, 10)
    actions, why = c.trigger(50, tasks_to_trigger=SOURCES, tasks_to_ack=ALL)
    assert actions == [] and "minimum pause" in why
    assert c.trigger(110, tasks_to_trigger=SOURCES, tasks_to_ack=ALL)[1] == ""


def test_completing_a_checkpoint_subsumes_older_pending_ones() -> None:
    c = _coordinator(max_concurrent=2)
    old = _trigger(c, 0)
    new = _trigger(c, 1)
    for e in ALL:
        c.receive_acknowledge(new, e, None)
    actions = c.on_finalized(new, 5)
    assert actions[0] == NotifyCheckpointComplete(new, ALL)
    assert NotifyCheckpointAborted(old, ALL, f"subsumed by checkpoint {new}") in actions
    assert old not in c.pending


def test_no_running_tasks_means_no_checkpoint() -> None:
    actions, why = _coordinator().trigger(0, tasks_to_trigger=(), tasks_to_ack=ALL)
    assert actions == [] and "not running" in why


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["trigger", "ack", "decline", "timeout", "finalize"]),
            st.integers(0, 5),
            st.sampled_from(ALL),
        ),
        max_size=60,
    )
)
def test_completed_checkpoints_are_notified_once_in_increasing_order(
    events: list[tuple[str, int, str]],
) -> None:
    c = _coordinator(max_concurrent=3, tolerable_failures=1000)
    notified: list[int] = []
    finalizing: list[int] = []
    for now, (kind, pick, execution) in enumerate(events, start=1):
        ids = sorted(c.pending)
        cid = ids[pick % len(ids)] if ids else 1
        if kind == "trigger":
            actions, _ = c.trigger(now, tasks_to_trigger=SOURCES, tasks_to_ack=ALL)
        elif kind == "ack":
            actions = c.receive_acknowledge(cid, execution, None)
        elif kind == "decline":
            actions = c.receive_decline(cid, execution, "no")
        elif kind == "timeout":
            actions = c.on_timeout(cid)
        else:
            actions = c.on_finalized(finalizing.pop(0), now) if finalizing else []
        for a in actions:
            if isinstance(a, FinalizeCheckpoint):
                finalizing.append(a.pending.checkpoint_id)
            if isinstance(a, NotifyCheckpointComplete):
                notified.append(a.checkpoint_id)
        assert len(c.pending) <= 3
    assert notified == sorted(set(notified))  # once each, increasing: what a CheckpointListener relies on


def test_a_task_finishing_before_it_acknowledged_aborts_the_checkpoint_without_a_failure() -> None:
    c = _coordinator(tolerable_failures=0)
    cid = _trigger(c)
    c.receive_acknowledge(cid, "src-1", "s1")
    assert c.on_task_finished("src-1") == []  # it acknowledged: nothing to do
    actions = c.on_task_finished("src-0")  # accepted the trigger while closing; the trigger never ran
    assert actions[:2] == [
        NotifyCheckpointAborted(cid, ALL, "task src-0 finished before acknowledging it"),
        DisposeCheckpoint(cid),
    ]
    assert not any(isinstance(a, FailJob) for a in actions)
    assert _history(c)[cid].status == "FAILED" and not c.pending
    nxt, why = c.trigger(10, tasks_to_trigger=("src-1",), tasks_to_ack=("src-1", "sink-0"))
    assert why == "" and isinstance(nxt[0], TriggerTasks)  # the next checkpoint is not held back


def _history(c: CheckpointCoordinator) -> dict[int, CheckpointStats]:
    return {s.checkpoint_id: s for s in c.stats.snapshot().history}
