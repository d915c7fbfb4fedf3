"""``NumberSequenceSource``: the integers ``start..end`` (inclusive), split across subtasks.

Only the bounds travel: each subtask generates its own ranges, so a billion numbers cost nothing to
ship. With parallelism ``p`` the range is cut into ``p`` contiguous splits (as Flink's
``NumberSequenceSource``).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Generic, TypeVar

from strom.api.source import Source, SourceReader, SourceReaderContext, SourceSplit
from strom.exceptions import InvalidProgramError

__all__ = ["NumberSequenceSource"]

T = TypeVar("T")


class NumberSequenceSource(Source[int]):
    """The integers ``start..end`` (inclusive) in ``parallelism`` contiguous splits; each split's payload is
    the range ``(next, stop)`` still to read, which ``snapshot_state`` returns at every checkpoint."""

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
        return contiguous_range_splits("seq", self.start, self.end + 1, parallelism)

    def create_reader(self, context: SourceReaderContext) -> SourceReader[int]:
        return _SequenceReader(context)


def contiguous_range_splits(prefix: str, start: int, stop: int, parallelism: int) -> list[SourceSplit]:
    """``[start, stop)`` cut into ``parallelism`` contiguous splits ``<prefix>-<i>`` with payload ``(lo, hi)``."""
    total = stop - start
    return [
        SourceSplit(
            split_id=f"{prefix}-{i}",
            payload=(start + total * i // parallelism, start + total * (i + 1) // parallelism),
        )
        for i in range(parallelism)
    ]


class IndexRangeReader(SourceReader[T], Generic[T]):
    """Reads splits whose payload is a range ``(lo, hi)`` of indices, in order; ``snapshot_state`` returns the
    unread rest of each range. Subclasses turn ``[lo, end)`` into records (:meth:`produce`) and may cap a
    batch below ``batch_size`` (:meth:`available`)."""

    def __init__(self, context: SourceReaderContext) -> None:
        self._context = context
        self._ranges: list[tuple[str, int, int]] = []
        """(split id, next index, end index) of the unfinished splits; the first is being read."""

    def add_splits(self, splits: Sequence[SourceSplit]) -> None:
        for split in splits:
            payload = split.payload
            if (
                not isinstance(payload, tuple | list)
                or len(payload) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in payload)
            ):
                raise InvalidProgramError(
                    f"expected a split payload (lo, hi) of two ints; got {payload!r:.80} in split "
                    f"{split.split_id!r}; hint: splits come from the source's create_splits or snapshot_state"
                )
            lo, hi = payload
            if lo < hi:
                self._ranges.append((split.split_id, lo, hi))

    @property
    def batch_size(self) -> int:
        """Records of the next batch at most: the context's, which follows the size of the records."""
        return self._context.batch_size

    def poll_batch(self) -> list[T] | None:
        if not self._ranges:
            return None
        limit = min(self.batch_size, self.available())
        if limit <= 0:
            return []
        split_id, lo, hi = self._ranges[0]
        end = min(hi, lo + limit)
        batch = self.produce(lo, end)
        if end >= hi:
            self._ranges.pop(0)
        else:
            self._ranges[0] = (split_id, end, hi)
        self.emitted(end - lo)
        return batch

    def snapshot_state(self, checkpoint_id: int) -> list[SourceSplit]:
        return [SourceSplit(split_id=split_id, payload=(lo, hi)) for split_id, lo, hi in self._ranges]

    @abstractmethod
    def produce(self, lo: int, end: int) -> list[T]:
        """The records of indices ``[lo, end)``."""

    def available(self) -> int:
        """How many records may be read now; default: no limit."""
        return self.batch_size

    def emitted(self, n: int) -> None:
        """``n`` more records were returned."""


class _SequenceReader(IndexRangeReader[int]):
    def produce(self, lo: int, end: int) -> list[int]:
        return list(range(lo, end))
