"""``CollectionSource``: the elements of a Python collection, in order, from one subtask.

The elements stay in the source object, which travels to the TaskManager inside the source operator; the
one split only carries an offset into them, so a checkpoint stores a number, not the collection.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from strom.api.source import Source, SourceReader, SourceReaderContext, SourceSplit
from strom.exceptions import InvalidProgramError

__all__ = ["CollectionSource"]

T = TypeVar("T")

_SPLIT_ID = "collection-0"


class CollectionSource(Source[T], Generic[T]):
    """Non-parallel (as Flink's ``fromCollection``): one split, read by one subtask. Its payload is the offset
    of the next element to read, so a restored job continues after the last element emitted before the
    checkpoint."""

    parallel = False

    def __init__(self, elements: Sequence[T]) -> None:
        self.elements = list(elements)

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        return [SourceSplit(split_id=_SPLIT_ID, payload=0)]

    def create_reader(self, context: SourceReaderContext) -> SourceReader[T]:
        return _CollectionReader(self.elements, context)


class _CollectionReader(SourceReader[Any]):
    def __init__(self, elements: list[Any], context: SourceReaderContext) -> None:
        self._context = context  # its batch_size follows the size of the records
        self._elements = elements
        self._pending: list[tuple[str, int]] = []
        """(split id, offset of the next element) of the splits not yet finished, first one being read."""

    def add_splits(self, splits: Sequence[SourceSplit]) -> None:
        for split in splits:
            offset = split.payload
            if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= len(self._elements):
                raise InvalidProgramError(
                    f"expected a CollectionSource split holding an offset in [0, {len(self._elements)}]; "
                    f"got {type(offset).__name__} {offset!r:.60} in split {split.split_id!r}; hint: restore with "
                    "the same collection the checkpoint was taken with"
                )
            if offset < len(self._elements):
                self._pending.append((split.split_id, offset))

    def poll_batch(self) -> list[Any] | None:
        if not self._pending:
            return None
        split_id, offset = self._pending[0]
        end = min(offset + self._context.batch_size, len(self._elements))
        batch = self._elements[offset:end]
        if end >= len(self._elements):
            self._pending.pop(0)
        else:
            self._pending[0] = (split_id, end)
        return batch

    def snapshot_state(self, checkpoint_id: int) -> list[SourceSplit]:
        return [SourceSplit(split_id=split_id, payload=offset) for split_id, offset in self._pending]
