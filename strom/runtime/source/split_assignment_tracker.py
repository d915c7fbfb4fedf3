"""``SplitAssignmentTracker``: which splits the enumerator assigned to which subtask, per checkpoint (Flink's
class of that name). A pure state machine, no I/O.

Assignments accumulate as *uncheckpointed*; when the coordinator is snapshotted for checkpoint ``n`` they are
filed under ``n`` (the readers will have them in their snapshots of ``n``: the JobMaster delivers the trigger
after them). When ``n`` completes, everything filed up to ``n`` is dropped: a restore from ``n`` or later finds
those splits in the readers' state. When a subtask restarts from checkpoint ``c``, the splits assigned to it
after ``c`` — filed under a later checkpoint, or not yet filed — are neither in the enumerator's state nor in
the reader's: they are handed back to the enumerator (``add_splits_back``).
"""

from __future__ import annotations

from typing import Generic, TypeVar

__all__ = ["SplitAssignmentTracker"]

SplitT = TypeVar("SplitT")


class SplitAssignmentTracker(Generic[SplitT]):
    def __init__(self) -> None:
        #: checkpoint id -> subtask -> splits assigned before that checkpoint's coordinator snapshot
        self.assignments_by_checkpoint: dict[int, dict[int, list[SplitT]]] = {}
        #: subtask -> splits assigned since the last coordinator snapshot
        self.uncheckpointed: dict[int, list[SplitT]] = {}

    def record_split_assignment(self, assignment: dict[int, list[SplitT]]) -> None:
        for subtask, splits in assignment.items():
            if splits:
                self.uncheckpointed.setdefault(subtask, []).extend(splits)

    def on_checkpoint(self, checkpoint_id: int) -> None:
        """The coordinator is snapshotted for ``checkpoint_id``: file what was assigned since the last one."""
        if checkpoint_id in self.assignments_by_checkpoint:
            raise ValueError(f"expected a new checkpoint id; got {checkpoint_id} a second time")
        if self.assignments_by_checkpoint and checkpoint_id < max(self.assignments_by_checkpoint):
            raise ValueError(
                f"expected increasing checkpoint ids; got {checkpoint_id} after {max(self.assignments_by_checkpoint)}"
            )
        self.assignments_by_checkpoint[checkpoint_id] = self.uncheckpointed
        self.uncheckpointed = {}

    def on_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Checkpoint ``checkpoint_id`` completed: assignments filed up to it are in durable reader state."""
        for cid in [c for c in self.assignments_by_checkpoint if c <= checkpoint_id]:
            del self.assignments_by_checkpoint[cid]

    def get_and_remove_uncheckpointed_assignment(
        self, subtask: int, restored_checkpoint_id: int | None
    ) -> list[SplitT]:
        """The splits of ``subtask`` that a restart from ``restored_checkpoint_id`` (``None``: from no
        checkpoint, a fresh start) loses, oldest first; they are forgotten here (the enumerator gets them back)."""
        out: list[SplitT] = []
        for cid in sorted(self.assignments_by_checkpoint):
            if restored_checkpoint_id is None or cid > restored_checkpoint_id:
                out.extend(self.assignments_by_checkpoint[cid].pop(subtask, ()))
        out.extend(self.uncheckpointed.pop(subtask, ()))
        return out

    def validate(self) -> None:
        for by_subtask in (*self.assignments_by_checkpoint.values(), self.uncheckpointed):
            for subtask in by_subtask:
                if subtask < 0:
                    raise AssertionError(f"negative subtask index {subtask}")
