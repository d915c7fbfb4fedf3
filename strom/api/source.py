"""The Source API (a static form of Flink's FLIP-27 sources).

A :class:`Source` cuts its input into :class:`SourceSplit` s when the job is scheduled
(``create_splits(parallelism)``, run by the JobMaster, as Flink's SplitEnumerator); each source
subtask gets the splits ``i`` with ``i % parallelism == subtask_index`` and reads them with a
:class:`SourceReader` created in its task. ``poll_batch`` returns a batch of records, an empty list
when nothing is available yet, or ``None`` once every split is exhausted (bounded sources).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = ["Boundedness", "Source", "SourceReader", "SourceReaderContext", "SourceSplit"]

T = TypeVar("T")


class Boundedness:
    BOUNDED = "BOUNDED"
    CONTINUOUS_UNBOUNDED = "CONTINUOUS_UNBOUNDED"


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceSplit:
    """One independently readable part of a source's input."""

    split_id: str
    payload: Any = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceReaderContext:
    subtask_index: int
    parallelism: int
    batch_size: int


class SourceReader(ABC, Generic[T]):
    @abstractmethod
    def add_splits(self, splits: Sequence[SourceSplit]) -> None: ...

    @abstractmethod
    def poll_batch(self) -> list[T] | None:
        """Up to ``context.batch_size`` records; ``[]`` = none available now; ``None`` = end of input."""

    def close(self) -> None:
        """Release resources; default does nothing."""


class Source(ABC, Generic[T]):
    """A source of records; subclasses are shipped to TaskManagers by cloudpickle."""

    #: a non-parallel source always runs with parallelism 1 (as Flink's ``fromCollection``)
    parallel: bool = True

    @property
    def boundedness(self) -> str:
        return Boundedness.BOUNDED

    @abstractmethod
    def create_splits(self, parallelism: int) -> Sequence[SourceSplit]: ...

    @abstractmethod
    def create_reader(self, context: SourceReaderContext) -> SourceReader[T]: ...
