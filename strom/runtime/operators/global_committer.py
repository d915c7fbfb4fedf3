"""A sink's global committer on the JobManager (Flink's ``GlobalCommitterOperator``, FLIP-143; here an operator
coordinator, so that it runs where the driver's catalog is).

The writer side, :class:`GlobalCommitSinkWriterOperator`, is the ``SinkWriterOperator`` of a
:class:`~strom.api.sink.GlobalCommittingSink`: at each checkpoint it sends what ``prepare_commit()`` returned to
the coordinator and waits until the coordinator took it, *then* acknowledges — so a completed checkpoint's
committables are on the JobManager before it completes. They also stay in the subtask's state until the subtask
learns that the checkpoint completed; a restored subtask sends them again (a :class:`CommittablesEvent` with
``recovered``, once per attempt, empty or not).

:class:`GlobalCommitterCoordinator` keeps each checkpoint's committables by checkpoint id. When checkpoint *n*
completes it hands every committable of checkpoints up to *n* to :meth:`GlobalCommitter.commit` in one call (one
committer thread, calls in order); after a restore it first waits for every subtask's recovered committables, so
that a checkpoint is still committed as a whole. Its own checkpoint state, taken before the checkpoint's barriers
leave, is every committable it holds of earlier checkpoints — completed but not committed yet, or still pending:
with two checkpoints under way (a savepoint does not wait for the periodic checkpoint in progress) a writer that
learns the earlier one completed before the later barrier drops its committables from its own state, and if their
commit then fails, the restored later checkpoint must still bring them. A coordinator reset after its commit failed
commits again what the restored checkpoint holds. Committables of checkpoints that never completed are dropped on
restore — and when the job ends — and their staged data discarded, except those of a savepoint that was not aborted,
which a later job may restore. When the job finishes, the JobMaster waits for the last commit before the job is
FINISHED. In a job without checkpoints every subtask sends its last committables at its end of input
(``commit_now``); the coordinator commits them all in one call once every subtask's came, so no subtask's output is
visible before the others', and a restart before that discards them.
"""

from __future__ import annotations

import asyncio
import logging
import pickle
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from strom.api.sink import GlobalCommitter, GlobalCommittingSink
from strom.exceptions import UserFunctionError
from strom.runtime.operators.coordination import (
    OperatorCoordinator,
    OperatorCoordinatorContext,
    OperatorCoordinatorProvider,
    OperatorEventGateway,
)
from strom.runtime.operators.sink import SinkWriterOperator

if TYPE_CHECKING:
    from strom.runtime.checkpoint.snapshot import OperatorSnapshot

__all__ = [
    "CommittablesEvent",
    "GlobalCommitSinkWriterOperator",
    "GlobalCommitterCoordinator",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class CommittablesEvent:
    """Writer subtask → its sink's global committer."""

    subtask_index: int
    #: (checkpoint id, committable) pairs
    committables: list[tuple[int, Any]] = field(default_factory=list)
    #: sent once when the attempt starts: what its restored state held (possibly nothing)
    recovered: bool = False
    #: pre-committed at a savepoint: kept (not discarded) when a failover drops it
    savepoint: bool = False
    #: end of input in a job without checkpoints (sent by every subtask, with or without committables): once every
    #: subtask's came, commit them all at once, and answer the last when committed
    commit_now: bool = False


def _identity(committable: Any) -> Any:
    """A key under which the same committable, sent twice, is kept once."""
    try:
        hash(committable)
    except TypeError:
        return pickle.dumps(committable)
    return committable


class _Reports:
    """Committables by checkpoint id, each kept once."""

    def __init__(self) -> None:
        self.by_checkpoint: dict[int, dict[Any, Any]] = {}
        self.savepoints: set[int] = set()
        #: every committable pre-committed at a savepoint of this job: a later job may restore and commit it
        self.of_savepoints: dict[Any, Any] = {}

    def add(self, items: list[tuple[int, Any]], *, savepoint: bool = False) -> None:
        for cid, committable in items:
            key = _identity(committable)
            self.by_checkpoint.setdefault(cid, {})[key] = committable
            if savepoint:
                self.savepoints.add(cid)
                self.of_savepoints[key] = committable

    def unmark_savepoint(self, checkpoint_id: int) -> None:
        """Savepoint ``checkpoint_id`` was aborted: no job restores it, so its committables are a checkpoint's."""
        if checkpoint_id in self.savepoints:
            self.savepoints.discard(checkpoint_id)
            for key in self.by_checkpoint.get(checkpoint_id, {}):
                self.of_savepoints.pop(key, None)

    def kept(self) -> list[Any]:
        """Every committable someone may still commit."""
        items = dict(self.of_savepoints)
        for by_key in self.by_checkpoint.values():
            items.update(by_key)
        return list(items.values())

    def take_up_to(self, checkpoint_id: int) -> tuple[int, list[Any]]:
        """Remove and return the committables of checkpoints up to ``checkpoint_id`` (oldest first) and the newest
        of those checkpoints (-1: none)."""
        cids = sorted(c for c in self.by_checkpoint if c <= checkpoint_id)
        items: dict[Any, Any] = {}
        for cid in cids:
            items.update(self.by_checkpoint.pop(cid))
            self.savepoints.discard(cid)
        return (cids[-1] if cids else -1), list(items.values())

    def drop_after(self, checkpoint_id: int | None) -> list[Any]:
        """Forget the checkpoints after ``checkpoint_id`` (``None``: all); return the committables that nothing can
        restore any more (not a savepoint's)."""
        lost: list[Any] = []
        for cid in [c for c in self.by_checkpoint if checkpoint_id is None or c > checkpoint_id]:
            items = self.by_checkpoint.pop(cid)
            if cid in self.savepoints:
                self.savepoints.discard(cid)
            else:
                lost.extend(items.values())
        return lost


class GlobalCommitterCoordinator(OperatorCoordinator):
    """Commits a :class:`GlobalCommittingSink`'s committables on the JobManager; see the module docstring."""

    def __init__(self, sink: GlobalCommittingSink[Any, Any], context: OperatorCoordinatorContext) -> None:
        self._sink = sink
        self._context = context
        self._committer: GlobalCommitter[Any] | None = None  # created in the committer thread
        self._executor = ThreadPoolExecutor(1, thread_name_prefix=f"strom-global-committer-{context.operator_id}")
        self._reports = _Reports()
        self._completed = -1  # the newest checkpoint known complete
        self._awaiting: set[int] = set()  # subtasks whose recovered committables have not come yet
        self._ended: set[int] = set()  # without checkpoints: subtasks whose end of input came (commit_now)
        #: committables handed to the committer whose commit has not finished, by checkpoint id
        self._committing: dict[int, list[Any]] = {}
        self._tail: asyncio.Future[None] | None = None  # the last commit handed to the committer thread
        self._failed = False
        self._closed = False

    # -- lifecycle ----------------------------------------------------------------------------------------
    def start(self) -> None:
        self._awaiting = set(range(self._context.current_parallelism()))

    @property
    def failed(self) -> bool:
        return self._failed

    def reset_after_failure(self) -> None:
        """A commit failed: the job restores its latest completed checkpoint, which brings back (in this
        coordinator's state and the writers') whatever was not committed. The committables of later checkpoints
        are discarded now — no restore brings them back — and a savepoint's are still kept for a later job."""
        self._failed = False
        self._discard(self._reports.drop_after(self._completed if self._completed >= 0 else None))
        reports = _Reports()
        reports.of_savepoints = self._reports.of_savepoints
        self._reports = reports
        self._committing = {}
        self._ended = set()

    def reset_to_checkpoint(self, checkpoint_id: int, state: bytes | None) -> None:
        self._completed = max(self._completed, checkpoint_id)
        self._discard(self._reports.drop_after(checkpoint_id))
        if state is not None:
            restored: dict[int, list[Any]] = pickle.loads(state)
            for cid, items in restored.items():
                self._reports.add([(cid, c) for c in items])

    def subtask_reset(self, subtask: int, checkpoint_id: int | None) -> None:
        if checkpoint_id is not None:
            self._completed = max(self._completed, checkpoint_id)
        self._discard(self._reports.drop_after(checkpoint_id))
        self._awaiting.add(subtask)
        self._ended.discard(subtask)
        keep = self._reports.kept() + [c for items in self._committing.values() for c in items]
        self._in_committer_thread(f"cleaning up after subtask {subtask}", lambda c: c.clean_up(subtask, keep))

    def close(self) -> None:
        """The job ended: what checkpoints after the last completed one staged is discarded (nothing restores it);
        what a restore of a retained checkpoint or of a savepoint needs stays."""
        if self._closed:
            return
        self._discard(self._reports.drop_after(self._completed if self._completed >= 0 else None))
        self._closed = True

        def close_committer() -> None:
            if self._committer is not None:
                self._committer.close()

        self._executor.submit(close_committer)
        self._executor.shutdown(wait=False)

    @property
    def has_pending_work(self) -> bool:
        return self._tail is not None and not self._tail.done()

    async def finish_pending_work(self) -> None:
        """Wait for the commits handed to the committer so far; raises what the last of them raised."""
        while self._tail is not None and not self._tail.done():
            await asyncio.shield(self._tail)

    # -- events and checkpoints --------------------------------------------------------------------------
    async def handle_event_from_operator(self, subtask: int, attempt_id: str, event: object) -> None:
        if not isinstance(event, CommittablesEvent):
            raise TypeError(f"expected a CommittablesEvent; got a {type(event).__name__}")
        self._reports.add(event.committables, savepoint=event.savepoint)
        if event.recovered:
            self._awaiting.discard(subtask)
            if not self._awaiting:
                self._commit_completed()
        elif event.commit_now:
            self._ended.add(subtask)
            if len(self._ended) == self._context.current_parallelism():
                self._completed = max([self._completed, *self._reports.by_checkpoint])
                self._commit_completed()
                await self.finish_pending_work()

    def checkpoint_coordinator(self, checkpoint_id: int) -> bytes | None:
        """Every committable of an earlier checkpoint not committed yet: those being committed, those of completed
        checkpoints waiting for a restore to finish, and those of checkpoints still pending (see the module
        docstring) — all of them precede this checkpoint's barriers, so a restore of it commits them."""
        state: dict[int, list[Any]] = {cid: list(items) for cid, items in self._committing.items()}
        for cid, items in self._reports.by_checkpoint.items():
            if cid < checkpoint_id:
                state.setdefault(cid, []).extend(items.values())
        return pickle.dumps(state)

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        self._completed = max(self._completed, checkpoint_id)
        if not self._awaiting:
            self._commit_completed()

    def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        """An aborted checkpoint's committables wait for the next completed one (its writers keep them too); an
        aborted savepoint's are no longer kept for a later job: a failover or the job's end discards them."""
        self._reports.unmark_savepoint(checkpoint_id)

    # -- the committer thread -----------------------------------------------------------------------------
    def _commit_completed(self) -> None:
        newest, items = self._reports.take_up_to(self._completed)
        if not items:
            return
        self._committing[newest] = items
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._executor, self._commit, newest, items)
        self._tail = future
        future.add_done_callback(lambda f: self._committed(newest, f))

    def _commit(self, checkpoint_id: int, items: list[Any]) -> None:
        if self._committer is None:
            self._committer = self._sink.create_global_committer()
        self._committer.commit(checkpoint_id, items)

    def _committed(self, checkpoint_id: int, future: asyncio.Future[None]) -> None:
        if future.cancelled():
            return
        exc = future.exception()
        if exc is None:
            self._committing.pop(checkpoint_id, None)
            return
        if self._closed:
            log.error("%s: committing checkpoint %d failed after the job ended: %s", self._name, checkpoint_id, exc)
            return
        self._failed = True
        self._context.fail_job(
            UserFunctionError(
                f"the global committer of sink '{self._name}' failed to commit checkpoint {checkpoint_id}: {exc}"
            )
            if not isinstance(exc, UserFunctionError)
            else exc
        )

    def _discard(self, items: list[Any]) -> None:
        if items:
            self._in_committer_thread("discarding the staged data of failed checkpoints", lambda c: c.discard(items))

    def _in_committer_thread(self, what: str, action: Callable[[GlobalCommitter[Any]], None]) -> None:
        """Clean-up work, in order with the commits; a failure is logged (the data stays, nothing is lost)."""

        def run() -> None:
            try:
                if self._committer is None:
                    self._committer = self._sink.create_global_committer()
                action(self._committer)
            except Exception:
                log.warning("%s: %s failed", self._name, what, exc_info=True)

        if not self._closed:
            self._executor.submit(run)

    @property
    def _name(self) -> str:
        return self._context.operator_name


class GlobalCommitterCoordinatorProvider(OperatorCoordinatorProvider):
    def __init__(self, operator_id: str, sink: GlobalCommittingSink[Any, Any]) -> None:
        self.operator_id = operator_id
        self.sink = sink

    def create(self, context: OperatorCoordinatorContext) -> OperatorCoordinator:
        return GlobalCommitterCoordinator(self.sink, context)


class GlobalCommitSinkWriterOperator(SinkWriterOperator):
    """The writer of a :class:`GlobalCommittingSink`: its committables go to the coordinator, which commits."""

    def __init__(self, sink: GlobalCommittingSink[Any, Any]) -> None:
        super().__init__(sink)
        self.gateway: OperatorEventGateway | None = None
        self._announced = False  # this attempt told the coordinator what it recovered
        self._ended = False  # this attempt told the coordinator its end of input (a job without checkpoints)

    def open(self) -> None:
        if not self._announced:  # a fresh start without initialize_state
            self._recover_committables([], None)
        super().open()

    def coordinator_provider(self) -> OperatorCoordinatorProvider:
        assert isinstance(self.sink, GlobalCommittingSink)
        return GlobalCommitterCoordinatorProvider(self.operator_id, self.sink)

    def finish(self) -> None:
        super().finish()
        if not self.checkpointing_enabled and not self._ended:  # nothing to commit: the coordinator counts it too
            self._commit_without_checkpoint(0)

    def snapshot_state(self, checkpoint_id: int, timestamp_ms: int) -> OperatorSnapshot | None:
        snapshot = super().snapshot_state(checkpoint_id, timestamp_ms)
        items = [(checkpoint_id, c) for c, _ in self._pending.get(checkpoint_id, [])]
        if items:  # on the JobManager before this subtask acknowledges the checkpoint
            savepoint = self._savepoint_id == checkpoint_id
            self._send(CommittablesEvent(subtask_index=self._subtask, committables=items, savepoint=savepoint))
        return snapshot

    def _recover_committables(self, recovered: list[tuple[int, Any]], restored_checkpoint_id: int | None) -> None:
        # the coordinator commits them (again: it keeps each once); the subtask keeps nothing pending
        self._announced = True
        self._send(CommittablesEvent(subtask_index=self._subtask, committables=recovered, recovered=True))

    def _commit_up_to(self, checkpoint_id: int) -> None:
        for cid in [c for c in self._pending if c <= checkpoint_id]:
            del self._pending[cid]  # the coordinator commits them

    def _commit_without_checkpoint(self, last: int) -> None:
        self._ended = True
        items = [(cid, c) for cid in sorted(self._pending) for c, _ in self._pending[cid]]
        self._pending.clear()
        self._send(CommittablesEvent(subtask_index=self._subtask, committables=items, commit_now=True))

    @property
    def _subtask(self) -> int:
        assert self.runtime_context is not None
        return self.runtime_context.info.subtask_index

    def _send(self, event: CommittablesEvent) -> None:
        assert self.gateway is not None
        self.gateway.send_event_to_coordinator(event)
