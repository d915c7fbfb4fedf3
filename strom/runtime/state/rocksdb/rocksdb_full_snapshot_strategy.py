"""Canonical full snapshots of the RocksDB backend (Flink's ``RocksFullSnapshotStrategy`` with its
``RocksStatesPerKeyGroupMergeIterator``).

Synchronous part, on the task thread (``RocksDBKeyedStateBackend.async_snapshot``): the write cache's dirty entries
are not flushed (encoding and writing them was most of the pause) but copied — a dict copy per state, the stored
forms shared, which is a point-in-time copy only for forms that cannot change in place (bytes, numbers, strings,
tuples of them); the other dirty entries are written into RocksDB (their bytes are their copy). Then one iterator
is opened per column family (states, tables, timer queues). A RocksDB iterator reads the database as of its
creation — the sequence number it pins is Flink's ``db.getSnapshot()`` — so whatever the task writes afterwards is
not seen, and nothing is read yet: O(number of states + dirty entries).

Asynchronous part, off the task thread (:func:`write_key_groups`): every column family is sorted by key group (the
2-byte prefix), so the iterators are merged key group by key group: the entries of one key group in every state are
decoded into the canonical form (the heap backend's per key group payload), the copied cache entries of that key
group laid over them (:class:`Overlay`), pickled, and handed on before the next key group is read. The writer
holds one key group's entries at a time, never the whole state
(:class:`~strom.runtime.state.full_snapshot_async_writer.FullSnapshotAsyncWriter` streams them into the checkpoint
file). TTL entries found expired are left out and queued for deletion on the task thread.
"""

from __future__ import annotations

import collections
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from strom.runtime.state.rocksdb.rocksdb_key_serialization_utils import (
    encode_key,
    encode_namespace,
    key_group_prefix,
)
from strom.runtime.state.rocksdb.rocksdb_stored_forms import iter_entries, iter_stored
from strom.runtime.state.rocksdb.rocksdb_value_serializer import ValueCodec
from strom.runtime.state.rocksdb.rocksdb_write_cache import NAMESPACED
from strom.runtime.state.state_serialization import dump_state
from strom.runtime.state.ttl import TtlPolicy

__all__ = ["FORMAT_VERSION", "Overlay", "StateSource", "TimerSource", "write_key_groups"]

#: the canonical format (``heap_keyed_state_backend``): 2 places keys by Flink's hash
FORMAT_VERSION = 2

_KEY_GROUP = itemgetter(0)

#: state name → (flat entries key → stored form, namespaced entries key → namespace → stored form)
_States = dict[str, tuple[dict[Any, Any], dict[Any, dict[Any, Any]]]]


@dataclass(frozen=True, slots=True)
class StateSource:
    """One state's (or table's) column family as the synchronous part found it: an iterator opened then."""

    name: str
    kind: str
    codec: ValueCodec
    policy: TtlPolicy | None
    iterator: Any  # RdictIter

    def entries(self) -> Iterator[tuple[int, Any, Any, Any]]:
        return iter_stored(iter_entries(self.iterator), self.kind, self.codec)


@dataclass(frozen=True, slots=True)
class TimerSource:
    """One RocksDB timer queue: ``(key group, key, (namespace, timestamp))`` in key-group order, read lazily."""

    name: str  # its canonical table name
    timers: Iterator[tuple[int, Any, Any]]


@dataclass(frozen=True, slots=True)
class Overlay:
    """The write cache's dirty entries of one state the synchronous part copied instead of flushing: cache key →
    stored form (``None``: deleted), laid over RocksDB's view of the state."""

    name: str
    kind: str
    policy: TtlPolicy | None
    entries: Mapping[Any, Any]

    def by_key_group(self, key_group_of: Callable[[Any], int]) -> dict[int, list[tuple[Any, Any, Any]]]:
        """``(key, namespace, stored form)`` of every entry, per key group."""
        out: dict[int, list[tuple[Any, Any, Any]]] = {}
        for ck, stored in self.entries.items():
            if type(ck) is tuple and len(ck) == 3 and ck[0] is NAMESPACED:
                key, ns = ck[1], ck[2]
            else:
                key, ns = ck, None
            out.setdefault(key_group_of(key), []).append((key, ns, stored))
        return out


def write_key_groups(
    states: list[StateSource],
    timers: list[TimerSource],
    kinds: Mapping[str, tuple[str, bool]],
    now: int,
    expired: collections.deque[tuple[str, bytes]],
    overlays: Sequence[Overlay] = (),
    key_group_of: Callable[[Any], int] | None = None,
) -> Iterator[tuple[int, bytes]]:
    """The canonical bytes of each non-empty key group, in key-group order, merged from every source one key group
    at a time, each state's ``overlays`` (the write cache's copied entries) laid over it; expired TTL entries (at
    ``now``) are left out and their RocksDB keys appended to ``expired``."""
    readers: list[tuple[Iterator[tuple[int, Any]], Callable[[_States, Iterator[Any]], None]]] = []
    for state in states:
        readers.append((itertools.groupby(state.entries(), _KEY_GROUP), _state_adder(state, now, expired)))
    for timer in timers:
        readers.append((itertools.groupby(timer.timers, _KEY_GROUP), _timer_adder(timer.name)))
    order = [state.name for state in states] + [timer.name for timer in timers]
    laid = [(overlay, overlay.by_key_group(key_group_of)) for overlay in overlays if key_group_of is not None]
    pending = sorted({kg for _, per_kg in laid for kg in per_kg}, reverse=True)  # key groups only overlays hold
    heads: dict[int, tuple[int, Iterator[Any]]] = {}
    for i, (groups, _) in enumerate(readers):
        head = next(groups, None)
        if head is not None:
            heads[i] = head
    while heads or pending:
        kg = min([head[0] for head in heads.values()] + pending[-1:])
        if pending and pending[-1] == kg:
            pending.pop()
        payload: _States = {}
        for i in sorted(heads):
            head_kg, group = heads[i]
            if head_kg != kg:
                continue
            groups, add = readers[i]
            add(payload, group)  # the whole group, before its reader moves on
            following = next(groups, None)
            if following is None:
                del heads[i]
            else:
                heads[i] = following
        for overlay, per_kg in laid:
            entries = per_kg.get(kg)
            if entries:
                _lay(payload, overlay, entries, now)
        if payload:
            payload = {name: payload[name] for name in order if name in payload}
            meta = {name: kinds[name] for name in payload if name in kinds}
            yield kg, dump_state({"version": FORMAT_VERSION, "meta": meta, "states": payload}, payload, "keyed state")


def _lay(payload: _States, overlay: Overlay, entries: list[tuple[Any, Any, Any]], now: int) -> None:
    """The overlay's entries of one key group over what RocksDB held of its state (``None``: deleted since)."""
    flat, namespaced = payload.get(overlay.name) or ({}, {})
    policy, kind = overlay.policy, overlay.kind
    for key, ns, stored in entries:
        if stored is not None and policy is not None:
            stored = policy.purge(kind, stored, now)
        if ns is None:
            if stored is None:
                flat.pop(key, None)
            else:
                flat[key] = stored
            continue
        per_ns = namespaced.get(key)
        if stored is not None:
            if per_ns is None:
                per_ns = namespaced[key] = {}
            per_ns[ns] = stored
        elif per_ns is not None:
            per_ns.pop(ns, None)
            if not per_ns:
                del namespaced[key]  # the canonical form has no key without a namespace
    if flat or namespaced:
        payload[overlay.name] = (flat, namespaced)
    else:
        payload.pop(overlay.name, None)


def _state_adder(
    state: StateSource, now: int, expired: collections.deque[tuple[str, bytes]]
) -> Callable[[_States, Iterator[Any]], None]:
    name, kind, policy = state.name, state.kind, state.policy

    def add(payload: _States, group: Iterator[tuple[int, Any, Any, Any]]) -> None:
        flat: dict[Any, Any] = {}
        namespaced: dict[Any, dict[Any, Any]] = {}
        for kg, key, ns, stored in group:
            if policy is not None:
                fresh = policy.purge(kind, stored, now)
                if fresh is None or (kind in ("list", "map") and len(fresh) != len(stored)):
                    expired.append((name, key_group_prefix(kg) + encode_key(key) + encode_namespace(ns)))
                if fresh is None:
                    continue
                stored = fresh
            if ns is None:
                flat[key] = stored
            else:
                per_ns = namespaced.get(key)
                if per_ns is None:
                    per_ns = namespaced[key] = {}
                per_ns[ns] = stored
        if flat or namespaced:
            payload[name] = (flat, namespaced)

    return add


def _timer_adder(name: str) -> Callable[[_States, Iterator[Any]], None]:
    def add(payload: _States, group: Iterator[tuple[int, Any, Any]]) -> None:
        namespaced = payload.setdefault(name, ({}, {}))[1]
        for _, key, ns in group:
            namespaced.setdefault(key, {})[ns] = True

    return add
