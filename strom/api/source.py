"""The Source API: Flink's unified sources (FLIP-27).

A :class:`Source` has two halves. Its :class:`SplitEnumerator` runs on the JobManager, in the JobMaster's
event loop (one per source operator, inside the source's operator coordinator): it discovers
:class:`SourceSplit` s and assigns them to the source subtasks (``SplitEnumeratorContext.assign_split``), when
a reader registers (``add_reader``) or asks for one (``handle_split_request``), and it may keep discovering
new splits (``call_async``, e.g. a directory listed periodically). Each source subtask reads its splits with a
:class:`SourceReader` created in its task; ``poll_batch`` returns a batch of records, an empty list when
nothing is available yet, or ``None`` once every split it has is exhausted *and* the enumerator said no more
will come (``notify_no_more_splits``).

A source that only implements ``create_splits(parallelism)`` gets a :class:`StaticSplitEnumerator` (Flink's
fixed-list enumerators): subtask ``i`` is given the splits ``k`` with ``k % parallelism == i`` when it
registers, then "no more splits".

Checkpointing. On a checkpoint the coordinator first snapshots the enumerator (``snapshot_state``: the
splits it has not assigned, and whatever it needs to go on, such as the paths already seen); then the source
subtasks snapshot their readers (``SourceReader.snapshot_state``: the splits they have not finished, each with
its *current position* in its payload). The JobMaster sends split assignments and checkpoint triggers to a
subtask in order, so every split is in exactly one of the two snapshots. A restored job restores the
enumerator from its snapshot (``Source.restore_enumerator``, at any parallelism) and each reader from its
share of the readers' splits (redistributed on rescale); splits assigned after the restored checkpoint are
given back to the enumerator (``add_splits_back``) before the readers register again. So no record is lost or
read twice. Reader snapshots are taken on the task thread between two ``poll_batch`` calls, so a reader needs
no locking; it must return copies that later reads do not change (a frozen :class:`SourceSplit` with an
immutable payload). Enumerator methods run on the JobManager's event loop and must not block: blocking work
(listing a bucket) goes through ``SplitEnumeratorContext.call_async``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from strom.exceptions import InvalidProgramError

__all__ = [
    "Boundedness",
    "ReaderInfo",
    "Source",
    "SourceEvent",
    "SourceReader",
    "SourceReaderContext",
    "SourceSplit",
    "SplitEnumerator",
    "SplitEnumeratorContext",
    "StaticSplitEnumerator",
]

T = TypeVar("T")
SplitT = TypeVar("SplitT")
CheckpointT = TypeVar("CheckpointT")


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


class SourceEvent:
    """A custom event between a source's enumerator and its readers (Flink's ``SourceEvent``); subclass it as a
    frozen dataclass. Events are pickled."""


def _unconnected(*args: Any) -> None:
    raise InvalidProgramError(
        "expected a source reader running in a source subtask to talk to its enumerator; got a reader context "
        "that is not connected (a reader created outside a job); hint: pass callbacks to SourceReaderContext "
        "in tests"
    )


@dataclass(slots=True, kw_only=True)
class SourceReaderContext:
    """What a reader knows of its subtask, and its line to the enumerator (Flink's ``SourceReaderContext``).

    ``batch_size`` is the most records the next ``poll_batch`` should return: at most ``execution.batch-size``,
    lowered by the runtime when records are large so that a batch stays within ``execution.batch-bytes``. Read
    it at every poll."""

    subtask_index: int
    parallelism: int
    batch_size: int
    #: the TaskManager's host (Flink's ``getLocalHostName``), sent with split requests
    local_host_name: str = "localhost"
    #: set by the SourceOperator: sends a split request / a SourceEvent to the enumerator (non-blocking)
    split_request_sender: Callable[[], None] = _unconnected
    source_event_sender: Callable[[SourceEvent], None] = _unconnected
    #: set by the SourceOperator: ``(tag_id, records)`` to a side output of the source (rejected input)
    side_output_emitter: Callable[[str, list[Any]], None] = _unconnected
    #: set by the SourceOperator when the stream has a WatermarkStrategy: a reader of several splits calls
    #: these with a split's id when the split is added / finished, and returns ``SplitBatch`` batches naming
    #: each record's split (Flink's ``ReaderOutput.createOutputForSplit`` / ``releaseOutputForSplit``):
    #: watermarks are then generated per split and the stream's is their minimum (idle splits left out)
    create_output_for_split: Callable[[Any], None] | None = None
    release_output_for_split: Callable[[Any], None] | None = None

    def send_split_request(self) -> None:
        """Ask the enumerator for a split (its ``handle_split_request`` runs on the JobManager); the answer
        arrives as ``add_splits`` or ``notify_no_more_splits`` on the task thread, between polls."""
        self.split_request_sender()

    def send_source_event_to_coordinator(self, event: SourceEvent) -> None:
        self.source_event_sender(event)

    def emit_side_output(self, tag: Any, records: list[Any]) -> None:
        """Records to the side output ``tag`` (an ``OutputTag``) of the source's stream, e.g. lines a format
        could not parse; ``stream.get_side_output(tag)`` reads them."""
        if records:
            self.side_output_emitter(getattr(tag, "tag_id", tag), records)

    def current_parallelism(self) -> int:
        return self.parallelism

    def get_index_of_subtask(self) -> int:
        return self.subtask_index


class SourceReader(ABC, Generic[T]):
    """Reads the splits of one source subtask (FLIP-27's ``SourceReader``), on the task thread."""

    def start(self) -> None:
        """Called once, after the restored splits (if any) were added: a reader that pulls its splits sends its
        first ``context.send_split_request()`` here."""

    @abstractmethod
    def add_splits(self, splits: Sequence[SourceSplit]) -> None:
        """Splits to read: assigned by the enumerator, or those of ``snapshot_state`` on restore."""

    def notify_no_more_splits(self) -> None:
        """The enumerator will assign no more splits to this reader: once its splits are done, ``poll_batch``
        returns ``None``. (A reader that returns ``None`` earlier is polled again until this was called.)"""

    def handle_source_events(self, event: SourceEvent) -> None:
        """A custom event from the enumerator (``SplitEnumeratorContext.send_event_to_source_reader``)."""

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

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """The checkpoint ``checkpoint_id`` completed; default does nothing."""

    def close(self) -> None:
        """Release resources; default does nothing."""


@dataclass(frozen=True, slots=True)
class ReaderInfo:
    """A registered reader (Flink's ``ReaderInfo``)."""

    subtask_id: int
    location: str


class SplitEnumeratorContext(ABC):
    """The enumerator's view of its job (Flink's ``SplitEnumeratorContext``); every method is called on the
    JobManager's event loop, and ``call_async`` handlers run there too."""

    @abstractmethod
    def current_parallelism(self) -> int: ...

    @abstractmethod
    def registered_readers(self) -> dict[int, ReaderInfo]:
        """The readers registered now (subtask index → info); a failed subtask's reader is gone until its next
        attempt registers."""

    @abstractmethod
    def assign_split(self, split: SourceSplit, subtask_id: int) -> None:
        """Give ``split`` to the reader of ``subtask_id`` (which must be registered)."""

    def assign_splits(self, assignment: dict[int, list[SourceSplit]]) -> None:
        for subtask_id, splits in assignment.items():
            for split in splits:
                self.assign_split(split, subtask_id)

    @abstractmethod
    def signal_no_more_splits(self, subtask_id: int) -> None:
        """Tell the reader of ``subtask_id`` that it gets no more splits (a bounded source then finishes)."""

    @abstractmethod
    def send_event_to_source_reader(self, subtask_id: int, event: SourceEvent) -> None: ...

    @abstractmethod
    def call_async(
        self,
        callable_: Callable[[], Any],
        handler: Callable[[Any, BaseException | None], None],
        initial_delay_ms: int = 0,
        period_ms: int = 0,
    ) -> None:
        """Run ``callable_`` in a worker thread (blocking I/O: listing a directory), then ``handler(result,
        error)`` on the event loop; with ``period_ms > 0`` again every ``period_ms`` until the enumerator closes.
        An exception the handler raises fails the job."""

    @abstractmethod
    def run_in_coordinator_thread(self, runnable: Callable[[], None]) -> None: ...


class SplitEnumerator(ABC, Generic[SplitT, CheckpointT]):
    """Discovers splits and assigns them to readers (Flink's ``SplitEnumerator``), on the JobManager."""

    def start(self) -> None:
        """Called once before any reader registers: start periodic discovery here (``call_async``)."""

    @abstractmethod
    def handle_split_request(self, subtask_id: int, requester_hostname: str | None) -> None: ...

    @abstractmethod
    def add_splits_back(self, splits: list[SplitT], subtask_id: int) -> None:
        """Splits assigned to ``subtask_id`` since the checkpoint its new attempt restores: assign them again."""

    @abstractmethod
    def add_reader(self, subtask_id: int) -> None:
        """The reader of ``subtask_id`` registered (its first, or a new attempt's)."""

    @abstractmethod
    def snapshot_state(self, checkpoint_id: int) -> CheckpointT:
        """The enumerator's state for checkpoint ``checkpoint_id`` (pickled into the checkpoint); it must not
        change afterwards (return a copy)."""

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Checkpoint ``checkpoint_id`` completed (not called for savepoints); an enumerator with nothing to
        confirm ignores it, as by default."""

    def handle_source_event(self, subtask_id: int, event: SourceEvent) -> None:
        """A custom event from the reader of ``subtask_id``; ignored by default (readers of most sources send
        none)."""

    def close(self) -> None:
        """The job ended: stop background work; by default there is none (``call_async`` tasks are cancelled by
        the context)."""


class StaticSplitEnumerator(SplitEnumerator[SourceSplit, list[SourceSplit]]):
    """Hands out a fixed list of splits: the default enumerator of a source that implements only
    ``create_splits`` (Flink's fixed-list enumerators, as ``IteratorSourceEnumerator``).

    Split ``k`` of the list belongs to subtask ``k % parallelism``; a reader gets its splits when it registers,
    then "no more splits". Splits given back after a failure go to the same subtask's next attempt. Its
    checkpoint is the list of splits not yet assigned, redistributed the same way on restore (at any
    parallelism)."""

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


class Source(ABC, Generic[T]):
    """A source of records; subclasses are shipped to the JobManager and TaskManagers by cloudpickle.

    Implement either ``create_splits`` (a fixed list, assigned round-robin) or ``create_enumerator`` and
    ``restore_enumerator`` (Flink's FLIP-27 pair); and ``create_reader``."""

    #: a non-parallel source always runs with parallelism 1 (as Flink's ``fromCollection``)
    parallel: bool = True

    @property
    def boundedness(self) -> str:
        return Boundedness.BOUNDED

    def get_boundedness(self) -> str:
        return self.boundedness

    def create_splits(self, parallelism: int) -> Sequence[SourceSplit]:
        """The source's input as a fixed list of splits (used by the default ``create_enumerator``)."""
        raise InvalidProgramError(
            f"expected the source {type(self).__qualname__} to implement create_splits(parallelism) or "
            "create_enumerator(context); got neither"
        )

    def create_enumerator(self, context: SplitEnumeratorContext) -> SplitEnumerator[Any, Any]:
        """A new enumerator; the default hands out ``create_splits(parallelism)`` statically."""
        return StaticSplitEnumerator(context, list(self.create_splits(context.current_parallelism())))

    def restore_enumerator(self, context: SplitEnumeratorContext, checkpoint: Any) -> SplitEnumerator[Any, Any]:
        """An enumerator restored from its ``snapshot_state`` of a checkpoint (maybe at another parallelism)."""
        return StaticSplitEnumerator.restore(context, checkpoint)

    @abstractmethod
    def create_reader(self, context: SourceReaderContext) -> SourceReader[T]: ...

    def validate(self) -> None:
        """Called in the client by ``execute()``, before any cluster starts: raise a ``StromError`` for input
        that cannot be read (a path that does not exist, a URL scheme without its fsspec package)."""
