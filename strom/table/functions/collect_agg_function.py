"""Flink's ``CollectAggFunction``: ``COLLECT(x)``, the non-NULL values as a ``MULTISET<t> NOT NULL``.

The accumulator counts each value (a retraction takes one back, a count of 0 drops the value). The result is a
``dict`` value → count in the iteration order of the ``java.util.HashMap`` of internal values Flink returns (by
hash bucket, then insertion order; a string's hash is ``BinaryStringData``'s Murmur3 of its UTF-8 bytes), so
``print()`` shows ``{1=2, 3=1}`` and ``{a=1, c=1, b=1}`` as Flink does.
"""

from __future__ import annotations

import math
import struct
from typing import Any

from strom.table.functions.aggfunctions import AggregateFunctionImpl

__all__ = ["CollectAggFunction", "internal_hash_code", "java_hash_map_order", "murmur_hash_bytes"]

_MASK = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def _mix(h1: int, k1: int) -> int:
    k1 = _rotl((k1 * 0xCC9E2D51) & _MASK, 15) * 0x1B873593 & _MASK
    return (_rotl(h1 ^ k1, 13) * 5 + 0xE6546B64) & _MASK


def murmur_hash_bytes(data: bytes, seed: int = 42) -> int:
    """Flink's ``MurmurHashUtil.hashBytes`` (Murmur3-32, each tail byte mixed as a block, sign-extended)."""
    h1 = seed
    aligned = len(data) - len(data) % 4
    for i in range(0, aligned, 4):
        h1 = _mix(h1, int.from_bytes(data[i : i + 4], "little"))
    for byte in data[aligned:]:
        h1 = _mix(h1, (byte - 256 if byte > 127 else byte) & _MASK)
    h1 ^= len(data)
    h1 ^= h1 >> 16
    h1 = (h1 * 0x85EBCA6B) & _MASK
    h1 ^= h1 >> 13
    h1 = (h1 * 0xC2B2AE35) & _MASK
    return h1 ^ (h1 >> 16)


def internal_hash_code(value: Any) -> int | None:
    """``hashCode()`` of Flink's internal value (unsigned 32 bits), ``None`` where strom does not model it."""
    if isinstance(value, bool):
        return 1231 if value else 1237
    if isinstance(value, int):
        if -(2**31) <= value < 2**31:
            return value & _MASK
        bits = value & 0xFFFFFFFFFFFFFFFF
        return (bits ^ (bits >> 32)) & _MASK
    if isinstance(value, float):
        raw: int = struct.unpack(">Q", struct.pack(">d", math.nan if math.isnan(value) else value))[0]
        return (raw ^ (raw >> 32)) & _MASK
    if isinstance(value, str):
        return murmur_hash_bytes(value.encode("utf-8"))
    return None


def java_hash_map_order(counts: dict[Any, int]) -> dict[Any, int]:
    """``counts`` in the order a ``java.util.HashMap`` filled with them in this order iterates."""
    capacity = 16
    while len(counts) > capacity * 3 // 4:
        capacity *= 2
    hashes = {k: internal_hash_code(k) for k in counts}
    if any(h is None for h in hashes.values()):
        return dict(counts)

    def bucket(key: Any) -> int:
        h = hashes[key] or 0
        return (h ^ (h >> 16)) & (capacity - 1)

    return {k: counts[k] for k in sorted(counts, key=bucket)}


class CollectAggFunction(AggregateFunctionImpl):
    name = "COLLECT"

    def create_accumulator(self) -> dict[Any, int]:
        return {}

    def accumulate(self, acc: dict[Any, int], value: Any) -> dict[Any, int]:
        if value is None:
            return acc
        grown = dict(acc)
        grown[value] = grown.get(value, 0) + 1
        return grown

    def retract(self, acc: dict[Any, int], value: Any) -> dict[Any, int]:
        if value is None or value not in acc:
            return acc
        shrunk = dict(acc)
        shrunk[value] -= 1
        if shrunk[value] == 0:
            del shrunk[value]
        return shrunk

    def merge(self, acc: dict[Any, int], other: dict[Any, int]) -> dict[Any, int]:
        merged = dict(acc)
        for value, count in other.items():
            merged[value] = merged.get(value, 0) + count
        return merged

    def get_value(self, acc: dict[Any, int]) -> dict[Any, int]:
        return java_hash_map_order(acc)
