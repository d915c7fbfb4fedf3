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

That canonical form is what a savepoint (and a direct ``async_snapshot()``) writes. A checkpoint writes RocksDB's own
bytes instead (:func:`write_native_key_groups`, the format of :mod:`.rocksdb_native_key_groups`), as Flink's RocksDB
full snapshot does: per key group the entries each iterator returns, collected as they are — no decoding, no
pickling — with the copied cache entries encoded and laid over them and expired TTL entries (their timestamp is the
value's first 8 bytes) left out. Readers other than a RocksDB backend turn it into the canonical form at restore.
"""

from __future__ import annotations

import collections
import itertools
import struct
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from strom.runtime.state.rocksdb.rocksdb_key_serialization_utils import (
    KEY_GROUP_PREFIX_BYTES,
    decode_key,
    decode_namespace,
    encode_key,
    encode_namespace,
    key_group_prefix,
)
from strom.runtime.state.rocksdb.rocksdb_native_key_groups import Section, encode_key_group
from strom.runtime.state.rocksdb.rocksdb_stored_forms import iter_entries, iter_stored
from strom.runtime.state.rocksdb.rocksdb_value_serializer import ValueCodec
from strom.runtime.state.rocksdb.rocksdb_write_cache import NAMESPACED
from strom.runtime.state.state_serialization import KEYED_STATE_FORMAT_VERSION, dump_state
from strom.runtime.state.ttl import TtlPolicy

__all__ = [
    "FORMAT_VERSION",
    "Overlay",
    "RawSource",
    "StateSource",
    "TimerSource",
    "scan_read_options",
    "write_key_groups",
    "write_native_key_groups",
]

#: the canonical format (``heap_keyed_state_backend``)
FORMAT_VERSION = KEYED_STATE_FORMAT_VERSION

_KEY_GROUP = itemgetter(0)
_TTL_STAMP = struct.Struct(">q")
#: a checkpoint's scan reads ahead this much per file: fewer reads of 4 KiB blocks, ~25 % less CPU per entry (2 MiB: no
#: less; a read that misses the page cache holds the GIL the longer)
_READAHEAD_BYTES = 256 << 10

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


# -- checkpoints: RocksDB's bytes as they are ----------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RawSource:
    """One column family (a state's, a table's or a timer queue's) as the synchronous part found it: an iterator
    opened then; ``policy``: the state's TTL (its expired entries are left out)."""

    name: str
    kind: str
    policy: TtlPolicy | None
    iterator: Any  # RdictIter


def scan_read_options() -> Any:
    """Read options of a checkpoint's scan of every column family: read ahead, and leave the block cache to the task
    (a scan would evict its working set), as RocksDB advises for full scans."""
    from rocksdict import ReadOptions

    options = ReadOptions()
    getattr(options, "fill_cache")(False)  # noqa: B009 - takes a bool at run time, nothing in the stub
    options.set_readahead_size(_READAHEAD_BYTES)
    return options


def _raw_key_groups(it: Any) -> Iterator[tuple[int, list[bytes], list[bytes]]]:
    """``(key group, keys, values)`` of a column family's entries, one key group at a time, read as they are."""
    it.seek_to_first()
    valid, key, value, advance = it.valid, it.key, it.value, it.next
    keys: list[bytes] = []
    values: list[bytes] = []
    add_key, add_value = keys.append, values.append
    current = b""
    while valid():
        k = key()
        if k[:KEY_GROUP_PREFIX_BYTES] != current:
            if keys:
                yield (current[0] << 8) | current[1], keys, values
                keys, values = [], []
                add_key, add_value = keys.append, values.append
            current = k[:KEY_GROUP_PREFIX_BYTES]
        add_key(k)
        add_value(value())
        advance()
    if keys:
        yield (current[0] << 8) | current[1], keys, values


def _entry_prefix(raw: bytes, kind: str) -> bytes:
    """key group | key | namespace of an entry's RocksDB key (a list element's or a map entry's: without its
    suffix)."""
    if kind == "list":
        return raw[:-8]
    if kind == "map":
        return raw[: decode_namespace(raw, decode_key(raw, KEY_GROUP_PREFIX_BYTES)[1])[1]]
    return raw


def _live(
    source: RawSource, keys: list[bytes], values: list[bytes], now: int, expired: collections.deque[tuple[str, bytes]]
) -> tuple[list[bytes], list[bytes]]:
    """The entries whose TTL timestamp (a value's first 8 bytes) has not expired at ``now``; the prefixes of the
    others are queued in ``expired`` (once per prefix) for deletion on the task thread."""
    assert source.policy is not None
    limit = now - source.policy.ttl_ms  # expired: timestamp + ttl <= now
    stamp = _TTL_STAMP.unpack_from
    if all(stamp(v)[0] > limit for v in values):
        return keys, values
    live_keys: list[bytes] = []
    live_values: list[bytes] = []
    queued = b""
    for k, v in zip(keys, values, strict=True):
        if stamp(v)[0] > limit:
            live_keys.append(k)
            live_values.append(v)
            continue
        prefix = _entry_prefix(k, source.kind)
        if prefix != queued:
            expired.append((source.name, prefix))
            queued = prefix
    return live_keys, live_values


def _encoded_overlay(
    overlay: Overlay, codec: ValueCodec, key_group_of: Callable[[Any], int], now: int
) -> dict[int, dict[bytes, bytes | None]]:
    """The copied cache entries of one state as RocksDB would hold them, per key group (``None``: deleted, or
    expired at ``now``)."""
    out: dict[int, dict[bytes, bytes | None]] = {}
    policy, kind = overlay.policy, overlay.kind
    last_ns: Any = None
    ns_bytes = encode_namespace(None)
    for ck, stored in overlay.entries.items():
        if type(ck) is tuple and len(ck) == 3 and ck[0] is NAMESPACED:
            key, ns = ck[1], ck[2]
        else:
            key, ns = ck, None
        if ns is not last_ns:
            ns_bytes, last_ns = encode_namespace(ns), ns
        if stored is not None and policy is not None and policy.purge(kind, stored, now) is None:
            stored = None
        kg = key_group_of(key)
        per_kg = out.get(kg)
        if per_kg is None:
            per_kg = out[kg] = {}
        encoded = None if stored is None else codec.dumps_stored(stored)
        per_kg[key_group_prefix(kg) + encode_key(key) + ns_bytes] = encoded
    return out


def _laid_over(
    keys: Sequence[bytes], values: Sequence[bytes], overlay: dict[bytes, bytes | None]
) -> tuple[list[bytes], list[bytes]]:
    """RocksDB's entries of one state and key group with the cache's laid over them (a restore needs no order: the
    cache holds single-entry states only, whose entries stand alone)."""
    merged: dict[bytes, bytes | None] = dict(zip(keys, values, strict=True))
    merged.update(overlay)
    if None in overlay.values():
        for k, v in overlay.items():
            if v is None:
                del merged[k]
    return list(merged), list(merged.values())  # type: ignore[arg-type]


def _sections(
    sources: Sequence[RawSource],
    heads: dict[int, tuple[int, list[bytes], list[bytes]]],
    laid: Mapping[str, dict[int, dict[bytes, bytes | None]]],
    kg: int,
    now: int,
    expired: collections.deque[tuple[str, bytes]],
) -> list[Section]:
    """The sections of key group ``kg``: the entries each source read of it (``heads``: source index → its entries),
    expired TTL entries left out, the copied cache entries laid over them."""
    sections: list[Section] = []
    for i, source in enumerate(sources):
        keys: Sequence[bytes] = ()
        values: Sequence[bytes] = ()
        head = heads.get(i)
        if head is not None:
            _, keys, values = head
            if source.policy is not None:
                keys, values = _live(source, keys, values, now, expired)
        overlay = laid[source.name].get(kg) if source.name in laid else None
        if overlay:
            keys, values = _laid_over(keys, values, overlay)
        if keys:
            sections.append((source.name, keys, values))
    return sections


def write_native_key_groups(
    sources: Sequence[RawSource],
    kinds: Mapping[str, tuple[str, bool]],
    now: int,
    expired: collections.deque[tuple[str, bytes]],
    overlays: Mapping[str, tuple[Overlay, ValueCodec]] | None = None,
    key_group_of: Callable[[Any], int] | None = None,
) -> Iterator[tuple[int, bytes]]:
    """Each non-empty key group in the RocksDB format (:mod:`.rocksdb_native_key_groups`), in key-group order: the
    entries of every source as the iterators return them, a state's copied cache entries (``overlays``: state name →
    (overlay, its codec); every such state is one of ``sources``) laid over them, expired TTL entries at ``now``
    left out (their prefixes appended to ``expired``)."""
    readers = [_raw_key_groups(source.iterator) for source in sources]
    laid = {
        name: _encoded_overlay(overlay, codec, key_group_of, now)
        for name, (overlay, codec) in (overlays or {}).items()
        if key_group_of is not None
    }
    firsts = [next(reader, None) for reader in readers]
    heads = {i: head for i, head in enumerate(firsts) if head is not None}
    del firsts
    pending = sorted({kg for per_kg in laid.values() for kg in per_kg}, reverse=True)  # key groups overlays hold
    while heads or pending:
        kg = min([first for first, _, _ in heads.values()] + pending[-1:])
        if pending and pending[-1] == kg:
            pending.pop()
        taken = [i for i, (first, _, _) in heads.items() if first == kg]
        sections = _sections(sources, {i: heads.pop(i) for i in taken}, laid, kg, now, expired)
        if sections:
            blob = encode_key_group({name: kinds[name] for name, _, _ in sections if name in kinds}, sections)
            sections.clear()  # the entries go before the next key group is read: one key group in memory
            yield kg, blob
            del blob
        for i in taken:
            following = next(readers[i], None)
            if following is not None:
                heads[i] = following
