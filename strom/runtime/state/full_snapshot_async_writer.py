"""The asynchronous part of a full keyed snapshot, key group by key group (Flink's ``FullSnapshotAsyncWriter``,
which writes the key groups of a ``FullSnapshotResources`` one after the other into the checkpoint's output stream).

A backend's ``async_snapshot()`` returns a supplier: calling it gives every key group's canonical bytes at once
(what tests, the state processor API and ``snapshot()`` use). A :class:`KeyGroupStreamSupplier` can also
:meth:`~KeyGroupStreamSupplier.stream` them: ``(key group, bytes)`` pairs in key-group order, each made when it is
asked for, so the checkpoint's writer holds one key group at a time and never the whole state (a full snapshot of
2 GB of RocksDB state no longer needs 2 GB more of memory). Either is taken once per snapshot.

    >>> writer = FullSnapshotAsyncWriter(lambda: iter([(1, b"a"), (4, b"b")]))
    >>> next(writer.stream())
    (1, b'a')
    >>> FullSnapshotAsyncWriter(lambda: iter([(1, b"a")]))()
    {1: b'a'}
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Protocol, runtime_checkable

from strom.exceptions import CheckpointError

__all__ = ["FullSnapshotAsyncWriter", "KeyGroupStreamSupplier"]


@runtime_checkable
class KeyGroupStreamSupplier(Protocol):
    """A keyed snapshot's supplier whose key groups can be streamed (taken once, either way)."""

    def __call__(self) -> Mapping[int, bytes]: ...

    def stream(self) -> Iterator[tuple[int, bytes]]:
        """``(key group, canonical bytes)`` of every non-empty key group, in key-group order, made on demand."""


class FullSnapshotAsyncWriter:
    """A :class:`KeyGroupStreamSupplier` over ``write`` (a generator of the key groups' bytes, reading a point-in-time
    view the synchronous part took); ``release`` (if given) frees that view once the stream ended, failed, was closed
    or the snapshot was cancelled."""

    def __init__(
        self, write: Callable[[], Iterator[tuple[int, bytes]]], *, release: Callable[[], None] | None = None
    ) -> None:
        self._write: Callable[[], Iterator[tuple[int, bytes]]] | None = write
        self._release = release
        self._lock = threading.Lock()

    def _take(self) -> Callable[[], Iterator[tuple[int, bytes]]]:
        with self._lock:
            write, self._write = self._write, None
        if write is None:
            raise CheckpointError(
                "expected to read a keyed snapshot once; got a second read or a cancelled snapshot; hint: a "
                "supplier of keyed state is called (or streamed) exactly once per checkpoint"
            )
        return write

    def stream(self) -> Iterator[tuple[int, bytes]]:
        write = self._take()

        def pairs() -> Iterator[tuple[int, bytes]]:
            try:
                yield from write()
            finally:
                self._free()

        return pairs()

    def __call__(self) -> dict[int, bytes]:
        return dict(self.stream())

    def cancel(self) -> None:
        """The checkpoint will not read this snapshot: free its view (a stream already running ends by itself)."""
        with self._lock:
            taken = self._write is None
            self._write = None
        if not taken:
            self._free()

    def _free(self) -> None:
        release, self._release = self._release, None
        if release is not None:
            release()
