"""Input channels: ``LocalInputChannel`` (same TaskManager, batch objects handed over) and
``RemoteInputChannel`` (another TaskManager, serialized buffers over a credit-based TCP connection).
"""

from __future__ import annotations

import pickle
import threading
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from strom.exceptions import ClusterError, TaskCancelledError
from strom.runtime.network.result_partition import (
    PartitionReleasedError,
    PipelinedSubpartition,
    ResultPartitionID,
)

if TYPE_CHECKING:
    from strom.runtime.network.input_gate import InputGate
    from strom.runtime.network.partition_manager import ResultPartitionManager

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

    def _notify(self) -> None:
        self.gate.notify_channel_non_empty(self.channel_index)


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
        self._sp: PipelinedSubpartition | None = None
        self._error: BaseException | None = None

    def request_subpartition(self) -> None:
        self._manager.request_local(self.partition_id, self.subpartition_index, self._on_subpartition)

    def _on_subpartition(self, sp: PipelinedSubpartition | None, error: BaseException | None) -> None:
        if error is not None or sp is None:
            self._error = error or ClusterError(f"partition {self.partition_id} not found")
            self._notify()
            return
        self._sp = sp
        sp.listener = self._notify
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
        return buf

    def has_more(self) -> bool:
        sp = self._sp
        return self._error is not None or (sp is not None and sp.is_available())

    def release(self) -> None:
        if self._sp is not None:
            self._sp.listener = None


class RemoteInputChannel(InputChannel):
    """Receives serialized buffers from the network thread; returns one credit per consumed buffer."""

    def __init__(
        self,
        gate: InputGate,
        channel_index: int,
        partition_id: ResultPartitionID,
        subpartition: int,
        *,
        initial_credit: int,
        request: Callable[[RemoteInputChannel], None],
        announce_credit: Callable[[RemoteInputChannel, int], None],
        cancel_request: Callable[[RemoteInputChannel], None],
    ) -> None:
        super().__init__(gate, channel_index, partition_id, subpartition)
        self.initial_credit = initial_credit
        self.receiver_id = -1
        self.client: Any = None  # the PartitionRequestClient, set on the network thread
        self._request = request
        self._announce_credit = announce_credit
        self._cancel_request = cancel_request
        self._lock = threading.Lock()
        self._received: deque[tuple[bool, bytes | memoryview]] = deque()
        self._expected_seq = 0
        self._error: BaseException | None = None
        self._released = False

    def request_subpartition(self) -> None:
        self._request(self)

    # -- network thread ----------------------------------------------------------------------------
    def on_buffer(self, seq: int, backlog: int, is_event: bool, payload: bytes | memoryview) -> None:
        with self._lock:
            if seq != self._expected_seq:
                self._error = ClusterError(
                    f"channel {self.channel_index} of {self.partition_id}: expected buffer #{self._expected_seq}; "
                    f"got #{seq}; the connection lost or reordered data"
                )
            else:
                self._expected_seq += 1
                self._received.append((is_event, payload))
            first = len(self._received) == 1 or self._error is not None
        if first:
            self._notify()

    def on_error(self, error: BaseException) -> None:
        with self._lock:
            if self._released or self._error is not None:
                return
            self._error = error
        self._notify()

    # -- task thread -------------------------------------------------------------------------------
    def poll(self) -> Any | None:
        with self._lock:
            if self._error is not None:
                raise self._error
            if not self._received:
                return None
            is_event, payload = self._received.popleft()
        self.num_buffers_in += 1
        self.num_bytes_in += len(payload)
        buf = pickle.loads(payload)
        if not is_event:
            self._announce_credit(self, 1)
        return buf

    def has_more(self) -> bool:
        with self._lock:
            return bool(self._received) or self._error is not None

    def release(self) -> None:
        with self._lock:
            if self._released:
                return
            self._released = True
        self._cancel_request(self)
