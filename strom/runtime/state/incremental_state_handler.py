"""The operator's side of incremental keyed checkpoints (the part of Flink's ``StreamOperatorStateHandler`` that
hands ``CheckpointOptions`` and checkpoint notifications to the keyed backend).

The :class:`~strom.runtime.tasks.subtask_checkpoint_coordinator.SubtaskCheckpointCoordinator` calls
:func:`prepare_keyed_snapshot` on the task thread right before an operator snapshots: a RocksDB backend of a job with
``execution.checkpointing.incremental`` then takes a RocksDB checkpoint instead of a full snapshot, and any other
checkpoint of a RocksDB backend is a full snapshot in RocksDB's own bytes — never a savepoint, which stays
canonical. :func:`notify_keyed_backend` passes completion and abortion on: the backend
references the files of the last checkpoint it knows as completed. :func:`restore_incremental_keyed_state` restores
an operator's keyed backend from incremental handles (on the task thread, before the operator sees its state): into a
RocksDB backend directly, into any other backend through the canonical key-group form.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from strom.runtime.checkpoint.local_state_copy import LocalStateCopy
from strom.runtime.checkpoint.metadata import IncrementalRemoteKeyedStateHandle
from strom.runtime.state.key_groups import KeyGroupRange, compute_key_group_range_for_operator_index

__all__ = [
    "incremental_enabled",
    "notify_keyed_backend",
    "prepare_keyed_snapshot",
    "restore_incremental_keyed_state",
]

log = logging.getLogger(__name__)

_INCREMENTAL_KEY = "execution.checkpointing.incremental"


def incremental_enabled(options: Mapping[str, Any] | Sequence[tuple[str, Any]]) -> bool:
    """Whether the backend options a TaskManager got turn incremental checkpoints on."""
    found = dict(options).get(_INCREMENTAL_KEY, False)
    return found is True or str(found).strip().lower() == "true"


def _key_group_range(operator: Any) -> KeyGroupRange | None:
    ctx = getattr(operator, "runtime_context", None)
    info = getattr(ctx, "info", None)
    if info is None:
        return None
    return compute_key_group_range_for_operator_index(info.max_parallelism, info.parallelism, info.subtask_index)


def prepare_keyed_snapshot(operator: Any, checkpoint_id: int, *, is_savepoint: bool) -> None:
    """Task thread, right before ``operator.snapshot_state``: an incremental job's RocksDB backend snapshots
    checkpoint ``checkpoint_id`` incrementally, another job's in its own format; a savepoint is canonical."""
    backend = getattr(operator, "keyed_backend", None)
    prepare = getattr(backend, "prepare_incremental_snapshot", None)
    if prepare is None:
        return
    info = operator.runtime_context.info
    key_groups = _key_group_range(operator)
    if is_savepoint or key_groups is None or not incremental_enabled(info.state_backend_options):
        prepare(None)  # full: also when an earlier request was never taken (an operator that did not snapshot)
        prepare_full = getattr(backend, "prepare_full_snapshot", None)
        if prepare_full is not None:  # a checkpoint's full snapshot in RocksDB's bytes, a savepoint's canonical
            prepare_full(native=not is_savepoint)
    else:
        prepare(checkpoint_id, key_groups)


def notify_keyed_backend(operator: Any, checkpoint_id: int, *, completed: bool) -> None:
    """Task thread: checkpoint ``checkpoint_id`` completed (or was aborted) — tell the keyed backend."""
    backend = getattr(operator, "keyed_backend", None)
    notify = getattr(backend, "notify_checkpoint_complete" if completed else "notify_checkpoint_aborted", None)
    if notify is not None:
        notify(checkpoint_id)


def restore_incremental_keyed_state(
    operator: Any,
    handles: Sequence[IncrementalRemoteKeyedStateHandle],
    *,
    checkpoint_id: int,
    reuse_shared: bool,
    local: LocalStateCopy | None = None,
) -> dict[int, bytes]:
    """Restore ``operator``'s keyed state from ``handles``. A RocksDB backend takes them in directly (returns
    ``{}``); for any other backend the canonical key-group blobs of the key groups the subtask owns are returned,
    to restore as a canonical checkpoint's. ``local``: local recovery's copies are read before the remote files."""
    from strom.runtime.state.rocksdb.rocksdb_incremental_restore_operation import (
        RocksDBIncrementalRestoreOperation,
        canonical_key_groups,
    )
    from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend

    backend = getattr(operator, "keyed_backend", None)
    key_groups = _key_group_range(operator)
    operator_id = str(getattr(operator, "operator_id", ""))
    if backend is None or key_groups is None:
        return {}
    if isinstance(backend, RocksDBKeyedStateBackend) and backend.priority_queue_factory is not None:
        RocksDBIncrementalRestoreOperation(
            backend,
            handles,
            key_groups,
            operator_id=operator_id,
            checkpoint_id=checkpoint_id,
            reuse_shared=reuse_shared,
            local=local,
        ).restore()
        return {}
    return canonical_key_groups(
        handles,
        key_groups,
        max_parallelism=backend.max_parallelism,
        scratch_dir=tempfile.gettempdir(),
        operator_id=operator_id,
        checkpoint_id=checkpoint_id,
        local=local,
    )
