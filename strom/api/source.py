"""The Source API (a static form of Flink's FLIP-27 sources).

A :class:`Source` cuts its input into :class:`SourceSplit` s when the job is scheduled
(``create_splits(parallelism)``, run by the JobMaster, as Flink's SplitEnumerator); each source
subtask gets the splits ``i`` with ``i % parallelism == subtask_index`` and reads them with a
:class:`SourceReader` created in its task. ``poll_batch`` returns a batch of records, an empty list
when nothing is available yet, or ``None`` once every split is exhausted (bounded sources).

Checkpointing (FLIP-27's ``SourceReader#snapshotState``): at every checkpoint the task asks its reader for
``snapshot_state(checkpoint_id)`` — the splits it has not finished, each carrying its *current position*
in its payload. The runtime pickles them into the checkpoint. A restored subtask gets a fresh reader and
hands it those splits through ``add_splits``; the reader continues right after the last record it returned
before the snapshot, so no record is lost or read twice. The snapshot is taken on the task thread between
two ``poll_batch`` calls, so a reader needs no locking; it must return copies that later reads do not
change (a frozen :class:`SourceSplit` with an immutable payload).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from strom.exceptions import InvalidProgramError

__all__ = ["Boundedness", "Source", "SourceReader", "SourceReaderContext", "SourceSplit"]

T = TypeVar("T")


class Boundedness:
    BOUNDED = "BOUNDED"
    CONTINUOUS_UNBOUNDED = "CONTINUOUS_UNBOUNDED"


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceSplit:
    """One independently readable part of a source's input.

    The ``payload`` says where reading starts: a split made by ``create_splits`` starts at the beginning, one
    returned by ``SourceReader.snapshot_state`` at the reader's position. Splits are pickled into deployment
    descriptors and checkpoints, so keep payloads small and immutable (offsets, ranges, file positions).
    """

    split_id: str
    payload: Any = None


@dataclass(slots=True, kw_only=True)
class SourceReaderContext:
    """What a reader knows of its subtask. ``batch_size`` is the most records the next ``poll_batch`` should
    return: at most ``execution.batch-size``, lowered by the runtime when records are large so that a batch
    stays within ``execution.batch-bytes``. Read it at every poll."""

    subtask_index: int
    parallelism: int
    batch_size: int


class SourceReader(ABC, Generic[T]):
    """Reads the splits of one source subtask (FLIP-27's ``SourceReader``), on the task thread."""

    @abstractmethod
    def add_splits(self, splits: Sequence[SourceSplit]) -> None:
        """Splits to read: those assigned at scheduling, or those of ``snapshot_state`` on restore."""

    @abstractmethod
    def poll_batch(self) -> list[T] | None:
        """Up to ``context.batch_size`` records (read it at every call: it follows the records' size); ``[]`` =
        none available now; ``None`` = end of input."""

    def snapshot_state(self, checkpoint_id: int) -> list[SourceSplit]:
        """The splits not yet finished, each with its current position, as immutable copies.

        Readers that do not override this work as before but cannot take part in checkpoints.
        """
        raise InvalidProgramError(
            f"expected the source reader {type(self).__qualname__} to implement snapshot_state(checkpoint_id) "
            "for checkpointing; got none; hint: return the unfinished splits with their current positions "
            "(see strom.connectors.NumberSequenceSource), or run the job without checkpointing"
        )

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
