"""``SplitAssignmentTracker``: which splits went to which subtask since which checkpoint (Flink's class of that
name). Pure: the SourceCoordinator drives it on the JobManager's event loop.

Assignments are *uncheckpointed* until the coordinator's next snapshot, which files them under that checkpoint
id. A completed checkpoint makes everything filed at or before it permanent (the readers' own snapshots of that
checkpoint hold those splits). When a subtask restarts from checkpoint ``c`` (``None``: from no checkpoint), the
splits assigned to it after ``c``'s snapshot — filed under later checkpoints or not filed at all — are what its
new attempt will not restore, and go back to the enumerator.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SplitAssignmentTracker"]


class SplitAssignmentTracker:
    def __init__(self) -> None:
        self._by_checkpoint: dict[int, dict[int, list[Any]]] = {}
        self._uncheckpointed: dict[int, list[Any]] = {}

    def record_assignment(self, subtask_id: int, splits: list[Any]) -> None:
        self._uncheckpointed.setdefault(subtask_id, []).extend(splits)

    def on_checkpoint(self, checkpoint_id: int) -> None:
        """The coordinator's snapshot for ``checkpoint_id`` was taken: file the uncheckpointed assignments."""
        if self._uncheckpointed:
            self._by_checkpoint[checkpoint_id] = self._uncheckpointed
            self._uncheckpointed = {}

    def on_checkpoint_complete(self, checkpoint_id: int) -> None:
        for cid in [c for c in self._by_checkpoint if c <= checkpoint_id]:
            del self._by_checkpoint[cid]

    def get_and_remove_uncheckpointed_assignment(
        self, subtask_id: int, restored_checkpoint_id: int | None
    ) -> list[Any]:
        """The splits assigned to ``subtask_id`` after the snapshot of ``restored_checkpoint_id``, oldest first."""
        out: list[Any] = []
        for cid in sorted(self._by_checkpoint):
            if restored_checkpoint_id is None or cid > restored_checkpoint_id:
                out.extend(self._by_checkpoint[cid].pop(subtask_id, ()))
        out.extend(self._uncheckpointed.pop(subtask_id, ()))
        for cid in [c for c, m in self._by_checkpoint.items() if not m]:
            del self._by_checkpoint[cid]
        return out
