"""``StaticSplitEnumerator``: hands out a fixed list of splits (the enumerator of ``create_splits`` sources).

Split ``k`` of the list belongs to subtask ``k % parallelism``; a reader gets its splits when it registers,
then "no more splits". Splits given back after a failure go to the same subtask's next attempt. Its
checkpoint is the list of splits not yet assigned, redistributed the same way on restore (at any parallelism).
"""

from __future__ import annotations

from typing import Any

from strom.api.source import SourceSplit, SplitEnumerator, SplitEnumeratorContext

__all__ = ["StaticSplitEnumerator"]


class StaticSplitEnumerator(SplitEnumerator[SourceSplit, list[SourceSplit]]):
    def __init__(self, context: SplitEnumeratorContext, splits: list[SourceSplit]) -> None:
        self.context = context
        p = max(context.current_parallelism(), 1)
        self.pending: dict[int, list[SourceSplit]] = {}
        for k, split in enumerate(splits):
            self.pending.setdefault(k % p, []).append(split)

    @classmethod
    def restore(cls, context: SplitEnumeratorContext, checkpoint: Any) -> StaticSplitEnumerator:
        return cls(context, list(checkpoint or ()))

    def add_reader(self, subtask_id: int) -> None:
        for split in self.pending.pop(subtask_id, ()):
            self.context.assign_split(split, subtask_id)
        self.context.signal_no_more_splits(subtask_id)

    def handle_split_request(self, subtask_id: int, requester_hostname: str | None) -> None:
        """Nothing to do: a reader gets all its splits when it registers."""

    def add_splits_back(self, splits: list[SourceSplit], subtask_id: int) -> None:
        self.pending.setdefault(subtask_id, []).extend(splits)

    def snapshot_state(self, checkpoint_id: int) -> list[SourceSplit]:
        return [split for subtask in sorted(self.pending) for split in self.pending[subtask]]
