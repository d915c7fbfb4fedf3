"""What a completed checkpoint or savepoint consists of (Flink's ``CheckpointMetadata``, ``OperatorState``,
``StreamStateHandle``), and its ``_metadata`` file format.

The file is JSON, never pickle: a savepoint path may come from anywhere, and reading its ``_metadata`` must
not run code. State handles that lie inside the checkpoint's own directory are stored relative to it, so a
savepoint directory stays valid when it is copied or moved (Flink's relative savepoint paths)::

    {"format": "strom-checkpoint-metadata", "version": 2, "checksum": "5d3b…", "checkpoint_id": 7,
     "job_id": "…", "timestamp_ms": 1700000000000, "is_savepoint": false,
     "external_pointer": "file:///ckpt/<job>/chk-7",
     "operator_states": {"<operator id>": {"parallelism": 2, "max_parallelism": 128,
         "keyed": {"0": {"uri": "op-keyed-0", "size": 12, "checksum": "9a0c…"}}, "operator": {}, "channel": {},
         "coordinator": null}}}

Every state handle carries the xxh3-64 checksum of its bytes, and the document carries the checksum of itself
without its ``checksum`` member, taken over its canonical JSON (sorted keys, no whitespace): a damaged
``_metadata`` fails to parse or fails that check before anything in it is used. Version 1 documents (written
before checksums) parse as :attr:`CheckpointMetadata.verified` false: a job restores them only when told to
(``execution.savepoint.restore-unverified``), and a state file of theirs that is not a pickle stream is named as
damaged.

Only the *description* is validated here; what the state files hold is the state backend's business.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from strom.exceptions import CheckpointStorageError, CorruptStateError
from strom.runtime.checkpoint.checksum import CHECKSUM_ALGORITHM, checksum, older_checkpoint_hint

__all__ = [
    "METADATA_FORMAT",
    "METADATA_VERSION",
    "CheckpointMetadata",
    "IncrementalRemoteKeyedStateHandle",
    "OperatorState",
    "StateHandle",
]

log = logging.getLogger(__name__)

METADATA_FORMAT = "strom-checkpoint-metadata"
METADATA_VERSION = 2
_UNVERIFIED_VERSION = 1  # before checksums: restored with a warning
_DIGEST = re.compile(r"^[0-9a-f]{16}$")
_CHECKPOINT_DIR = re.compile(r"/chk-(\d+)/[^/]*$")
_CHECKPOINT_ID_MEMBER = re.compile(rb'"checkpoint_id": *(\d+)')


@dataclass(frozen=True, slots=True)
class StateHandle:
    """Written state: ``size`` bytes at ``offset`` of the file ``uri`` (absolute, as fsspec reads it). The key
    groups of one operator subtask share one file, each a slice of it (Flink's ``KeyGroupsStateHandle``)."""

    uri: str
    size: int
    offset: int = 0
    checksum: str | None = None
    """xxh3-64 of the bytes, verified when they are read; ``None`` in checkpoints written before checksums."""


@dataclass(frozen=True, slots=True)
class IncrementalRemoteKeyedStateHandle:
    """The keyed state of one operator subtask as a RocksDB checkpoint (Flink's
    ``IncrementalRemoteKeyedStateHandle``): the SST files, kept once in the job's ``shared/`` directory and
    referenced by every checkpoint that still holds them, and the private files of this checkpoint (MANIFEST,
    CURRENT, OPTIONS, WAL, the backend's meta) in its own directory. Keys of ``shared`` and ``private`` are the
    file names inside the RocksDB instance; a restore downloads each under that name."""

    key_group_start: int
    key_group_end: int
    """The key groups the backend held, ``start..end`` inclusive."""
    checkpoint_id: int
    shared: Mapping[str, StateHandle] = field(default_factory=dict)
    private: Mapping[str, StateHandle] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return sum(h.size for h in self.shared.values()) + sum(h.size for h in self.private.values())

    def overlaps(self, start: int, end: int) -> bool:
        return self.key_group_start <= end and start <= self.key_group_end


@dataclass(frozen=True, slots=True)
class OperatorState:
    """The state of one operator (by operator id: its uid or generated id) in one checkpoint."""

    operator_id: str
    parallelism: int
    max_parallelism: int
    keyed: Mapping[int, StateHandle] = field(default_factory=dict)
    """Key group → the file holding that key group's keyed state."""
    operator: Mapping[int, StateHandle] = field(default_factory=dict)
    """Subtask index → the file holding that subtask's operator (list / union / broadcast) state."""
    channel: Mapping[int, StateHandle] = field(default_factory=dict)
    """Subtask index → in-flight buffers persisted by an unaligned checkpoint."""
    coordinator: StateHandle | None = None
    """The operator coordinator's state (e.g. a source's split assignment)."""
    incremental: Mapping[int, IncrementalRemoteKeyedStateHandle] = field(default_factory=dict)
    """Subtask index → its keyed state as an incremental RocksDB checkpoint (instead of ``keyed``)."""

    def shared_handles(self) -> list[StateHandle]:
        """The handles into the job's ``shared/`` directory this operator's state references."""
        return [h for inc in self.incremental.values() for h in inc.shared.values()]


@dataclass(frozen=True, slots=True)
class CheckpointMetadata:
    """A completed checkpoint or savepoint: written last, as ``_metadata``, into :attr:`external_pointer`."""

    checkpoint_id: int
    job_id: str
    timestamp_ms: int
    is_savepoint: bool
    operator_states: Mapping[str, OperatorState]
    external_pointer: str
    """The checkpoint's directory URI."""
    verified: bool = True
    """False for a document of format version 1 (written before checksums): its state cannot be verified, and a
    job restores it only with ``execution.savepoint.restore-unverified``."""

    def to_json(self) -> str:
        base = _dir_prefix(self.external_pointer)
        doc: dict[str, Any] = {
            "format": METADATA_FORMAT,
            "version": METADATA_VERSION,
            "checksum": "",
            "checkpoint_id": self.checkpoint_id,
            "job_id": self.job_id,
            "timestamp_ms": self.timestamp_ms,
            "is_savepoint": self.is_savepoint,
            "external_pointer": self.external_pointer,
            "operator_states": {
                op_id: _operator_to_json(op, base) for op_id, op in sorted(self.operator_states.items())
            },
        }
        doc["checksum"] = _document_checksum(doc)
        return json.dumps(doc, indent=1, sort_keys=False)

    @classmethod
    def from_json(
        cls, text: str | bytes, *, source: str = "<string>", location: str | None = None
    ) -> CheckpointMetadata:
        """Parse and validate a ``_metadata`` document.

        ``source`` names the file in error messages. ``location`` is the directory the file was actually
        read from; it becomes :attr:`external_pointer` and anchors relative state handles (a moved savepoint
        still finds its files). Without it, the pointer stored in the document is used.
        """
        return _Parser(source).metadata(text, location)


def _document_checksum(doc: Mapping[str, Any]) -> str:
    """The checksum of a ``_metadata`` document: of its canonical JSON without the ``checksum`` member, so it
    does not depend on the file's layout."""
    body = {k: v for k, v in doc.items() if k != "checksum"}
    return checksum(json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode())


def _dir_prefix(directory: str) -> str:
    return directory.rstrip("/") + "/"


def _handle_to_json(handle: StateHandle, base: str) -> dict[str, Any]:
    uri = handle.uri[len(base) :] if handle.uri.startswith(base) else handle.uri
    out: dict[str, Any] = {"uri": uri, "size": handle.size}
    if handle.offset:
        out["offset"] = handle.offset
    if handle.checksum is not None:
        out["checksum"] = handle.checksum
    return out


def _operator_to_json(op: OperatorState, base: str) -> dict[str, Any]:
    def handles(m: Mapping[int, StateHandle]) -> dict[str, Any]:
        return {str(k): _handle_to_json(h, base) for k, h in sorted(m.items())}

    out: dict[str, Any] = {
        "parallelism": op.parallelism,
        "max_parallelism": op.max_parallelism,
        "keyed": handles(op.keyed),
        "operator": handles(op.operator),
        "channel": handles(op.channel),
        "coordinator": None if op.coordinator is None else _handle_to_json(op.coordinator, base),
    }
    if op.incremental:  # only then: documents without incremental state stay as before
        out["incremental"] = {str(i): _incremental_to_json(inc, base) for i, inc in sorted(op.incremental.items())}
    return out


def _incremental_to_json(inc: IncrementalRemoteKeyedStateHandle, base: str) -> dict[str, Any]:
    def files(m: Mapping[str, StateHandle]) -> dict[str, Any]:
        return {name: _handle_to_json(h, base) for name, h in sorted(m.items())}

    return {
        "key_groups": [inc.key_group_start, inc.key_group_end],
        "checkpoint_id": inc.checkpoint_id,
        "shared": files(inc.shared),
        "private": files(inc.private),
    }


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _is_absolute(uri: str) -> bool:
    return "://" in uri or "::" in uri or uri.startswith("/")


class _Parser:
    """Validating reader of one ``_metadata`` document; every error names the file and the JSON path.

    Damage (unparsable JSON, a wrong checksum, a value of the wrong shape) raises :class:`CorruptStateError`."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.version = METADATA_VERSION
        self.raw = b""

    def fail(self, where: str, expected: str, got: object, hint: str) -> CheckpointStorageError:
        return CheckpointStorageError(
            f"malformed checkpoint metadata {self.source}: expected {expected} at {where}; got {got}; hint: {hint}"
        )

    def _corrupt(self, where: str, expected: str, got: object) -> CorruptStateError:
        checkpoint_id = self._checkpoint_id_of_path()
        return CorruptStateError(
            f"malformed checkpoint metadata {self._file(checkpoint_id)}: expected {expected} at {where}; got "
            f"{_short(got)}; "
            f"hint: the file is damaged or was not written by strom; {older_checkpoint_hint(checkpoint_id)}",
            file=self.source,
            checkpoint_id=checkpoint_id,
        )

    def _file(self, checkpoint_id: int) -> str:
        return f"{self.source} (checkpoint {checkpoint_id})" if checkpoint_id >= 0 else self.source

    def _checkpoint_id_of_path(self) -> int:
        """The checkpoint a damaged file belongs to, for the error: from its ``chk-<n>`` directory, else (a
        savepoint) as far as the file itself tells; -1 if neither does."""
        match = _CHECKPOINT_DIR.search(self.source)
        if match:
            return int(match.group(1))
        member = _CHECKPOINT_ID_MEMBER.search(self.raw)
        return int(member.group(1)) if member else -1

    def metadata(self, text: str | bytes, location: str | None) -> CheckpointMetadata:
        self.raw = text.encode("utf-8", "replace") if isinstance(text, str) else text
        try:
            doc = json.loads(text)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            checkpoint_id = self._checkpoint_id_of_path()
            raise CorruptStateError(
                f"malformed checkpoint metadata {self._file(checkpoint_id)}: expected a JSON document; got "
                f"unparsable content ({e}); hint: the file is truncated, damaged or not a strom _metadata file; "
                f"{older_checkpoint_hint(checkpoint_id)}",
                file=self.source,
                checkpoint_id=checkpoint_id,
            ) from None
        if not isinstance(doc, dict):
            raise self._corrupt("the top level", "a JSON object", doc)
        if doc.get("format") != METADATA_FORMAT:
            raise self._corrupt("format", repr(METADATA_FORMAT), doc.get("format"))
        version = doc.get("version")
        if type(version) is not int or version not in (METADATA_VERSION, _UNVERIFIED_VERSION):
            raise self.fail(
                "version",
                f"format version {_UNVERIFIED_VERSION} or {METADATA_VERSION}",
                _short(version),
                "the checkpoint was written by another strom version — restore it with that version — or the file "
                "is damaged; restore from another checkpoint or savepoint",
            )
        self.version = version
        if version == METADATA_VERSION:
            self.verify(doc)
        checkpoint_id = self.integer(doc, "checkpoint_id", "", minimum=0)
        job_id = self.string(doc, "job_id", "")
        timestamp_ms = self.integer(doc, "timestamp_ms", "", minimum=0)
        is_savepoint = doc.get("is_savepoint")
        if not isinstance(is_savepoint, bool):
            raise self._corrupt("is_savepoint", "true or false", is_savepoint)
        stored_pointer = self.string(doc, "external_pointer", "")
        pointer = stored_pointer if location is None else location
        raw_ops = doc.get("operator_states")
        if not isinstance(raw_ops, dict):
            raise self._corrupt("operator_states", "an object of operator id → operator state", raw_ops)
        base = _dir_prefix(pointer)
        ops = {op_id: self.operator(op_id, raw, base) for op_id, raw in raw_ops.items()}
        return CheckpointMetadata(
            checkpoint_id=checkpoint_id,
            job_id=job_id,
            timestamp_ms=timestamp_ms,
            is_savepoint=is_savepoint,
            operator_states=ops,
            external_pointer=pointer,
            verified=version == METADATA_VERSION,
        )

    def verify(self, doc: dict[str, Any]) -> None:
        """The document's own checksum, checked before any of its values is used."""
        stored = doc.get("checksum")
        actual = _document_checksum(doc)
        if stored == actual:
            return
        checkpoint_id = self._checkpoint_id_of_path()
        raise CorruptStateError(
            f"expected the checkpoint metadata {self._file(checkpoint_id)} to have the "
            f"{CHECKSUM_ALGORITHM} checksum it records ({_short(stored)}); got {actual}; hint: the file was damaged "
            f"after it was written — {older_checkpoint_hint(checkpoint_id)}",
            file=self.source,
            checkpoint_id=checkpoint_id,
        )

    def integer(self, obj: dict[str, Any], key: str, where: str, *, minimum: int) -> int:
        value = obj.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise self._corrupt(_at(where, key), f"an integer ≥ {minimum}", value)
        return value

    def string(self, obj: dict[str, Any], key: str, where: str) -> str:
        value = obj.get(key)
        if not isinstance(value, str) or not value:
            raise self._corrupt(_at(where, key), "a non-empty string", value)
        return value

    def operator(self, op_id: str, raw: object, base: str) -> OperatorState:
        where = f"operator_states[{op_id!r}]"
        if not isinstance(raw, dict):
            raise self._corrupt(where, "an object", raw)
        parallelism = self.integer(raw, "parallelism", where, minimum=1)
        max_parallelism = self.integer(raw, "max_parallelism", where, minimum=1)
        if max_parallelism < parallelism:
            raise self._corrupt(
                _at(where, "max_parallelism"), f"at least the parallelism {parallelism}", max_parallelism
            )
        coordinator_raw = raw.get("coordinator")
        return OperatorState(
            operator_id=op_id,
            parallelism=parallelism,
            max_parallelism=max_parallelism,
            keyed=self.handles(raw, "keyed", where, base, bound=max_parallelism, what="key group"),
            operator=self.handles(raw, "operator", where, base, bound=parallelism, what="subtask index"),
            channel=self.handles(raw, "channel", where, base, bound=parallelism, what="subtask index"),
            coordinator=None
            if coordinator_raw is None
            else self.handle(coordinator_raw, _at(where, "coordinator"), base),
            incremental=self.incrementals(raw, where, base, parallelism=parallelism, max_parallelism=max_parallelism),
        )

    def incrementals(
        self, raw: dict[str, Any], where: str, base: str, *, parallelism: int, max_parallelism: int
    ) -> dict[int, IncrementalRemoteKeyedStateHandle]:
        value = raw.get("incremental", {})
        where = _at(where, "incremental")
        if not isinstance(value, dict):
            raise self._corrupt(where, "an object of subtask index → incremental keyed state", value)
        out: dict[int, IncrementalRemoteKeyedStateHandle] = {}
        for k, inc in value.items():
            index = int(k) if k.isdigit() else -1
            if not 0 <= index < parallelism or str(index) != k:
                raise self._corrupt(where, f"subtask indexes in [0, {parallelism})", k)
            at = f"{where}[{k}]"
            if not isinstance(inc, dict):
                raise self._corrupt(at, "an object", inc)
            groups = inc.get("key_groups")
            if (
                not isinstance(groups, list)
                or len(groups) != 2
                or not all(type(g) is int for g in groups)
                or not 0 <= groups[0] <= groups[1] < max_parallelism
            ):
                raise self._corrupt(_at(at, "key_groups"), f"[start, end] within [0, {max_parallelism})", groups)
            out[index] = IncrementalRemoteKeyedStateHandle(
                key_group_start=groups[0],
                key_group_end=groups[1],
                checkpoint_id=self.integer(inc, "checkpoint_id", at, minimum=0),
                shared=self.files(inc, "shared", at, base),
                private=self.files(inc, "private", at, base),
            )
        return out

    def files(self, raw: dict[str, Any], key: str, where: str, base: str) -> dict[str, StateHandle]:
        value = raw.get(key)
        if not isinstance(value, dict):
            raise self._corrupt(_at(where, key), "an object of file name → state handle", value)
        out: dict[str, StateHandle] = {}
        for name, h in value.items():
            if not name or "/" in name or name in (".", ".."):
                raise self._corrupt(_at(where, key), "plain file names", name)
            out[name] = self.handle(h, f"{_at(where, key)}[{name!r}]", base)
        return out

    def handles(
        self, raw: dict[str, Any], key: str, where: str, base: str, *, bound: int, what: str
    ) -> dict[int, StateHandle]:
        value = raw.get(key)
        if not isinstance(value, dict):
            raise self._corrupt(_at(where, key), f"an object of {what} → state handle", value)
        out: dict[int, StateHandle] = {}
        for k, h in value.items():
            try:
                index = int(k)
            except ValueError:
                index = -1
            if not 0 <= index < bound or str(index) != k:
                raise self._corrupt(_at(where, key), f"{what}s in [0, {bound})", k)
            out[index] = self.handle(h, f"{_at(where, key)}[{k}]", base)
        return out

    def handle(self, raw: object, where: str, base: str) -> StateHandle:
        if not isinstance(raw, dict):
            raise self._corrupt(where, "a state handle {'uri': ..., 'size': ...}", raw)
        uri = self.string(raw, "uri", where)
        size = self.integer(raw, "size", where, minimum=0)
        offset = self.integer(raw, "offset", where, minimum=0) if "offset" in raw else 0
        digest: str | None = None
        if self.version != _UNVERIFIED_VERSION:
            digest = raw.get("checksum")
            if not isinstance(digest, str) or not _DIGEST.match(digest):
                raise self._corrupt(_at(where, "checksum"), f"an {CHECKSUM_ALGORITHM} digest (16 hex digits)", digest)
        if not _is_absolute(uri):
            if any(part in ("", ".", "..") for part in uri.split("/")):
                raise self._corrupt(_at(where, "uri"), "a file name inside the checkpoint directory", uri)
            uri = base + uri
        return StateHandle(uri=uri, size=size, offset=offset, checksum=digest)
