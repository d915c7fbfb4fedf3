"""Keyed state in an embedded RocksDB (Flink's ``RocksDBKeyedStateBackend``, ``state.backend.type: rocksdb``).

One RocksDB instance per operator subtask, in its own directory; one column family per state (and per internal
table of the built-in operators). Every RocksDB key starts with the key group (2 bytes, big-endian), then the key,
then the namespace (:mod:`.rocksdb_key_serialization_utils`), so a key-group range is one contiguous scan. The
entries per state kind are described in :mod:`.rocksdb_stored_forms`.

Snapshots: the synchronous part opens one iterator per column family — RocksDB pins the data as of that moment,
O(number of states) — and the supplier it returns reads them into key-group blobs off the task thread. A savepoint
(and any snapshot not prepared as a checkpoint's) is in the canonical format every backend reads (the heap
backend's per key group pickles); a checkpoint carries RocksDB's own key and value bytes per key group
(:mod:`.rocksdb_native_key_groups`, as Flink's RocksDB full snapshot), which a RocksDB backend writes back as they
are (:mod:`.rocksdb_full_restore_operation`) and every other reader turns into the canonical form when it restores.
Either way a restore takes the key groups this subtask owns, so checkpoints restore at any parallelism and into
either backend. With ``execution.checkpointing.incremental`` a checkpoint is a RocksDB checkpoint whose new SST
files alone are uploaded (:mod:`.rocksdb_incremental_snapshot_strategy`), restored by
:mod:`.rocksdb_incremental_restore_operation`.

Value, reducing and aggregating state and the tables keep their hot entries decoded in a bounded write-back cache
(:mod:`.rocksdb_write_cache`); :meth:`RocksDBKeyedStateBackend.flush` writes what it holds, and everything here that
reads a column family directly (a snapshot first of all) calls it.

    >>> import tempfile
    >>> from strom.api.state import ValueStateDescriptor
    >>> backend = RocksDBKeyedStateBackend(max_parallelism=128, path=tempfile.mkdtemp())
    >>> count = backend.get_state(ValueStateDescriptor("count"))
    >>> backend.current_key = "a"
    >>> count.update(1)
    >>> dict(backend.get_table("count"))
    {'a': 1}
    >>> backend.dispose()
"""

from __future__ import annotations

import collections
import os
import shutil
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from typing import Any

from rocksdict import DBCompactionStyle, Rdict, WriteOptions

from strom.api.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueStateDescriptor,
)
from strom.api.typeinfo import TypeInformation
from strom.exceptions import CheckpointError, InvalidProgramError
from strom.runtime.state.full_snapshot_async_writer import FullSnapshotAsyncWriter
from strom.runtime.state.key_groups import KeyGroupRange, check_placement, key_group_assigner
from strom.runtime.state.rocksdb.abstract_rocksdb_state import AbstractRocksDBState
from strom.runtime.state.rocksdb.rocksdb_aggregating_state import RocksDBAggregatingState
from strom.runtime.state.rocksdb.rocksdb_full_restore_operation import CanonicalStates, restore_native_key_group
from strom.runtime.state.rocksdb.rocksdb_full_snapshot_strategy import (
    FORMAT_VERSION,
    Overlay,
    RawSource,
    StateSource,
    TimerSource,
    scan_read_options,
    write_key_groups,
    write_native_key_groups,
)
from strom.runtime.state.rocksdb.rocksdb_incremental_snapshot_strategy import (
    IncrementalSnapshot,
    RocksIncrementalSnapshotStrategy,
    all_column_families,
)
from strom.runtime.state.rocksdb.rocksdb_key_serialization_utils import (
    encode_key,
    encode_namespace,
    key_group_prefix,
)
from strom.runtime.state.rocksdb.rocksdb_list_state import RocksDBListState
from strom.runtime.state.rocksdb.rocksdb_map_state import RocksDBMapState
from strom.runtime.state.rocksdb.rocksdb_memory_controller_utils import RocksDBSharedResources, column_family_options
from strom.runtime.state.rocksdb.rocksdb_native_key_groups import is_native
from strom.runtime.state.rocksdb.rocksdb_priority_queue_set_factory import (
    TIMER_QUEUE_PREFIX,
    RocksDBPriorityQueueSetFactory,
    check_timer_service_factory,
)
from strom.runtime.state.rocksdb.rocksdb_reducing_state import RocksDBReducingState
from strom.runtime.state.rocksdb.rocksdb_stored_forms import (
    iter_stored,
    read_stored,
    remove_stored,
    write_batch_stored,
    write_stored,
)
from strom.runtime.state.rocksdb.rocksdb_tables import RocksDBNamespacedTable, RocksDBTable
from strom.runtime.state.rocksdb.rocksdb_ttl_compact_filters_manager import RocksDbTtlCompactFiltersManager
from strom.runtime.state.rocksdb.rocksdb_value_serializer import ValueCodec, value_codec
from strom.runtime.state.rocksdb.rocksdb_value_state import RocksDBValueState
from strom.runtime.state.rocksdb.rocksdb_write_cache import DEFAULT_CAPACITY, WriteCache
from strom.runtime.state.state_registration import check_new_state, merge_restored_kind, registered_state
from strom.runtime.state.state_serialization import load_state
from strom.runtime.state.ttl import TtlPolicy, wall_clock_ms
from strom.runtime.state.typed_state import typed_view

__all__ = ["RocksDBKeyedStateBackend"]

#: the canonical format (``heap_keyed_state_backend``): 2 places keys by Flink's hash; 1 was strom 0.1's
_FORMAT_VERSION = FORMAT_VERSION
_STROM_0_1_KEY_GROUPS = 1
_MAX_KEY_GROUPS = 1 << 15
_MISSING: Any = object()
_VOID = encode_namespace(None)
#: keys whose encoded bytes are kept (equal keys encode equally, so a dict of them is a valid cache)
_KEY_CACHE_SIZE = 1 << 16
#: expired TTL entries a snapshot found, re-checked and deleted on the task thread per checkpoint (at most)
CLEANUP_BUDGET = 1000

_STATE_CLASSES: dict[str, type[AbstractRocksDBState]] = {
    cls.kind: cls
    for cls in (RocksDBValueState, RocksDBListState, RocksDBMapState, RocksDBReducingState, RocksDBAggregatingState)
}


def _close(db: Rdict, path: str, remove: bool) -> None:
    try:
        db.close()
    finally:
        if remove:
            shutil.rmtree(path, ignore_errors=True)


class RocksDBKeyedStateBackend:
    """Keyed state of one operator of one subtask in a RocksDB instance at ``path`` (created fresh)."""

    def __init__(
        self,
        *,
        max_parallelism: int,
        path: str,
        resources: RocksDBSharedResources | None = None,
        ttl_time_provider: Callable[[], int] | None = None,
        remove_on_dispose: bool = True,
        key_type: TypeInformation | None = None,
        timer_service_factory: str = "ROCKSDB",
        compaction_style: str = "LEVEL",
        write_cache_size: int = DEFAULT_CAPACITY,
    ) -> None:
        if not 1 <= max_parallelism <= _MAX_KEY_GROUPS:
            raise InvalidProgramError(
                f"expected a max parallelism between 1 and {_MAX_KEY_GROUPS} for RocksDB state (2-byte key-group "
                f"prefix, as Flink); got {max_parallelism}; hint: set_max_parallelism(...) lower"
            )
        self.max_parallelism = max_parallelism
        #: key -> key group, as the KeyGroupStreamPartitioner routes keys of ``key_type`` (``None``: untyped)
        self.key_group_of = key_group_assigner(max_parallelism, key_type)
        self.ttl_time_provider: Callable[[], int] = ttl_time_provider or wall_clock_ms
        self.current_key: Any = None
        self.current_namespace: Any = None
        self.path = path
        self._options = column_family_options(resources)
        if compaction_style.strip().upper() == "UNIVERSAL":  # state.backend.rocksdb.compaction.style
            self._options.set_compaction_style(DBCompactionStyle.universal())
        self.db = Rdict(path, self._options)
        self._write_options = WriteOptions()
        # no write-ahead log, as Flink's RocksDB backend: checkpoints make state durable, never the local instance
        setattr(self._write_options, "disable_wal", True)  # noqa: B010 - a property at run time, a method in the stub
        self.db.set_write_options(self._write_options)
        self._cfs: dict[str, Rdict] = {}
        self._states: dict[str, tuple[StateDescriptor, Any]] = {}
        self._kinds: dict[str, tuple[str, bool]] = {}
        self._ttl: dict[str, TtlPolicy] = {}
        self._codecs: dict[str, ValueCodec] = {}
        self._key_obj: Any = _MISSING
        self._key_bytes = b""
        self._key_cache: dict[Any, bytes] = {}
        self._ns_obj: Any = None
        self._ns_bytes = _VOID
        self._expired: collections.deque[tuple[str, bytes]] = collections.deque(maxlen=100 * CLEANUP_BUDGET)
        #: where the timers of this backend's operators live (``state.backend.rocksdb.timer-service.factory``):
        #: ``ROCKSDB`` — a column family per timer queue; ``HEAP`` — ``None``, the timer service's own heap
        self.priority_queue_factory = (
            RocksDBPriorityQueueSetFactory(self.key_group_of, self.db, self._options, self._write_options)
            if check_timer_service_factory(timer_service_factory) == "ROCKSDB"
            else None
        )
        #: TTL cleanup without reads: a sweep on the task thread standing in for Flink's compaction filter
        self.ttl_compact_filters = RocksDbTtlCompactFiltersManager(self._swept_column_family)
        self._remove_on_dispose = remove_on_dispose
        self._finalizer = weakref.finalize(self, _close, self.db, path, remove_on_dispose)
        #: incremental checkpoints: what this instance uploaded, and which checkpoint it knows as completed
        self.incremental = RocksIncrementalSnapshotStrategy()
        #: set by :meth:`prepare_incremental_snapshot` for the next :meth:`async_snapshot` only
        self._incremental_request: tuple[int, KeyGroupRange] | None = None
        #: set by :meth:`prepare_full_snapshot`: the next full :meth:`async_snapshot` is a checkpoint's (native)
        self._native_request = False
        #: decoded stored forms of the single-entry states and tables, written back in batches
        self.write_cache = WriteCache(self, write_cache_size)

    # -- current key and namespace -------------------------------------------------------------------------
    def set_current_key(self, key: Any) -> None:
        self.current_key = key

    def get_current_key(self) -> Any:
        return self.current_key

    def set_current_namespace(self, namespace: Any) -> None:
        self.current_namespace = namespace

    def get_current_namespace(self) -> Any:
        return self.current_namespace

    def key_bytes(self, key: Any) -> bytes:
        """key group | key of ``key`` (Flink's ``SerializedCompositeKeyBuilder.setKeyAndKeyGroup``), cached."""
        cache = self._key_cache
        found = cache.get(key)
        if found is None:
            found = key_group_prefix(self.key_group_of(key)) + encode_key(key)
            if len(cache) >= _KEY_CACHE_SIZE:
                cache.clear()
            cache[key] = found
        return found

    def composite_key(self) -> bytes:
        """key group | current key | current namespace; both parts cached while the same objects stay current."""
        key = self.current_key
        if key is not self._key_obj:
            self._key_bytes = self.key_bytes(key)
            self._key_obj = key
        ns = self.current_namespace
        if ns is not self._ns_obj:
            self._ns_bytes = encode_namespace(ns)
            self._ns_obj = ns
        return self._key_bytes + self._ns_bytes

    # -- column families -------------------------------------------------------------------------------------
    def flush(self) -> None:
        """Write every entry the write cache holds dirty into RocksDB (one ``WriteBatch``): call it before reading
        the instance other than through the state objects and tables (snapshots, checkpoints of its files)."""
        self.write_cache.flush()

    def column_family(self, name: str) -> Any:
        """The column family of state ``name`` to read or write directly: the write cache's entries of that state
        are written into it first and then forgotten."""
        self.write_cache.invalidate(name)
        return self.db_column_family(name)

    def _swept_column_family(self, name: str) -> Any | None:
        """The TTL sweep's view of state ``name``: its column family with the write cache's entries written and
        forgotten (the sweep deletes behind the cache), ``None`` before the state has one."""
        return self.column_family(name) if name in self._cfs else None

    def db_column_family(self, name: str) -> Any:
        """The column family of ``name`` as it is (created on first use): what the write cache reads and writes."""
        cf = self._cfs.get(name)
        if cf is None:
            cf = self._cfs[name] = self.db.create_column_family(name, self._options)
            cf.set_write_options(self._write_options)
        return cf

    def kind_of(self, name: str) -> str:
        return self._kinds.get(name, ("table", False))[0]

    def codec(self, name: str) -> ValueCodec:
        codec = self._codecs.get(name)
        if codec is None:
            codec = self._codecs[name] = value_codec(None, ttl=self._kinds.get(name, ("table", False))[1], state=name)
        return codec

    # -- tables ----------------------------------------------------------------------------------------------
    def get_table(self, name: str) -> MutableMapping[Any, Any]:
        """The void-namespace entries of state ``name`` as a write-through ``key → stored form`` mapping."""
        return RocksDBTable(self, name)

    def get_namespaced_table(self, name: str) -> MutableMapping[Any, MutableMapping[Any, Any]]:
        """The other namespaces of state ``name``: ``key → namespace → stored form``, write-through at both levels."""
        return RocksDBNamespacedTable(self, name)

    # -- registration ----------------------------------------------------------------------------------------
    def get_state(self, descriptor: StateDescriptor) -> Any:
        """The state object of ``descriptor`` (created on first use; the same object afterwards)."""
        known = registered_state(self._states, descriptor)
        if known is not None:
            return known
        kind, has_ttl = check_new_state(self._kinds, descriptor)
        self.write_cache.invalidate(descriptor.name)  # a table of that name cached it under another kind or codec
        ttl = TtlPolicy(descriptor.ttl_config, self.ttl_time_provider) if descriptor.ttl_config else None
        codec = value_codec(_value_type_info(descriptor), ttl=has_ttl, state=descriptor.name)
        self._codecs[descriptor.name] = codec
        self._kinds[descriptor.name] = (kind, has_ttl)
        if ttl is not None and descriptor.ttl_config is not None:
            self._ttl[descriptor.name] = ttl
            self.ttl_compact_filters.register(descriptor.name, ttl, descriptor.ttl_config)
        state: Any = typed_view(_STATE_CLASSES[kind](self, descriptor, ttl, codec), descriptor)
        self._states[descriptor.name] = (descriptor, state)
        return state

    def get_list_state(self, descriptor: ListStateDescriptor) -> Any:
        return self._typed(descriptor, ListStateDescriptor)

    def get_map_state(self, descriptor: MapStateDescriptor) -> Any:
        return self._typed(descriptor, MapStateDescriptor)

    def get_reducing_state(self, descriptor: ReducingStateDescriptor) -> Any:
        return self._typed(descriptor, ReducingStateDescriptor)

    def get_aggregating_state(self, descriptor: AggregatingStateDescriptor) -> Any:
        return self._typed(descriptor, AggregatingStateDescriptor)

    def _typed(self, descriptor: StateDescriptor, expected: type) -> Any:
        if not isinstance(descriptor, expected):
            raise InvalidProgramError(
                f"expected a {expected.__name__}; got a {type(descriptor).__name__}; "
                f"hint: use get_state(...) for any kind of descriptor"
            )
        return self.get_state(descriptor)

    def num_keys(self) -> int:
        self.flush()
        keys: set[Any] = set()
        for name, cf in self._cfs.items():
            keys.update(key for _, key, _, _ in iter_stored(cf.items(), self.kind_of(name), self.codec(name)))
        return len(keys)

    # -- snapshot and restore --------------------------------------------------------------------------------
    def prepare_for_snapshot(self) -> None:
        """Where a snapshot that reads the database's files (incremental) starts: whatever the task holds in front of
        RocksDB (the write cache) is written into it here, before the snapshot sees the database. (A canonical full
        snapshot copies the cache's entries instead: :meth:`async_snapshot`.)"""
        self.flush()

    def prepare_incremental_snapshot(
        self, checkpoint_id: int | None, key_group_range: KeyGroupRange | None = None
    ) -> None:
        """The next :meth:`async_snapshot` is checkpoint ``checkpoint_id`` of an incremental job, of the key groups
        ``key_group_range`` (``None``: a canonical snapshot, as for a savepoint)."""
        if checkpoint_id is None or key_group_range is None:
            self._incremental_request = None
        else:
            self._incremental_request = (checkpoint_id, key_group_range)

    def prepare_full_snapshot(self, *, native: bool) -> None:
        """The next full :meth:`async_snapshot` is a checkpoint's (``native``: RocksDB's bytes as they are, the format
        of :mod:`.rocksdb_native_key_groups`) or a savepoint's (canonical, which every backend restores)."""
        self._native_request = native

    def async_snapshot(self) -> Callable[[], dict[int, bytes]]:
        """Synchronous part (Flink's ``RocksFullSnapshotStrategy``): delete expired TTL entries an earlier snapshot
        found, copy the write cache's dirty entries that cannot change in place (the others are written into
        RocksDB), and open one iterator per column family — each reads the database as of now: the point-in-time
        view, O(number of states + dirty entries), nothing encoded or read. Returns a :class:`FullSnapshotAsyncWriter`
        that makes the key-group blobs from those iterators and copies, key group by key group, off the task thread
        (:mod:`.rocksdb_full_snapshot_strategy`): canonical ones, or RocksDB's bytes after
        :meth:`prepare_full_snapshot` ``(native=True)``. After :meth:`prepare_incremental_snapshot`: a flush and a
        RocksDB checkpoint instead (:class:`IncrementalSnapshot`, uploaded by the asynchronous part)."""
        request, self._incremental_request = self._incremental_request, None
        native, self._native_request = self._native_request, False
        self._cleanup_found_expired(CLEANUP_BUDGET)
        if request is not None:
            self.prepare_for_snapshot()
            return self.incremental_snapshot(*request)
        overlays = [
            Overlay(name, self.kind_of(name), self._ttl.get(name), entries)
            for name, entries in self.write_cache.freeze().items()
        ]
        now = self.ttl_time_provider() if self._ttl else 0
        if native:
            return self._native_snapshot(overlays, now)
        states = [
            StateSource(name, self.kind_of(name), self.codec(name), self._ttl.get(name), cf.iter())
            for name, cf in sorted(self._cfs.items())
        ]
        timers = [
            TimerSource(name, entries)
            for name, entries in (
                self.priority_queue_factory.snapshot_sources() if self.priority_queue_factory is not None else []
            )
        ]
        kinds = dict(self._kinds)
        expired = self._expired
        key_group_of = self.key_group_of
        backend = self  # the instance stays open (not collected) until the writer has read its iterators

        def write() -> Iterator[tuple[int, bytes]]:
            assert backend.db is not None
            return write_key_groups(states, timers, kinds, now, expired, overlays, key_group_of)

        def release() -> None:  # the iterators go: RocksDB may drop the memtables and files they pinned
            states.clear()
            timers.clear()
            overlays.clear()

        return FullSnapshotAsyncWriter(write, release=release)

    def _native_snapshot(self, overlays: list[Overlay], now: int) -> FullSnapshotAsyncWriter:
        """The rest of a checkpoint's synchronous part: an iterator per column family (states, tables, timer queues);
        the writer collects their bytes as they are (:func:`write_native_key_groups`)."""
        scan = scan_read_options()
        sources = [
            RawSource(name, self.kind_of(name), self._ttl.get(name), cf.iter(scan))
            for name, cf in sorted(self._cfs.items())
        ]
        factory = self.priority_queue_factory
        if factory is not None:
            sources += [RawSource(name, "timers", None, it) for name, it in factory.native_sources(scan)]
        laid = {overlay.name: (overlay, self.codec(overlay.name)) for overlay in overlays}
        held = [scan]  # the read options live as long as the iterators
        kinds = dict(self._kinds)
        expired = self._expired
        key_group_of = self.key_group_of
        backend = self  # the instance stays open (not collected) until the writer has read its iterators

        def write() -> Iterator[tuple[int, bytes]]:
            assert backend.db is not None
            return write_native_key_groups(sources, kinds, now, expired, laid, key_group_of)

        def release() -> None:  # the iterators go: RocksDB may drop the memtables and files they pinned
            sources.clear()
            laid.clear()
            held.clear()

        return FullSnapshotAsyncWriter(write, release=release)

    def snapshot(self) -> dict[int, bytes]:
        """key group → canonical bytes of every non-empty key group (``async_snapshot()()``)."""
        return dict(self.async_snapshot()())

    def incremental_snapshot(self, checkpoint_id: int, key_group_range: KeyGroupRange) -> IncrementalSnapshot:
        """The synchronous part of an incremental checkpoint: flush and a local RocksDB checkpoint."""
        return self.incremental.snapshot(self, checkpoint_id, key_group_range)

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """The next incremental checkpoint may reference the SST files ``checkpoint_id`` uploaded."""
        self.incremental.notify_checkpoint_complete(checkpoint_id)

    def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        self.incremental.notify_checkpoint_aborted(checkpoint_id)

    # -- what the incremental snapshot and restore read and replace ------------------------------------------
    @property
    def options(self) -> Any:
        return self._options

    def column_families(self) -> dict[str, Any]:
        """name → column family of every state and internal table (all are in a snapshot)."""
        return dict(self._cfs)

    def registered_kinds(self) -> dict[str, tuple[str, bool]]:
        return dict(self._kinds)

    def merge_restored_kinds(self, kinds: Mapping[str, Any]) -> None:
        for name, restored in kinds.items():
            self._merge_kind(name, tuple(restored))

    def reopen_from(self, download: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
        """Replace this (empty, just created) instance by the database ``download(path)`` puts into its directory
        and describes by the meta it returns; on failure the instance is empty again."""
        self.write_cache.flush()
        self.write_cache = WriteCache(self, self.write_cache.capacity)  # its caches hold the old instance's handles
        self._finalizer.detach()
        self._cfs.clear()
        self.db.close()
        shutil.rmtree(self.path, ignore_errors=True)
        os.makedirs(self.path, exist_ok=True)
        families: list[str] = []
        try:
            meta = download(self.path)
            families = all_column_families(self.path, self._options)
            self._open(dict.fromkeys(families, self._options))
        except BaseException:
            shutil.rmtree(self.path, ignore_errors=True)
            os.makedirs(self.path, exist_ok=True)
            self._open({})
            raise
        if self.priority_queue_factory is not None:  # its queues take their column families from the new instance
            self.priority_queue_factory = RocksDBPriorityQueueSetFactory(
                self.key_group_of, self.db, self._options, self._write_options
            )
        self._adopt_families(families)
        return meta

    def _adopt_families(self, families: Iterable[str]) -> None:
        """The column families of a database restored from its files: states and tables into :attr:`_cfs`; timer
        queues (``_timer_queue/<name>``) are the priority queue factory's, which takes them over with their timers."""
        for name in families:
            if name.startswith(TIMER_QUEUE_PREFIX):
                if self.priority_queue_factory is not None:
                    self.priority_queue_factory.create(name[len(TIMER_QUEUE_PREFIX) :])
                continue
            cf = self._cfs[name] = self.db.get_column_family(name)
            cf.set_write_options(self._write_options)

    def _open(self, families: dict[str, Any]) -> None:
        self.db = Rdict(self.path, self._options, column_families=families or None)
        self.db.set_write_options(self._write_options)
        self._finalizer = weakref.finalize(self, _close, self.db, self.path, self._remove_on_dispose)

    @classmethod
    def open_existing(cls, path: str, meta: Mapping[str, Any], *, max_parallelism: int) -> RocksDBKeyedStateBackend:
        """A backend over the database in ``path`` (a downloaded checkpoint), its states known from ``meta``."""
        backend = cls(max_parallelism=max_parallelism, path=path, remove_on_dispose=False)
        backend._adopt_families(all_column_families(path, backend.options))  # RocksDB timers: snapshotted canonically
        backend.merge_restored_kinds(meta["kinds"])
        return backend

    def _cleanup_found_expired(self, budget: int) -> None:
        """Delete (after re-checking: the task may have written them since) expired entries snapshots found."""
        expired = self._expired
        if not expired:
            return
        self.write_cache.invalidate()  # entries are deleted below, behind the cache's back
        for _ in range(min(budget, len(expired))):
            name, prefix = expired.popleft()
            policy = self._ttl.get(name)
            cf = self._cfs.get(name)
            if policy is None or cf is None:
                continue
            kind = self.kind_of(name)
            codec = self.codec(name)
            stored = read_stored(cf, kind, codec, prefix)
            if stored is None:
                continue
            fresh = policy.purge(kind, stored, policy.clock())
            if fresh is None:
                remove_stored(cf, kind, prefix)
            elif kind in ("list", "map") and len(fresh) != len(stored):
                write_stored(cf, kind, codec, prefix, fresh)

    def cleanup_expired_state(self) -> None:
        """A full pass over every state with a TTL, deleting what has expired (Flink's full-snapshot cleanup run
        on demand; the compaction filter's job, which rocksdict cannot host)."""
        self.flush()
        for name in list(self._ttl):
            policy = self._ttl[name]
            kind = self.kind_of(name)
            codec = self.codec(name)
            now = policy.clock()
            for kg, key, ns, stored in list(iter_stored(self.column_family(name).items(), kind, codec)):
                fresh = policy.purge(kind, stored, now)
                if fresh is None or (kind in ("list", "map") and len(fresh) != len(stored)):
                    self._expired.append((name, key_group_prefix(kg) + encode_key(key) + encode_namespace(ns)))
        self._cleanup_found_expired(len(self._expired))

    def restore(self, blobs: Mapping[int, bytes], key_group_range: KeyGroupRange | None = None) -> None:
        """Write the key groups of a snapshot in: a checkpoint's RocksDB bytes as they are, a canonical snapshot's
        (from either backend) encoded; any parallelism. Keyed state of strom 0.1 (another key hash) restores where
        its keys still belong, as the heap backend's."""
        self.write_cache.invalidate()
        for kg, blob in blobs.items():
            what = f"keyed state of key group {kg}"
            if is_native(blob):
                timers = restore_native_key_group(self, blob, what)
                if timers:
                    self._write_canonical(kg, timers)
                continue
            payload = load_state(blob, what)
            version = payload.get("version") if isinstance(payload, dict) else None
            if version not in (_FORMAT_VERSION, _STROM_0_1_KEY_GROUPS):
                raise CheckpointError(
                    f"expected keyed state of format version {_FORMAT_VERSION} for key group {kg}; got "
                    f"{type(payload).__name__} {version if version is not None else ''}; "
                    "hint: the checkpoint was written by an incompatible strom version"
                )
            if version == _STROM_0_1_KEY_GROUPS:
                if key_group_range is not None:
                    check_placement(kg, payload["states"], key_group_range, self.key_group_of)
                self._restore_rehashed(payload)
                continue
            for name, restored in payload["meta"].items():
                self._merge_kind(name, tuple(restored))
            self._write_canonical(kg, payload["states"])
        if self.priority_queue_factory is not None:
            self.priority_queue_factory.adopt_restored()

    def _write_canonical(self, kg: int, states: CanonicalStates) -> None:
        """The canonical form of key group ``kg``'s states, encoded into their column families."""
        from rocksdict import WriteBatch

        kgp = key_group_prefix(kg)
        for name, (flat, namespaced) in states.items():
            kind = self.kind_of(name)
            codec = self.codec(name)
            cf = self.column_family(name)
            batch = WriteBatch(raw_mode=True)
            batch.set_default_column_family(self.db.get_column_family_handle(name))
            for key, stored in flat.items():
                write_batch_stored(batch, kind, codec, kgp + encode_key(key) + _VOID, stored)
            for key, per_ns in namespaced.items():
                key_prefix = kgp + encode_key(key)
                for ns, stored in per_ns.items():
                    write_batch_stored(batch, kind, codec, key_prefix + encode_namespace(ns), stored)
            cf.write(batch)

    def _restore_rehashed(self, payload: Mapping[str, Any]) -> None:
        """strom 0.1's keyed state: each key under its key group by today's hash."""
        from rocksdict import WriteBatch

        for name, restored in payload["meta"].items():
            self._merge_kind(name, tuple(restored))
        for name, (flat, namespaced) in payload["states"].items():
            kind, codec, cf = self.kind_of(name), self.codec(name), self.column_family(name)
            batch = WriteBatch(raw_mode=True)
            batch.set_default_column_family(self.db.get_column_family_handle(name))
            for key, stored in flat.items():
                write_batch_stored(batch, kind, codec, self.key_bytes(key) + _VOID, stored)
            for key, per_ns in namespaced.items():
                for ns, stored in per_ns.items():
                    write_batch_stored(batch, kind, codec, self.key_bytes(key) + encode_namespace(ns), stored)
            cf.write(batch)

    def _merge_kind(self, name: str, restored: tuple[Any, ...]) -> None:
        if merge_restored_kind(self._kinds, name, restored):
            self._codecs.pop(name, None)  # a table's codec made before knew no TTL

    # -- lifecycle -------------------------------------------------------------------------------------------
    def dispose(self) -> None:
        """Close the RocksDB instance and delete its directory (idempotent; also when the backend is collected)."""
        if self._finalizer.alive and not self._remove_on_dispose:
            self.flush()  # the instance is kept: it holds every write
        self.write_cache = WriteCache(self, self.write_cache.capacity)
        self._cfs.clear()
        if self.priority_queue_factory is not None:
            self.priority_queue_factory.dispose()
        self._finalizer()


def _value_type_info(descriptor: StateDescriptor) -> Any:
    if isinstance(descriptor, MapStateDescriptor):
        return descriptor.value_type_info
    if isinstance(descriptor, AggregatingStateDescriptor):
        return None  # the accumulator's type is declared, not converted: pickled
    if isinstance(descriptor, ValueStateDescriptor | ListStateDescriptor | ReducingStateDescriptor):
        return descriptor.get_type_info()
    return None
