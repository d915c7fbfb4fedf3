"""The key groups one subtask restores, read one at a time (the reading side of Flink's ``KeyGroupsStateHandle``,
which its restore operations read key group by key group from the checkpoint stream).

A :class:`KeyGroupsStateReader` is the ``key group → bytes`` mapping a keyed backend's ``restore`` iterates. Before
any operator sees state, :meth:`~KeyGroupsStateReader.verify` reads every key group once — its size and checksum
are checked, so a damaged file still fails the restore before user code runs — and, above ``keep_bytes`` in all,
drops the bytes again; the backend's restore then reads each key group as it takes it in, so a TaskManager holds
one key group's bytes at a time, not its whole share of the checkpoint (500 MB per subtask of a 1 GB state at p=2).
Below ``keep_bytes`` the verified bytes are kept: small state is read once.

    >>> from strom.runtime.checkpoint.metadata import StateHandle
    >>> reader = KeyGroupsStateReader([(3, StateHandle(uri="x", size=1))], lambda h, what: b"a")
    >>> reader.verify()
    >>> dict(reader)
    {3: b'a'}
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

from strom.runtime.checkpoint.metadata import StateHandle

__all__ = ["KEEP_BYTES", "KeyGroupsStateReader"]

#: verified key groups up to this many bytes in all are kept, not read again
KEEP_BYTES = 64 << 20


class KeyGroupsStateReader(Mapping[int, bytes]):
    """``key group → bytes`` of ``handles``, each read by ``read(handle, what)`` (checked against its size and
    checksum) when it is looked up; ``add`` puts bytes already in memory beside them (canonical blobs of an
    incremental checkpoint restored into the heap backend)."""

    def __init__(
        self,
        handles: Sequence[tuple[int, StateHandle]],
        read: Callable[[StateHandle, str], bytes],
        *,
        keep_bytes: int = KEEP_BYTES,
    ) -> None:
        self._handles = dict(handles)
        self._read = read
        self._keep_bytes = keep_bytes
        self._kept: dict[int, bytes] = {}

    def verify(self) -> None:
        """Read every key group once (raises what a damaged or missing file raises); keep them if small."""
        total = sum(handle.size for handle in self._handles.values())
        for kg, handle in self._handles.items():
            data = self._read(handle, _what(kg))
            if total <= self._keep_bytes:
                self._kept[kg] = data

    def add(self, blobs: Mapping[int, bytes]) -> None:
        self._kept.update(blobs)

    def __getitem__(self, kg: int) -> bytes:
        kept = self._kept.get(kg)
        if kept is not None:
            return kept
        return self._read(self._handles[kg], _what(kg))

    def __iter__(self) -> Iterator[int]:
        yield from self._handles
        yield from (kg for kg in self._kept if kg not in self._handles)

    def __len__(self) -> int:
        return len(self._handles.keys() | self._kept.keys())


def _what(kg: int) -> str:
    return f"keyed state of key group {kg}"
