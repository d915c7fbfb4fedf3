"""The Sink API (Flink's Sink V2); ``DataStream.sink_to`` takes a :class:`Sink`.

A plain :class:`Sink` creates one :class:`SinkWriter` per subtask. Two refinements give exactly-once output:

* a :class:`StatefulSinkWriter` hands its state to every checkpoint (``snapshot_state``) and gets it back
  through :meth:`Sink.restore_writer` after a failure or a rescale;
* a :class:`TwoPhaseCommittingSink` writes through a :class:`PrecommittingSinkWriter`: at each checkpoint
  the writer *pre-commits* what it wrote so far (``prepare_commit`` returns committables, e.g. closed but
  still hidden files), the committables travel in the checkpoint, and only once that checkpoint is complete
  does the :class:`Committer` make them visible (e.g. rename the files). After a failure the committables of
  the restored (completed) checkpoint are committed again, so :meth:`Committer.commit` must be idempotent.

Order of calls per subtask (``SinkWriterOperator``): on restore, the recovered committables are committed
first, *then* ``restore_writer`` creates the writer; at a checkpoint ``flush(False)``, ``prepare_commit()``,
``snapshot_state(checkpoint_id)`` (for a savepoint ``prepare_savepoint(checkpoint_id)`` first and
``on_savepoint_snapshot(checkpoint_id)`` last); at end of
input ``flush(True)`` and ``prepare_commit()`` — those committables are committed with the final checkpoint
(or at once when the job runs without checkpoints).

    class UpperCaseFiles(TwoPhaseCommittingSink[str, str]):
        def create_writer(self, context): return MyPrecommittingWriter(context)
        def create_committer(self): return MyRenamingCommitter()

A :class:`GlobalCommittingSink` commits on the JobManager instead: every subtask's committables of a checkpoint
go to one :class:`GlobalCommitter`, which makes them visible together once that checkpoint is complete (Flink's
global committer, FLIP-143, and Sink V2's post-commit topology) — a table that must show each checkpoint's rows
all at once, or a catalog that only the driver can reach.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from strom.runtime.tasks.processing_time_service import ProcessingTimeService

__all__ = [
    "CommitRequest",
    "Committer",
    "GlobalCommitter",
    "GlobalCommittingSink",
    "PrecommittingSinkWriter",
    "Sink",
    "SinkWriter",
    "SinkWriterContext",
    "StatefulSinkWriter",
    "TwoPhaseCommittingSink",
]

T = TypeVar("T")
WriterStateT = TypeVar("WriterStateT")
CommT = TypeVar("CommT")


@dataclass(frozen=True, slots=True, kw_only=True)
class SinkWriterContext:
    subtask_index: int
    parallelism: int
    attempt_number: int
    #: strom's: the client's temporary directory the job checkpoints into when no ``execution.checkpointing.dir``
    #: is set (:mod:`strom.runtime.checkpoint.temporary_dir`; nothing restores those checkpoints once the client
    #: is gone); ``""`` with configured checkpoint storage or without checkpointing
    temporary_checkpoint_dir: str = ""
    #: the task's processing-time service (Flink's ``WriterInitContext.getProcessingTimeService``): callbacks run
    #: on the task thread, between records and checkpoints; ``None`` outside a task
    processing_time_service: ProcessingTimeService | None = None
    #: the checkpoint (or savepoint) this subtask was restored from (Flink's ``getRestoredCheckpointId``);
    #: ``None`` on a fresh start
    restored_checkpoint_id: int | None = None


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

    def prepare_savepoint(self, checkpoint_id: int) -> None:
        """strom's: the checkpoint about to be snapshotted (before ``flush`` and ``prepare_commit``) is savepoint
        ``checkpoint_id``, which outlives the job and may be restored any number of times; a writer whose state
        references data it goes on changing (an in-progress file it appends to) hands that data over to this
        ``prepare_commit`` instead. Default: nothing."""

    def on_savepoint_snapshot(self, checkpoint_id: int) -> None:
        """strom's: the checkpoint just snapshotted (after ``prepare_commit`` and ``snapshot_state``) is savepoint
        ``checkpoint_id``, which outlives the job and its client; a writer that cleans up after dead clients
        must leave what it referenced. Default: nothing."""

    def close(self) -> None:
        """Release resources."""


class StatefulSinkWriter(SinkWriter[T], Generic[T, WriterStateT]):
    """A writer with state that survives failures: returned at every checkpoint, handed back to
    :meth:`Sink.restore_writer` on restore (redistributed across subtasks when the parallelism changes)."""

    @abstractmethod
    def snapshot_state(self, checkpoint_id: int) -> list[WriterStateT]: ...


class PrecommittingSinkWriter(SinkWriter[T], Generic[T, CommT]):
    """The writer of a :class:`TwoPhaseCommittingSink` (Flink's ``CommittingSinkWriter``)."""

    @abstractmethod
    def prepare_commit(self) -> list[CommT]:
        """Pre-commit everything written since the last call; return what the committer will make visible.

        Called at every checkpoint (after ``flush(False)``, before ``snapshot_state``) and once at end of
        input (after ``flush(True)``)."""


class Sink(ABC, Generic[T]):
    @abstractmethod
    def create_writer(self, context: SinkWriterContext) -> SinkWriter[T]: ...

    def restore_writer(self, context: SinkWriterContext, recovered_state: list[Any]) -> SinkWriter[T]:
        """A writer resuming from ``recovered_state`` (what :class:`StatefulSinkWriter` s snapshotted; after a
        rescale possibly the state of several old writers, or none). The default ignores the state."""
        return self.create_writer(context)

    def set_input_type(self, type_info: Any) -> None:
        """The declared type of the records this sink gets (``None``: Python objects), told when the stream is
        sunk (Flink's ``InputTypeConfigurable``); the default ignores it."""

    def validate(self) -> None:
        """Called in the client by ``execute()``, before any cluster starts: raise a ``StromError`` for output
        that cannot be written (a URL scheme without its fsspec package, say)."""


class CommitRequest(Generic[CommT]):
    """One committable handed to :meth:`Committer.commit`, with a way to report how its commit went.

    Not signalling anything means success. ``retry_later()`` keeps the committable pending: it is tried
    again with the next completed checkpoint. ``signal_failed_with_known_reason(exc)`` drops it (the
    committer knows it can never succeed and decided the job goes on). A committer that *raises* fails the
    task; the job restarts from the last completed checkpoint and commits again.
    """

    __slots__ = ("_committable", "_failure", "_retry", "number_of_retries")

    def __init__(self, committable: CommT, number_of_retries: int = 0) -> None:
        self._committable = committable
        self.number_of_retries = number_of_retries
        self._retry = False
        self._failure: BaseException | None = None

    def get_committable(self) -> CommT:
        return self._committable

    @property
    def committable(self) -> CommT:
        return self._committable

    def retry_later(self) -> None:
        self._retry = True

    def update_and_retry_later(self, committable: CommT) -> None:
        self._committable = committable
        self._retry = True

    def signal_failed_with_known_reason(self, exc: BaseException) -> None:
        self._failure = exc

    def signal_already_committed(self) -> None:
        """Nothing to do: the committable was committed before (e.g. before a restore)."""

    @property
    def should_retry(self) -> bool:
        return self._retry and self._failure is None

    @property
    def failure(self) -> BaseException | None:
        return self._failure


class Committer(ABC, Generic[CommT]):
    """Makes pre-committed data visible once its checkpoint is complete (Flink's ``Committer``)."""

    @abstractmethod
    def commit(self, requests: list[CommitRequest[CommT]]) -> None:
        """Commit every request. Must be idempotent: after a restore, committables that were already
        committed come again, and committing them again must succeed without effect."""

    def close(self) -> None:
        """Release resources."""


class TwoPhaseCommittingSink(Sink[T], Generic[T, CommT]):
    """A sink whose writers pre-commit at checkpoints and whose committer commits once they complete."""

    @abstractmethod
    def create_writer(self, context: SinkWriterContext) -> PrecommittingSinkWriter[T, CommT]: ...

    def restore_writer(
        self, context: SinkWriterContext, recovered_state: list[Any]
    ) -> PrecommittingSinkWriter[T, CommT]:
        return self.create_writer(context)

    @abstractmethod
    def create_committer(self) -> Committer[CommT]: ...


class GlobalCommitter(ABC, Generic[CommT]):
    """Commits the committables of all subtasks of a checkpoint at once, on the JobManager (Flink's
    ``GlobalCommitter``). Its methods run in one committer thread of the JobManager process, one at a time, in
    checkpoint order; pickled into the job graph with its sink."""

    @abstractmethod
    def commit(self, checkpoint_id: int, committables: list[CommT]) -> None:
        """Make ``committables`` (every subtask's, for checkpoints up to ``checkpoint_id`` that were not committed
        before) visible, all together. Must be idempotent per committable: after a failure the same committables,
        or some of them, come again. Raising fails the job; its restart commits them again."""

    def discard(self, committables: list[CommT]) -> None:
        """Committables of a checkpoint that never completed, which no restore brings back: remove what they
        staged. Default: nothing."""

    def clean_up(self, subtask: int, keep: list[CommT]) -> None:
        """Subtask ``subtask`` restarts: remove what its earlier attempts staged that is not among ``keep`` (still
        to be committed, or referenced by a savepoint) — data of the checkpoint in progress when it failed.
        Default: nothing."""

    def close(self) -> None:
        """The job ended; release resources."""


class GlobalCommittingSink(TwoPhaseCommittingSink[T, CommT], Generic[T, CommT]):
    """A two-phase-commit sink whose committables are committed by one :class:`GlobalCommitter` on the JobManager.

    At each checkpoint every writer's ``prepare_commit()`` result goes to the JobManager before the subtask
    acknowledges the checkpoint, and stays in the subtask's state until the checkpoint is complete. Once it is,
    :meth:`GlobalCommitter.commit` gets every subtask's committables for it (and for earlier checkpoints that were
    aborted) in one call. A restored job hands the committables of its checkpoint to the committer again.
    """

    @abstractmethod
    def create_global_committer(self) -> GlobalCommitter[CommT]: ...

    def create_committer(self) -> Committer[CommT]:
        raise TypeError(
            f"expected the committables of {type(self).__name__} to be committed on the JobManager; got a request "
            "for a per-subtask committer; hint: a GlobalCommittingSink commits through create_global_committer()"
        )
