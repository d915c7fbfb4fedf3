"""Canonical full snapshots of the RocksDB backend (Flink's ``RocksFullSnapshotStrategy`` with its
``RocksStatesPerKeyGroupMergeIterator``).

Synchronous part, on the task thread (:func:`full_snapshot_sources`): the backend has flushed its write cache into
RocksDB; one iterator is opened per column family (states, tables, timer queues). A RocksDB iterator reads the
database as of its creation — the sequence number it pins is Flink's ``db.getSnapshot()`` — so whatever the task
writes afterwards is not seen, and nothing is read or copied yet: O(number of states).

Asynchronous part, off the task thread (:func:`write_key_groups`): every column family is sorted by key group (the
2-byte prefix), so the iterators are merged key group by key group: the entries of one key group in every state are
decoded into the canonical form (the heap backend's per key group payload), pickled, and handed on before the next
key group is read. The writer holds one key group's entries at a time, never the whole state
(:class:`~strom.runtime.state.full_snapshot_async_writer.FullSnapshotAsyncWriter` streams them into the checkpoint
file). TTL entries found expired are left out and queued for deletion on the task thread.
"""

from __future__ import annotations

import collections
import itertools
from collections.abc import Callable, Iterator, Mapping
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
from strom.runtime.state.state_serialization import dump_state
from strom.runtime.state.ttl import TtlPolicy

__all__ = ["FORMAT_VERSION", "StateSource", "TimerSource", "write_key_groups"]

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


def write_key_groups(
    states: list[StateSource],
    timers: list[TimerSource],
    kinds: Mapping[str, tuple[str, bool]],
    now: int,
    expired: collections.deque[tuple[str, bytes]],
) -> Iterator[tuple[int, bytes]]:
    """The canonical bytes of each non-empty key group, in key-group order, merged from every source one key group
    at a time; expired TTL entries (at ``now``) are left out and their RocksDB keys appended to ``expired``."""
    readers: list[tuple[Iterator[tuple[int, Any]], Callable[[_States, Iterator[Any]], None]]] = []
    for state in states:
        readers.append((itertools.groupby(state.entries(), _KEY_GROUP), _state_adder(state, now, expired)))
    for timer in timers:
        readers.append((itertools.groupby(timer.timers, _KEY_GROUP), _timer_adder(timer.name)))
    heads: dict[int, tuple[int, Iterator[Any]]] = {}
    for i, (groups, _) in enumerate(readers):
        head = next(groups, None)
        if head is not None:
            heads[i] = head
    while heads:
        kg = min(head[0] for head in heads.values())
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
        if payload:
            meta = {name: kinds[name] for name in payload if name in kinds}
            yield kg, dump_state({"version": FORMAT_VERSION, "meta": meta, "states": payload}, payload, "keyed state")


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
