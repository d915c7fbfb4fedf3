"""Input channels: ``LocalInputChannel`` (same TaskManager, batch objects handed over) and
``RemoteInputChannel`` (another TaskManager, serialized buffers over a credit-based TCP connection).

Priority events (an unaligned checkpoint's barrier, Flink's ``PRIORITIZED_EVENT_BUFFER``) overtake the buffers
queued in the channel: :meth:`InputChannel.poll_priority` takes one from the head, and
:meth:`InputChannel.take_overtaken` hands over the data buffers it overtook there (pickled batches) — the channel's
input state for that checkpoint, as Flink's ``RemoteInputChannel.checkpointStarted`` persists them. The buffers stay
queued and are processed after the barrier as usual. A local channel has no queue of its own: the producer's
subpartition put the barrier at its head, and what it overtook there is the producer's output state.
"""

from __future__ import annotations

import pickle
import threading
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from strom.api.serialization import BatchSerializer, PickleBatchSerializer
from strom.exceptions import ClusterError, SerializationError, TaskCancelledError
from strom.runtime.network.events import CheckpointBarrier
from strom.runtime.network.messages import DATA_BUFFER, END_OF_PARTITION_BUFFER, EVENT_BUFFER, PRIORITY_EVENT_BUFFER
from strom.runtime.network.result_partition import (
    PartitionReleasedError,
    ResultPartitionID,
    SerializedBatch,
)

if TYPE_CHECKING:
    from strom.runtime.network.input_gate import InputGate
    from strom.runtime.network.partition_manager import ResultPartitionManager
    from strom.runtime.network.result_subpartition_view import ResultSubpartitionView

__all__ = ["InputChannel", "LocalInputChannel", "RemoteInputChannel"]


class InputChannel(ABC):
    def __init__(self, gate: InputGate, channel_index: int, partition_id: ResultPartitionID, subpartition: int) -> None:
        self.gate = gate
        self.channel_index = channel_index
        self.partition_id = partition_id
        self.subpartition_index = subpartition
        self.num_buffers_in = 0
        self.num_bytes_in = 0

    @abstractmethod
    def request_subpartition(self) -> None: ...

    @abstractmethod
    def poll(self) -> Any | None:
        """The next buffer (a list of records or an event), or ``None``."""

    @abstractmethod
    def has_more(self) -> bool: ...

    @abstractmethod
    def release(self) -> None: ...

    def poll_priority(self) -> Any | None:
        """The priority event at the head of the channel, or ``None`` if the head holds none (task thread)."""
        return None

    def take_overtaken(self) -> list[bytes]:
        """The data buffers (pickled batches) the priority event polled last overtook in this channel's queue."""
        return []

    @abstractmethod
    def convert_to_priority(self, checkpoint_id: int) -> None:
        """Make the (aligned) barrier of ``checkpoint_id`` a priority event, now if queued, else when it comes."""

    def queued(self) -> int:
        """Buffers received and not yet consumed (for metrics)."""
        return 0

    def _notify(self) -> None:
        self.gate.notify_channel_non_empty(self.channel_index)

    def _notify_priority(self) -> None:
        self.gate.notify_priority_event(self.channel_index)


class LocalInputChannel(InputChannel):
    """Reads a subpartition of the same process directly: no serialization, same bound."""

    def __init__(
        self,
        gate: InputGate,
        channel_index: int,
        partition_id: ResultPartitionID,
        subpartition: int,
        partition_manager: ResultPartitionManager,
    ) -> None:
        super().__init__(gate, channel_index, partition_id, subpartition)
        self._manager = partition_manager
        self._sp: ResultSubpartitionView | None = None
        self._error: BaseException | None = None
        self._overtaken: list[list[Any]] = []  # what the converted barrier polled last overtook

    def request_subpartition(self) -> None:
        self._manager.request_local(self.partition_id, self.subpartition_index, self._on_subpartition)

    def _on_subpartition(self, sp: ResultSubpartitionView | None, error: BaseException | None) -> None:
        if error is not None or sp is None:
            self._error = error or ClusterError(f"partition {self.partition_id} not found")
            self._notify()
            return
        self._sp = sp
        sp.listener = self._notify
        sp.priority_listener = self._notify_priority
        if sp.is_available():
            self._notify()

    def poll(self) -> Any | None:
        if self._error is not None:
            raise self._error
        sp = self._sp
        if sp is None:
            return None
        try:
            buf = sp.poll()
        except PartitionReleasedError as exc:
            raise TaskCancelledError(f"upstream partition {self.partition_id} was released: {exc}") from exc
        if buf is not None:
            self.num_buffers_in += 1
            if type(buf) is CheckpointBarrier and buf.options.unaligned:
                self._overtaken = sp.take_converted(buf.checkpoint_id)
            elif type(buf) is SerializedBatch:  # serialized for a remote reader that went away before it sent it
                return sp.partition.serializer.deserialize(buf.data)
        return buf

    def poll_priority(self) -> Any | None:
        sp = self._sp
        if sp is None or self._error is not None:
            return None
        event = sp.poll_priority()
        if event is not None:
            self.num_buffers_in += 1
            self._overtaken = sp.take_converted(event.checkpoint_id)
        return event

    def take_overtaken(self) -> list[bytes]:
        overtaken, self._overtaken = self._overtaken, []
        return [pickle.dumps(b, protocol=5) for b in overtaken]

    def convert_to_priority(self, checkpoint_id: int) -> None:
        if self._sp is not None:
            self._sp.convert_to_priority(checkpoint_id)

    def has_more(self) -> bool:
        sp = self._sp
        return self._error is not None or (sp is not None and sp.is_available())

    def release(self) -> None:
        if self._sp is not None:
            self._sp.listener = None
            self._sp.priority_listener = None


class RemoteInputChannel(InputChannel):
    """Receives serialized buffers from the network thread; the task thread deserializes them.

    Credit is kept by the gate's :class:`~strom.runtime.network.credit.FloatingBufferPool` on the
    TaskManager's event loop: ``on_buffer`` arrives there after the pool accepted the buffer, and every
    data buffer the task consumes is handed back with ``recycle`` (which crosses to the loop).
    """

    def __init__(
        self,
        gate: InputGate,
        channel_index: int,
        partition_id: ResultPartitionID,
        subpartition: int,
        *,
        serializer: BatchSerializer,
        request: Callable[[RemoteInputChannel], None],
        recycle: Callable[[RemoteInputChannel], None],
        cancel_request: Callable[[RemoteInputChannel], None],
    ) -> None:
        super().__init__(gate, channel_index, partition_id, subpartition)
        self.serializer = serializer
        self.initial_credit = 0
        self.receiver_id = -1
        self.client: Any = None  # the PartitionRequestClient, set on the network thread
        self._request = request
        self._recycle = recycle
        self._cancel_request = cancel_request
        self._lock = threading.Lock()
        self._received: deque[tuple[int, bytes | memoryview]] = deque()
        self._num_priority = 0  # priority events at the head of _received
        #: per priority event queued, in order: the data buffers it overtook (the serializer's bytes)
        self._overtaking: deque[list[bytes | memoryview]] = deque()
        self._overtaken: list[bytes | memoryview] = []  # those of the priority event polled last
        self._convert_on_arrival = -1  # a checkpoint whose aligned barrier becomes a priority event when it comes
        self._error: BaseException | None = None
        self._released = False

    def request_subpartition(self) -> None:
        self._request(self)

    # -- network thread ----------------------------------------------------------------------------
    def on_buffer(self, kind: int, payload: bytes | memoryview) -> None:
        if kind != DATA_BUFFER:
            self._on_event(kind, payload)
            return
        with self._lock:
            if self._released:
                return
            self._received.append((kind, payload))
            first = len(self._received) == 1
        if first:
            self._notify()

    def _on_event(self, kind: int, payload: bytes | memoryview) -> None:
        """A priority event goes behind the priority events already there, ahead of every buffer queued: those
        it overtakes. An aligned barrier to convert (:meth:`convert_to_priority`) goes in as one."""
        with self._lock:
            if self._released:
                return
            received = self._received
            priority = kind == PRIORITY_EVENT_BUFFER
            if self._convert_on_arrival >= 0 and kind != END_OF_PARTITION_BUFFER:
                event = pickle.loads(payload)
                if type(event) is CheckpointBarrier and event.checkpoint_id >= self._convert_on_arrival:
                    if event.checkpoint_id == self._convert_on_arrival and not priority:
                        options = event.options.to_unaligned()
                        payload = pickle.dumps(CheckpointBarrier(event.checkpoint_id, event.timestamp_ms, options))
                        kind, priority = PRIORITY_EVENT_BUFFER, True
                    self._convert_on_arrival = -1
            if priority:
                self._overtaking.append([p for k, p in received if k == DATA_BUFFER])
                received.insert(self._num_priority, (kind, payload))
                self._num_priority += 1
            else:
                received.append((kind, payload))
                first = len(received) == 1
        if priority:
            self._notify_priority()
        elif first:
            self._notify()

    def convert_to_priority(self, checkpoint_id: int) -> None:
        with self._lock:
            if self._released:
                return
            received = self._received
            for i, (kind, payload) in enumerate(received):
                if kind != EVENT_BUFFER:
                    continue
                event = pickle.loads(payload)
                if type(event) is CheckpointBarrier and event.checkpoint_id == checkpoint_id:
                    self._overtaking.append([p for k, p in list(received)[:i] if k == DATA_BUFFER])
                    del received[i]
                    unaligned = CheckpointBarrier(checkpoint_id, event.timestamp_ms, event.options.to_unaligned())
                    received.insert(self._num_priority, (PRIORITY_EVENT_BUFFER, pickle.dumps(unaligned, protocol=5)))
                    self._num_priority += 1
                    break
            else:
                self._convert_on_arrival = checkpoint_id
                return
        self._notify_priority()

    def on_error(self, error: BaseException) -> None:
        with self._lock:
            if self._released or self._error is not None:
                return
            self._error = error
        self._notify()

    def queued(self) -> int:
        return len(self._received)

    # -- task thread -------------------------------------------------------------------------------
    def poll(self) -> Any | None:
        with self._lock:
            if self._error is not None:
                raise self._error
            if not self._received:
                return None
            kind, payload = self._received.popleft()
            if kind == PRIORITY_EVENT_BUFFER:
                self._num_priority -= 1
                self._overtaken = self._overtaking.popleft()
        self.num_buffers_in += 1
        self.num_bytes_in += len(payload)
        if kind == DATA_BUFFER:
            try:
                return self.serializer.deserialize(payload)
            except Exception as exc:
                raise SerializationError(
                    f"expected a batch {self.serializer!r} can decode on input channel {self.channel_index} "
                    f"(from {self.partition_id}); got {len(payload)} bytes it failed on: {exc!r}; "
                    "hint: check the serializer set with DataStream.set_serializer()"
                ) from exc
            finally:
                self._recycle(self)
        return pickle.loads(payload)  # an event of the runtime, from an authenticated peer

    def poll_priority(self) -> Any | None:
        with self._lock:
            if self._error is not None or not self._num_priority:
                return None
            _, payload = self._received.popleft()
            self._num_priority -= 1
            self._overtaken = self._overtaking.popleft()
        self.num_buffers_in += 1
        self.num_bytes_in += len(payload)
        return pickle.loads(payload)

    def take_overtaken(self) -> list[bytes]:
        overtaken, self._overtaken = self._overtaken, []
        if type(self.serializer) is PickleBatchSerializer:  # its bytes are a pickled batch already
            return [bytes(p) for p in overtaken]
        return [pickle.dumps(self.serializer.deserialize(p), protocol=5) for p in overtaken]

    def has_more(self) -> bool:
        with self._lock:
            return bool(self._received) or self._error is not None

    def release(self) -> None:
        with self._lock:
            if self._released:
                return
            self._released = True
            self._received.clear()
            self._num_priority = 0
            self._overtaking.clear()
        self._cancel_request(self)
