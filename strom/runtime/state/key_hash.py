"""The hash Flink derives a key's key group from, for keys of PyFlink's ``key_by`` (so records land where PyFlink
puts them).

Flink's ``KeyGroupRangeAssignment.assignToKeyGroup(key, maxParallelism)`` is ``murmurHash(key.hashCode()) %
maxParallelism``: the Java ``hashCode`` of the key object. PyFlink's ``key_by`` hands Flink a one-field ``Row``
holding the key (its ``KeyByKeySelector``), whose field is what PyFlink's serializer makes of the Python key:

* a declared ``key_type`` gives the Java value of that type — ``Types.STRING()`` a ``String``, ``Types.INT()`` an
  ``Integer``, ``Types.LONG()`` a ``Long``, ``Types.FLOAT()`` a ``Float``, ``Types.TUPLE`` a ``TupleN``,
  ``Types.ROW`` a ``Row`` …, hashed as Java hashes it;
* no key type (``Types.PICKLED_BYTE_ARRAY()``) gives a ``byte[]`` of ``cloudpickle.dumps(key)`` (pickle protocol
  5), hashed with ``Arrays.hashCode`` — deterministic for strings, numbers, bytes, ``None`` and tuples of them.

strom computes the same numbers (checked against Flink 2.3's own classes, recorded in the unit tests). Where
PyFlink's rule is not deterministic or not Python's equality, strom keeps its own: an untyped ``True`` or ``3.0`` is
hashed as the int it equals (Python's dicts, and strom's keyed state, take ``1``, ``1.0`` and ``True`` for one key,
so they must share a key group; PyFlink hashes their pickles apart), and keys whose pickles depend on the process
(sets, frozensets, objects) or of types PyFlink's serializer has no Java counterpart for here (dates, decimals,
arrays) fall back to :func:`~strom.runtime.state.key_groups.stable_hash`, equal in every process.

    >>> flink_key_hash(None)("Alice") == flink_key_hash(None)("Alice")
    True
    >>> murmur_hash(2)
    1085422463
"""

from __future__ import annotations

import pickle
import struct
from collections.abc import Callable
from operator import mul
from typing import Any

from strom.api.typeinfo import BasicTypeInfo, PickledBytesTypeInfo, RowTypeInfo, TupleTypeInfo, TypeInformation

__all__ = ["KeyHash", "flink_key_hash", "java_bytes_hash", "java_string_hash", "murmur_hash"]

_M32 = 0xFFFFFFFF
_FLOAT = struct.Struct(">f")
_DOUBLE = struct.Struct(">d")

#: key -> the int32 ``hashCode`` Flink murmur-hashes into the key group
KeyHash = Callable[[Any], int]


def _int32(x: int) -> int:
    x &= _M32
    return x - (1 << 32) if x & 0x80000000 else x


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def murmur_hash(code: int) -> int:
    """Flink's ``MathUtils.murmurHash``: a non-negative int32 of an int32 ``hashCode``."""
    h = (code * 0xCC9E2D51) & _M32
    h = (_rotl(h, 15) * 0x1B873593) & _M32
    h = (_rotl(h, 13) * 5 + 0xE6546B64) & _M32
    h ^= 4
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    h ^= h >> 16
    signed = _int32(h)
    return signed if signed >= 0 else (-signed if signed != -(1 << 31) else 0)


def java_string_hash(s: str) -> int:
    """``String.hashCode``: over the UTF-16 code units."""
    h = 0
    data = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & _M32
    return _int32(h)


def java_bytes_hash(b: bytes) -> int:
    """``Arrays.hashCode(byte[])`` (Java's bytes are signed): ``31^n + sum(b[i] * 31^(n-1-i))`` mod 2^32, the
    products and the sum run in C."""
    n = len(b)
    cached = _POWERS.get(n)
    if cached is None:
        if n > _CACHED_LENGTHS:  # a long key: Horner's rule (the powers of every length would be quadratic)
            h = 1
            for x in b:
                h = (31 * h + _SIGNED[x]) & _M32
            return _int32(h)
        cached = _POWERS[n] = (pow(31, n, 1 << 32), [pow(31, n - 1 - i, 1 << 32) for i in range(n)])
    top, powers = cached
    return _int32(top + sum(map(mul, map(_SIGNED.__getitem__, b), powers)))


_SIGNED = [x - 256 if x > 127 else x for x in range(256)]
#: the powers of 31 per pickle length up to :data:`_CACHED_LENGTHS` bytes (keys are short: names, ids, tuples)
_POWERS: dict[int, tuple[int, list[int]]] = {}
_CACHED_LENGTHS = 256


def _long_hash(v: int) -> int:
    u = v & 0xFFFFFFFFFFFFFFFF
    return _int32(u ^ (u >> 32))


def _float_hash(v: float) -> int:
    return 0x7FC00000 if v != v else int(struct.unpack(">i", _FLOAT.pack(v))[0])


def _double_hash(v: float) -> int:
    bits = 0x7FF8000000000000 if v != v else int(struct.unpack(">q", _DOUBLE.pack(v))[0])
    return _long_hash(bits)


_BASIC: dict[str, Callable[[Any], int]] = {
    "String": java_string_hash,
    "Integer": _int32,
    "Short": _int32,
    "Byte": _int32,
    "Long": _long_hash,
    "Boolean": lambda v: 1231 if v else 1237,
    "Float": _float_hash,
    "Double": _double_hash,
    "Char": lambda v: ord(v) if isinstance(v, str) else _int32(v),
}


def _row_hash(field_hashes: list[int | None]) -> int:
    """``Row.hashCode`` of a positional INSERT row (Flink's ``RowUtils.deepHashCodeRow``)."""
    h = 1
    for fh in field_hashes:
        h = (31 * h + (0 if fh is None else 31 + fh)) & _M32
    return _int32(h)


def _tuple_hash(field_hashes: list[int | None]) -> int:
    """``TupleN.hashCode``: ``31 * h + field`` from 0, null fields as 0."""
    h = 0
    for fh in field_hashes:
        h = (31 * h + (fh or 0)) & _M32
    return _int32(h)


def _typed_hash(type_info: TypeInformation) -> Callable[[Any], int | None] | None:
    """The Java ``hashCode`` of a value of ``type_info`` as PyFlink's serializer materialises it; ``None`` when
    strom has no Java counterpart for the type (the caller falls back)."""
    if isinstance(type_info, BasicTypeInfo):
        basic = _BASIC.get(type_info.java_name)
        if basic is None:
            return None
        return lambda v: None if v is None else basic(v)
    if isinstance(type_info, TupleTypeInfo | RowTypeInfo):
        fields = [_typed_hash(t) for t in type_info.field_types]
        if any(f is None for f in fields):
            return None
        combine = _tuple_hash if isinstance(type_info, TupleTypeInfo) else _row_hash
        checked = [f for f in fields if f is not None]

        def composite(v: Any) -> int | None:
            if v is None:
                return None
            return combine([f(x) for f, x in zip(checked, v, strict=True)])

        return composite
    return None


def _untyped_hash(key: Any) -> int | None:
    """``Arrays.hashCode`` of the key's pickle (protocol 5, as cloudpickle writes plain values); ``None`` for a key
    whose pickle is not the same in every process."""
    canonical = _canonical(key)
    if canonical is _UNSTABLE:
        return None
    return java_bytes_hash(pickle.dumps(canonical, protocol=5))


_UNSTABLE: Any = object()


def _canonical(key: Any) -> Any:
    """``key`` with Python's equal numbers made one (``True`` → 1, ``3.0`` → 3); ``_UNSTABLE`` when its pickle
    could differ between processes."""
    t = type(key)
    if t is str or t is int or t is bytes or key is None:
        return key
    if t is bool:
        return int(key)
    if t is float:
        return int(key) if key.is_integer() else key
    if t is tuple:
        items = tuple(_canonical(k) for k in key)
        return _UNSTABLE if any(i is _UNSTABLE for i in items) else items
    return _UNSTABLE


def flink_key_hash(key_type: TypeInformation | None) -> Callable[[Any], int | None]:
    """key -> the ``hashCode`` of PyFlink's key ``Row`` (``None``: no stable Flink hash, use strom's own)."""
    if key_type is None or isinstance(key_type, PickledBytesTypeInfo):
        field: Callable[[Any], int | None] = _untyped_hash
    else:
        typed = _typed_hash(key_type)
        if typed is None:
            return lambda key: None
        field = typed

    def row_of_key(key: Any) -> int | None:
        h = field(key)
        return None if h is None else _row_hash([h])

    return row_of_key
