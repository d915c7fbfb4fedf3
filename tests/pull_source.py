"""``PullSource``: a FLIP-27 test source whose enumerator hands out many small splits *on request* — each reader
pulls one split at a time (``send_split_request`` at start and whenever it finished one), as Flink's file source
does. Split ``k`` holds the integers ``[k * split_size, (k + 1) * split_size)``; a reader's position (the next
integer of its split) is checkpointed, and so is the enumerator's list of unassigned splits.

Importable from every test directory (``pythonpath`` in pyproject.toml); the lead reuses it."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from strom.api.source import (
    Source,
    SourceReader,
    SourceReaderContext,
    SourceSplit,
    SplitEnumerator,
    SplitEnumeratorContext,
)


def split_of(k: int, split_size: int) -> SourceSplit:
    return SourceSplit(split_id=f"pull-{k}", payload=(k * split_size, (k + 1) * split_size))


class PullEnumerator(SplitEnumerator[SourceSplit, list[SourceSplit]]):
    def __init__(self, context: SplitEnumeratorContext, remaining: list[SourceSplit]) -> None:
        self.context = context
        self.remaining = remaining
        self.requests = 0

    def handle_split_request(self, subtask_id: int, requester_hostname: str | None) -> None:
        self.requests += 1
        if self.remaining:
            self.context.assign_split(self.remaining.pop(0), subtask_id)
        else:
            self.context.signal_no_more_splits(subtask_id)

    def add_splits_back(self, splits: list[SourceSplit], subtask_id: int) -> None:
        self.remaining[:0] = splits

    def add_reader(self, subtask_id: int) -> None:
        pass  # the reader asks

    def snapshot_state(self, checkpoint_id: int) -> list[SourceSplit]:
        return list(self.remaining)


class PullReader(SourceReader[int]):
    def __init__(self, context: SourceReaderContext, per_poll: int, poll_sleep_s: float) -> None:
        self.context = context
        self.per_poll = per_poll
        self.poll_sleep_s = poll_sleep_s
        self.splits: list[tuple[str, int, int]] = []  # (split id, next, end); the first is being read
        self.no_more = False

    def start(self) -> None:
        if not self.splits:
            self.context.send_split_request()

    def add_splits(self, splits: Sequence[SourceSplit]) -> None:
        for s in splits:
            lo, hi = s.payload
            self.splits.append((s.split_id, lo, hi))

    def notify_no_more_splits(self) -> None:
        self.no_more = True

    def poll_batch(self) -> list[int] | None:
        if not self.splits:
            return None if self.no_more else []
        split_id, lo, hi = self.splits[0]
        n = min(self.per_poll, self.context.batch_size, hi - lo)
        if self.poll_sleep_s:
            time.sleep(self.poll_sleep_s)
        if lo + n >= hi:
            self.splits.pop(0)
            if not self.splits and not self.no_more:
                self.context.send_split_request()
        else:
            self.splits[0] = (split_id, lo + n, hi)
        return list(range(lo, lo + n))

    def snapshot_state(self, checkpoint_id: int) -> list[SourceSplit]:
        return [SourceSplit(split_id=i, payload=(lo, hi)) for i, lo, hi in self.splits]


class PullSource(Source[int]):
    """``num_splits`` splits of ``split_size`` integers, pulled one at a time; ``per_poll`` records per poll,
    ``poll_sleep_s`` of sleep in each (to keep a job running long enough to checkpoint or kill it mid-read).
    ``require_restored_state``: restoring without enumerator state fails (proves the state was restored)."""

    def __init__(
        self,
        num_splits: int,
        split_size: int,
        *,
        per_poll: int = 1024,
        poll_sleep_s: float = 0.0,
        require_restored_state: bool = False,
    ) -> None:
        self.num_splits = num_splits
        self.split_size = split_size
        self.per_poll = per_poll
        self.poll_sleep_s = poll_sleep_s
        self.require_restored_state = require_restored_state

    def expected(self) -> list[int]:
        return list(range(self.num_splits * self.split_size))

    def create_enumerator(self, context: SplitEnumeratorContext) -> PullEnumerator:
        return PullEnumerator(context, [split_of(k, self.split_size) for k in range(self.num_splits)])

    def restore_enumerator(self, context: SplitEnumeratorContext, checkpoint: Any) -> PullEnumerator:
        if checkpoint is None:
            if self.require_restored_state:
                raise AssertionError("expected the enumerator's state in the checkpoint; got none")
            return self.create_enumerator(context)
        return PullEnumerator(context, list(checkpoint))

    def create_reader(self, context: SourceReaderContext) -> PullReader:
        return PullReader(context, self.per_poll, self.poll_sleep_s)
