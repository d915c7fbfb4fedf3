"""Writing a savepoint's files (Flink's ``SavepointOutputFormat``, ``BoundedOneInputStreamTaskRunner`` and
``MergeOperatorStates``).

A written savepoint looks exactly like one a running job takes: state files with a checksum per key group and
per subtask, then ``_metadata`` (:class:`~strom.runtime.checkpoint.storage.CheckpointStorageLocation`), handles
relative to the directory so it can be moved. The files of an operator are named after its id
(``<safe uid>-<hash>-keyed-<i>``). Operators taken over from an existing savepoint are copied — read with their
checksums checked, written anew — so the new savepoint is self-contained and the old one may be deleted.

In a bootstrap job each subtask of a :class:`BootstrapOperator` runs a
:class:`~strom.state.bootstrap.BootstrapRunner` over its records, writes its files at the end of input and emits
one :class:`WrittenSubtaskState`; the single :class:`MergeOperatorStates` subtask collects them and writes
``_metadata`` last, once every bootstrapping subtask finished.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from strom.exceptions import CheckpointError
from strom.runtime.checkpoint.checksum import checksum
from strom.runtime.checkpoint.metadata import CheckpointMetadata, OperatorState, StateHandle
from strom.runtime.checkpoint.snapshot import OperatorSnapshot
from strom.runtime.checkpoint.storage import CheckpointStorageLocation, read_state
from strom.runtime.operators.base import ChainingStrategy, StreamingRuntimeContext, StreamOperator
from strom.state.bootstrap import BootstrapRunner
from strom.state.operator_transformation import StateBootstrapTransformation

__all__ = [
    "BootstrapOperator",
    "MergeOperatorStates",
    "WrittenSubtaskState",
    "copy_operator_state",
    "merge_subtask_states",
    "write_savepoint_metadata",
    "write_subtask_state",
]

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True, slots=True, kw_only=True)
class WrittenSubtaskState:
    """What one bootstrapping subtask wrote for one operator."""

    operator_id: str
    subtask_index: int
    parallelism: int
    max_parallelism: int
    keyed: Mapping[int, StateHandle]
    operator: StateHandle | None


def file_prefix(operator_id: str) -> str:
    """A file name prefix for an operator id: its safe characters and a hash of it (ids may hold any character)."""
    safe = _UNSAFE.sub("_", operator_id).strip("._")[:40] or "operator"
    return f"{safe}-{checksum(operator_id.encode())[:8]}"


def write_subtask_state(
    location: CheckpointStorageLocation,
    operator_id: str,
    snapshot: OperatorSnapshot,
    *,
    subtask_index: int,
    parallelism: int,
    max_parallelism: int,
) -> WrittenSubtaskState:
    """Write one subtask's snapshot: its key groups as slices of one file, its operator state as another."""
    prefix = file_prefix(operator_id)
    keyed = location.write_state_slices(f"{prefix}-keyed-{subtask_index}", snapshot.keyed)
    operator = location.write_state(f"{prefix}-op-{subtask_index}", snapshot.operator) if snapshot.operator else None
    return WrittenSubtaskState(
        operator_id=operator_id,
        subtask_index=subtask_index,
        parallelism=parallelism,
        max_parallelism=max_parallelism,
        keyed=keyed,
        operator=operator,
    )


def merge_subtask_states(written: Iterable[WrittenSubtaskState]) -> dict[str, OperatorState]:
    """The operator states of the subtasks' writes, per operator; a key group written twice is a bug."""
    per_operator: dict[str, list[WrittenSubtaskState]] = {}
    for w in written:
        per_operator.setdefault(w.operator_id, []).append(w)
    out: dict[str, OperatorState] = {}
    for operator_id, parts in per_operator.items():
        keyed: dict[int, StateHandle] = {}
        for part in parts:
            twice = sorted(set(keyed) & set(part.keyed))
            if twice:
                raise CheckpointError(
                    f"expected each key group of operator {operator_id!r} to be written by one subtask; got key "
                    f"groups {twice[:5]} from two; hint: the bootstrap's key_by must route by the savepoint's max "
                    "parallelism — this is a bug in the state processor API"
                )
            keyed.update(part.keyed)
        out[operator_id] = OperatorState(
            operator_id=operator_id,
            parallelism=parts[0].parallelism,
            max_parallelism=parts[0].max_parallelism,
            keyed=dict(sorted(keyed.items())),
            operator={p.subtask_index: p.operator for p in parts if p.operator is not None},
        )
    return out


def copy_operator_state(
    state: OperatorState, location: CheckpointStorageLocation, new_id: str, *, checkpoint_id: int
) -> OperatorState:
    """``state``'s files read (size and checksum checked) and written into ``location`` under ``new_id``."""
    prefix = file_prefix(new_id)

    def read(handle: StateHandle, what: str) -> bytes:
        return read_state(handle, operator_id=state.operator_id, checkpoint_id=checkpoint_id, what=what)

    by_file: dict[str, dict[int, StateHandle]] = {}
    for kg, handle in sorted(state.keyed.items()):
        by_file.setdefault(handle.uri, {})[kg] = handle
    keyed: dict[int, StateHandle] = {}
    for n, handles in enumerate(by_file.values()):
        parts = {kg: read(h, f"keyed state of key group {kg}") for kg, h in handles.items()}
        keyed.update(location.write_state_slices(f"{prefix}-keyed-{n}", parts))

    def copy_each(handles: Mapping[int, StateHandle], kind: str, what: str) -> dict[int, StateHandle]:
        return {
            i: location.write_state(f"{prefix}-{kind}-{i}", read(h, f"{what} of subtask {i}"))
            for i, h in sorted(handles.items())
        }

    coordinator = state.coordinator
    return OperatorState(
        operator_id=new_id,
        parallelism=state.parallelism,
        max_parallelism=state.max_parallelism,
        keyed=keyed,
        operator=copy_each(state.operator, "op", "operator state"),
        channel=copy_each(state.channel, "channel", "in-flight data (channel state)"),
        coordinator=None
        if coordinator is None
        else location.write_state(f"{prefix}-coordinator", read(coordinator, "coordinator state")),
    )


def write_savepoint_metadata(
    location: CheckpointStorageLocation, operator_states: Mapping[str, OperatorState], *, checkpoint_id: int
) -> CheckpointMetadata:
    """``_metadata`` of the written savepoint, last."""
    metadata = CheckpointMetadata(
        checkpoint_id=checkpoint_id,
        job_id=f"state-processor-{secrets.token_hex(8)}",
        timestamp_ms=time.time_ns() // 1_000_000,
        is_savepoint=True,
        operator_states=dict(sorted(operator_states.items())),
        external_pointer=location.uri,
    )
    location.write_metadata(metadata)
    return metadata


class BootstrapOperator(StreamOperator):
    """One operator's bootstrap in a job: runs the function over its records, writes its files at the end of
    input and emits what it wrote. The runner's backends are the operator's, so a bootstrap job with checkpointing
    that fails over restores what it built up to its last checkpoint, as any job does."""

    def __init__(
        self, transformation: StateBootstrapTransformation, *, uid: str, location_uri: str, max_parallelism: int
    ) -> None:
        super().__init__()
        self.transformation = transformation
        self.uid = uid
        self.location_uri = location_uri
        self.max_parallelism = max_parallelism
        self.runner: BootstrapRunner | None = None

    def setup(self, runtime_context: StreamingRuntimeContext, output: Any) -> None:
        super().setup(runtime_context, output)
        info = runtime_context.info
        self.runner = BootstrapRunner(
            self.transformation,
            uid=self.uid,
            max_parallelism=self.max_parallelism,
            subtask_index=info.subtask_index,
            parallelism=info.parallelism,
        )
        self.keyed_backend = self.runner.keyed_backend
        self._operator_state_backend = self.runner.operator_backend

    def open(self) -> None:
        assert self.runner is not None
        try:
            self.runner.open(self.restored_checkpoint_id)
        except Exception as exc:
            raise self.user_error(exc, None) from exc

    def snapshot_state(self, checkpoint_id: int, timestamp_ms: int) -> OperatorSnapshot | None:
        assert self.runner is not None
        try:
            self.runner.snapshot_function_state(checkpoint_id)
        except Exception as exc:
            raise self.user_error(exc, None, role=f"snapshot_state of the bootstrap of {self.uid!r}") from exc
        return super().snapshot_state(checkpoint_id, timestamp_ms)

    def process_batch(self, batch: list[Any]) -> None:
        assert self.runner is not None
        try:
            self.runner.process(batch)
        except Exception as exc:
            raise self.user_error(exc, batch) from exc
        self._records_in += len(batch)

    def finish(self) -> None:
        runner = self.runner
        assert runner is not None and self.runtime_context is not None
        try:
            snapshot = runner.snapshot()
        except Exception as exc:
            raise self.user_error(exc, None, role=f"the snapshot of the bootstrap of {self.uid!r}") from exc
        info = self.runtime_context.info
        written = write_subtask_state(
            CheckpointStorageLocation(uri=self.location_uri),
            self.uid,
            snapshot,
            subtask_index=info.subtask_index,
            parallelism=info.parallelism,
            max_parallelism=self.max_parallelism,
        )
        self.output.emit([written])

    def close(self) -> None:
        if self.runner is not None:
            try:
                self.runner.close()
            except Exception as exc:
                raise self.user_error(exc, None) from exc


class MergeOperatorStates(StreamOperator):
    """The single subtask that writes ``_metadata`` once every bootstrapping subtask wrote its files:
    ``prepared`` (operators copied or written in the client) plus the operators of the job."""

    chaining_strategy = ChainingStrategy.NEVER

    def __init__(self, *, location_uri: str, prepared: Mapping[str, OperatorState], checkpoint_id: int) -> None:
        super().__init__()
        self.location_uri = location_uri
        self.prepared = dict(prepared)
        self.checkpoint_id = checkpoint_id
        self.written: list[WrittenSubtaskState] = []

    def process_batch(self, batch: list[Any]) -> None:
        self.written.extend(batch)

    def finish(self) -> None:
        states = {**self.prepared, **merge_subtask_states(self.written)}
        write_savepoint_metadata(
            CheckpointStorageLocation(uri=self.location_uri), states, checkpoint_id=self.checkpoint_id
        )
