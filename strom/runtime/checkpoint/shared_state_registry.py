"""Which checkpoints reference each file of the job's ``shared/`` directory (Flink's ``SharedStateRegistryImpl``).

Incremental RocksDB checkpoints upload an SST file once and reference it from every later checkpoint that still
holds it. The JobMaster registers the shared files of each completed checkpoint; when a checkpoint is subsumed
(``execution.checkpointing.num-retained``) it is unregistered, and a file no retained checkpoint references any more
is handed back for deletion. Files of a checkpoint the job restored in ``NO_CLAIM`` mode belong to another job and
are never handed back (Flink's ``RestoreMode``). An aborted checkpoint's files that no completed checkpoint
registered are its own (:meth:`SharedStateRegistry.unregistered`).

A pure state machine: events in, the handles to delete out; no I/O. :meth:`validate` checks its invariants.

    >>> registry = SharedStateRegistry()
    >>> a, b = StateHandle("shared/a.sst", 1), StateHandle("shared/b.sst", 1)
    >>> registry.register_checkpoint(1, [a])
    >>> registry.register_checkpoint(2, [a, b])
    >>> registry.unregister_checkpoint(1)
    []
    >>> [h.uri for h in registry.unregister_checkpoint(2)]
    ['shared/a.sst', 'shared/b.sst']
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field

from strom.exceptions import ConfigurationError
from strom.runtime.checkpoint.metadata import CheckpointMetadata, StateHandle

__all__ = ["RestoreMode", "SharedStateRegistry", "shared_handles_of"]


class RestoreMode(enum.Enum):
    """``execution.savepoint-restore-mode``: who owns the checkpoint a job is started from (Flink's ``RestoreMode``)."""

    CLAIM = "CLAIM"
    """The new job owns it: it is one of its retained checkpoints, subsumed and deleted in time."""
    NO_CLAIM = "NO_CLAIM"
    """It stays the user's: never deleted by the new job, whose first checkpoint is full (uploads every file)."""

    @classmethod
    def parse(cls, value: str | RestoreMode) -> RestoreMode:
        if isinstance(value, RestoreMode):
            return value
        try:
            return cls(str(value).strip().upper().replace("-", "_"))
        except ValueError:
            raise ConfigurationError(
                f"expected execution.savepoint-restore-mode to be CLAIM or NO_CLAIM; got {value!r}; hint: NO_CLAIM "
                "(the default) never deletes the checkpoint restored from, CLAIM lets the new job own it"
            ) from None


#: how many deleted URIs :meth:`SharedStateRegistry.discarded_among` remembers
_DISCARDED_REMEMBERED = 100_000


@dataclass(slots=True)
class _Entry:
    handle: StateHandle
    references: set[int] = field(default_factory=set)
    owned: bool = True


def shared_handles_of(metadata: CheckpointMetadata) -> list[StateHandle]:
    """Every handle into ``shared/`` that the checkpoint references (incremental keyed state)."""
    return [h for op in metadata.operator_states.values() for h in op.shared_handles()]


class SharedStateRegistry:
    """Reference sets of the shared files of the retained checkpoints, keyed by file URI."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._checkpoints: dict[int, set[str]] = {}
        #: URIs handed back for deletion (the newest ones): a checkpoint referencing one of them is broken
        self._discarded: dict[str, None] = {}

    def register_checkpoint(self, checkpoint_id: int, handles: Iterable[StateHandle], *, owned: bool = True) -> None:
        """A checkpoint completed (or was restored: ``owned`` False for ``NO_CLAIM``) referencing ``handles``."""
        uris = self._checkpoints.setdefault(checkpoint_id, set())
        for handle in handles:
            entry = self._entries.get(handle.uri)
            if entry is None:
                entry = self._entries[handle.uri] = _Entry(handle, owned=owned)
            else:
                entry.owned = entry.owned and owned
            entry.references.add(checkpoint_id)
            uris.add(handle.uri)

    def unregister_checkpoint(self, checkpoint_id: int) -> list[StateHandle]:
        """A checkpoint was subsumed or discarded: the owned files no retained checkpoint references any more,
        to delete (sorted by URI)."""
        out: list[StateHandle] = []
        for uri in sorted(self._checkpoints.pop(checkpoint_id, ())):
            entry = self._entries[uri]
            entry.references.discard(checkpoint_id)
            if not entry.references:
                del self._entries[uri]
                if entry.owned:
                    out.append(entry.handle)
                    self._discarded[uri] = None
        while len(self._discarded) > _DISCARDED_REMEMBERED:
            del self._discarded[next(iter(self._discarded))]
        return out

    def discarded_among(self, handles: Iterable[StateHandle]) -> list[StateHandle]:
        """Of the files a completing checkpoint references, those already handed back for deletion: such a
        checkpoint must not complete (a task referenced a file of a checkpoint subsumed meanwhile)."""
        return [h for h in handles if h.uri in self._discarded and h.uri not in self._entries]

    def unregistered(self, handles: Iterable[StateHandle]) -> list[StateHandle]:
        """Of the files an aborted checkpoint's tasks uploaded, those no registered checkpoint references: only the
        aborted checkpoint knew them, so they are to delete."""
        seen: set[str] = set()
        out: list[StateHandle] = []
        for handle in handles:
            if handle.uri not in self._entries and handle.uri not in seen:
                seen.add(handle.uri)
                out.append(handle)
        return out

    @classmethod
    def rebuild(cls, checkpoints: Iterable[tuple[CheckpointMetadata, bool]]) -> SharedStateRegistry:
        """The registry of the retained checkpoints ``(metadata, owned)`` after a JobManager failover or a
        restart from a retained checkpoint."""
        registry = cls()
        for metadata, owned in checkpoints:
            registry.register_checkpoint(metadata.checkpoint_id, shared_handles_of(metadata), owned=owned)
        return registry

    # -- queries ---------------------------------------------------------------------------------------------
    def references(self, uri: str) -> frozenset[int]:
        entry = self._entries.get(uri)
        return frozenset(entry.references) if entry is not None else frozenset()

    def is_registered(self, uri: str) -> bool:
        return uri in self._entries

    def checkpoints(self) -> list[int]:
        return sorted(self._checkpoints)

    def __len__(self) -> int:
        return len(self._entries)

    def validate(self) -> None:
        """Every entry is referenced, and the two indexes agree."""
        for uri, entry in self._entries.items():
            assert entry.references, f"{uri} has no reference but is registered"
            assert entry.handle.uri == uri
            for cid in entry.references:
                assert uri in self._checkpoints.get(cid, ()), f"{uri} → {cid} missing from the checkpoint index"
        for cid, uris in self._checkpoints.items():
            for uri in uris:
                assert cid in self._entries[uri].references, f"checkpoint {cid} → {uri} missing from the entry"
