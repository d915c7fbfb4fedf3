"""``ResultPartition`` and ``PipelinedSubpartition``: the producer side of the data plane.

A task writes each buffer (a batch of records, cut at about ``taskmanager.memory.segment-size`` serialized
bytes by the :class:`RecordWriter`) to the subpartition of the consuming subtask. The partition owns a
bounded pool of buffers (Flink's ``LocalBufferPool``): ``num_subpartitions × buffers-per-channel +
floating-buffers-per-gate`` in all, at most ``max-buffers-per-channel`` of them queued in one subpartition.
A writer that finds the pool exhausted blocks until a consumer takes a buffer: that block is
backpressure, and it is the only place a producer waits, so memory stays bounded.

Exactly one reader (a *view*) consumes a subpartition: a ``LocalInputChannel`` of the same TaskManager
takes the batch objects as they are; for a ``RemoteInputChannel`` the data server of this TaskManager sends
them, and only against credit. Once the data server reads a subpartition (``remote``), the producer
serializes each data buffer as it adds it, as Flink's ``RecordWriter`` does on the task thread: the records
are still in the producer's CPU cache then and are freed on its thread, and the network thread only ships
bytes. A buffer added before the data server attached is serialized by the data server.

The view learns of new data through ``listener`` — called on the producer's thread, it must only hand off (wake
a gate, ``call_soon_threadsafe``). Events (end of partition; later barriers and watermarks) are small and rare:
they never block and take no pool buffer.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from strom.api.serialization import BatchSerializer, PickleBatchSerializer
from strom.exceptions import SerializationError, TaskCancelledError
from strom.runtime.metrics.timer_gauge import TimerGauge
from strom.runtime.network.events import (
    END_OF_PARTITION,
    CheckpointBarrier,
    EndOfPartitionEvent,
    RuntimeEvent,
    is_priority_event,
)
from strom.runtime.streamrecord import short_repr

if TYPE_CHECKING:
    from strom.runtime.network.result_subpartition_view import ResultSubpartitionView

__all__ = [
    "PartitionReleasedError",
    "PipelinedSubpartition",
    "ResultPartition",
    "ResultPartitionID",
    "SerializedBatch",
]


@dataclass(frozen=True, slots=True)
class ResultPartitionID:
    """Identifies the partition one producer attempt writes: (intermediate result, subtask, attempt)."""

    result_id: str
    producer_subtask: int
    attempt_id: str

    def __str__(self) -> str:
        return f"{self.result_id}#{self.producer_subtask}@{self.attempt_id[:8]}"


class PartitionReleasedError(Exception):
    """The partition was released (its producer failed or was cancelled) while being read or written."""


class SerializedBatch:
    """A data buffer the producer serialized for a remote consumer: the partition serializer's bytes."""

    __slots__ = ("data", "num_records")

    def __init__(self, data: bytes, num_records: int) -> None:
        self.data = data
        self.num_records = num_records


_DATA_BUFFER = (list, SerializedBatch)


def _is_aligned_barrier(buffer: Any, checkpoint_id: int) -> bool:
    return type(buffer) is CheckpointBarrier and buffer.checkpoint_id == checkpoint_id and not buffer.options.unaligned


class PipelinedSubpartition:
    __slots__ = (
        "_buffers",
        "_convert_id",
        "_converted",
        "_data_buffers",
        "_finished",
        "_partition",
        "consumed",
        "index",
        "listener",
        "priority_listener",
        "remote",
    )

    def __init__(self, partition: ResultPartition, index: int) -> None:
        self._partition = partition
        self.index = index
        self._buffers: deque[Any] = deque()
        self._data_buffers = 0
        self._finished = False
        self._convert_id = -1  # a checkpoint whose aligned barrier becomes a priority event when added
        self._converted: dict[int, list[Any]] = {}  # per converted barrier: the data buffers it overtook
        self.consumed = False
        self.listener: Callable[[], None] | None = None
        #: a local reader's hook for a priority event put at the head (else ``listener`` is called)
        self.priority_listener: Callable[[], None] | None = None
        #: read by the data server for another TaskManager: data buffers are serialized as they are added
        self.remote = False

    @property
    def partition(self) -> ResultPartition:
        return self._partition

    # -- producer side -----------------------------------------------------------------------------
    def add(self, buffer: Any, *, is_event: bool = False) -> None:
        """Append ``buffer``; a data buffer first takes a pool buffer, blocking while there is none."""
        p = self._partition
        if self.remote and not is_event and type(buffer) is not SerializedBatch:
            buffer = SerializedBatch(p.serialize(buffer), len(buffer))  # raises SerializationError
        with p._cond:
            if not is_event and (p._in_use >= p.pool_size or self._data_buffers >= p.max_per_subpartition):
                gauge = p.back_pressure
                gauge.mark_start()
                try:
                    while (p._in_use >= p.pool_size or self._data_buffers >= p.max_per_subpartition) and not p.released:
                        p._cond.wait()
                finally:
                    gauge.mark_end()
            if p.released:
                raise TaskCancelledError(f"subpartition {self.index} of {p.partition_id} released: {p.release_cause}")
            if not is_event:
                p._in_use += 1
                self._data_buffers += 1
            elif isinstance(buffer, EndOfPartitionEvent):
                self._finished = True
            elif self._convert_id >= 0 and type(buffer) is CheckpointBarrier and self._convert_on_add(buffer):
                listener = self.priority_listener or self.listener
                if listener is not None:
                    listener()
                return
            self._buffers.append(buffer)
            notify = len(self._buffers) == 1
            listener = self.listener
        if notify and listener is not None:
            listener()

    def convert_to_priority(self, checkpoint_id: int) -> None:
        """The consumer's aligned checkpoint switched to unaligned: the barrier of ``checkpoint_id`` goes to the
        head, now if queued, else when added; the data buffers it overtakes are the consumer's input state for
        that checkpoint (:meth:`take_converted`)."""
        with self._partition._cond:
            for i, b in enumerate(self._buffers):
                if type(b) is CheckpointBarrier and b.checkpoint_id == checkpoint_id and not b.options.unaligned:
                    del self._buffers[i]
                    self._convert_id = checkpoint_id
                    self._convert_on_add(b, ahead=i)
                    break
            else:
                self._convert_id = checkpoint_id
                return
            listener = self.priority_listener or self.listener
        if listener is not None:
            listener()

    def _convert_on_add(self, barrier: CheckpointBarrier, ahead: int | None = None) -> bool:
        """Under the lock: put ``barrier`` at the head as a priority event if it is the one to convert; it overtakes
        the first ``ahead`` buffers queued (all of them when it is being added)."""
        if barrier.checkpoint_id < self._convert_id:
            return False
        converted = barrier.checkpoint_id == self._convert_id
        self._convert_id = -1
        if converted:
            p = self._partition
            queued = list(self._buffers)[:ahead]
            self._converted[barrier.checkpoint_id] = [
                p.serializer.deserialize(b.data) if isinstance(b, SerializedBatch) else b
                for b in queued
                if isinstance(b, _DATA_BUFFER)
            ]
            options = barrier.options.to_unaligned()
            buffers = self._buffers
            head = 0  # behind the priority events already at the head: they keep their order
            while head < len(buffers) and is_priority_event(buffers[head]):
                head += 1
            buffers.insert(head, CheckpointBarrier(barrier.checkpoint_id, barrier.timestamp_ms, options))
        return converted

    def timeout_aligned_barrier(self, checkpoint_id: int) -> list[list[Any]] | None:
        """The producer's aligned checkpoint timeout fired: its barrier, if still queued here, goes to the head as a
        priority event; returns the data buffers it overtook (the producer's output state), ``None`` if it had left."""
        p = self._partition
        with p._cond:
            buffers = self._buffers
            i = next((i for i, b in enumerate(buffers) if _is_aligned_barrier(b, checkpoint_id)), -1)
            if i < 0:
                return None
            b = buffers[i]
            overtaken = [
                p.serializer.deserialize(x.data) if isinstance(x, SerializedBatch) else x
                for x in list(buffers)[:i]
                if isinstance(x, _DATA_BUFFER)
            ]
            del buffers[i]
            head = 0
            while head < len(buffers) and is_priority_event(buffers[head]):
                head += 1
            buffers.insert(head, CheckpointBarrier(checkpoint_id, b.timestamp_ms, b.options.to_unaligned()))
            listener = self.priority_listener or self.listener
        if listener is not None:
            listener()
        return overtaken

    def take_converted(self, checkpoint_id: int) -> list[Any]:
        """The data buffers the converted barrier of ``checkpoint_id`` overtook (empty if it was not converted)."""
        with self._partition._cond:
            return self._converted.pop(checkpoint_id, [])

    def add_priority(self, event: RuntimeEvent) -> list[list[Any]]:
        """Put ``event`` at the head of the queue, ahead of every queued buffer (an unaligned checkpoint's
        barrier overtaking the in-flight data), and return the data buffers it overtook: they are that
        checkpoint's output channel state. They stay queued and are sent after the event as usual."""
        p = self._partition
        with p._cond:
            if p.released:
                raise TaskCancelledError(f"subpartition {self.index} of {p.partition_id} released: {p.release_cause}")
            overtaken = [
                p.serializer.deserialize(b.data) if isinstance(b, SerializedBatch) else b
                for b in self._buffers
                if isinstance(b, _DATA_BUFFER)
            ]
            self._buffers.appendleft(event)
            listener = self.priority_listener or self.listener
        if listener is not None:
            listener()  # the view may be waiting for credit with data queued: an event needs none
        return overtaken

    # -- consumer side -----------------------------------------------------------------------------
    def poll(self) -> Any | None:
        """Next buffer or ``None`` if empty; its pool buffer is recycled. Raises once released."""
        p = self._partition
        with p._cond:
            if p.released:
                raise PartitionReleasedError(p.release_cause)
            if not self._buffers:
                return None
            buf = self._buffers.popleft()
            if isinstance(buf, _DATA_BUFFER):
                self._data_buffers -= 1
                p._in_use -= 1
                p._cond.notify()
                return buf
            done = isinstance(buf, EndOfPartitionEvent)
        if done:
            self.consumed = True
            p._subpartition_consumed()
        elif p._watched and type(buf) is CheckpointBarrier:
            p._barrier_left(self.index, buf.checkpoint_id)
        return buf

    def poll_priority(self) -> Any | None:
        """The priority event at the head (see :meth:`add_priority`), or ``None`` if the head holds none."""
        with self._partition._cond:
            if self._partition.released or not self._buffers or not is_priority_event(self._buffers[0]):
                return None
            return self._buffers.popleft()

    def head_is_event(self) -> bool:
        with self._partition._cond:
            return bool(self._buffers) and isinstance(self._buffers[0], RuntimeEvent)

    def backlog(self) -> int:
        """Data buffers queued (Flink's backlog: what the consumer needs credit for)."""
        return self._data_buffers

    def is_available(self) -> bool:
        with self._partition._cond:
            return bool(self._buffers) or self._partition.released

    def _clear(self) -> None:
        self._buffers.clear()
        self._data_buffers = 0


class ResultPartition:
    """The output of one producer subtask for one intermediate result: one subpartition per consumer."""

    #: a blocking partition (:mod:`strom.runtime.network.sort_merge_result_partition`) may be read only once finished
    is_blocking = False

    def __init__(
        self,
        partition_id: ResultPartitionID,
        num_subpartitions: int,
        *,
        pool_size: int,
        max_buffers_per_subpartition: int,
        serializer: BatchSerializer | None = None,
        back_pressure: TimerGauge | None = None,
        on_all_consumed: Callable[[ResultPartition], None] | None = None,
    ) -> None:
        if pool_size < 1 or max_buffers_per_subpartition < 1:
            raise ValueError(
                f"expected a buffer pool of at least 1 buffer per subpartition; got pool {pool_size}, "
                f"per subpartition {max_buffers_per_subpartition}"
            )
        self.partition_id = partition_id
        self.pool_size = pool_size
        self.max_per_subpartition = max_buffers_per_subpartition
        self.serializer: BatchSerializer = serializer or PickleBatchSerializer()
        self.back_pressure = back_pressure or TimerGauge()
        self._cond = threading.Condition(threading.Lock())
        self._in_use = 0
        self.subpartitions = [PipelinedSubpartition(self, i) for i in range(num_subpartitions)]
        self._unconsumed = num_subpartitions
        self._on_all_consumed = on_all_consumed
        self.released = False
        self.release_cause = ""
        self.producer_name = "?"  # the operator writing it (set by its RecordWriter), for error messages
        self.num_bytes_out = 0  # serialized bytes sent to remote consumers (counted by the data server)
        self.observed_bytes_per_record = 0.0  # of the last buffer serialized for a remote reader
        #: timeoutable aligned barriers watched until they left every subpartition: checkpoint -> (subpartitions
        #: still holding it, called with the checkpoint id once none does)
        self._watched: dict[int, tuple[set[int], Callable[[int], None]]] = {}

    def is_consumable(self) -> bool:
        """Whether a consumer's request may be answered now (a pipelined partition: as soon as it exists)."""
        return True

    def create_subpartition_view(self, index: int) -> ResultSubpartitionView:
        """The reader of subpartition ``index`` (a pipelined subpartition is its own, single, reader)."""
        return self.subpartitions[index]

    def _subpartition_consumed(self) -> None:
        with self._cond:
            self._unconsumed -= 1
            done = self._unconsumed == 0
        if done and self._on_all_consumed is not None:
            self._on_all_consumed(self)

    def emit(self, subpartition: int, batch: list[Any]) -> None:
        self.subpartitions[subpartition].add(batch)

    def serialize(self, batch: list[Any]) -> bytes:
        """``batch`` for a consumer in another TaskManager; remembers its bytes per record (buffer sizing)."""
        try:
            data = self.serializer.serialize(batch)
        except Exception as exc:
            raise self.serialization_error(batch, exc) from exc
        self.observed_bytes_per_record = len(data) / max(1, len(batch))
        return data

    def serialization_error(
        self, batch: list[Any], exc: BaseException, *, first_position: int | None = None
    ) -> SerializationError:
        """The error for ``exc``, raised serializing ``batch``: it names the first record the serializer refuses
        on its own (its repr and position: ``first_position`` is the output position of ``batch[0]`` when
        known, else the index in the buffer counts), what failed, and the fix."""
        index, cause = -1, exc
        for i, record in enumerate(batch):
            try:
                self.serializer.serialize([record])
            except Exception as e:
                index, cause = i, e
                break
        if index < 0:
            what = f"a batch of {len(batch)} records, each of which serializes on its own,"
        elif first_position is not None:
            what = f"output record #{first_position + index} ({short_repr(batch[index], 200)}), which"
        else:
            what = f"record {index + 1} of a buffer of {len(batch)} ({short_repr(batch[index], 200)}), which"
        return SerializationError(
            f"the output of operator '{self.producer_name}' (subtask {self.partition_id.producer_subtask + 1}) "
            f"cannot leave its TaskManager: expected records {self.serializer!r} can serialize; got {what} "
            f"failed with {type(cause).__name__}: {cause}; hint: records crossing TaskManagers must be picklable, "
            "and any channel may cross them: make the record's type picklable (plain tuples, dicts, dataclasses), "
            "or set a BatchSerializer for the stream with DataStream.set_serializer()"
        )

    def broadcast_event(self, event: RuntimeEvent) -> None:
        for sp in self.subpartitions:
            sp.add(event, is_event=True)

    def broadcast_watched_barrier(self, barrier: CheckpointBarrier, on_all_sent: Callable[[int], None]) -> None:
        """Broadcast an aligned barrier that may time out; ``on_all_sent(checkpoint_id)`` runs (on the reader's
        thread: it must only hand off) once every subpartition handed it to its reader."""
        with self._cond:
            self._watched[barrier.checkpoint_id] = (set(range(len(self.subpartitions))), on_all_sent)
        self.broadcast_event(barrier)

    def unwatch(self, checkpoint_id: int) -> None:
        with self._cond:
            self._watched.pop(checkpoint_id, None)

    def _barrier_left(self, subpartition: int, checkpoint_id: int) -> None:
        with self._cond:
            watched = self._watched.get(checkpoint_id)
            if watched is None:
                return
            watched[0].discard(subpartition)
            if watched[0]:
                return
            del self._watched[checkpoint_id]
        watched[1](checkpoint_id)

    def timeout_aligned_barrier(self, checkpoint_id: int) -> dict[int, list[list[Any]]]:
        """The aligned checkpoint timeout fired at the producer (Flink's ``ResultPartition.alignedBarrierTimeout``):
        the barrier still queued in a subpartition overtakes its data; returns what it overtook per subpartition."""
        self.unwatch(checkpoint_id)
        out: dict[int, list[list[Any]]] = {}
        for sp in self.subpartitions:
            overtaken = sp.timeout_aligned_barrier(checkpoint_id)
            if overtaken:
                out[sp.index] = overtaken
        return out

    def broadcast_priority_event(self, event: RuntimeEvent) -> list[list[list[Any]]]:
        """``event`` overtakes the queued data of every subpartition; returns each one's overtaken buffers."""
        return [sp.add_priority(event) for sp in self.subpartitions]

    def finish(self) -> None:
        self.broadcast_event(END_OF_PARTITION)

    def buffers_in_use(self) -> int:
        return self._in_use

    def release(self, cause: str) -> None:
        with self._cond:
            if self.released:
                return
            self.released = True
            self.release_cause = cause
            for sp in self.subpartitions:
                sp._clear()
            self._in_use = 0
            self._cond.notify_all()
            listeners = [sp.listener for sp in self.subpartitions]
        for listener in listeners:
            if listener is not None:
                listener()
