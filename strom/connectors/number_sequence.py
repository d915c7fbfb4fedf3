"""``NumberSequenceSource``: the integers ``start..end`` (inclusive), split across subtasks.

Only the bounds travel: each subtask generates its own ranges, so a billion numbers cost nothing to
ship. With parallelism ``p`` the range is cut into ``p`` contiguous splits (as Flink's
``NumberSequenceSource``).
"""

from __future__ import annotations

from collections.abc import Sequence

from strom.api.source import Source, SourceReader, SourceReaderContext, SourceSplit
from strom.exceptions import InvalidProgramError

__all__ = ["NumberSequenceSource"]


class NumberSequenceSource(Source[int]):
    def __init__(self, start: int, end: int) -> None:
        if not isinstance(start, int) or not isinstance(end, int):
            raise InvalidProgramError(
                f"from_sequence expects two ints; got {start!r} and {end!r}; hint: from_sequence(1, 1000)"
            )
        if end < start:
            raise InvalidProgramError(
                f"from_sequence expects start <= end; got start={start}, end={end}; hint: the end is inclusive"
            )
        self.start = start
        self.end = end

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        total = self.end - self.start + 1
        splits = []
        for i in range(parallelism):
            lo = self.start + total * i // parallelism
            hi = self.start + total * (i + 1) // parallelism  # exclusive
            splits.append(SourceSplit(split_id=f"seq-{i}", payload=(lo, hi)))
        return splits

    def create_reader(self, context: SourceReaderContext) -> SourceReader[int]:
        return _SequenceReader(context.batch_size)


class _SequenceReader(SourceReader[int]):
    def __init__(self, batch_size: int) -> None:
        self.batch_size = batch_size
        self._ranges: list[list[int]] = []

    def add_splits(self, splits: Sequence[SourceSplit]) -> None:
        for split in splits:
            lo, hi = split.payload
            if lo < hi:
                self._ranges.append([lo, hi])

    def poll_batch(self) -> list[int] | None:
        while self._ranges:
            r = self._ranges[0]
            lo, hi = r
            if lo >= hi:
                self._ranges.pop(0)
                continue
            end = min(hi, lo + self.batch_size)
            r[0] = end
            return list(range(lo, end))
        return None
