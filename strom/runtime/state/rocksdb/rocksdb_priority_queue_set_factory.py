"""Timers in RocksDB (Flink's ``RocksDBPriorityQueueSetFactory``, ``state.backend.rocksdb.timer-service.factory:
ROCKSDB``).

Each timer queue — one per timer service and domain, e.g. ``event_user-timers`` — gets its own column family
``_timer_queue/<name>``, whose keys are

    key group (2 bytes) | timestamp (8 bytes, big-endian, sign bit flipped) | key | namespace

so the bytes sort as (key group, timestamp, key, namespace): each key group is contiguous and ordered by time.
The column family is a set (a timer registered twice is one entry) and a timer is deleted by its exact key. The
value is empty, or the pickled key when the key's canonical bytes would not give back its class (a
``NamedTuple``, a ``frozenset``): the timer's callback then sees the key object it was registered with (``bool``
and integral ``float`` keys come back as ``int``, as every key read from RocksDB).
:class:`~.key_group_partitioned_priority_queue.KeyGroupPartitionedPriorityQueue` keeps each key group's head in
memory, so the queue reads RocksDB only when a key group's cached head runs out.

Canonical snapshots (savepoints) carry the timers in the form the heap timers use (the table
``_timer_state/<name>``: ``key → {(namespace, timestamp): True}``) read from an iterator opened in the synchronous
part; a checkpoint carries the column family's bytes as they are (:meth:`~RocksDBPriorityQueueSetFactory.
native_sources`), turned into that table only when another backend or the HEAP factory restores them
(:func:`canonical_timers`). Either way they restore into either factory and either backend at any parallelism.
"""

from __future__ import annotations

import pickle
import struct
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from strom.exceptions import ConfigurationError
from strom.runtime.state.rocksdb.key_group_partitioned_priority_queue import KeyGroupPartitionedPriorityQueue
from strom.runtime.state.rocksdb.rocksdb_key_serialization_utils import (
    KEY_GROUP_PREFIX_BYTES,
    decode_key,
    decode_namespace,
    encode_key,
    encode_namespace,
    key_group_prefix,
)

if TYPE_CHECKING:
    from rocksdict import Options, Rdict, RdictIter, ReadOptions, WriteOptions

    from strom.runtime.state.key_groups import KeyGroupAssigner

__all__ = [
    "TIMER_QUEUE_PREFIX",
    "RocksDBPriorityQueueSetFactory",
    "RocksDBTimerQueue",
    "canonical_timers",
    "check_timer_service_factory",
    "timer_element",
    "timer_table",
]

#: the values of ``state.backend.rocksdb.timer-service.factory`` (Flink's ``RocksDBOptions.TIMER_SERVICE_FACTORY``)
TIMER_SERVICE_FACTORIES = ("ROCKSDB", "HEAP")

#: column families of timer queues are named ``_timer_queue/<queue name>``
TIMER_QUEUE_PREFIX = "_timer_queue/"
_TIMER_TABLE_PREFIX = "_timer_state/"
_TS = struct.Struct(">Q")
_BIAS = 1 << 63
_KEY_AT = KEY_GROUP_PREFIX_BYTES + 8
_KEY_CACHE_SIZE = 1 << 16
#: key types whose canonical bytes decode to an equal object of the same class
_EXACT = frozenset({str, int, bytes, type(None)})
#: the first bytes of such keys: a timer whose key starts otherwise has its key object in its value
_EXACT_TAGS = frozenset(encode_key(v)[0] for v in (None, 1, 1 << 70, "", b""))


def check_timer_service_factory(name: str) -> str:
    """The canonical name of a timer service factory, or a :class:`ConfigurationError` saying what exists."""
    canonical = str(name).strip().upper()
    if canonical not in TIMER_SERVICE_FACTORIES:
        raise ConfigurationError(
            f"expected state.backend.rocksdb.timer-service.factory to be ROCKSDB or HEAP; got {name!r}; hint: "
            "ROCKSDB (Flink's default) keeps timers in a column family, HEAP on the heap (checkpointed with the "
            "keyed state)"
        )
    return canonical


def timer_element(key_bytes: bytes, time: int, namespace_bytes: bytes) -> bytes:
    """The RocksDB key of a timer from ``key group | key`` bytes, its time and its namespace bytes."""
    return (
        key_bytes[:KEY_GROUP_PREFIX_BYTES]
        + _TS.pack(time + _BIAS)
        + key_bytes[KEY_GROUP_PREFIX_BYTES:]
        + namespace_bytes
    )


def timer_table(queue: str) -> str:
    """The canonical table of timer queue ``queue``'s timers."""
    return _TIMER_TABLE_PREFIX + queue


def canonical_timers(elements: Iterable[bytes], values: Iterable[bytes]) -> Iterator[tuple[Any, tuple[Any, int]]]:
    """``(key, (namespace, timestamp))`` of a timer queue's entries (RocksDB keys and values)."""
    for element, value in zip(elements, values, strict=True):
        time, key, namespace = _decode(element, value)
        yield key, (namespace, time)


def _decode(element: bytes, value: bytes | None) -> tuple[int, Any, Any]:
    """``(time, key, namespace)`` of a timer's RocksDB key (and its value: the pickled key, if any)."""
    time = _TS.unpack_from(element, KEY_GROUP_PREFIX_BYTES)[0] - _BIAS
    key, pos = decode_key(element, _KEY_AT)
    namespace = decode_namespace(element, pos)[0]
    if value:
        key = pickle.loads(value)
    return time, key, namespace


class RocksDBTimerQueue:
    """The timers of one domain of one timer service in a column family (the ``_TimerQueue`` of the ROCKSDB
    factory: the same ``add`` / ``remove`` / ``peek`` contract, plus :meth:`poll_due`)."""

    __slots__ = ("_key_cache", "_key_group_of", "_ns_bytes", "_ns_obj", "name", "queue")

    def __init__(self, key_group_of: KeyGroupAssigner, name: str, cf: Any, *, known_empty: bool) -> None:
        self.name = name
        self.queue = KeyGroupPartitionedPriorityQueue(cf, known_empty=known_empty)
        self._key_group_of = key_group_of
        self._key_cache: dict[Any, bytes] = {}
        self._ns_obj: Any = None
        self._ns_bytes = encode_namespace(None)

    def _element(self, time: int, key: Any, namespace: Any) -> bytes:
        if namespace is not self._ns_obj:
            self._ns_bytes = encode_namespace(namespace)
            self._ns_obj = namespace
        return timer_element(self._key_bytes(key), time, self._ns_bytes)

    def _key_bytes(self, key: Any) -> bytes:
        """key group | key (equal keys encode equally, so a dict of them is a valid cache; bounded)."""
        cache = self._key_cache
        found = cache.get(key)
        if found is None:
            found = key_group_prefix(self._key_group_of(key)) + encode_key(key)
            if len(cache) >= _KEY_CACHE_SIZE:
                cache.clear()
            cache[key] = found
        return found

    def add(self, time: int, key: Any, namespace: Any) -> bool:
        """Add the timer; ``True`` if it became its key group's earliest (maybe the earliest of all)."""
        value = b"" if type(key) in _EXACT else pickle.dumps(key, protocol=5)
        return self.queue.add(self._element(time, key, namespace), value)

    def remove(self, time: int, key: Any, namespace: Any) -> None:
        self.queue.remove(self._element(time, key, namespace))

    def discard(self, time: int, key: Any, namespace: Any) -> bool:
        """Remove the timer if present; ``True`` if it was."""
        element = self._element(time, key, namespace)
        if self.queue.get_value(element) is None:
            return False
        self.queue.remove(element)
        return True

    def peek(self) -> int | None:
        """The earliest timestamp with a timer."""
        head = self.queue.peek()
        return None if head is None else _TS.unpack_from(head, KEY_GROUP_PREFIX_BYTES)[0] - _BIAS

    def poll_due(self, up_to: int) -> tuple[int, Any, Any] | None:
        """Remove and return the earliest timer if its time is ``<= up_to``."""
        queue = self.queue
        head = queue.peek()
        if head is None or _TS.unpack_from(head, KEY_GROUP_PREFIX_BYTES)[0] - _BIAS > up_to:
            return None
        value = queue.get_value(head) if head[_KEY_AT] not in _EXACT_TAGS else None
        queue.remove_peeked()
        return _decode(head, value)

    def __len__(self) -> int:
        return len(self.queue)

    def clear(self) -> None:
        self.queue.clear()

    def items(self) -> list[tuple[int, Any, Any]]:
        """Every timer, in order of time (not on the hot path)."""
        return sorted((_decode(raw, value) for raw, value in self.queue.items()), key=lambda t: t[0])

    def validate(self) -> None:
        self.queue.validate()


class RocksDBPriorityQueueSetFactory:
    """Creates the timer queues of one RocksDB backend, one column family each, and reads them for snapshots."""

    def __init__(
        self, key_group_of: KeyGroupAssigner, db: Rdict, options: Options, write_options: WriteOptions
    ) -> None:
        """``key_group_of``: the backend's key → key group (never the backend itself: no reference cycle keeps an
        instance open after its operator is gone)."""
        self._key_group_of = key_group_of
        self._db = db
        self._options = options
        self._write_options = write_options
        self._queues: dict[str, tuple[RocksDBTimerQueue, Any]] = {}
        self._restored: set[str] = set()  # queues whose column family a restore wrote before they existed

    def create(self, name: str) -> RocksDBTimerQueue:
        """The queue ``name`` (``event_<service>`` / ``processing_<service>``), created on first use; a column
        family already in the instance (an instance restored from its files) is taken over with its timers."""
        found = self._queues.get(name)
        if found is not None:
            return found[0]
        cf_name = TIMER_QUEUE_PREFIX + name
        try:
            cf = self._db.get_column_family(cf_name)
            known_empty = False
        except Exception:  # rocksdict raises a bare Exception for an unknown column family
            cf = self._db.create_column_family(cf_name, self._options)
            known_empty = True
        cf.set_write_options(self._write_options)
        queue = RocksDBTimerQueue(self._key_group_of, name, cf, known_empty=known_empty)
        self._queues[name] = (queue, cf)
        return queue

    def snapshot_sources(self) -> list[tuple[str, Iterator[tuple[int, Any, Any]]]]:
        """Synchronous part of a snapshot: per queue its canonical table name and a lazy reader of
        ``(key group, key, (namespace, timestamp))`` over an iterator opened now (RocksDB pins what it reads)."""
        return [
            (_TIMER_TABLE_PREFIX + name, _canonical_entries(cf.iter()))
            for name, (_, cf) in sorted(self._queues.items())
        ]

    def native_sources(self, read_options: ReadOptions | None = None) -> list[tuple[str, RdictIter]]:
        """Synchronous part of a checkpoint: per queue its column family's name and an iterator opened now."""
        return [(TIMER_QUEUE_PREFIX + name, cf.iter(read_options)) for name, (_, cf) in sorted(self._queues.items())]

    def restore_native(self, name: str, elements: Sequence[bytes], values: Sequence[bytes]) -> None:
        """Restore timers of queue ``name`` as a checkpoint carried them (column family bytes): into the queue if it
        exists, else into its column family, which :meth:`adopt_restored` (or :meth:`create`) takes over with them."""
        found = self._queues.get(name)
        if found is not None:
            add = found[0].queue.add
            for element, value in zip(elements, values, strict=True):
                add(element, value)
            return
        from rocksdict import WriteBatch

        cf_name = TIMER_QUEUE_PREFIX + name
        try:
            self._db.get_column_family(cf_name)
        except Exception:  # rocksdict raises a bare Exception for an unknown column family
            self._db.create_column_family(cf_name, self._options)
        batch = WriteBatch(raw_mode=True)
        batch.set_default_column_family(self._db.get_column_family_handle(cf_name))
        for element, value in zip(elements, values, strict=True):
            batch.put(element, value)
        self._db.write(batch)
        self._restored.add(name)

    def adopt_restored(self) -> None:
        """After a restore: the queues whose column families it wrote are created (taking their timers over), so the
        next snapshot carries them even before a timer service asks for them."""
        restored, self._restored = self._restored, set()
        for name in sorted(restored):
            self.create(name)

    def dispose(self) -> None:
        self._queues.clear()


def _canonical_entries(it: RdictIter) -> Iterator[tuple[int, Any, Any]]:
    it.seek_to_first()
    while it.valid():
        raw = it.key()
        time, key, namespace = _decode(raw, it.value())
        yield (raw[0] << 8) | raw[1], key, (namespace, time)
        it.next()
