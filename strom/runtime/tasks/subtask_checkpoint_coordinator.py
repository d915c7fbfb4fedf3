"""``SubtaskCheckpointCoordinator``: what one task does for a checkpoint (Flink's
``SubtaskCheckpointCoordinatorImpl``, seed 002 steps 3–5).

On the task thread, once the barrier handler says the checkpoint is due: every operator of the chain
snapshots its state (the synchronous part: operator state to bytes, keyed state to a point-in-time copy the
backend's ``async_snapshot()`` hands over as a supplier — later records cannot change either), the record
writers flush and the barrier goes out on every output, after every record that precedes it. Then, off the
task thread, the suppliers give the keyed state's bytes, everything is written to the checkpoint location and
the task acknowledges to the JobMaster with the handles (the asynchronous part), or declines with the reason —
a snapshot that fails in its asynchronous part declines as one that fails in its synchronous part does. Aborts
pass a cancel marker downstream; an aborted checkpoint's suppliers still running are cancelled.

An *unaligned* checkpoint (FLIP-76) snapshots at the first barrier; its barrier overtakes the buffers queued in
the task's output subpartitions, which are copied as output channel state. The input channel state — records
that arrive on the other input channels before their barrier — is recorded by the task and handed over with
:meth:`complete_channel_state`; only then is the checkpoint written. Both go into one channel-state file per
subtask, restored by :class:`ChannelState` before the task reads anything new.

An aligned barrier that may time out (``CheckpointOptions.aligned_timeout_ms``, Flink's aligned checkpoint timeout)
goes out in order, watched: the checkpoint is written once it left every output subpartition, or — when the timeout
since the trigger passes first — it overtakes the data still ahead of it there (Flink's
``ResultPartition.alignedBarrierTimeout``), which is persisted as output channel state. Such a checkpoint always
writes a channel-state file (empty if nothing was overtaken), as an unaligned one does.

With local recovery every state file is also kept in the subtask's :class:`TaskLocalStateStore` (through the
location's write hook); a completed checkpoint prunes the older local copies and an aborted one its own, on the
asynchronous thread, after the writes submitted before.
"""

from __future__ import annotations

import functools
import logging
import pickle
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from strom.runtime.checkpoint.snapshot import OperatorSnapshot, OperatorSubtaskStateHandles
from strom.runtime.network.events import CancelCheckpointMarker, CheckpointBarrier
from strom.runtime.network.result_partition import ResultPartition
from strom.runtime.state.incremental_state_handler import notify_keyed_backend, prepare_keyed_snapshot
from strom.runtime.state.task_local_state_store import TaskLocalStateStore
from strom.runtime.tasks.operator_chain import OperatorChain

__all__ = ["ChannelState", "CheckpointResponder", "SubtaskCheckpointCoordinator"]

log = logging.getLogger(__name__)


class CheckpointResponder(Protocol):
    """The task's line to the JobMaster's CheckpointCoordinator (callable from any thread)."""

    def acknowledge(
        self, checkpoint_id: int, states: dict[str, OperatorSubtaskStateHandles], stats: dict[str, float]
    ) -> None: ...

    def decline(self, checkpoint_id: int, reason: str, counts: bool = True) -> None:
        """``counts=False``: not a failure of this checkpoint here (cancelled upstream, task not ready)."""


@dataclass(slots=True)
class ChannelState:
    """The in-flight buffers one subtask persisted in an unaligned checkpoint, each batch pickled:
    ``output[(partition index, subpartition)]`` overtaken by the barrier, ``input[channel]`` received before
    the barrier on a channel still owing it."""

    output: dict[tuple[int, int], list[bytes]] = field(default_factory=dict)
    input: dict[int, list[bytes]] = field(default_factory=dict)

    def to_bytes(self) -> bytes:
        return pickle.dumps((1, self.output, self.input), protocol=5)

    @classmethod
    def from_bytes(cls, blob: bytes) -> ChannelState:
        version, output, inputs = pickle.loads(blob)
        if version != 1:
            raise ValueError(f"expected channel state version 1; got {version}")
        return cls(output=output, input=inputs)

    @property
    def size(self) -> int:
        return sum(len(b) for bs in self.output.values() for b in bs) + sum(
            len(b) for bs in self.input.values() for b in bs
        )


@dataclass(slots=True)
class _PendingTimeoutable:
    barrier: CheckpointBarrier
    snapshots: dict[str, OperatorSnapshot]
    sync_ms: float
    alignment_ms: float
    timer: threading.Timer | None = None
    waiting: set[int] = field(default_factory=set)  # partitions whose subpartitions still hold the barrier


@dataclass(slots=True)
class _PendingUnaligned:
    barrier: CheckpointBarrier
    snapshots: dict[str, OperatorSnapshot]
    channel_state: ChannelState
    sync_ms: float
    started: float


class SubtaskCheckpointCoordinator:
    def __init__(
        self,
        chain: OperatorChain,
        partitions: list[ResultPartition],
        *,
        subtask_index: int,
        task_name: str,
        responder: CheckpointResponder,
        local_state: TaskLocalStateStore | None = None,
    ) -> None:
        self.chain = chain
        #: local recovery's copies of this subtask's checkpoints (None: off)
        self.local_state = local_state
        self.partitions = partitions
        self.subtask_index = subtask_index
        self.task_name = task_name
        self.responder = responder
        self.last_snapshot_id = -1
        self.last_completed_id = -1
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._in_flight = 0
        self._unaligned: dict[int, _PendingUnaligned] = {}  # snapshot taken, input channel state recording
        self._running: dict[int, dict[str, OperatorSnapshot]] = {}  # handed to the asynchronous part, not written
        self._timeoutable: dict[int, _PendingTimeoutable] = {}  # aligned barrier out, may still time out

    # -- task thread ---------------------------------------------------------------------------------------
    def checkpoint_state(self, barrier: CheckpointBarrier, alignment_ms: float = 0.0) -> None:
        cid = barrier.checkpoint_id
        t0 = time.monotonic()
        snapshots: dict[str, OperatorSnapshot] = {}
        try:
            for op in self.chain.operators:
                op.prepare_snapshot_pre_barrier(cid, barrier.options)
                prepare_keyed_snapshot(op, cid, is_savepoint=barrier.options.is_savepoint)
                snap = op.snapshot_state(cid, barrier.timestamp_ms)
                if snap is not None:
                    snapshots[op.operator_id] = snap
        except Exception as exc:
            log.warning("%s: snapshot of checkpoint %d failed: %s", self.task_name, cid, exc)
            _cancel(snapshots)
            self.abort(cid, f"snapshot failed: {exc!r}")
            return
        for w in self.chain.record_writers:
            w.flush()
        channel_state: ChannelState | None = None
        if barrier.options.unaligned:
            try:
                channel_state = ChannelState(output=self._overtake(barrier))
            except Exception as exc:
                log.warning("%s: persisting the in-flight output of checkpoint %d failed: %s", self.task_name, cid, exc)
                _cancel(snapshots)
                self.abort(cid, f"in-flight records could not be persisted: {exc!r}")
                return
        elif barrier.options.aligned_timeout_ms:
            self.last_snapshot_id = max(self.last_snapshot_id, cid)
            self._send_timeoutable(barrier, snapshots, (time.monotonic() - t0) * 1000.0, alignment_ms)
            return
        else:
            for p in self.partitions:
                p.broadcast_event(barrier)
        self.last_snapshot_id = max(self.last_snapshot_id, cid)
        sync_ms = (time.monotonic() - t0) * 1000.0
        if channel_state is not None:
            self._unaligned[cid] = _PendingUnaligned(barrier, snapshots, channel_state, sync_ms, time.monotonic())
            return  # written once the task hands over the input channel state
        self._hand_over(cid, snapshots)
        self._async(lambda: self._write_and_acknowledge(barrier, snapshots, sync_ms, alignment_ms))

    def _overtake(self, barrier: CheckpointBarrier) -> dict[tuple[int, int], list[bytes]]:
        """The barrier jumps the queue of every output subpartition; the data it overtook is pickled now
        (the batches are shared with local consumers and must be captured before they move on)."""
        output: dict[tuple[int, int], list[bytes]] = {}
        for pi, p in enumerate(self.partitions):
            for si, overtaken in enumerate(p.broadcast_priority_event(barrier)):
                if overtaken:
                    output[(pi, si)] = [pickle.dumps(b, protocol=5) for b in overtaken]
        return output

    def _send_timeoutable(
        self, barrier: CheckpointBarrier, snapshots: dict[str, OperatorSnapshot], sync_ms: float, alignment_ms: float
    ) -> None:
        """Send an aligned barrier that may time out, watched (see the module's docstring)."""
        cid = barrier.checkpoint_id
        pending = _PendingTimeoutable(
            barrier, snapshots, sync_ms, alignment_ms, waiting=set(range(len(self.partitions)))
        )
        with self._lock:
            self._timeoutable[cid] = pending
        for pi, p in enumerate(self.partitions):
            p.broadcast_watched_barrier(barrier, functools.partial(self._barrier_sent, pi))
        delay = barrier.options.aligned_timeout_ms / 1000.0 - (time.time() - barrier.timestamp_ms / 1000.0)
        timer = threading.Timer(max(delay, 0.0), self._aligned_timeout, (cid,))
        timer.daemon = True
        with self._lock:
            if cid in self._timeoutable:
                pending.timer = timer
                timer.start()
        if not self.partitions:
            self._barrier_sent(-1, cid)

    def _barrier_sent(self, partition: int, checkpoint_id: int) -> None:
        """Any thread: the barrier left every subpartition of ``partition``; once it left all, write as aligned."""
        with self._lock:
            pending = self._timeoutable.get(checkpoint_id)
            if pending is None:
                return
            pending.waiting.discard(partition)
            if pending.waiting:
                return
            del self._timeoutable[checkpoint_id]
            if pending.timer is not None:
                pending.timer.cancel()
        self._write_timeoutable(pending, ChannelState())

    def _aligned_timeout(self, checkpoint_id: int) -> None:
        """Timer thread: the barrier still queued in a subpartition overtakes what is ahead of it there."""
        with self._lock:
            pending = self._timeoutable.pop(checkpoint_id, None)
        if pending is None:
            return
        output: dict[tuple[int, int], list[bytes]] = {}
        try:
            for pi, p in enumerate(self.partitions):
                for si, overtaken in p.timeout_aligned_barrier(checkpoint_id).items():
                    output[(pi, si)] = [pickle.dumps(b, protocol=5) for b in overtaken]
        except Exception as exc:  # released meanwhile, or records that cannot be pickled
            _cancel(pending.snapshots)
            self.responder.decline(checkpoint_id, f"{self.task_name}: aligned checkpoint timeout failed: {exc!r}")
            return
        self._write_timeoutable(pending, ChannelState(output=output))

    def _write_timeoutable(self, pending: _PendingTimeoutable, channel_state: ChannelState) -> None:
        cid = pending.barrier.checkpoint_id
        self._hand_over(cid, pending.snapshots)
        self._async(
            lambda: self._write_and_acknowledge(
                pending.barrier, pending.snapshots, pending.sync_ms, pending.alignment_ms, channel_state
            )
        )

    def _drop_timeoutable(self, checkpoint_id: int) -> None:
        with self._lock:
            pending = self._timeoutable.pop(checkpoint_id, None)
        if pending is None:
            return
        if pending.timer is not None:
            pending.timer.cancel()
        for p in self.partitions:
            p.unwatch(checkpoint_id)
        _cancel(pending.snapshots)

    def complete_channel_state(self, checkpoint_id: int, inputs: dict[int, list[bytes]]) -> None:
        """Unaligned: every input channel delivered the barrier; ``inputs`` is what arrived before it."""
        pending = self._unaligned.pop(checkpoint_id, None)
        if pending is None:
            return  # aborted meanwhile
        pending.channel_state.input = {c: bs for c, bs in inputs.items() if bs}
        persisting_ms = (time.monotonic() - pending.started) * 1000.0
        self._hand_over(checkpoint_id, pending.snapshots)
        self._async(
            lambda: self._write_and_acknowledge(
                pending.barrier, pending.snapshots, pending.sync_ms, persisting_ms, pending.channel_state
            )
        )

    def abort(self, checkpoint_id: int, reason: str, *, counts: bool = True) -> None:
        """Decline ``checkpoint_id`` and tell downstream tasks to stop aligning for it."""
        pending = self._unaligned.pop(checkpoint_id, None)
        if pending is not None:
            _cancel(pending.snapshots)
        self._drop_timeoutable(checkpoint_id)
        for w in self.chain.record_writers:
            w.flush()
        for p in self.partitions:
            p.broadcast_event(CancelCheckpointMarker(checkpoint_id))
        self.responder.decline(checkpoint_id, f"{self.task_name}: {reason}", counts)

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        self.last_completed_id = max(self.last_completed_id, checkpoint_id)
        local = self.local_state
        if local is not None:
            self._async(lambda: local.confirm_checkpoint(checkpoint_id))
        for op in self.chain.operators:
            notify_keyed_backend(op, checkpoint_id, completed=True)
            op.notify_checkpoint_complete(checkpoint_id)

    def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        pending = self._unaligned.pop(checkpoint_id, None)
        if pending is not None:
            _cancel(pending.snapshots)
        self._drop_timeoutable(checkpoint_id)
        with self._lock:
            running = self._running.pop(checkpoint_id, None)
        if running is not None:  # the asynchronous part stops at once (its checkpoint is gone anyway)
            _cancel(running)
        local = self.local_state
        if local is not None:
            self._async(lambda: local.abort_checkpoint(checkpoint_id))
        for op in self.chain.operators:
            notify_keyed_backend(op, checkpoint_id, completed=False)
            op.notify_checkpoint_aborted(checkpoint_id)

    # -- the asynchronous part ---------------------------------------------------------------------------
    def _hand_over(self, checkpoint_id: int, snapshots: dict[str, OperatorSnapshot]) -> None:
        with self._lock:
            self._running[checkpoint_id] = snapshots

    def _async(self, job: Callable[[], None]) -> None:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"async-checkpoint {self.task_name}")
        with self._lock:
            self._in_flight += 1
        self._executor.submit(self._run, job)

    def _run(self, job: Callable[[], None]) -> None:
        try:
            job()
        finally:
            with self._lock:
                self._in_flight -= 1

    def _write_and_acknowledge(
        self,
        barrier: CheckpointBarrier,
        snapshots: dict[str, OperatorSnapshot],
        sync_ms: float,
        alignment_ms: float,
        channel_state: ChannelState | None = None,
    ) -> None:
        cid = barrier.checkpoint_id
        t0 = time.monotonic()
        try:
            try:
                resolved = self._resolve(snapshots)
                handles, size, uploaded = self._write(barrier, resolved, channel_state)
            finally:
                with self._lock:
                    self._running.pop(cid, None)
        except _WriteFailed as failed:
            log.warning("%s: writing checkpoint %d failed: %s", self.task_name, cid, failed.cause)
            self.responder.decline(cid, f"{self.task_name}: writing the state failed: {failed.cause!r}")
            return
        except Exception as exc:  # a supplier (or a stream, _SnapshotFailed) failed
            cause = exc.cause if isinstance(exc, _SnapshotFailed) else exc
            log.warning("%s: snapshot of checkpoint %d failed: %s", self.task_name, cid, cause)
            self.responder.decline(cid, f"{self.task_name}: snapshot failed: {cause!r}")
            return
        stats = {
            "state_size": float(size),
            "sync_duration_ms": sync_ms,
            "async_duration_ms": (time.monotonic() - t0) * 1000.0,
            "alignment_duration_ms": alignment_ms,
            "persisted_data_bytes": float(channel_state.size if channel_state is not None else 0),
        }
        if uploaded:
            stats["incremental_size"] = float(uploaded)
        self.responder.acknowledge(cid, handles, stats)

    def _write(
        self,
        barrier: CheckpointBarrier,
        resolved: dict[str, OperatorSnapshot],
        channel_state: ChannelState | None,
    ) -> tuple[dict[str, OperatorSubtaskStateHandles], int, int]:
        """Write every resolved snapshot (a streamed one key group by key group as its supplier makes them) and the
        channel state into the checkpoint's location: the handles, the state size, the incremental upload size.
        Raises :class:`_SnapshotFailed` when a stream's supplier fails, :class:`_WriteFailed` when the writing does;
        either way the incremental uploads are discarded."""
        location: Any = barrier.options.location
        handles: dict[str, OperatorSubtaskStateHandles] = {}
        size = uploaded = 0
        local = self.local_state
        try:
            for op_id, snap in resolved.items():
                parts = snap.keyed if snap.keyed_stream is None else _marked(snap.keyed_stream)
                keyed = location.write_state_slices(f"{op_id}-keyed-{self.subtask_index}", parts, local=local)
                operator = (
                    location.write_state(f"{op_id}-op-{self.subtask_index}", snap.operator, local=local)
                    if snap.operator is not None
                    else None
                )
                incremental = None
                if snap.keyed_incremental is not None:  # only the files the last completed checkpoint lacked
                    incremental = snap.keyed_incremental.upload(location, f"{op_id}-{self.subtask_index}", local=local)
                    uploaded += snap.keyed_incremental.uploaded_bytes
                    size += incremental.size
                if keyed or operator is not None or incremental is not None:  # a stream may turn out empty
                    handles[op_id] = OperatorSubtaskStateHandles(
                        keyed=keyed, operator=operator, incremental=incremental
                    )
                size += sum(h.size for h in keyed.values()) + len(snap.operator or b"")
            if channel_state is not None:  # on the head operator, written even when empty: it marks the task
                head = self.chain.head.operator_id
                blob = channel_state.to_bytes()
                channel = location.write_state(f"{head}-channel-{self.subtask_index}", blob, local=local)
                prior = handles.get(head, OperatorSubtaskStateHandles())
                handles[head] = OperatorSubtaskStateHandles(
                    keyed=prior.keyed, operator=prior.operator, channel=channel, incremental=prior.incremental
                )
                size += len(blob)
        except _SnapshotFailed:
            _dispose_incremental(resolved)
            raise
        except Exception as exc:
            _dispose_incremental(resolved)
            raise _WriteFailed(exc) from exc
        return handles, size, uploaded

    def _resolve(self, snapshots: dict[str, OperatorSnapshot]) -> dict[str, OperatorSnapshot]:
        """The keyed state's bytes from every supplier — a streaming one's still to make, as the file is written;
        operators left without any state are left out. On a failure the suppliers not called yet are cancelled."""
        out: dict[str, OperatorSnapshot] = {}
        try:
            for op_id, snap in snapshots.items():
                resolved = snap.resolve(streamed=True)
                if not resolved.is_empty:
                    out[op_id] = resolved
        except BaseException:
            _cancel(snapshots)
            raise
        return out

    def close(self) -> None:
        """Wait for the asynchronous parts still running (a final checkpoint's write), then stop."""
        for cid in list(self._timeoutable):
            self._drop_timeoutable(cid)
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None


class _SnapshotFailed(Exception):
    """A streamed snapshot's supplier failed while its key groups were written (the checkpoint declines as one
    whose snapshot failed, not as one whose storage failed)."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


class _WriteFailed(Exception):
    """Writing a resolved snapshot into the checkpoint's location failed."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def _marked(stream: Iterator[tuple[int, bytes]]) -> Iterator[tuple[int, bytes]]:
    """``stream``, its failures raised as :class:`_SnapshotFailed`."""
    try:
        yield from stream
    except Exception as exc:
        raise _SnapshotFailed(exc) from exc
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()


def _dispose_incremental(snapshots: dict[str, OperatorSnapshot]) -> None:
    """A failed write: local RocksDB checkpoints it did not get to (an upload removes its own when it ends), and the
    shared files the uploads that succeeded wrote (the checkpoint is declined: nothing references them)."""
    for snap in snapshots.values():
        if snap.keyed_incremental is not None:
            snap.keyed_incremental.dispose()
            try:
                snap.keyed_incremental.discard_uploads()
            except Exception as exc:  # best effort: an orphan in shared/ costs space only
                log.warning("discarding the uploads of a failed checkpoint failed: %s", exc)


def _cancel(snapshots: dict[str, OperatorSnapshot]) -> None:
    for snap in snapshots.values():
        try:
            snap.cancel()
        except Exception as exc:  # best effort: the checkpoint fails either way
            log.warning("cancelling a snapshot failed: %s", exc)
