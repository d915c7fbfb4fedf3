"""The key group of an ``int`` key in a few arithmetic steps (Flink's ``KeyGroupRangeAssignment`` for the commonest
keys), for the heap backend's snapshots, which place every key again.

:func:`~strom.runtime.state.key_groups.key_group_assigner` hashes an untyped key as PyFlink does: ``Arrays.hashCode``
of the key's pickle, inside a one-field ``Row``, murmur-hashed (:mod:`~strom.runtime.state.key_hash`) — about 3.7 µs
a key, 1.8 s for the 500 000 keys of half a GB of state, three quarters of a snapshot's work. For an ``int`` between
−2³¹ and 2³¹ the pickle is one of three fixed layouts (``K``, ``M`` or ``J`` and the little-endian bytes), so
``Arrays.hashCode`` is a constant plus a table lookup per byte; typed ``Types.LONG()`` / ``Types.INT()`` keys hash
as Java's ``Long`` / ``Integer``. The numbers are the same as the assigner's (checked in the unit tests); other keys
go to the assigner.

    >>> from strom.runtime.state.key_groups import key_group_assigner
    >>> fast = int_key_group_assigner(128, None, key_group_assigner(128))
    >>> [fast(k) for k in (7, 300, -5, 2**40, "a")] == [key_group_assigner(128)(k) for k in (7, 300, -5, 2**40, "a")]
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from strom.api.typeinfo import BasicTypeInfo, PickledBytesTypeInfo, TypeInformation

__all__ = ["int_key_group_assigner"]

_M32 = 0xFFFFFFFF
_ROW = 62  # Row.hashCode of one field whose hashCode is h: 31 * 1 + 31 + h


def _signed(x: int) -> int:
    return x - 256 if x > 127 else x


def _layout(prefix: bytes, width: int) -> tuple[int, list[list[int]]]:
    """``62 + Arrays.hashCode`` of ``<prefix> <width bytes> .`` = a constant + one table entry per byte."""
    n = len(prefix) + width + 1
    constant = _ROW + pow(31, n) + 0x2E + sum(_signed(x) * 31 ** (n - 1 - i) for i, x in enumerate(prefix))
    tables = [[(_signed(x) * 31 ** (n - 1 - (len(prefix) + i))) & _M32 for x in range(256)] for i in range(width)]
    return constant & _M32, tables


# pickle protocol 5: PROTO 5, a FRAME of the opcode and its bytes when they are 4 bytes or more, the opcode, STOP
_K, (_K0,) = _layout(b"\x80\x05K", 1)  # BININT1: 0 ≤ k < 256
_M, (_M0, _M1) = _layout(b"\x80\x05\x95" + (4).to_bytes(8, "little") + b"M", 2)  # BININT2: 256 ≤ k < 65 536
_J, (_J0, _J1, _J2, _J3) = _layout(b"\x80\x05\x95" + (6).to_bytes(8, "little") + b"J", 4)  # BININT, 2's complement


def _untyped_code(k: int) -> int:
    """``62 + Arrays.hashCode(pickle.dumps(k, protocol=5))`` mod 2³² for −2³¹ ≤ k < 2³¹."""
    if 0 <= k < 256:
        return (_K + _K0[k]) & _M32
    if 0 <= k < 65536:
        return (_M + _M0[k & 0xFF] + _M1[k >> 8]) & _M32
    u = k & _M32
    return (_J + _J0[u & 0xFF] + _J1[(u >> 8) & 0xFF] + _J2[(u >> 16) & 0xFF] + _J3[u >> 24]) & _M32


def _murmur_key_group(code: int, max_parallelism: int) -> int:
    """Flink's ``MathUtils.murmurHash(code) % maxParallelism`` (``code`` unsigned 32 bits)."""
    h = (code * 0xCC9E2D51) & _M32
    h = (((h << 15) | (h >> 17)) & _M32) * 0x1B873593 & _M32
    h = ((((h << 13) | (h >> 19)) & _M32) * 5 + 0xE6546B64) & _M32
    h ^= 4
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    h ^= h >> 16
    if h & 0x80000000:  # a negative int32: Flink takes its absolute value (MIN_VALUE → 0)
        h = (1 << 32) - h if h != 0x80000000 else 0
    return h % max_parallelism


def int_key_group_assigner(
    max_parallelism: int, key_type: TypeInformation | None, fallback: Callable[[Any], int]
) -> Callable[[Any], int]:
    """key → key group, the same as ``fallback`` (the backend's assigner), computed directly for ``int`` keys."""
    if key_type is None or isinstance(key_type, PickledBytesTypeInfo):
        code: Callable[[int], int] = _untyped_code
        lo, hi = -(1 << 31), 1 << 31
    elif isinstance(key_type, BasicTypeInfo) and key_type.java_name == "Long":
        code = _long_code
        lo, hi = -(1 << 63), 1 << 63
    elif isinstance(key_type, BasicTypeInfo) and key_type.java_name == "Integer":
        code = _int_code
        lo, hi = -(1 << 31), 1 << 31
    else:
        return fallback

    def assign(key: Any) -> int:
        if type(key) is int and lo <= key < hi:
            return _murmur_key_group(code(key), max_parallelism)
        return fallback(key)

    return assign


def _long_code(k: int) -> int:
    u = k & 0xFFFFFFFFFFFFFFFF
    return (_ROW + ((u ^ (u >> 32)) & _M32)) & _M32


def _int_code(k: int) -> int:
    return (_ROW + k) & _M32
