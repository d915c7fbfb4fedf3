"""Timers of keyed operators (Flink's ``InternalTimerServiceImpl`` and ``InternalTimeServiceManager``).

A timer is ``(timestamp, key, namespace)`` in the event-time or the processing-time domain; there is at most
one per such triple — registering it again changes nothing. Event-time timers fire when a watermark reaches
their timestamp (:meth:`InternalTimerService.advance_watermark`), processing-time timers when the task's
:class:`~strom.runtime.tasks.processing_time_service.ProcessingTimeService` reaches it. Timers fire in order of
time; each firing sets the keyed backend's current key first, so state access in the callback is the timer's
key's.

Layout: per domain a heap of the *distinct* timestamps and, per timestamp, an insertion-ordered dict of
``(key, namespace)`` — a window operator registers one timer per window and key, and thousands share one end.

Where timers live is the keyed backend's choice (Flink's ``PriorityQueueSetFactory``): a backend with a
``priority_queue_factory`` (RocksDB with ``state.backend.rocksdb.timer-service.factory: ROCKSDB``, Flink's
default) keeps them in a column family per domain
(:mod:`strom.runtime.state.rocksdb.rocksdb_priority_queue_set_factory`),
every other one on the heap as above (``HEAP``). The operators see the same interface either way.

Timers are state: heap timers are written into the keyed backend at a checkpoint as the namespaced table
``_timer_state/<domain>_<name>`` (``key → {(namespace, timestamp): True}``), so they are snapshotted, restored
and redistributed by key group with the rest of the keyed state, then removed again from the backend; RocksDB
timers reach the snapshot in that same canonical form from the backend's snapshot itself. A restore reads the
table into whichever factory the job runs with.
"""

from __future__ import annotations

import heapq
import pickle
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from strom.runtime.state.heap_keyed_state_backend import HeapKeyedStateBackend
    from strom.runtime.state.rocksdb.rocksdb_priority_queue_set_factory import RocksDBTimerQueue
    from strom.runtime.tasks.processing_time_service import ProcessingTimeService

__all__ = [
    "InternalTimeServiceManager",
    "InternalTimer",
    "InternalTimerService",
    "TimerQueue",
    "Triggerable",
    "batch_key_order",
]

LONG_MIN = -(1 << 63)
LONG_MAX = (1 << 63) - 1
_MISSING: Any = object()


def batch_key_order(key: Any) -> bytes:
    """Flink's order of keys in BATCH execution, where records are sorted by their serialized key: a Python key
    is pickled (protocol 5, as PyFlink's ``PICKLED_BYTE_ARRAY``) and compared as Java compares ``byte[]``s, bytes
    signed (so the bytes are flipped at the sign bit to compare unsigned)."""
    return pickle.dumps(key, protocol=5).translate(_SIGNED)


_SIGNED = bytes((b ^ 0x80) for b in range(256))


@dataclass(frozen=True, slots=True)
class InternalTimer:
    timestamp: int
    key: Any
    namespace: Any


class Triggerable(Protocol):
    """The operator side of a timer service (Flink's ``Triggerable``)."""

    def on_event_time(self, timer: InternalTimer) -> None: ...

    def on_processing_time(self, timer: InternalTimer) -> None: ...


class TimerQueue(Protocol):
    """The timers of one domain, wherever they live (the heap's :class:`_TimerQueue`, RocksDB's
    ``RocksDBTimerQueue``): what the aligned window operator writes its timers into around a snapshot."""

    def add(self, time: int, key: Any, namespace: Any) -> bool: ...

    def remove(self, time: int, key: Any, namespace: Any) -> None: ...

    def discard(self, time: int, key: Any, namespace: Any) -> bool: ...

    def peek(self) -> int | None: ...

    def __len__(self) -> int: ...

    def clear(self) -> None: ...

    def items(self) -> list[tuple[int, Any, Any]]: ...


class _TimerQueue:
    """Timers of one domain: a heap of distinct timestamps, each with its ``(key, namespace)`` set."""

    __slots__ = ("buckets", "heap")

    def __init__(self) -> None:
        self.buckets: dict[int, dict[tuple[Any, Any], None]] = {}
        self.heap: list[int] = []

    def add(self, time: int, key: Any, namespace: Any) -> bool:
        """Add the timer; ``True`` if ``time`` is a new earliest timestamp."""
        bucket = self.buckets.get(time)
        if bucket is None:
            self.buckets[time] = {(key, namespace): None}
            heapq.heappush(self.heap, time)
            return self.heap[0] == time
        bucket[(key, namespace)] = None
        return False

    def remove(self, time: int, key: Any, namespace: Any) -> None:
        bucket = self.buckets.get(time)
        if bucket is not None:
            bucket.pop((key, namespace), None)

    def discard(self, time: int, key: Any, namespace: Any) -> bool:
        """Remove the timer if present; ``True`` if it was."""
        bucket = self.buckets.get(time)
        return bucket is not None and bucket.pop((key, namespace), _MISSING) is not _MISSING

    def peek(self) -> int | None:
        """The earliest timestamp with a timer (empty buckets are dropped on the way)."""
        heap, buckets = self.heap, self.buckets
        while heap and not buckets[heap[0]]:
            del buckets[heapq.heappop(heap)]
        return heap[0] if heap else None

    def __len__(self) -> int:
        return sum(len(b) for b in self.buckets.values())

    def clear(self) -> None:
        self.buckets.clear()
        self.heap.clear()

    def items(self) -> list[tuple[int, Any, Any]]:
        return [(t, k, ns) for t in sorted(self.buckets) for (k, ns) in self.buckets[t]]


class InternalTimerService:
    """The timers of one name (``"user-timers"``, ``"window-timers"``) of one keyed operator."""

    def __init__(
        self,
        name: str,
        backend: HeapKeyedStateBackend,
        processing_time_service: ProcessingTimeService,
        triggerable: Triggerable,
    ) -> None:
        self.name = name
        self.backend = backend
        self.processing_time_service = processing_time_service
        self.triggerable = triggerable
        self.current_watermark = LONG_MIN
        factory = getattr(backend, "priority_queue_factory", None)
        self._event: _TimerQueue | RocksDBTimerQueue
        self._processing: _TimerQueue | RocksDBTimerQueue
        if factory is None:
            self._event = _TimerQueue()
            self._processing = _TimerQueue()
        else:
            self._event = factory.create(f"event_{name}")
            self._processing = factory.create(f"processing_{name}")
        #: the timers live in the backend (ROCKSDB factory): nothing to write into it around a snapshot
        self.in_backend = factory is not None
        self._scheduled: int | None = None  # the processing time our next callback is registered for
        #: BATCH execution: the end of input fires the timers key by key (Flink's batch order), each key's event-time
        #: timers then its processing-time timers, as Flink's ``BatchExecutionInternalTimeService``
        self.batch_order = False

    # -- registration (task thread, current key = the backend's) ---------------------------------------------
    def current_processing_time(self) -> int:
        return self.processing_time_service.get_current_processing_time()

    def register_event_time_timer(self, namespace: Any, time: int) -> None:
        self._event.add(time, self.backend.current_key, namespace)

    def delete_event_time_timer(self, namespace: Any, time: int) -> None:
        self._event.remove(time, self.backend.current_key, namespace)

    def register_processing_time_timer(self, namespace: Any, time: int) -> None:
        if self._processing.add(time, self.backend.current_key, namespace):
            self._schedule(time)

    def delete_processing_time_timer(self, namespace: Any, time: int) -> None:
        self._processing.remove(time, self.backend.current_key, namespace)

    def num_event_time_timers(self) -> int:
        return len(self._event)

    def num_processing_time_timers(self) -> int:
        return len(self._processing)

    # -- firing ----------------------------------------------------------------------------------------------
    def advance_watermark(self, watermark: int) -> None:
        """Fire every event-time timer with ``timestamp <= watermark``, in order of time."""
        self.current_watermark = watermark
        if self.batch_order and watermark == LONG_MAX:
            self._fire_key_by_key()
            return
        self._fire(self._event, watermark, self.triggerable.on_event_time)

    def _fire_key_by_key(self) -> None:
        """The end of input in BATCH execution: per key, in Flink's batch key order, its event-time timers in
        order of time, then its processing-time timers; timers registered meanwhile fire in the next round."""
        backend = self.backend
        domains = (
            (self._event, self.triggerable.on_event_time),
            (self._processing, self.triggerable.on_processing_time),
        )
        while any(queue.peek() is not None for queue, _ in domains):
            per_key: dict[Any, list[tuple[int, int, Any]]] = {}
            for d, (queue, _) in enumerate(domains):
                for time, key, namespace in queue.items():
                    per_key.setdefault(key, []).append((d, time, namespace))
            for key in sorted(per_key, key=batch_key_order):
                for d, time, namespace in sorted(per_key[key], key=lambda e: (e[0], e[1])):
                    queue, callback = domains[d]
                    if not queue.discard(time, key, namespace):
                        continue  # deleted by an earlier timer
                    backend.current_key = key
                    callback(InternalTimer(time, key, namespace))

    def _on_processing_time(self, time: int) -> None:
        if self._scheduled == time:
            self._scheduled = None
        now = self.processing_time_service.get_current_processing_time()
        self._fire(self._processing, now, self.triggerable.on_processing_time)
        nxt = self._processing.peek()
        if nxt is not None:
            self._schedule(nxt)

    def _schedule(self, time: int) -> None:
        if self._scheduled is None or time < self._scheduled:
            self._scheduled = time
            self.processing_time_service.register_timer(time, self._on_processing_time)

    def _fire(self, queue: _TimerQueue | RocksDBTimerQueue, up_to: int, callback: Any) -> None:
        backend = self.backend
        if not isinstance(queue, _TimerQueue):
            poll = queue.poll_due
            while (timer := poll(up_to)) is not None:
                backend.current_key = timer[1]
                callback(InternalTimer(*timer))
            return
        while True:
            time = queue.peek()
            if time is None or time > up_to:
                return
            bucket = queue.buckets[time]
            while bucket:
                for entry in list(bucket):
                    if bucket.pop(entry, _MISSING) is _MISSING:
                        continue  # deleted by an earlier timer of this round
                    key, namespace = entry
                    backend.current_key = key
                    callback(InternalTimer(time, key, namespace))
            # the bucket is empty now; peek() drops it (a callback may have added timers for this very time)

    # -- checkpoints ----------------------------------------------------------------------------------------
    def _table_names(self) -> tuple[str, str]:
        return f"_timer_state/event_{self.name}", f"_timer_state/processing_{self.name}"

    def write_to_backend(self) -> None:
        """Before the keyed backend's snapshot: the timers as namespaced state, grouped by key (heap timers;
        RocksDB timers are in the backend already)."""
        if self.in_backend:
            return
        for table_name, queue in zip(self._table_names(), (self._event, self._processing), strict=True):
            table = self.backend.get_namespaced_table(table_name)
            table.clear()
            grouped: dict[Any, dict[Any, Any]] = {}
            for time, key, namespace in queue.items():
                per_key = grouped.get(key)
                if per_key is None:
                    per_key = grouped[key] = {}
                per_key[(namespace, time)] = True
            table.update(grouped)  # one write per key (a RocksDB table stores what it is given)

    def remove_from_backend(self) -> None:
        """After the snapshot (and after reading restored timers): the tables leave the backend again."""
        if not self.in_backend:
            self._clear_tables()

    def _clear_tables(self) -> None:
        for table_name in self._table_names():
            self.backend.get_namespaced_table(table_name).clear()

    def read_from_backend(self) -> None:
        """After a restore: take back the timers of the key groups this subtask owns now."""
        event_name, processing_name = self._table_names()
        for key, entries in self.backend.get_namespaced_table(event_name).items():
            for namespace, time in entries:
                self._event.add(time, key, namespace)
        for key, entries in self.backend.get_namespaced_table(processing_name).items():
            for namespace, time in entries:
                self._processing.add(time, key, namespace)
        self._clear_tables()
        nxt = self._processing.peek()
        if nxt is not None:
            self._schedule(nxt)


class InternalTimeServiceManager:
    """The timer services of one operator by name; advances them all with the watermark."""

    def __init__(self, backend: HeapKeyedStateBackend, processing_time_service: ProcessingTimeService) -> None:
        self.backend = backend
        self.processing_time_service = processing_time_service
        self.services: dict[str, InternalTimerService] = {}

    def get_internal_timer_service(self, name: str, triggerable: Triggerable) -> InternalTimerService:
        service = self.services.get(name)
        if service is None:
            service = InternalTimerService(name, self.backend, self.processing_time_service, triggerable)
            service.read_from_backend()
            self.services[name] = service
        return service

    def advance_watermark(self, watermark: int) -> None:
        for service in self.services.values():
            service.advance_watermark(watermark)

    def end_key(self) -> None:
        """BATCH execution with sorted input, the current key's records done (Flink's
        ``BatchExecutionInternalTimeService`` on a key change): its timers fire with the watermark at +∞ (event
        time, then processing time), then the watermark is back at -∞ for the next key."""
        for service in self.services.values():
            service.advance_watermark(LONG_MAX)
            service.current_watermark = LONG_MIN

    def before_snapshot(self) -> None:
        for service in self.services.values():
            service.write_to_backend()

    def after_snapshot(self) -> None:
        for service in self.services.values():
            service.remove_from_backend()
