"""The *stored form* of a state's (key, namespace) — what the heap backend keeps in its dicts and the canonical
snapshot format carries — read from and written to a column family.

Per kind, the entries under ``prefix = key group | key | namespace``:

* ``value``, ``reducing``, ``aggregating`` and internal tables (``table``): one entry at ``prefix``;
* ``list``: one entry per element at ``prefix | sequence`` (8 bytes, increasing), so ``add`` is one
  write (Flink keeps one value and appends with RocksDB's merge operator, which rocksdict does not expose);
* ``map``: one entry per user key at ``prefix | user key`` (as Flink's ``RocksDBMapState``).

With a TTL the stored form holds :class:`~strom.runtime.state.ttl.TtlValue` s (per value, element or entry).
"""

from __future__ import annotations

import struct
import time
from collections.abc import Iterable, Iterator
from itertools import count
from typing import Any

from rocksdict import RdictIter, WriteBatch

from strom.runtime.state.rocksdb.rocksdb_key_serialization_utils import (
    KEY_GROUP_PREFIX_BYTES,
    decode_key,
    decode_namespace,
    encode_key,
)
from strom.runtime.state.rocksdb.rocksdb_value_serializer import ValueCodec

__all__ = [
    "MULTI_ENTRY_KINDS",
    "advance_sequence",
    "iter_entries",
    "iter_stored",
    "read_stored",
    "remove_stored",
    "scan",
    "write_stored",
]

MULTI_ENTRY_KINDS = frozenset({"list", "map"})
_SEQ = struct.Struct(">Q")
#: starts at the wall clock (ns): a process started later (a restart restoring RocksDB's entries as they are) numbers
#: the elements it adds after every element added before, as long as fewer than 10⁹ are added a second
_sequence = count(time.time_ns())


def next_sequence() -> bytes:
    """A list element's suffix: increasing, so a list's elements scan in the order added."""
    return _SEQ.pack(next(_sequence))


def advance_sequence(past: bytes) -> None:
    """The next list elements sort after an element restored with suffix ``past`` (its 8 last bytes)."""
    global _sequence
    after = _SEQ.unpack(past[-_SEQ.size :])[0] + 1
    current = next(_sequence)
    _sequence = count(max(current, after))


def scan(cf: Any, prefix: bytes) -> Iterator[tuple[bytes, bytes]]:
    """Every entry of ``cf`` whose key starts with ``prefix``, in key order. (rocksdict 0.3's iterate bounds in
    ``ReadOptions`` are unreliable — the bound bytes are not kept alive — so the scan stops by itself.)"""
    for k, v in cf.items(from_key=prefix):
        if not k.startswith(prefix):
            return
        yield k, v


def read_stored(cf: Any, kind: str, codec: ValueCodec, prefix: bytes) -> Any:
    """The stored form at ``prefix`` (``None``: nothing stored)."""
    if kind == "list":
        elements = [codec.loads_stored(v) for _, v in scan(cf, prefix)]
        return elements or None
    if kind == "map":
        n = len(prefix)
        entries = {decode_key(k, n)[0]: codec.loads_stored(v) for k, v in scan(cf, prefix)}
        return entries or None
    data = cf.get(prefix)
    return None if data is None else codec.loads_stored(data)


def remove_stored(cf: Any, kind: str, prefix: bytes) -> None:
    if kind in MULTI_ENTRY_KINDS:
        keys = [k for k, _ in scan(cf, prefix)]
        for k in keys:
            cf.delete(k)
    else:
        cf.delete(prefix)


def write_stored(cf: Any, kind: str, codec: ValueCodec, prefix: bytes, stored: Any, *, replace: bool = True) -> None:
    """Store ``stored`` at ``prefix`` (replacing what was there, unless ``replace`` is false: a fresh prefix)."""
    if kind in MULTI_ENTRY_KINDS:
        if replace:
            remove_stored(cf, kind, prefix)
        if kind == "list":
            for element in stored:
                cf.put(prefix + next_sequence(), codec.dumps_stored(element))
        else:
            for user_key, value in stored.items():
                cf.put(prefix + encode_key(user_key), codec.dumps_stored(value))
    else:
        cf.put(prefix, codec.dumps_stored(stored))


def write_batch_stored(batch: WriteBatch, kind: str, codec: ValueCodec, prefix: bytes, stored: Any) -> None:
    """:func:`write_stored` of a fresh prefix into a write batch (restore)."""
    if kind == "list":
        for element in stored:
            batch.put(prefix + next_sequence(), codec.dumps_stored(element))
    elif kind == "map":
        for user_key, value in stored.items():
            batch.put(prefix + encode_key(user_key), codec.dumps_stored(value))
    else:
        batch.put(prefix, codec.dumps_stored(stored))


def iter_entries(it: RdictIter) -> Iterator[tuple[bytes, bytes]]:
    """The entries of a raw iterator (opened earlier: it reads the data as of its creation)."""
    it.seek_to_first()
    while it.valid():
        yield it.key(), it.value()
        it.next()


def iter_stored(entries: Iterable[Any], kind: str, codec: ValueCodec) -> Iterator[tuple[int, Any, Any, Any]]:
    """``(key group, key, namespace, stored form)`` of every (key, namespace) of a column family's entries."""
    multi = kind in MULTI_ENTRY_KINDS
    is_map = kind == "map"
    current: bytes | None = None
    head: tuple[int, Any, Any] = (0, None, None)
    acc: Any = None
    for raw, data in entries:
        key, pos = decode_key(raw, KEY_GROUP_PREFIX_BYTES)
        ns, pos = decode_namespace(raw, pos)
        kg = (raw[0] << 8) | raw[1]
        if not multi:
            yield kg, key, ns, codec.loads_stored(data)
            continue
        prefix = raw[:pos]
        if prefix != current:
            if current is not None:
                yield (*head, acc)
            current, head, acc = prefix, (kg, key, ns), ({} if is_map else [])
        if is_map:
            acc[decode_key(raw, pos)[0]] = codec.loads_stored(data)
        else:
            acc.append(codec.loads_stored(data))
    if current is not None:
        yield (*head, acc)
