"""Keys and namespaces as RocksDB key bytes (Flink's ``RocksDBKeySerializationUtils`` and
``SerializedCompositeKeyBuilder``).

Every RocksDB key of a state is ``key group (2 bytes, big-endian) | key | namespace [| user key or element
sequence]``, so the entries of a key group — and of one key, and of one (key, namespace) — are contiguous.
The encoding is *prefix-free* (each part says where it ends), so a prefix scan of ``key group | key |
namespace`` finds exactly the entries of that pair, as Flink's ambiguous-key-length handling does.

**Keys are encoded canonically: equal keys give equal bytes.** Python's equality is wider than its types
(``1 == 1.0 == True``), and the heap backend's dicts follow it, so this encoding does too: a ``bool`` or a float
with an integral value encodes as the int, a ``str``/``int``/``tuple`` subclass (a ``NamedTuple``, a
``TimeWindow``) as its base type; a key read back from RocksDB (a snapshot, a table's iteration) is that canonical
form. Encodable: ``None``, ``int``, ``float`` (not NaN: it equals nothing, itself included), ``str``, ``bytes``,
tuples and frozensets of encodable values, enum members (by class and name) and frozen dataclasses (by class and
fields). Anything else is refused (:func:`key_error`): its equality is not visible in its bytes.

**Namespaces** (windows, and the ``(namespace, time)`` of timers) keep their class: :class:`TimeWindow` and
:class:`GlobalWindow` have their own tags, other tuple subclasses are written with their class.

    >>> encode_key((1, "a")) == encode_key((True, "a")) == encode_key((1.0, "a"))
    True
    >>> decode_key(encode_key(("word", 3)), 0)
    (('word', 3), 17)
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import math
import struct
from typing import Any

from strom.api.windowing.windows import GlobalWindow, TimeWindow
from strom.exceptions import InvalidProgramError

__all__ = [
    "KEY_GROUP_PREFIX_BYTES",
    "decode_key",
    "decode_namespace",
    "encode_key",
    "encode_namespace",
    "key_error",
    "key_group_prefix",
    "prefix_successor",
]

KEY_GROUP_PREFIX_BYTES = 2
_KG = struct.Struct(">H")
_LONG = struct.Struct(">Q")
_DOUBLE = struct.Struct(">d")
_TWO_LONGS = struct.Struct(">QQ")
_BIAS = 1 << 63

_NONE, _INT, _BIGINT, _FLOAT, _STR, _BYTES, _TUPLE, _ENUM, _OBJECT, _TIME_WINDOW, _GLOBAL_WINDOW, _FROZENSET = range(12)


class UnencodableKeyError(InvalidProgramError):
    """A key (or namespace, or map key) has no deterministic byte form."""


def key_error(value: Any, what: str = "key") -> UnencodableKeyError:
    return UnencodableKeyError(
        f"expected a {what} the RocksDB state backend can encode deterministically (None, int, float other than "
        f"NaN, str, bytes, tuples/frozensets of those, enum members, frozen dataclasses); got a "
        f"{type(value).__name__!r} ({value!r:.60}); hint: return such a value from the key selector (e.g. str(x) "
        "or a tuple of fields), or use state.backend.type: hashmap"
    )


def key_group_prefix(key_group: int) -> bytes:
    return _KG.pack(key_group)


def _varint(n: int, out: bytearray) -> None:
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    shift = n = 0
    while True:
        b = data[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            return n, pos
        shift += 7


def _class_path(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


_CLASSES: dict[str, type] = {}


def _load_class(path: str) -> type:
    cls = _CLASSES.get(path)
    if cls is None:
        module, _, qualname = path.partition(":")
        obj: Any = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        cls = _CLASSES[path] = obj
    return cls


def _write_str(s: str, out: bytearray) -> None:
    raw = s.encode("utf-8", "surrogatepass")
    _varint(len(raw), out)
    out += raw


def _encode(value: Any, out: bytearray, typed: bool) -> None:
    t = type(value)
    if t is str:
        out.append(_STR)
        _write_str(value, out)
    elif t is int:
        if -_BIAS <= value < _BIAS:
            out.append(_INT)
            out += _LONG.pack(value + _BIAS)
        else:
            raw = value.to_bytes((value.bit_length() + 8) // 8, "big", signed=True)
            out.append(_BIGINT)
            _varint(len(raw), out)
            out += raw
    elif value is None:
        out.append(_NONE)
    elif t is tuple:
        out.append(_TUPLE)
        _varint(len(value), out)
        for item in value:
            _encode(item, out, typed)
    elif t is float:
        if math.isnan(value):
            raise key_error(value)
        if value.is_integer():
            _encode(int(value), out, typed)
        else:
            out.append(_FLOAT)
            out += _DOUBLE.pack(value)
    elif t is bool:
        _encode(int(value), out, typed)
    elif t is bytes:
        out.append(_BYTES)
        _varint(len(value), out)
        out += value
    elif typed and t is TimeWindow:
        out.append(_TIME_WINDOW)
        out += _TWO_LONGS.pack(value[0] + _BIAS, value[1] + _BIAS)
    elif typed and t is GlobalWindow:
        out.append(_GLOBAL_WINDOW)
    elif isinstance(value, enum.Enum):
        out.append(_ENUM)
        _write_str(_class_path(t), out)
        _write_str(value.name, out)
    elif isinstance(value, tuple):
        if typed:
            out.append(_OBJECT)
            _write_str(_class_path(t), out)
            _encode(tuple(value), out, typed)
        else:
            _encode(tuple(value), out, typed)
    elif isinstance(value, str):
        _encode(str(value), out, typed)
    elif isinstance(value, int):
        _encode(int(value), out, typed)
    elif isinstance(value, frozenset):
        parts: list[bytes] = []
        for item in value:
            buffer = bytearray()
            _encode(item, buffer, typed)
            parts.append(bytes(buffer))
        out.append(_FROZENSET)
        _varint(len(parts), out)
        for part in sorted(parts):
            out += part
    elif dataclasses.is_dataclass(value) and t.__hash__ is not None and t.__dataclass_params__.frozen:
        out.append(_OBJECT)
        _write_str(_class_path(t), out)
        _encode(tuple(getattr(value, f.name) for f in dataclasses.fields(value)), out, typed)
    else:
        raise key_error(value)


def encode_key(key: Any) -> bytes:
    """The canonical bytes of a key (or a map state's user key): equal keys, equal bytes."""
    out = bytearray()
    _encode(key, out, False)
    return bytes(out)


def encode_namespace(namespace: Any) -> bytes:
    """The bytes of a namespace; windows keep their class."""
    out = bytearray()
    _encode(namespace, out, True)
    return bytes(out)


def _decode(data: bytes, pos: int) -> tuple[Any, int]:
    tag = data[pos]
    pos += 1
    if tag == _STR:
        n, pos = _read_varint(data, pos)
        return data[pos : pos + n].decode("utf-8", "surrogatepass"), pos + n
    if tag == _INT:
        return _LONG.unpack_from(data, pos)[0] - _BIAS, pos + 8
    if tag == _NONE:
        return None, pos
    if tag == _TUPLE:
        n, pos = _read_varint(data, pos)
        items = []
        for _ in range(n):
            item, pos = _decode(data, pos)
            items.append(item)
        return tuple(items), pos
    if tag == _FLOAT:
        return _DOUBLE.unpack_from(data, pos)[0], pos + 8
    if tag == _BYTES:
        n, pos = _read_varint(data, pos)
        return bytes(data[pos : pos + n]), pos + n
    if tag == _BIGINT:
        n, pos = _read_varint(data, pos)
        return int.from_bytes(data[pos : pos + n], "big", signed=True), pos + n
    if tag == _TIME_WINDOW:
        start, end = _TWO_LONGS.unpack_from(data, pos)
        return TimeWindow(start - _BIAS, end - _BIAS), pos + 16
    if tag == _GLOBAL_WINDOW:
        return GlobalWindow.get(), pos
    if tag == _ENUM:
        path, pos = _decode_str(data, pos)
        name, pos = _decode_str(data, pos)
        return getattr(_load_class(path), name), pos
    if tag == _OBJECT:
        path, pos = _decode_str(data, pos)
        fields, pos = _decode(data, pos)
        cls: Any = _load_class(path)
        if issubclass(cls, tuple):
            return (cls._make(fields) if hasattr(cls, "_make") else cls(*fields)), pos
        return cls(*fields), pos
    if tag == _FROZENSET:
        n, pos = _read_varint(data, pos)
        items = []
        for _ in range(n):
            item, pos = _decode(data, pos)
            items.append(item)
        return frozenset(items), pos
    raise ValueError(f"expected a key tag below {_FROZENSET + 1}; got {tag} at byte {pos - 1} of {data!r:.80}")


def _decode_str(data: bytes, pos: int) -> tuple[str, int]:
    n, pos = _read_varint(data, pos)
    return data[pos : pos + n].decode("utf-8", "surrogatepass"), pos + n


def decode_key(data: bytes, pos: int) -> tuple[Any, int]:
    """The key encoded at ``data[pos:]`` and the position after it."""
    return _decode(data, pos)


decode_namespace = decode_key


def prefix_successor(prefix: bytes) -> bytes:
    """The smallest byte string greater than every string that starts with ``prefix`` (an exclusive upper bound)."""
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        raise ValueError(f"expected a prefix with a byte below 0xff; got {prefix!r} (key groups start below 0x80)")
    return stripped[:-1] + bytes((stripped[-1] + 1,))
