"""The Sink API (Flink's ``Sink`` / ``SinkWriter``); ``DataStream.sink_to`` takes a :class:`Sink`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["Sink", "SinkWriter", "SinkWriterContext"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True, kw_only=True)
class SinkWriterContext:
    subtask_index: int
    parallelism: int
    attempt_number: int


class SinkWriter(ABC, Generic[T]):
    @abstractmethod
    def write(self, element: T) -> None: ...

    def write_batch(self, elements: list[T]) -> None:
        """Write a batch; override for speed (default calls :meth:`write` per element)."""
        write = self.write
        for e in elements:
            write(e)

    def flush(self, end_of_input: bool) -> None:
        """Flush buffered data; ``end_of_input`` is true once no more records will come."""

    def close(self) -> None:
        """Release resources."""


class Sink(ABC, Generic[T]):
    @abstractmethod
    def create_writer(self, context: SinkWriterContext) -> SinkWriter[T]: ...
