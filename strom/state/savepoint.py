"""An existing savepoint (or retained checkpoint) as the state processor API reads it (Flink's ``SavepointLoader``
and ``SavepointMetadataV2``), and the canonical format of its state files.

:class:`ExistingSavepoint` finds the ``_metadata`` as a restore does (:func:`resolve_checkpoint_pointer`: the
document's own checksum first), looks operators up by uid and reads their state files through
:func:`read_state`, which checks each slice's size and checksum — a damaged file fails here exactly as it fails a
restore. The bytes of one key group are in the canonical format every keyed state backend writes
(``{"version": 2, "meta": {name: (kind, has_ttl)}, "states": {name: (flat, namespaced)}}``, pickled; see
:mod:`strom.runtime.state.heap_keyed_state_backend`), so a savepoint of any backend reads the same; the operator
state of one subtask is :class:`~strom.runtime.state.operator_state_backend.OperatorStateBackend`'s snapshot.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from strom.exceptions import CheckpointError
from strom.runtime.checkpoint.metadata import CheckpointMetadata, OperatorState
from strom.runtime.checkpoint.storage import read_state, resolve_checkpoint_pointer
from strom.runtime.state.rocksdb.rocksdb_native_key_groups import load_key_group
from strom.runtime.state.state_serialization import load_state

__all__ = [
    "CANONICAL_FORMAT_VERSION",
    "ExistingSavepoint",
    "KeyGroupState",
    "OperatorStates",
    "decode_key_group",
    "decode_operator_state",
]

CANONICAL_FORMAT_VERSION = 1
#: keyed state: 2 places keys in key groups by Flink's hash, 1 (strom 0.1) by strom's own; both read the same
KEYED_FORMAT_VERSIONS = (1, 2)
"""The ``version`` of a key group's and of a subtask's operator state payload (seam.md: the heap backend's)."""


@dataclass(frozen=True, slots=True)
class KeyGroupState:
    """One key group of one operator, decoded: ``meta`` is state name → (kind, has TTL); ``states`` is state name
    → (void-namespace ``{key: stored}``, namespaced ``{key: {namespace: stored}}``)."""

    key_group: int
    meta: Mapping[str, tuple[str, bool]]
    states: Mapping[str, tuple[dict[Any, Any], dict[Any, dict[Any, Any]]]]


@dataclass(frozen=True, slots=True)
class OperatorStates:
    """The operator state of one operator, every old subtask decoded: list states by name → (mode, the
    elements of each subtask in subtask order), broadcast states by name → the copy of each subtask."""

    lists: Mapping[str, tuple[str, list[list[Any]]]]
    broadcast: Mapping[str, list[dict[Any, Any] | None]]

    def names(self) -> list[str]:
        return sorted({*self.lists, *self.broadcast})


def _wrong_version(what: str, payload: object) -> CheckpointError:
    got = payload.get("version") if isinstance(payload, dict) else type(payload).__name__
    return CheckpointError(
        f"expected {what} in the canonical format version {CANONICAL_FORMAT_VERSION}; got {got!r}; hint: the "
        "savepoint was written by an incompatible strom version — read it with that version"
    )


def decode_key_group(blob: bytes, key_group: int) -> KeyGroupState:
    """The bytes of ``key_group`` (canonical, or a RocksDB checkpoint's, turned canonical) as a
    :class:`KeyGroupState`."""
    what = f"keyed state of key group {key_group}"
    payload = load_key_group(blob, what)
    if not isinstance(payload, dict) or payload.get("version") not in KEYED_FORMAT_VERSIONS:
        raise _wrong_version(what, payload)
    meta = {str(name): (str(kind), bool(ttl)) for name, (kind, ttl) in payload["meta"].items()}
    return KeyGroupState(key_group=key_group, meta=meta, states=payload["states"])


def decode_operator_state(blobs: Iterable[bytes | None]) -> OperatorStates:
    """The operator-state snapshots of every old subtask (``None``: a subtask without any), decoded."""
    old = list(blobs)
    lists: dict[str, tuple[str, list[list[Any]]]] = {}
    broadcast: dict[str, list[dict[Any, Any] | None]] = {}
    for index, blob in enumerate(old):
        if not blob:
            continue
        what = f"operator state of subtask {index}"
        payload = load_state(blob, what)
        if not isinstance(payload, dict) or payload.get("version") != CANONICAL_FORMAT_VERSION:
            raise _wrong_version(what, payload)
        for name, (mode, elements) in payload["states"].items():
            lists.setdefault(name, (str(mode), [[] for _ in old]))[1][index] = list(elements)
        for name, entries in payload.get("broadcast", {}).items():
            broadcast.setdefault(name, [None] * len(old))[index] = dict(entries)
    return OperatorStates(lists=lists, broadcast=broadcast)


@dataclass(frozen=True, slots=True)
class ExistingSavepoint:
    """A savepoint or retained checkpoint: its directory and its verified ``_metadata``."""

    path: str
    metadata: CheckpointMetadata

    @classmethod
    def load(cls, path: str) -> ExistingSavepoint:
        """From its directory or its ``_metadata`` file (any fsspec URL), as ``execution.savepoint.path``."""
        directory, metadata = resolve_checkpoint_pointer(str(path))
        return cls(path=directory, metadata=metadata)

    def uids(self) -> list[str]:
        """The operator ids (uids) that have state in the savepoint."""
        return sorted(self.metadata.operator_states)

    def operator_state(self, uid: str) -> OperatorState:
        """The state of operator ``uid``; a uid without state fails naming the uids that have some."""
        state = self.metadata.operator_states.get(uid)
        if state is None:
            known = ", ".join(repr(u) for u in self.uids()) or "none"
            raise CheckpointError(
                f"expected an operator with uid {uid!r} in the savepoint {self.path}; got state for the operators "
                f"{known}; hint: pass the uid(...) the operator had in the job that took the savepoint (an "
                "operator without a uid has a generated id 'op-<n>')"
            )
        return state

    def read_key_group(self, state: OperatorState, key_group: int) -> KeyGroupState:
        """One key group of ``state``, its size and checksum checked, decoded."""
        blob = read_state(
            state.keyed[key_group],
            operator_id=state.operator_id,
            checkpoint_id=self.metadata.checkpoint_id,
            what=f"keyed state of key group {key_group}",
        )
        return decode_key_group(blob, key_group)

    def key_groups(self, state: OperatorState, key_groups: Iterable[int] | None = None) -> Iterator[KeyGroupState]:
        """The non-empty key groups of ``state`` (those of ``key_groups`` only, when given), in order. A retained
        incremental RocksDB checkpoint's are read from its RocksDB files into the canonical form first."""
        if state.incremental:
            yield from self._incremental_key_groups(state, key_groups)
            return
        wanted = sorted(state.keyed) if key_groups is None else [kg for kg in key_groups if kg in state.keyed]
        for kg in wanted:
            yield self.read_key_group(state, kg)

    def _incremental_key_groups(
        self, state: OperatorState, key_groups: Iterable[int] | None
    ) -> Iterator[KeyGroupState]:
        import tempfile

        from strom.runtime.state.key_groups import KeyGroupRange
        from strom.runtime.state.rocksdb.rocksdb_incremental_restore_operation import canonical_key_groups

        wanted = None if key_groups is None else set(key_groups)
        if wanted is not None and not wanted:
            return
        blobs = canonical_key_groups(
            [state.incremental[i] for i in sorted(state.incremental)],
            None if wanted is None else KeyGroupRange(min(wanted), max(wanted)),
            max_parallelism=state.max_parallelism,
            scratch_dir=tempfile.gettempdir(),
            operator_id=state.operator_id,
            checkpoint_id=self.metadata.checkpoint_id,
        )
        for kg in sorted(blobs):
            if wanted is None or kg in wanted:
                yield decode_key_group(blobs[kg], kg)

    def operator_states(self, state: OperatorState) -> OperatorStates:
        """The operator (list / union / broadcast) state of every old subtask of ``state``, checked, decoded."""
        blobs = [
            None
            if (handle := state.operator.get(index)) is None
            else read_state(
                handle,
                operator_id=state.operator_id,
                checkpoint_id=self.metadata.checkpoint_id,
                what=f"operator state of subtask {index}",
            )
            for index in range(state.parallelism)
        ]
        return decode_operator_state(blobs)
