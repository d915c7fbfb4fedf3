"""``ResultPartition`` and ``PipelinedSubpartition``: the producer side of the data plane.

A task writes each batch to the subpartition of the consuming subtask. A subpartition is a bounded
queue of buffers (a buffer is a batch — a list of records — or a :class:`RuntimeEvent`): when it holds
``capacity`` buffers, the writer blocks until the consumer takes one. That block is backpressure, and it
keeps memory bounded.

Exactly one reader (a *view*) consumes a subpartition: a ``LocalInputChannel`` in the same TaskManager
takes the batch objects as they are; the network server of this TaskManager serializes them for a
``RemoteInputChannel``. The view is told of new data through ``listener`` — called on the producer's
thread, it must only hand off (wake a gate, ``call_soon_threadsafe``).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from strom.exceptions import TaskCancelledError
from strom.runtime.network.events import END_OF_PARTITION, EndOfPartitionEvent, RuntimeEvent

__all__ = ["PartitionReleasedError", "PipelinedSubpartition", "ResultPartition", "ResultPartitionID"]


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


class PipelinedSubpartition:
    __slots__ = (
        "_buffers",
        "_cond",
        "_finished",
        "_released",
        "capacity",
        "consumed",
        "index",
        "listener",
        "on_consumed",
        "release_cause",
    )

    def __init__(self, index: int, capacity: int) -> None:
        self.index = index
        self.capacity = capacity
        self._buffers: deque[Any] = deque()
        self._cond = threading.Condition(threading.Lock())
        self._finished = False
        self._released = False
        self.release_cause: str = ""
        self.consumed = False
        self.listener: Callable[[], None] | None = None
        self.on_consumed: Callable[[PipelinedSubpartition], None] | None = None

    # -- producer side -----------------------------------------------------------------------------
    def add(self, buffer: Any, *, is_event: bool = False) -> float:
        """Append ``buffer``; blocks while full (events never block). Returns seconds spent blocked."""
        blocked = 0.0
        with self._cond:
            if not is_event and len(self._buffers) >= self.capacity:
                t0 = time.monotonic()
                while len(self._buffers) >= self.capacity and not self._released:
                    self._cond.wait(0.5)
                blocked = time.monotonic() - t0
            if self._released:
                raise TaskCancelledError(f"subpartition {self.index} released: {self.release_cause}")
            self._buffers.append(buffer)
            if isinstance(buffer, EndOfPartitionEvent):
                self._finished = True
            notify = len(self._buffers) == 1
            listener = self.listener
        if notify and listener is not None:
            listener()
        return blocked

    # -- consumer side -----------------------------------------------------------------------------
    def poll(self) -> Any | None:
        """Next buffer or ``None`` if empty. Raises :class:`PartitionReleasedError` once released."""
        with self._cond:
            if self._released:
                raise PartitionReleasedError(self.release_cause)
            if not self._buffers:
                return None
            buf = self._buffers.popleft()
            if len(self._buffers) == self.capacity - 1:
                self._cond.notify()
            done = isinstance(buf, EndOfPartitionEvent)
        if done:
            self.consumed = True
            cb = self.on_consumed
            if cb is not None:
                cb(self)
        return buf

    def head_is_event(self) -> bool:
        with self._cond:
            return bool(self._buffers) and isinstance(self._buffers[0], RuntimeEvent)

    def backlog(self) -> int:
        with self._cond:
            return len(self._buffers)

    def is_available(self) -> bool:
        with self._cond:
            return bool(self._buffers) or self._released

    def release(self, cause: str) -> None:
        with self._cond:
            if self._released:
                return
            self._released = True
            self.release_cause = cause
            self._buffers.clear()
            self._cond.notify_all()
            listener = self.listener
        if listener is not None:
            listener()


class ResultPartition:
    """The output of one producer subtask for one intermediate result: one subpartition per consumer."""

    def __init__(
        self,
        partition_id: ResultPartitionID,
        num_subpartitions: int,
        *,
        capacity: int,
        on_all_consumed: Callable[[ResultPartition], None] | None = None,
    ) -> None:
        self.partition_id = partition_id
        self.subpartitions = [PipelinedSubpartition(i, capacity) for i in range(num_subpartitions)]
        self._lock = threading.Lock()
        self._unconsumed = num_subpartitions
        self._on_all_consumed = on_all_consumed
        for sp in self.subpartitions:
            sp.on_consumed = self._subpartition_consumed
        self.released = False

    def _subpartition_consumed(self, _: PipelinedSubpartition) -> None:
        with self._lock:
            self._unconsumed -= 1
            done = self._unconsumed == 0
        if done and self._on_all_consumed is not None:
            self._on_all_consumed(self)

    def emit(self, subpartition: int, batch: list[Any]) -> float:
        return self.subpartitions[subpartition].add(batch)

    def broadcast_event(self, event: RuntimeEvent) -> None:
        for sp in self.subpartitions:
            sp.add(event, is_event=True)

    def finish(self) -> None:
        self.broadcast_event(END_OF_PARTITION)

    def release(self, cause: str) -> None:
        self.released = True
        for sp in self.subpartitions:
            sp.release(cause)
