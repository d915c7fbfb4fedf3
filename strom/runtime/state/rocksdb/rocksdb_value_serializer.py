"""State values as RocksDB value bytes (the role of Flink's value ``TypeSerializer`` in the RocksDB backend).

A value is one tag byte and its body, so any value can be read without knowing how it was declared (a restore
writes values before the operator registers its states):

* ``0x00`` + pickle (protocol 5; cloudpickle for what pickle cannot name) — untyped state, and any value whose
  declared type has no compact form;
* ``0x01`` + 8-byte big-endian signed int — ``Types.LONG()/INT()/SHORT()/BYTE()``;
* ``0x02`` + 8-byte IEEE double — ``Types.DOUBLE()/FLOAT()``;
* ``0x03`` + UTF-8 — ``Types.STRING()``;
* ``0x04`` + one byte — ``Types.BOOLEAN()``.

A state with a time-to-live puts the 8-byte timestamp (ms) of its last access before the tag (Flink's
``TtlValue`` serialized by ``TtlSerializer``: timestamp first).

    >>> codec = value_codec(None)
    >>> codec.loads(codec.dumps({"a": 1}))
    {'a': 1}
"""

from __future__ import annotations

import pickle
import struct
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from strom.runtime.state.state_serialization import dump_state
from strom.runtime.state.ttl import TtlValue

if TYPE_CHECKING:
    from strom.api.typeinfo import TypeInformation

__all__ = ["ValueCodec", "value_codec"]

_PICKLE, _LONG_TAG, _DOUBLE_TAG, _STRING_TAG, _BOOL_TAG = b"\x00", b"\x01", b"\x02", b"\x03", b"\x04"
_LONG = struct.Struct(">q")
_DOUBLE = struct.Struct(">d")
_TS = struct.Struct(">q")
_MIN_LONG, _MAX_LONG = -(1 << 63), (1 << 63) - 1


def _dump_pickle(value: Any) -> bytes:
    return _PICKLE + pickle.dumps(value, protocol=5)


def _pickler(state: str) -> Callable[[Any], bytes]:
    """Pickle; on failure cloudpickle, and an error naming ``state`` and the unpicklable part."""

    def dumps(value: Any) -> bytes:
        try:
            return _PICKLE + pickle.dumps(value, protocol=5)
        except (pickle.PicklingError, AttributeError, TypeError):
            return _PICKLE + dump_state(value, {state: value}, "keyed state")

    return dumps


def _dump_long(value: Any) -> bytes:
    if type(value) is int and _MIN_LONG <= value <= _MAX_LONG:
        return _LONG_TAG + _LONG.pack(value)
    return _dump_pickle(value)


def _dump_double(value: Any) -> bytes:
    if type(value) is float:
        return _DOUBLE_TAG + _DOUBLE.pack(value)
    return _dump_pickle(value)


def _dump_string(value: Any) -> bytes:
    if type(value) is str:
        return _STRING_TAG + value.encode("utf-8", "surrogatepass")
    return _dump_pickle(value)


def _dump_bool(value: Any) -> bytes:
    if type(value) is bool:
        return _BOOL_TAG + (b"\x01" if value else b"\x00")
    return _dump_pickle(value)


def loads_value(data: bytes, pos: int = 0) -> Any:
    """The value whose tagged bytes start at ``data[pos]``."""
    tag = data[pos]
    if tag == 0:
        return pickle.loads(data[pos + 1 :] if pos else memoryview(data)[1:])
    if tag == 1:
        return _LONG.unpack_from(data, pos + 1)[0]
    if tag == 2:
        return _DOUBLE.unpack_from(data, pos + 1)[0]
    if tag == 3:
        return data[pos + 1 :].decode("utf-8", "surrogatepass")
    if tag == 4:
        return data[pos + 1] == 1
    raise ValueError(f"expected a state value tag 0-4; got {tag} in {data[:40]!r}; hint: is this a strom RocksDB db?")


_COMPACT: dict[str, Callable[[Any], bytes]] = {
    "Long": _dump_long,
    "Integer": _dump_long,
    "Short": _dump_long,
    "Byte": _dump_long,
    "Double": _dump_double,
    "Float": _dump_double,
    "String": _dump_string,
    "Boolean": _dump_bool,
}


class ValueCodec:
    """How one state's values (or list elements, or map values) go to bytes and back, TTL included."""

    __slots__ = ("dumps_value", "ttl")

    def __init__(self, dumps_value: Callable[[Any], bytes], ttl: bool) -> None:
        self.dumps_value = dumps_value
        self.ttl = ttl

    def dumps(self, value: Any) -> bytes:
        return self.dumps_value(value)

    def loads(self, data: bytes) -> Any:
        return loads_value(data)

    def dumps_stored(self, stored: Any) -> bytes:
        """The bytes of a stored form: the value, or a :class:`TtlValue` when the state has a TTL."""
        if self.ttl:
            return _TS.pack(stored.timestamp) + self.dumps_value(stored.value)
        return self.dumps_value(stored)

    def loads_stored(self, data: bytes) -> Any:
        if self.ttl:
            return TtlValue(loads_value(data, 8), _TS.unpack_from(data)[0])
        return loads_value(data)


def value_codec(type_info: TypeInformation | None, *, ttl: bool = False, state: str = "value") -> ValueCodec:
    """The codec of state ``state`` declared with ``type_info`` (``None``: untyped, pickled)."""
    dumps: Callable[[Any], bytes] = _pickler(state)
    if type_info is not None and not type_info.is_pickled():
        dumps = _COMPACT.get(getattr(type_info, "java_name", ""), dumps)
    return ValueCodec(dumps, ttl)
