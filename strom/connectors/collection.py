"""``CollectionSource``: the elements of a Python collection, in order, from one subtask."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from strom.api.source import Source, SourceReader, SourceReaderContext, SourceSplit

__all__ = ["CollectionSource"]

T = TypeVar("T")


class CollectionSource(Source[T], Generic[T]):
    """Non-parallel (as Flink's ``fromCollection``): the whole list is one split shipped to one subtask."""

    parallel = False

    def __init__(self, elements: Sequence[T]) -> None:
        self.elements = list(elements)

    def create_splits(self, parallelism: int) -> list[SourceSplit]:
        return [SourceSplit(split_id="collection-0", payload=self.elements)]

    def create_reader(self, context: SourceReaderContext) -> SourceReader[T]:
        return _CollectionReader(context.batch_size)


class _CollectionReader(SourceReader[Any]):
    def __init__(self, batch_size: int) -> None:
        self.batch_size = batch_size
        self._elements: list[Any] = []
        self._pos = 0

    def add_splits(self, splits: Sequence[SourceSplit]) -> None:
        for split in splits:
            self._elements.extend(split.payload)

    def poll_batch(self) -> list[Any] | None:
        if self._pos >= len(self._elements):
            return None
        end = self._pos + self.batch_size
        batch = self._elements[self._pos : end]
        self._pos = end
        return batch
