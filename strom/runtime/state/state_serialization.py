"""How state goes to bytes and back: pickle protocol 5, cloudpickle for what plain pickle cannot name, and
errors that name the state holding an unpicklable value (shared by the keyed and operator state backends)."""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Mapping
from typing import Any, BinaryIO

import cloudpickle

from strom.exceptions import SerializationError

__all__ = ["KEYED_STATE_FORMAT_VERSION", "dump_state", "dump_state_into", "load_state"]

#: the canonical keyed-state format of a key group (what the heap backend snapshots, and RocksDB savepoints):
#: version 2 places keys by Flink's hash
KEYED_STATE_FORMAT_VERSION = 2

_MISSING: Any = object()


def dump_state(payload: Any, parts: Mapping[str, Any], owner: str) -> bytes:
    """Pickle ``payload`` (protocol 5; cloudpickle for what plain pickle cannot name).

    On failure, find which of ``parts`` (state name -> data) holds the unpicklable value and raise a
    :class:`SerializationError` naming the state and the value's type."""
    try:
        return _dumps(payload)
    except Exception as exc:
        raise _unpicklable(exc, parts, owner) from exc


def dump_state_into(file: BinaryIO, payload: Any, parts: Mapping[str, Any], owner: str) -> int:
    """:func:`dump_state`'s bytes written into ``file`` (seekable) at its position, flushed; returns their length.

    The pickler hands the file one frame (~64 KB) at a time, so no buffer of the whole pickle is built: half the time
    of ``dumps`` and a write for a pickle of megabytes."""
    start = file.tell()
    try:
        try:
            pickle.Pickler(file, protocol=5).dump(payload)
        except (pickle.PicklingError, AttributeError, TypeError):
            file.seek(start)
            file.truncate()
            cloudpickle.CloudPickler(file, protocol=5).dump(payload)
    except Exception as exc:
        raise _unpicklable(exc, parts, owner) from exc
    file.flush()
    return file.tell() - start


def _unpicklable(exc: Exception, parts: Mapping[str, Any], owner: str) -> SerializationError:
    for name, part in parts.items():
        culprit = _find_unpicklable(part, 0)
        if culprit is not _MISSING:
            return SerializationError(
                f"{owner} '{name}' must hold picklable values; got a {type(culprit).__name__!r} "
                f"({culprit!r:.60}) that cannot be pickled ({exc}); hint: keep plain data in state "
                "(numbers, str, tuples, lists, dicts, dataclasses) and re-create resources such as locks, "
                "sockets or clients in open()"
            )
    return SerializationError(f"{owner} could not be pickled: {exc}; hint: keep plain data in state")


def _dumps(obj: Any) -> bytes:
    try:
        return pickle.dumps(obj, protocol=5)
    except (pickle.PicklingError, AttributeError, TypeError):
        return cloudpickle.dumps(obj, protocol=5)  # type: ignore[no-any-return]


def _pickles(obj: Any) -> bool:
    try:
        _dumps(obj)
    except Exception:  # any error of pickling means: this part cannot be pickled
        return False
    return True


def _find_unpicklable(obj: Any, depth: int) -> Any:
    """The innermost part of ``obj`` that cannot be pickled, or ``_MISSING`` if ``obj`` pickles."""
    if _pickles(obj):
        return _MISSING
    if depth < 32:
        children: Iterable[Any] = ()
        if isinstance(obj, dict):
            children = [*obj.keys(), *obj.values()]
        elif isinstance(obj, list | tuple | set | frozenset):
            children = obj
        elif hasattr(obj, "__dict__"):
            children = vars(obj).values()
        for child in children:
            culprit = _find_unpicklable(child, depth + 1)
            if culprit is not _MISSING:
                return culprit
    return obj


def load_state(blob: bytes, what: str) -> Any:
    try:
        return pickle.loads(blob)
    except Exception as exc:
        raise SerializationError(
            f"{what} could not be unpickled ({len(blob)} bytes): {exc!r}; hint: the classes of state values must "
            "be importable where the job restores (same code as when the checkpoint was taken)"
        ) from exc
