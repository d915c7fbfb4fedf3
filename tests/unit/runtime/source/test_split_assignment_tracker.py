"""The SplitAssignmentTracker decides which splits a restarted subtask loses — those neither in the restored
enumerator state nor in its reader's state — so a split is read exactly once across failures."""

from __future__ import annotations

import pytest

from strom.runtime.source.split_assignment_tracker import SplitAssignmentTracker


def test_a_restart_from_a_checkpoint_gets_back_only_what_was_assigned_after_it() -> None:
    t: SplitAssignmentTracker[str] = SplitAssignmentTracker()
    t.record_split_assignment({0: ["a"], 1: ["b"]})
    t.on_checkpoint(1)
    t.record_split_assignment({0: ["c"]})
    t.on_checkpoint(2)
    t.record_split_assignment({0: ["d"], 1: ["e"]})
    t.validate()
    # restoring checkpoint 1: "a" is in subtask 0's reader state; "c" (filed under 2) and "d" are not
    assert t.get_and_remove_uncheckpointed_assignment(0, 1) == ["c", "d"]
    assert t.get_and_remove_uncheckpointed_assignment(0, 1) == []  # handed back once
    assert t.get_and_remove_uncheckpointed_assignment(1, 1) == ["e"]
    t.validate()


def test_a_completed_checkpoint_drops_what_it_covers_and_a_restart_from_nothing_gets_everything_else() -> None:
    t: SplitAssignmentTracker[str] = SplitAssignmentTracker()
    t.record_split_assignment({0: ["a"]})
    t.on_checkpoint(1)
    t.record_split_assignment({0: ["b"]})
    t.on_checkpoint(2)  # aborted later: its assignments stay until a later checkpoint completes
    t.record_split_assignment({0: ["c"]})
    t.on_checkpoint_complete(1)
    assert t.assignments_by_checkpoint.keys() == {2}
    assert t.get_and_remove_uncheckpointed_assignment(0, None) == ["b", "c"]


def test_checkpoint_ids_only_grow() -> None:
    t: SplitAssignmentTracker[str] = SplitAssignmentTracker()
    t.on_checkpoint(3)
    with pytest.raises(ValueError, match="increasing"):
        t.on_checkpoint(2)
    with pytest.raises(ValueError, match="second time"):
        t.on_checkpoint(3)
