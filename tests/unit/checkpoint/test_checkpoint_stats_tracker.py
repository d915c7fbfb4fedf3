"""The JobManager keeps bounded checkpoint statistics whatever a job's age (issue 31 §1, Flink's
``CheckpointStatsTracker``): exact counts, the latest of each kind, the last ``web.checkpoints.history`` in full."""

from __future__ import annotations

import sys

from strom.runtime.checkpoint.checkpoint_stats_tracker import SUMMARY_WINDOW, CheckpointStatsTracker, RestoredCheckpoint
from strom.runtime.checkpoint.coordinator import CheckpointStats


def _stats(cid: int, status: str) -> CheckpointStats:
    return CheckpointStats(
        checkpoint_id=cid,
        status=status,
        is_savepoint=False,
        trigger_timestamp_ms=cid * 1000,
        duration_ms=40 if status == "COMPLETED" else None,
        state_size=1 << 20 if status == "COMPLETED" else 0,
        subtasks={f"attempt-{i}": {"state_size": 1024.0, "sync_duration_ms": 1.0} for i in range(50)},
    )


def test_thousands_of_checkpoints_keep_the_same_few_entries() -> None:
    tracker = CheckpointStatsTracker(history_size=10)
    sizes = []
    for cid in range(1, 5001):
        tracker.report(_stats(cid, "IN_PROGRESS"))
        tracker.report(_stats(cid, "FAILED" if cid % 100 == 0 else "COMPLETED"))
        if cid in (2000, 5000):
            snapshot = tracker.snapshot()
            sizes.append(sum(sys.getsizeof(s.subtasks) for s in snapshot.history) + len(snapshot.summary_figures))
    snapshot = tracker.snapshot()
    assert snapshot.counts.total == 5000 and snapshot.counts.completed == 4950 and snapshot.counts.failed == 50
    assert snapshot.counts.in_progress == 0
    assert [s.checkpoint_id for s in snapshot.history] == list(range(4991, 5001))
    assert snapshot.latest_completed is not None and snapshot.latest_completed.checkpoint_id == 4999
    assert snapshot.latest_failed is not None and snapshot.latest_failed.checkpoint_id == 5000
    assert len(snapshot.summary_figures) == SUMMARY_WINDOW
    assert sizes[0] == sizes[1]  # the same memory after 2000 checkpoints as after 5000


def test_in_progress_checkpoints_count_and_a_restore_is_kept() -> None:
    tracker = CheckpointStatsTracker(history_size=2)
    for cid in (1, 2, 3):
        tracker.report(_stats(cid, "IN_PROGRESS"))
    tracker.report(_stats(1, "COMPLETED"))  # out of the history already, still counted when it ends
    tracker.report(_stats(1, "COMPLETED"))  # a duplicate end changes nothing
    tracker.report_restored(RestoredCheckpoint(1, 99, False, "file:///ckpt/chk-1"))
    snapshot = tracker.snapshot()
    assert (snapshot.counts.total, snapshot.counts.in_progress, snapshot.counts.completed) == (3, 2, 1)
    assert snapshot.counts.restored == 1 and snapshot.latest_restored == RestoredCheckpoint(
        1, 99, False, "file:///ckpt/chk-1"
    )
