"""The RocksDB backend's own full-checkpoint format: per key group the stored key and value bytes of every state, as
RocksDB holds them (Flink's RocksDB full snapshot, which ``FullSnapshotAsyncWriter`` writes from
``RocksStatesPerKeyGroupMergeIterator``: the raw keys and values per key group and state, not a canonical form).

A checkpoint (never a savepoint, which stays canonical) of the RocksDB backend writes this format: the asynchronous
part copies what the iterators of the synchronous part return, no entry decoded or encoded in Python, and a restore
into RocksDB writes the bytes back in one ``WriteBatch`` per state. Every other reader — the heap backend, a RocksDB
backend whose timers are on the heap, the state processor API — turns a key group into the canonical form when it
reads it (:func:`load_key_group`): the transformation happens at restore time, not at every checkpoint.

One key group's bytes::

    MAGIC (b"\\xffSKG") | version (1 byte) | header length (u32 LE) | header (pickle: {"meta": {name: (kind, has
    TTL)}, "sections": [(column family, entries, key bytes, value bytes), ...]}) | per section: key lengths (u32
    LE each) | value lengths (u32 LE each) | the keys | the values

A section is a state's (or an internal table's) column family, or a RocksDB timer queue's (``_timer_queue/<name>``),
its entries in key order. ``0xff`` starts no pickle, so the two formats tell themselves apart by the first byte.

    >>> blob = encode_key_group({"v": ("value", False)}, [("v", [b"\\x00\\x07k"], [b"\\x04\\x01"])])
    >>> is_native(blob), decode_key_group(blob)[1]
    (True, [('v', [b'\\x00\\x07k'], [b'\\x04\\x01'])])
"""

from __future__ import annotations

import pickle
import struct
import sys
from array import array
from collections.abc import Mapping, Sequence
from itertools import accumulate
from typing import Any

from strom.exceptions import CheckpointError
from strom.runtime.state.rocksdb.rocksdb_priority_queue_set_factory import (
    TIMER_QUEUE_PREFIX,
    canonical_timers,
    timer_table,
)
from strom.runtime.state.state_serialization import KEYED_STATE_FORMAT_VERSION, load_state

__all__ = [
    "MAGIC",
    "NATIVE_FORMAT_VERSION",
    "canonical_payload",
    "decode_key_group",
    "encode_key_group",
    "is_native",
    "load_key_group",
]

MAGIC = b"\xffSKG"
NATIVE_FORMAT_VERSION = 1
_HEAD = struct.Struct("<4sBI")
_SWAP = sys.byteorder != "little"  # the lengths are little-endian u32 on every machine

#: (column family, keys, values) of one section
Section = tuple[str, Sequence[bytes], Sequence[bytes]]


def is_native(blob: bytes | memoryview) -> bool:
    """Whether ``blob`` is a key group in this format (and not a canonical pickle)."""
    return bytes(blob[:4]) == MAGIC


def encode_key_group(meta: Mapping[str, tuple[str, bool]], sections: Sequence[Section]) -> bytes:
    """One key group's bytes: ``meta`` (kind and TTL of the states in it) and each section's entries (one copy of
    them: the bytes are joined once)."""
    header: list[tuple[str, int, int, int]] = []
    parts: list[Any] = [b""]
    for name, keys, values in sections:
        key_lengths, value_lengths = array("I", map(len, keys)), array("I", map(len, values))
        header.append((name, len(keys), sum(key_lengths), sum(value_lengths)))
        if _SWAP:
            key_lengths.byteswap()
            value_lengths.byteswap()
        parts += (key_lengths, value_lengths)
        parts += keys
        parts += values
    head = pickle.dumps({"meta": dict(meta), "sections": header}, protocol=5)
    parts[0] = _HEAD.pack(MAGIC, NATIVE_FORMAT_VERSION, len(head)) + head
    return b"".join(parts)


def _split(data: bytes, lengths: array[int]) -> list[bytes]:
    ends = list(accumulate(lengths))
    return [data[start:end] for start, end in zip([0, *ends], ends, strict=False)]


def decode_key_group(blob: bytes, what: str = "keyed state") -> tuple[dict[str, tuple[str, bool]], list[Section]]:
    """``(meta, sections)`` of one key group's bytes; damaged bytes raise a :class:`CheckpointError` naming ``what``."""
    try:
        magic, version, head_len = _HEAD.unpack_from(blob)
        if magic != MAGIC or version != NATIVE_FORMAT_VERSION:
            raise CheckpointError(
                f"expected {what} in strom's RocksDB format version {NATIVE_FORMAT_VERSION}; got version {version}; "
                "hint: the checkpoint was written by an incompatible strom version"
            )
        pos = _HEAD.size
        header = pickle.loads(blob[pos : pos + head_len])
        pos += head_len
        sections: list[Section] = []
        for name, count, key_total, value_total in header["sections"]:
            key_lengths, value_lengths = array("I"), array("I")
            key_lengths.frombytes(blob[pos : pos + 4 * count])
            value_lengths.frombytes(blob[pos + 4 * count : pos + 8 * count])
            if _SWAP:
                key_lengths.byteswap()
                value_lengths.byteswap()
            pos += 8 * count
            keys = _split(blob[pos : pos + key_total], key_lengths)
            values = _split(blob[pos + key_total : pos + key_total + value_total], value_lengths)
            pos += key_total + value_total
            sections.append((str(name), keys, values))
        if pos > len(blob):
            raise ValueError(f"truncated: {pos - len(blob)} bytes missing")
        if pos < len(blob):
            raise ValueError(f"{len(blob) - pos} bytes after the last section")
    except (struct.error, ValueError, KeyError, TypeError, pickle.UnpicklingError, EOFError) as exc:
        raise CheckpointError(
            f"expected {what} in strom's RocksDB format; got {len(blob)} bytes that do not parse ({exc!r}); hint: the "
            "file is damaged — restore from an older checkpoint"
        ) from exc
    return {str(k): (str(kind), bool(ttl)) for k, (kind, ttl) in header["meta"].items()}, sections


def canonical_payload(blob: bytes, what: str = "keyed state") -> dict[str, Any]:
    """The canonical form (``{"version": 2, "meta": ..., "states": {name: (flat, namespaced)}}``, what the heap
    backend snapshots) of one key group in this format: every entry decoded, timer queues as the timer tables."""
    from strom.runtime.state.rocksdb.rocksdb_stored_forms import iter_stored
    from strom.runtime.state.rocksdb.rocksdb_value_serializer import value_codec

    meta, sections = decode_key_group(blob, what)
    states: dict[str, tuple[dict[Any, Any], dict[Any, dict[Any, Any]]]] = {}
    for name, keys, values in sections:
        if name.startswith(TIMER_QUEUE_PREFIX):
            namespaced_timers = states.setdefault(timer_table(name[len(TIMER_QUEUE_PREFIX) :]), ({}, {}))[1]
            for key, entry in canonical_timers(keys, values):
                namespaced_timers.setdefault(key, {})[entry] = True
            continue
        kind, ttl = meta.get(name, ("table", False))
        flat: dict[Any, Any] = {}
        namespaced: dict[Any, dict[Any, Any]] = {}
        for _, key, ns, stored in iter_stored(zip(keys, values, strict=True), kind, value_codec(None, ttl=ttl)):
            if ns is None:
                flat[key] = stored
            else:
                namespaced.setdefault(key, {})[ns] = stored
        if flat or namespaced:
            states[name] = (flat, namespaced)
    return {"version": KEYED_STATE_FORMAT_VERSION, "meta": meta, "states": states}


def load_key_group(blob: bytes, what: str) -> Any:
    """One key group's canonical payload, from either format (a canonical pickle is only unpickled)."""
    if is_native(blob):
        return canonical_payload(blob, what)
    return load_state(blob, what)
