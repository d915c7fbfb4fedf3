"""Sink operators: ``SinkWriterOperator`` (Sink API), ``StreamSink`` (SinkFunction), print and collect."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from strom.api.functions import SinkFunction, as_callable
from strom.api.sink import (
    CommitRequest,
    Committer,
    PrecommittingSinkWriter,
    Sink,
    SinkWriter,
    SinkWriterContext,
    StatefulSinkWriter,
    TwoPhaseCommittingSink,
)
from strom.api.state import ListState, ListStateDescriptor
from strom.exceptions import InvalidProgramError
from strom.runtime.operators.abstract_udf_stream_operator import AbstractUdfStreamOperator
from strom.runtime.operators.base import StreamOperator
from strom.runtime.operators.coordination import (
    OperatorCoordinator,
    OperatorCoordinatorContext,
    OperatorCoordinatorProvider,
    OperatorEventGateway,
)

if TYPE_CHECKING:
    from strom.runtime.checkpoint.snapshot import OperatorRestoreState, OperatorSnapshot
    from strom.runtime.network.events import CheckpointOptions

__all__ = [
    "CollectBatchEvent",
    "CollectSinkOperator",
    "CollectSinkOperatorCoordinator",
    "PrintSinkFunction",
    "SinkWriterOperator",
    "StreamSink",
]

log = logging.getLogger(__name__)


_Pending = tuple[Any, int]  # a committable and how often its commit was retried
_SINK_STATE_NAME = "strom.sink-writer-and-committables"


class SinkWriterOperator(StreamOperator):
    """Runs a :class:`Sink`'s writer and, for a :class:`TwoPhaseCommittingSink`, its committer (Flink's
    ``SinkWriterOperator`` and ``CommitterOperator`` in one).

    At each checkpoint the writer pre-commits (``prepare_commit``); the committables wait, keyed by the
    checkpoint id, until that checkpoint is complete and are committed in checkpoint order. An aborted
    checkpoint leaves them pending: the next completed checkpoint commits them. The writer state and every
    pending committable go into one list-state entry per subtask, so the committables of a writer travel
    with its state when the job is rescaled. On restore the recovered committables are committed at once
    (the runtime restores only completed checkpoints; commits are idempotent), *then* the writer is created
    with ``restore_writer``. At end of input the last committables wait for the final checkpoint; with
    ``checkpointing_enabled`` false (set by the runtime) they are committed at once.
    """

    def __init__(self, sink: Sink[Any]) -> None:
        super().__init__()
        self.sink = sink
        self.checkpointing_enabled: bool = False
        #: set by the runtime: the client's temporary directory, when nothing restores the job's output once the
        #: client is gone (the job checkpoints there, or not at all)
        self.temporary_checkpoint_dir = ""
        self._savepoint_id: int | None = None  # the checkpoint being taken is this savepoint
        self._writer: SinkWriter[Any] | None = None
        self._committer: Committer[Any] | None = None
        self._pending: dict[int, list[_Pending]] = {}  # checkpoint id -> committables awaiting its completion
        self._unassigned: list[_Pending] = []  # prepared at end of input, for the next (final) checkpoint
        self._end_of_input = False
        self._restored_checkpoint_id: int | None = None

    # -- lifecycle ---------------------------------------------------------------------------------
    def initialize_state(self, restore: OperatorRestoreState | None) -> None:
        super().initialize_state(restore)
        writer_state: list[Any] = []
        recovered: list[tuple[int, Any]] = []
        if restore is not None and any(restore.operator):
            for entry in self._sink_state().get():
                states, committables = entry
                writer_state.extend(states)
                recovered.extend(committables)
        self._recover_committables(recovered, restore.checkpoint_id if restore is not None else None)
        self._restored_checkpoint_id = restore.checkpoint_id if restore is not None else None
        self._writer = self._create_writer(writer_state if restore is not None else None)

    def open(self) -> None:
        if self._writer is None:  # initialize_state was not called: a fresh start
            self._writer = self._create_writer(None)

    def process_batch(self, batch: list[Any]) -> None:
        assert self._writer is not None
        try:
            self._writer.write_batch(batch)
        except Exception as exc:
            raise self.user_error(exc, batch, batch[0]) from exc
        self._records_in += len(batch)

    def finish(self) -> None:
        self._end_of_input = True
        writer = self._writer
        if writer is not None:
            try:
                writer.flush(True)
                if isinstance(writer, PrecommittingSinkWriter):
                    self._unassigned.extend((c, 0) for c in writer.prepare_commit())
            except Exception as exc:
                raise self.user_error(exc, None) from exc
        if not self.checkpointing_enabled and (self._pending or self._unassigned):
            # no checkpoint will come: commit now, as Flink's FileSink does in BATCH mode
            last = max(self._pending, default=0)
            self._pending.setdefault(last, []).extend(self._unassigned)
            self._unassigned = []
            self._commit_without_checkpoint(last)

    def close(self) -> None:
        writer, self._writer = self._writer, None
        committer, self._committer = self._committer, None
        try:
            if writer is not None:
                writer.close()
        except Exception as exc:
            raise self.user_error(exc, None) from exc
        finally:
            if committer is not None:
                committer.close()

    # -- checkpoints ---------------------------------------------------------------------------------
    def prepare_snapshot_pre_barrier(self, checkpoint_id: int, options: CheckpointOptions) -> None:
        self._savepoint_id = checkpoint_id if options.is_savepoint else None

    def snapshot_state(self, checkpoint_id: int, timestamp_ms: int) -> OperatorSnapshot | None:
        writer = self._writer
        two_phase = isinstance(self.sink, TwoPhaseCommittingSink)
        writer_state: list[Any] = []
        try:
            if writer is not None and not self._end_of_input:
                if self._savepoint_id == checkpoint_id:
                    writer.prepare_savepoint(checkpoint_id)
                writer.flush(False)
                if isinstance(writer, PrecommittingSinkWriter):
                    self._unassigned.extend((c, 0) for c in writer.prepare_commit())
            if self._unassigned:
                self._pending.setdefault(checkpoint_id, []).extend(self._unassigned)
                self._unassigned = []
            if isinstance(writer, StatefulSinkWriter):
                writer_state = list(writer.snapshot_state(checkpoint_id))
            if writer is not None and self._savepoint_id == checkpoint_id:
                writer.on_savepoint_snapshot(checkpoint_id)
        except Exception as exc:
            raise self.user_error(exc, None) from exc
        if two_phase or isinstance(writer, StatefulSinkWriter) or self._pending:
            committables = [(cid, c) for cid in sorted(self._pending) for c, _ in self._pending[cid]]
            self._sink_state().update([(writer_state, committables)])
        return super().snapshot_state(checkpoint_id, timestamp_ms)

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        self._commit_up_to(checkpoint_id)

    def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        """Keep the committables of ``checkpoint_id`` pending: the next completed checkpoint commits them."""

    # -- internals -----------------------------------------------------------------------------------
    def _recover_committables(self, recovered: list[tuple[int, Any]], restored_checkpoint_id: int | None) -> None:
        """The committables restored with the subtask's state: committed at once (the checkpoint is complete)."""
        if recovered:
            for cid, committable in sorted(recovered, key=lambda t: t[0]):
                self._pending.setdefault(cid, []).append((committable, 0))
            self._commit_up_to(max(cid for cid, _ in recovered))

    def _commit_without_checkpoint(self, last: int) -> None:
        """End of input in a job without checkpoints: commit everything pending now."""
        self._commit_up_to(last)

    def _sink_state(self) -> ListState[Any]:
        return self.operator_state_backend.get_list_state(ListStateDescriptor(_SINK_STATE_NAME))

    def _create_writer(self, recovered_state: list[Any] | None) -> SinkWriter[Any]:
        ctx = self.runtime_context
        assert ctx is not None
        context = SinkWriterContext(
            subtask_index=ctx.info.subtask_index,
            parallelism=ctx.info.parallelism,
            attempt_number=ctx.info.attempt_number,
            temporary_checkpoint_dir=self.temporary_checkpoint_dir,
            processing_time_service=ctx.processing_time_service,
            restored_checkpoint_id=self._restored_checkpoint_id,
        )
        try:
            if recovered_state is None:
                return self.sink.create_writer(context)
            return self.sink.restore_writer(context, recovered_state)
        except Exception as exc:
            raise self.user_error(exc, None) from exc

    def _commit_up_to(self, checkpoint_id: int) -> None:
        """Commit the committables of every checkpoint up to ``checkpoint_id``, oldest first."""
        for cid in sorted(c for c in self._pending if c <= checkpoint_id):
            items = self._pending.pop(cid)
            retry = self._commit(items)
            if retry:
                self._pending.setdefault(cid, []).extend(retry)

    def _commit(self, items: list[_Pending]) -> list[_Pending]:
        sink = self.sink
        if not isinstance(sink, TwoPhaseCommittingSink):
            raise InvalidProgramError(
                f"sink of operator '{self.name}' must be a TwoPhaseCommittingSink to commit restored "
                f"committables; got a {type(sink).__name__!r}; hint: restore with the sink the checkpoint "
                "was taken with"
            )
        try:
            if self._committer is None:
                self._committer = sink.create_committer()
            requests = [CommitRequest(c, retries) for c, retries in items]
            self._committer.commit(requests)
        except Exception as exc:
            raise self.user_error(exc, None, role=f"the committer of sink operator '{self.name}'") from exc
        retry: list[_Pending] = []
        for r in requests:
            if r.failure is not None:
                log.warning("%s: committable %r dropped by the committer: %r", self.name, r.committable, r.failure)
            elif r.should_retry:
                retry.append((r.committable, r.number_of_retries + 1))
        return retry


class StreamSink(AbstractUdfStreamOperator):
    """Calls ``invoke(value, context)`` of a :class:`SinkFunction` (or ``fn(value)``) per record."""

    def __init__(self, fn: object) -> None:
        super().__init__(fn)
        if isinstance(fn, SinkFunction):
            self._invoke: Callable[..., Any] = fn.invoke
            self._with_context = True
        else:
            self._invoke = as_callable(fn, SinkFunction, "invoke", "add_sink()")
            self._with_context = False

    def process_batch(self, batch: list[Any]) -> None:
        f = self._invoke
        v = None
        try:
            if self._with_context:
                for v in batch:
                    f(v, None)
            else:
                for v in batch:
                    f(v)
        except Exception as exc:
            raise self.user_error(exc, batch, v) from exc
        self._records_in += len(batch)


class PrintSinkFunction(SinkFunction[Any]):
    """Writes each record to stdout, prefixed ``"<subtask>> "`` when the sink runs in parallel (as Flink)."""

    def __init__(
        self, sink_identifier: str = "", to_stderr: bool = False, formatter: Callable[[Any], str] | None = None
    ) -> None:
        self.sink_identifier = sink_identifier
        self.to_stderr = to_stderr
        #: how a record of the stream's declared type prints (Flink's rules); ``None``: ``str()``
        self.formatter = formatter
        self._prefix = ""

    def open(self, runtime_context: Any) -> None:
        n = runtime_context.get_number_of_parallel_subtasks()
        i = runtime_context.get_index_of_this_subtask()
        ident = f"{self.sink_identifier}:" if self.sink_identifier else ""
        self._prefix = f"{ident}{i + 1}> " if n > 1 else (f"{self.sink_identifier}> " if ident else "")

    def invoke(self, value: Any, context: Any) -> None:
        stream = sys.stderr if self.to_stderr else sys.stdout
        text = self.formatter(value) if self.formatter is not None else value
        stream.write(f"{self._prefix}{text}\n")


class PrintSinkOperator(StreamSink):
    """Batch-at-a-time print: one write per batch."""

    def process_batch(self, batch: list[Any]) -> None:
        fn = self.user_function
        assert isinstance(fn, PrintSinkFunction)
        stream = sys.stderr if fn.to_stderr else sys.stdout
        p = fn._prefix
        if fn.formatter is None:
            stream.write("".join([f"{p}{v}\n" for v in batch]))
        else:
            fmt = fn.formatter
            stream.write("".join([f"{p}{fmt(v)}\n" for v in batch]))
        stream.flush()
        self._records_in += len(batch)


@dataclass(frozen=True, slots=True, kw_only=True)
class CollectBatchEvent:
    """Sent by a collect sink subtask to the JobMaster: a batch of results, or its end."""

    sink_id: str
    subtask_index: int
    records: list[Any]
    end: bool = False


_COLLECT_QUEUE_BATCHES = 16


class CollectSinkOperatorCoordinator(OperatorCoordinator):
    """The collect sink's side on the JobMaster: a bounded hand-off of its subtasks' batches to the client
    (``JobMaster.poll_collect``); ``None`` in the queue marks the end. A full queue holds the sending subtask
    back (it waits for the event to be accepted)."""

    def __init__(self, sink_id: str, producers: int) -> None:
        self.sink_id = sink_id
        self.queue: asyncio.Queue[list[Any] | None] = asyncio.Queue(maxsize=_COLLECT_QUEUE_BATCHES)
        self.producers = producers
        self.ended = 0

    async def handle_event_from_operator(self, subtask: int, attempt_id: str, event: object) -> None:
        if not isinstance(event, CollectBatchEvent):
            raise TypeError(f"expected a CollectBatchEvent; got {type(event).__name__}")
        if self.ended >= self.producers:
            return
        if event.records:
            await self.queue.put(event.records)
        if event.end:
            self.ended += 1
            if self.ended == self.producers:
                await self.queue.put(None)

    def end(self) -> None:
        """The job ended: wake a waiting poller; a full queue is drained by ``poll``, which sees the end flag."""
        if self.ended < self.producers:
            self.ended = self.producers
            if not self.queue.full():
                self.queue.put_nowait(None)

    def close(self) -> None:
        self.end()

    async def poll(self, timeout: float) -> tuple[list[Any] | None, bool]:
        """Next batch: ``(records, False)``, ``([], False)`` after ``timeout``, or ``(None, True)`` at the end."""
        try:
            item = await asyncio.wait_for(self.queue.get(), timeout)
        except TimeoutError:
            return [], False
        if item is None:
            if self.queue.empty():
                self.queue.put_nowait(None)  # later polls see the end too
            return None, True
        return item, False


class _CollectSinkCoordinatorProvider(OperatorCoordinatorProvider):
    def __init__(self, operator_id: str, sink_id: str) -> None:
        self.operator_id = operator_id
        self.sink_id = sink_id

    def create(self, context: OperatorCoordinatorContext) -> OperatorCoordinator:
        return CollectSinkOperatorCoordinator(self.sink_id, context.current_parallelism())


class CollectSinkOperator(StreamOperator):
    """Ships records to the client through its coordinator on the JobMaster (``execute_and_collect``)."""

    def __init__(self, sink_id: str, batch_size: int = 1024) -> None:
        super().__init__()
        self.sink_id = sink_id
        self.batch_size = batch_size
        self.gateway: OperatorEventGateway | None = None
        self._buffer: list[Any] = []

    def process_batch(self, batch: list[Any]) -> None:
        self._buffer.extend(batch)
        self._records_in += len(batch)
        budget = self.output_budget  # large records leave in smaller batches (execution.batch-bytes)
        budget.observe(batch, len(batch))
        if len(self._buffer) >= min(self.batch_size, budget.records):
            self._send(end=False)

    def coordinator_provider(self) -> OperatorCoordinatorProvider:
        return _CollectSinkCoordinatorProvider(self.operator_id, self.sink_id)

    def flush(self) -> None:
        if self._buffer:
            self._send(end=False)

    def finish(self) -> None:
        self._send(end=True)

    def _send(self, *, end: bool) -> None:
        assert self.gateway is not None and self.runtime_context is not None
        records, self._buffer = self._buffer, []
        self.gateway.send_event_to_coordinator(
            CollectBatchEvent(
                sink_id=self.sink_id,
                subtask_index=self.runtime_context.info.subtask_index,
                records=records,
                end=end,
            )
        )
