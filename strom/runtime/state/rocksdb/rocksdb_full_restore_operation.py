"""Restore of a RocksDB checkpoint's key groups into a RocksDB backend (Flink's ``RocksDBFullRestoreOperation``,
which writes the key/value bytes of each key group of a full snapshot back with a ``WriteBatch`` per state).

A key group in the RocksDB format (:mod:`.rocksdb_native_key_groups`) carries each column family's entries as
RocksDB held them: they are written back as they are, one ``WriteBatch`` per section, no entry decoded. A list
state's elements keep their sequence suffixes; the next ones added sort after them
(:func:`~.rocksdb_stored_forms.advance_sequence`). Timer queues go into the backend's timer column families; a
backend whose timers are on the heap (``state.backend.rocksdb.timer-service.factory: HEAP``) gets them in the
canonical form instead, the timer tables its timer services read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rocksdict import WriteBatch

from strom.runtime.state.rocksdb.rocksdb_native_key_groups import decode_key_group
from strom.runtime.state.rocksdb.rocksdb_priority_queue_set_factory import (
    TIMER_QUEUE_PREFIX,
    canonical_timers,
    timer_table,
)
from strom.runtime.state.rocksdb.rocksdb_stored_forms import advance_sequence

if TYPE_CHECKING:
    from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend

__all__ = ["restore_native_key_group"]

#: a state name → (void-namespace entries, namespaced entries): the canonical form of a part of a key group
CanonicalStates = dict[str, tuple[dict[Any, Any], dict[Any, dict[Any, Any]]]]


def restore_native_key_group(backend: RocksDBKeyedStateBackend, blob: bytes, what: str) -> CanonicalStates:
    """Write the sections of one key group in the RocksDB format into ``backend``; return, in the canonical form,
    what it keeps elsewhere (the timers of a backend with heap timers), for its canonical restore."""
    meta, sections = decode_key_group(blob, what)
    backend.merge_restored_kinds(meta)
    leftover: CanonicalStates = {}
    for name, keys, values in sections:
        if name.startswith(TIMER_QUEUE_PREFIX):
            queue = name[len(TIMER_QUEUE_PREFIX) :]
            factory = backend.priority_queue_factory
            if factory is not None:
                factory.restore_native(queue, keys, values)
                continue
            namespaced = leftover.setdefault(timer_table(queue), ({}, {}))[1]
            for key, entry in canonical_timers(keys, values):
                namespaced.setdefault(key, {})[entry] = True
            continue
        cf = backend.column_family(name)  # the write cache's entries of the state go first
        batch = WriteBatch(raw_mode=True)
        batch.set_default_column_family(backend.db.get_column_family_handle(name))
        put = batch.put
        for key, value in zip(keys, values, strict=True):
            put(key, value)
        cf.write(batch)
        if backend.kind_of(name) == "list" and keys:
            advance_sequence(max(key[-8:] for key in keys))
    return leftover
