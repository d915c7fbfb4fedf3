"""Key groups (Flink's ``KeyGroupRangeAssignment``): a key's group is Flink's ``murmurHash`` of the ``hashCode``
Flink sees for PyFlink's key (:mod:`strom.runtime.state.key_hash`), so records land on the subtask where Flink puts
them; keys without a stable Flink hash use :func:`stable_hash`.

Python's built-in ``hash`` of ``str`` is salted per process, so it must never route records or place
state. :func:`stable_hash` is defined by the key's value alone: equal keys (``1 == 1.0 == True``)
hash equally, in every process, on every run.

    >>> assign_to_key_group("word", 128) == assign_to_key_group("word", 128)
    True
    >>> compute_operator_index_for_key_group(128, 4, 127)
    3
"""

from __future__ import annotations

import enum
import pickle
import struct
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from strom.exceptions import CheckpointError, InvalidProgramError
from strom.runtime.state.key_hash import flink_key_hash, murmur_hash

if TYPE_CHECKING:
    from strom.api.typeinfo import TypeInformation

__all__ = [
    "KeyGroupAssigner",
    "KeyGroupRange",
    "assign_key_to_parallel_operator",
    "assign_to_key_group",
    "check_parallelism",
    "check_placement",
    "compute_key_group_range_for_operator_index",
    "compute_operator_index_for_key_group",
    "key_group_assigner",
    "stable_hash",
]

_M32 = 0xFFFFFFFF
_DOUBLE = struct.Struct("<d")


def _fmix32(h: int) -> int:
    """MurmurHash3's finaliser: spreads every input bit over the 32 output bits."""
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    h ^= h >> 16
    return h


def _raw_hash(key: Any) -> int:
    t = type(key)
    if t is str:
        return zlib.crc32(key.encode("utf-8", "surrogatepass"))
    if t is int or t is bool:
        return zlib.crc32(int(key).to_bytes((int(key).bit_length() + 8) // 8 or 1, "little", signed=True), 1)
    if t is tuple:
        h = 0x345678
        for item in key:
            h = (h * 1000003 ^ _raw_hash(item)) & _M32
        return h ^ len(key)
    if t is bytes or t is bytearray:
        return zlib.crc32(key, 2)
    if t is float:
        if key.is_integer():
            return _raw_hash(int(key))
        return zlib.crc32(_DOUBLE.pack(key), 3)
    if key is None:
        return 0x9E3779B9
    if isinstance(key, enum.Enum):
        return zlib.crc32(f"{type(key).__qualname__}.{key.name}".encode(), 4)
    if isinstance(key, str | int | tuple):  # subclasses (namedtuple, IntEnum handled above)
        return _raw_hash(str(key) if isinstance(key, str) else int(key) if isinstance(key, int) else tuple(key))
    try:
        hash(key)
    except TypeError as exc:
        raise InvalidProgramError(
            f"a key must be hashable; got a {type(key).__name__!r} ({key!r:.60}); "
            "hint: return a tuple instead of a list, or a str/int from the key selector"
        ) from exc
    return zlib.crc32(pickle.dumps(key, protocol=5), 5)


def stable_hash(key: Any) -> int:
    """A 32-bit hash of ``key`` that is the same in every process and every run."""
    return _fmix32(_raw_hash(key))


def assign_to_key_group(key: Any, max_parallelism: int) -> int:
    """The key group of an untyped key (PyFlink's ``key_by`` without ``key_type``); see :func:`key_group_assigner`."""
    h = _UNTYPED(key)
    return (murmur_hash(h) if h is not None else stable_hash(key)) % max_parallelism


#: key -> key group, for one key type and max parallelism
KeyGroupAssigner = Callable[[Any], int]
_UNTYPED = flink_key_hash(None)
_CACHE_LIMIT = 1 << 18


def key_group_assigner(max_parallelism: int, key_type: TypeInformation | None = None) -> KeyGroupAssigner:
    """Where a key goes, as Flink puts PyFlink's keys: ``murmurHash(hashCode) % max_parallelism`` of the key as
    PyFlink's serializer materialises it (:mod:`strom.runtime.state.key_hash`), else strom's :func:`stable_hash`.
    Results are cached (equal keys have equal key groups, so the cache is exact)."""
    key_hash = _UNTYPED if key_type is None else flink_key_hash(key_type)
    cache: dict[Any, int] = {}

    def assign(key: Any) -> int:
        try:
            return cache[key]
        except KeyError:
            pass
        except TypeError:
            stable_hash(key)  # an unhashable key: raises with a hint
        h = key_hash(key)
        kg = (murmur_hash(h) if h is not None else stable_hash(key)) % max_parallelism
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        cache[key] = kg
        return kg

    return assign


def compute_operator_index_for_key_group(max_parallelism: int, parallelism: int, key_group: int) -> int:
    return key_group * parallelism // max_parallelism


def assign_key_to_parallel_operator(key: Any, max_parallelism: int, parallelism: int) -> int:
    return compute_operator_index_for_key_group(max_parallelism, parallelism, assign_to_key_group(key, max_parallelism))


@dataclass(frozen=True, slots=True)
class KeyGroupRange:
    """The inclusive range of key groups ``[start, end]`` one subtask owns."""

    start: int
    end: int

    def __contains__(self, key_group: object) -> bool:
        return isinstance(key_group, int) and self.start <= key_group <= self.end

    def __len__(self) -> int:
        return max(0, self.end - self.start + 1)


def compute_key_group_range_for_operator_index(
    max_parallelism: int, parallelism: int, operator_index: int
) -> KeyGroupRange:
    start = (operator_index * max_parallelism + parallelism - 1) // parallelism
    end = ((operator_index + 1) * max_parallelism - 1) // parallelism
    return KeyGroupRange(start, end)


def check_parallelism(parallelism: int, max_parallelism: int, where: str) -> None:
    if not 1 <= parallelism <= max_parallelism:
        raise InvalidProgramError(
            f"parallelism of {where} must be between 1 and the max parallelism {max_parallelism}; "
            f"got {parallelism}; hint: raise it with set_max_parallelism(...)"
        )


def check_placement(
    key_group: int, states: Mapping[str, Any], owned: KeyGroupRange, key_group_of: KeyGroupAssigner
) -> None:
    """Keyed state of strom 0.1 (key group ``key_group`` by its own hash): every key of it must belong to ``owned``
    by today's (Flink's) hash too, or the restore would lose it; else a :class:`CheckpointError` says how to move it."""
    for flat, namespaced in states.values():
        for key in (*flat, *namespaced):
            now = key_group_of(key)
            if now not in owned:
                raise CheckpointError(
                    f"expected keyed state whose keys are in key groups by Flink's hash (strom 0.2 and later); got "
                    f"key group {key_group} written by strom 0.1, whose key {key!r:.60} now belongs to key group "
                    f"{now}, outside this subtask's key groups {owned.start}-{owned.end}; hint: restore the "
                    "checkpoint once at parallelism 1 and take a savepoint (it is written with the new key groups), "
                    "then start from that savepoint at any parallelism"
                )
