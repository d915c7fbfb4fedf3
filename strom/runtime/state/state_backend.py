"""The state backend seam (Flink's ``StateBackend`` / ``KeyedStateBackend``): what keyed operators need from
the store of their keyed state, and the factory ``state.backend.type`` names.

Operators only see :class:`KeyedStateBackend`. ``hashmap`` (Flink's ``HashMapStateBackend``: objects on the
heap, per key group) and ``rocksdb`` (Flink's ``EmbeddedRocksDBStateBackend``: one embedded RocksDB per operator
subtask, :mod:`strom.runtime.state.rocksdb`) implement it and are registered by name in :data:`STATE_BACKENDS`.
Both snapshot into the same canonical key-group format, so either restores the other's checkpoints.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from strom.api.state import StateDescriptor
from strom.api.typeinfo import TypeInformation
from strom.config import Configuration, StateBackendOptions
from strom.exceptions import ConfigurationError
from strom.runtime.state.heap_keyed_state_backend import HeapKeyedStateBackend
from strom.runtime.state.key_groups import KeyGroupRange

__all__ = [
    "STATE_BACKENDS",
    "KeyedStateBackend",
    "KeyedStateBackendParameters",
    "backend_parameters",
    "create_keyed_state_backend",
    "key_type_of",
    "state_backend_options",
    "validate_state_backend",
]


class KeyedStateBackend(Protocol):
    """Keyed state of one operator subtask: scoped by the current key (and namespace), grouped by key group."""

    max_parallelism: int
    #: the key the state objects read and write; operators set it per record (the attribute is the fast path)
    current_key: Any
    #: the namespace (window) state objects are scoped to; ``None``: no window
    current_namespace: Any

    def set_current_key(self, key: Any) -> None: ...

    def get_current_key(self) -> Any: ...

    def set_current_namespace(self, namespace: Any) -> None: ...

    def get_state(self, descriptor: StateDescriptor) -> Any:
        """The state object the descriptor describes (Value/List/Map/Reducing/Aggregating), created once."""

    def get_table(self, name: str) -> MutableMapping[Any, Any]:
        """key → value of an internal state (the fast path of built-in operators such as reduce)."""

    def get_namespaced_table(self, name: str) -> MutableMapping[Any, Any]:
        """key → namespace → value of a state outside the void namespace (window contents, timers)."""

    def snapshot(self) -> dict[int, bytes]:
        """key group → bytes of every non-empty key group, in the canonical format (``async_snapshot()()``)."""

    def async_snapshot(self) -> Callable[[], dict[int, bytes]]:
        """The synchronous part of a checkpoint, on the task thread: O(1) or O(key groups), not O(state size).

        Returns the supplier the asynchronous part calls off the task thread: key group → canonical bytes of
        every non-empty key group as the state was when ``async_snapshot`` ran, whatever the task changed since.
        It raises (and the checkpoint is declined) when the state cannot be serialized. A supplier with a
        ``cancel()`` method is cancelled when its checkpoint is aborted or dropped before it was called. A supplier
        with a ``stream()`` method (a :class:`~strom.runtime.state.full_snapshot_async_writer.KeyGroupStreamSupplier`)
        is streamed instead by checkpoints: key group by key group into the checkpoint file."""

    def restore(self, blobs: Mapping[int, bytes], key_group_range: KeyGroupRange | None = None) -> None:
        """Load the key groups this subtask owns (``key_group_range``; ``None``: all) from a checkpoint."""


@dataclass(frozen=True, slots=True, kw_only=True)
class KeyedStateBackendParameters:
    """What a backend is created with (Flink's ``KeyedStateBackendParameters``)."""

    max_parallelism: int
    job_id: str = "job"
    operator_id: str = "operator"
    subtask_index: int = 0
    attempt_number: int = 0
    #: the ``state.backend.rocksdb.*`` / managed memory options of the job (key → value)
    options: Mapping[str, Any] = field(default_factory=dict)
    #: the declared key type (``None``: untyped keys): keys go to key groups as Flink hashes its values
    key_type: TypeInformation | None = None


def backend_parameters(
    info: Any, operator_id: str, key_type: TypeInformation | None = None
) -> KeyedStateBackendParameters:
    """The parameters of the keyed backend of operator ``operator_id`` in the task ``info`` (a ``TaskInfo``), whose
    keys are of ``key_type``."""
    return KeyedStateBackendParameters(
        max_parallelism=info.max_parallelism,
        job_id=info.job_id,
        operator_id=operator_id or info.task_name,
        subtask_index=info.subtask_index,
        attempt_number=info.attempt_number,
        options=dict(info.state_backend_options),
        key_type=key_type,
    )


def _create_heap(params: KeyedStateBackendParameters) -> KeyedStateBackend:
    return HeapKeyedStateBackend(max_parallelism=params.max_parallelism, key_type=params.key_type)


def _safe(part: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in part)[:80] or "_"


def _create_rocksdb(params: KeyedStateBackendParameters) -> KeyedStateBackend:
    """A RocksDB instance in ``<localdir>/job_<job>/op_<operator>_<subtask>/attempt_<n>_<unique>``; directories of
    earlier instances of this subtask that no backend of this process uses (a restart, a crashed process) are
    removed first: a fresh start reuses nothing."""
    from strom.runtime.state.rocksdb.rocksdb_keyed_state_backend import RocksDBKeyedStateBackend
    from strom.runtime.state.rocksdb.rocksdb_memory_controller_utils import shared_resources
    from strom.runtime.state.rocksdb.rocksdb_options import memory_configuration, write_cache_capacity

    options = params.options
    root = str(options.get("state.backend.rocksdb.localdir") or "") or os.path.join(
        tempfile.gettempdir(), "strom-rocksdb"
    )
    subtask_dir = os.path.join(
        root, f"job_{_safe(params.job_id)}", f"op_{_safe(params.operator_id)}_{params.subtask_index}"
    )
    path = os.path.join(subtask_dir, f"attempt_{params.attempt_number}_{uuid.uuid4().hex[:8]}")
    with _LIVE_LOCK:  # registered before it exists: another thread's clean-up never takes it for stale
        _LIVE_ROCKSDB_PATHS.add(path)
    try:
        remove_stale_instances(root)
        os.makedirs(path, exist_ok=True)
        backend = RocksDBKeyedStateBackend(
            max_parallelism=params.max_parallelism,
            path=path,
            resources=shared_resources(memory_configuration(options)),
            key_type=params.key_type,
            timer_service_factory=str(options.get("state.backend.rocksdb.timer-service.factory") or "ROCKSDB"),
            compaction_style=str(options.get("state.backend.rocksdb.compaction.style") or "LEVEL"),
            write_cache_size=write_cache_capacity(options),
        )
    except BaseException:
        _forget(path)
        raise
    weakref.finalize(backend, _forget, path)
    return backend


def _forget(path: str) -> None:
    with _LIVE_LOCK:
        _LIVE_ROCKSDB_PATHS.discard(path)


#: directories of the RocksDB instances alive in this process (never removed as stale; TaskManagers may be threads)
_LIVE_ROCKSDB_PATHS: set[str] = set()
_LIVE_LOCK = threading.RLock()  # re-entrant: a collected backend's finalizer may run (GC) while it is held
#: seconds a directory without an open instance is left alone (another process may be creating it)
_GRACE_S = 60


def remove_stale_instances(root: str) -> None:
    """Remove the instance directories under ``root`` no process has open: RocksDB holds an ``fcntl`` lock on
    its ``LOCK`` file while open, so one we can lock belongs to a closed or killed instance (of any job)."""
    with _LIVE_LOCK:
        _remove_stale_instances(root)


def _remove_stale_instances(root: str) -> None:
    import fcntl
    import glob

    for path in glob.glob(os.path.join(root, "job_*", "op_*", "attempt_*")):
        if path in _LIVE_ROCKSDB_PATHS:
            continue  # ours: fcntl locks are per process, so trying would release RocksDB's own lock
        try:
            with open(os.path.join(path, "LOCK"), "r+") as lock:
                fcntl.lockf(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except FileNotFoundError:  # never opened — or being created right now: removed only once a minute old
            try:
                if time.time() - os.path.getmtime(path) < _GRACE_S:
                    continue
            except OSError:
                continue
        except OSError:
            continue  # locked: open in another process
        shutil.rmtree(path, ignore_errors=True)
    parents = glob.glob(os.path.join(root, "job_*", "op_*")) + glob.glob(os.path.join(root, "job_*"))
    for parent in sorted(parents, reverse=True):  # op_ directories before their job_ directory
        with contextlib.suppress(OSError):
            if time.time() - os.path.getmtime(parent) > _GRACE_S:  # not one another process is filling right now
                os.rmdir(parent)  # only when empty


STATE_BACKENDS: dict[str, Callable[[KeyedStateBackendParameters], KeyedStateBackend]] = {
    "hashmap": _create_heap,
    "rocksdb": _create_rocksdb,
}


def validate_state_backend(name: str) -> str:
    """The canonical name of a configured backend, or a :class:`ConfigurationError` that says what exists."""
    canonical = name.strip().lower()
    if canonical not in STATE_BACKENDS:
        raise ConfigurationError(
            f"expected state.backend.type to be one of {', '.join(sorted(STATE_BACKENDS))}; got {name!r}; "
            "hint: 'hashmap' keeps keyed state on the heap of the TaskManagers, 'rocksdb' in an embedded RocksDB "
            "on their local disk"
        )
    return canonical


def state_backend_options(config: Configuration) -> dict[str, Any]:
    """The options the configured backend's TaskManager side needs (``{}`` for ``hashmap``), checked here."""
    if validate_state_backend(config.get(StateBackendOptions.STATE_BACKEND)) != "rocksdb":
        return {}
    from strom.runtime.state.rocksdb.rocksdb_options import state_backend_options as rocksdb_options

    return rocksdb_options(config)


def create_keyed_state_backend(
    name: str, *, max_parallelism: int, parameters: KeyedStateBackendParameters | None = None
) -> KeyedStateBackend:
    params = parameters or KeyedStateBackendParameters(max_parallelism=max_parallelism)
    return STATE_BACKENDS[validate_state_backend(name)](params)


def key_type_of(key_selector: object) -> TypeInformation | None:
    """The declared key type a ``key_by(..., key_type=)`` selector carries (``None``: untyped keys)."""
    key_type = getattr(key_selector, "key_type", None)
    return key_type if isinstance(key_type, TypeInformation) else None
