"""``StateBackendOptions``, ``RocksDBOptions`` and ``CheckpointingOptions``: where keyed state lives and how it is
checkpointed, under Flink's keys (re-exported by :mod:`strom.config`, Flink's one configuration package)."""

from __future__ import annotations

from datetime import timedelta

from strom.config_option import ConfigOption, _opt
from strom.config_units import MemorySize

__all__ = ["CheckpointingOptions", "RocksDBOptions", "StateBackendOptions"]


class StateBackendOptions:
    """Where keyed state lives (Flink's ``StateBackendOptions``)."""

    STATE_BACKEND: ConfigOption[str] = _opt(
        "state.backend.type",
        str,
        "hashmap",
        "The state backend: 'hashmap' keeps keyed state as objects on the TaskManagers' heap, per key group; "
        "'rocksdb' keeps it in an embedded RocksDB per operator subtask on the TaskManagers' local disk "
        "(Flink's EmbeddedRocksDBStateBackend). Checkpoints of either restore into the other.",
    )


class RocksDBOptions:
    """The embedded RocksDB state backend (Flink's ``RocksDBOptions`` / ``RocksDBConfigurableOptions``) and the
    managed memory that bounds it (Flink's ``TaskManagerOptions.MANAGED_MEMORY_*``)."""

    LOCAL_DIRECTORIES: ConfigOption[str] = _opt(
        "state.backend.rocksdb.localdir",
        str,
        "",
        "Directory of the RocksDB instances of a TaskManager: one per job, operator and subtask below it, removed "
        "when the subtask closes and on a fresh start. Empty: `strom-rocksdb` in the TaskManager's temp directory.",
    )
    TIMER_SERVICE_FACTORY: ConfigOption[str] = _opt(
        "state.backend.rocksdb.timer-service.factory",
        str,
        "HEAP",
        "Where timers of the RocksDB backend live: `HEAP` (on the heap, written into the snapshot with the keyed "
        "state). Flink's default `ROCKSDB` (timers in a column family) is not built yet and is refused.",
    )
    USE_MANAGED_MEMORY: ConfigOption[bool] = _opt(
        "state.backend.rocksdb.memory.managed",
        bool,
        True,
        "Bound RocksDB's block cache and write buffers by the managed memory: one cache and write buffer manager "
        "shared by every RocksDB instance of a TaskManager process, sized to its slots' shares.",
    )
    WRITE_BUFFER_RATIO: ConfigOption[float] = _opt(
        "state.backend.rocksdb.memory.write-buffer-ratio",
        float,
        0.5,
        "Fraction of the managed memory that write buffers (memtables) may take.",
    )
    STATE_CACHE_SIZE: ConfigOption[int] = _opt(
        "python.state.cache-size",
        int,
        100_000,
        "PyFlink's cache of state in the Python worker (Flink's PythonOptions.STATE_CACHE_SIZE, default 1000 "
        "there): here the entries per keyed operator subtask of RocksDB's value, reducing and aggregating state "
        "and of the built-in operators' tables kept decoded in front of RocksDB and written back in batches — "
        "before every snapshot, when full, and before anything reads RocksDB directly. At most a quarter of the "
        "slot's managed memory at 256 bytes an entry, which RocksDB's cache and write buffers leave to it; 0 "
        "writes every update through. The heap backend needs no cache.",
    )
    HIGH_PRIORITY_POOL_RATIO: ConfigOption[float] = _opt(
        "state.backend.rocksdb.memory.high-prio-pool-ratio",
        float,
        0.1,
        "Flink's share of the cache for index and filter blocks; accepted, not used (rocksdict's LRU cache has one "
        "pool).",
    )
    MANAGED_MEMORY_SIZE: ConfigOption[int] = _opt(
        "taskmanager.memory.managed.size",
        MemorySize,
        "0 b",
        "Managed memory of a TaskManager process (all its slots), which bounds RocksDB; 0: "
        "`taskmanager.memory.managed.fraction` of `taskmanager.memory.process.size`.",
    )
    MANAGED_MEMORY_FRACTION: ConfigOption[float] = _opt(
        "taskmanager.memory.managed.fraction",
        float,
        0.4,
        "Managed memory as a fraction of `taskmanager.memory.process.size`, when "
        "`taskmanager.memory.managed.size` is not set.",
    )
    PROCESS_MEMORY_SIZE: ConfigOption[int] = _opt(
        "taskmanager.memory.process.size",
        MemorySize,
        "1728 mb",
        "A TaskManager process's memory budget; strom uses it only to derive the managed memory (it sets no limit).",
    )


class CheckpointingOptions:
    """Checkpoints and savepoints (Flink's ``CheckpointingOptions`` / ``SavepointConfigOptions``)."""

    CHECKPOINTS_DIRECTORY: ConfigOption[str] = _opt(
        "execution.checkpointing.dir",
        str,
        "",
        "Directory URI for checkpoints, through fsspec: `file://`, `s3://`, ... or a plain local path; each job "
        "writes `<dir>/<job-id>/chk-<n>/`. Empty: a temporary directory chosen by the MiniCluster. "
        "`memory://` works only when JobManager and TaskManagers share one process (tests). Flink 1.x's "
        "`state.checkpoints.dir` is read as this key, with Flink's deprecation warning.",
        deprecated_keys=("state.checkpoints.dir",),
    )
    MAX_RETAINED_CHECKPOINTS: ConfigOption[int] = _opt(
        "execution.checkpointing.num-retained",
        int,
        1,
        "Completed checkpoints kept; older ones are deleted when a newer one completes. Flink 1.x's "
        "`state.checkpoints.num-retained` is read as this key.",
        deprecated_keys=("state.checkpoints.num-retained",),
    )
    CHECKPOINTING_INTERVAL: ConfigOption[timedelta] = _opt(
        "execution.checkpointing.interval",
        timedelta,
        "0 ms",
        "Time between checkpoint triggers; 0 disables periodic checkpoints.",
    )
    CHECKPOINTING_CONSISTENCY_MODE: ConfigOption[str] = _opt(
        "execution.checkpointing.mode",
        str,
        "EXACTLY_ONCE",
        "EXACTLY_ONCE (barriers are aligned) or AT_LEAST_ONCE (no alignment; records may be replayed twice).",
    )
    CHECKPOINTING_TIMEOUT: ConfigOption[timedelta] = _opt(
        "execution.checkpointing.timeout",
        timedelta,
        "10 min",
        "Time after which a pending checkpoint is aborted.",
    )
    MIN_PAUSE_BETWEEN_CHECKPOINTS: ConfigOption[timedelta] = _opt(
        "execution.checkpointing.min-pause",
        timedelta,
        "0 ms",
        "Least time between the end of one checkpoint and the trigger of the next.",
    )
    MAX_CONCURRENT_CHECKPOINTS: ConfigOption[int] = _opt(
        "execution.checkpointing.max-concurrent-checkpoints",
        int,
        1,
        "Most checkpoints pending at once.",
    )
    TOLERABLE_FAILURE_NUMBER: ConfigOption[int] = _opt(
        "execution.checkpointing.tolerable-failed-checkpoints",
        int,
        0,
        "Consecutive failed checkpoints tolerated before the job fails over.",
    )
    EXTERNALIZED_CHECKPOINT_RETENTION: ConfigOption[str] = _opt(
        "execution.checkpointing.externalized-checkpoint-retention",
        str,
        "NO_EXTERNALIZED_CHECKPOINTS",
        "What happens to retained checkpoints when the job ends: DELETE_ON_CANCELLATION (deleted on cancel, "
        "kept on failure), RETAIN_ON_CANCELLATION (kept on cancel and failure) or NO_EXTERNALIZED_CHECKPOINTS "
        "(deleted whenever the job ends).",
    )
    ENABLE_UNALIGNED: ConfigOption[bool] = _opt(
        "execution.checkpointing.unaligned.enabled",
        bool,
        False,
        "Unaligned checkpoints (exactly-once only): barriers overtake in-flight buffers, which are stored as "
        "channel state.",
    )
    ALIGNED_CHECKPOINT_TIMEOUT: ConfigOption[timedelta] = _opt(
        "execution.checkpointing.aligned-checkpoint-timeout",
        timedelta,
        "0 ms",
        "With unaligned checkpoints enabled: 0 starts every checkpoint unaligned; a positive duration starts them "
        "aligned, and a task whose alignment (or the delay of its first barrier since the trigger) takes longer "
        "switches that checkpoint to unaligned.",
        deprecated_keys=("execution.checkpointing.alignment-timeout",),
    )
    SAVEPOINT_PATH: ConfigOption[str] = _opt(
        "execution.savepoint.path",
        str,
        "",
        "Savepoint or retained checkpoint directory (or its `_metadata` file) to restore the job from; empty: "
        "start without state.",
    )
    SAVEPOINT_RESTORE_UNVERIFIED: ConfigOption[bool] = _opt(
        "execution.savepoint.restore-unverified",
        bool,
        False,
        "strom's own: restore a checkpoint or savepoint written before strom checked its state (metadata format "
        "version 1, no checksums), whose damage cannot be detected; refused without it.",
    )
    SAVEPOINT_IGNORE_UNCLAIMED_STATE: ConfigOption[bool] = _opt(
        "execution.savepoint.ignore-unclaimed-state",
        bool,
        False,
        "Allow restoring from a savepoint that holds state of operators no longer in the job "
        "(allow_non_restored_state); otherwise such a restore fails.",
    )
