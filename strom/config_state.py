"""``StateBackendOptions``, ``RocksDBOptions`` and ``CheckpointingOptions``: where keyed state lives and how it is
checkpointed, under Flink's keys (re-exported by :mod:`strom.config`, Flink's one configuration package)."""

from __future__ import annotations

from datetime import timedelta

from strom.config_option import ConfigOption, _opt
from strom.config_units import MemorySize

__all__ = ["CheckpointingOptions", "RocksDBOptions", "StateBackendOptions", "WorkingDirectoryOptions"]


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
    LOCAL_RECOVERY: ConfigOption[bool] = _opt(
        "state.backend.local-recovery",
        bool,
        False,
        "Local recovery (a job setting): each subtask keeps a second copy of its checkpointed state on its "
        "TaskManager's disk; a restarted subtask is scheduled back to the TaskManager it ran on (or to the one "
        "restarted with the same `taskmanager.resource-id`) and restores from that copy when its checksum "
        "matches, else from the checkpoint directory.",
    )
    LOCAL_RECOVERY_ROOT_DIRS: ConfigOption[str] = _opt(
        "taskmanager.state.local.root-dirs",
        str,
        "",
        "Directory of a TaskManager's local state copies (local recovery): `jid_<job>/vtx_<vertex>_sti_<subtask>/"
        "chk_<n>/` below it. Empty: `localState` in the TaskManager's working directory. A list separated by "
        "`,` or `:` is accepted; strom uses the first.",
    )


class WorkingDirectoryOptions:
    """A TaskManager process's identity and working directory, which a restarted process with the same resource
    id finds again (Flink's FLIP-198: ``ClusterOptions.PROCESS_WORKING_DIR_BASE``,
    ``TaskManagerOptions.TASK_MANAGER_RESOURCE_ID``)."""

    PROCESS_WORKING_DIR_BASE: ConfigOption[str] = _opt(
        "process.working-dir",
        str,
        "",
        "Base of the processes' working directories; a TaskManager's is `tm_<resource id>` below it, kept across "
        "restarts of the process. Empty: the system's temp directory (the MiniCluster: a directory of its own, "
        "removed when it closes).",
    )
    TASK_MANAGER_WORKING_DIR_BASE: ConfigOption[str] = _opt(
        "process.taskmanager.working-dir",
        str,
        "",
        "Base of the TaskManagers' working directories; empty: `process.working-dir`.",
    )
    TASK_MANAGER_RESOURCE_ID: ConfigOption[str] = _opt(
        "taskmanager.resource-id",
        str,
        "",
        "A TaskManager's resource id, which names its working directory. Empty: its TaskManager id; the "
        "MiniCluster gives a TaskManager it starts in place of a lost one the lost one's resource id.",
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
        "ROCKSDB",
        "Where timers of the RocksDB backend live: `ROCKSDB` (Flink's default: one column family per timer queue, "
        "each key group's earliest timers cached on the heap) or `HEAP` (on the heap, written into the snapshot "
        "with the keyed state). Checkpoints and savepoints of either restore into the other.",
    )
    COMPACTION_STYLE: ConfigOption[str] = _opt(
        "state.backend.rocksdb.compaction.style",
        str,
        "LEVEL",
        "RocksDB's compaction style: `LEVEL` (RocksDB's and Flink's default) or `UNIVERSAL` (fewer rewrites, more "
        "space). An incremental checkpoint after a compaction uploads the files it rewrote "
        "(`benchmarks/state_incremental.py` measures both).",
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
    INCREMENTAL_CHECKPOINTS: ConfigOption[bool] = _opt(
        "execution.checkpointing.incremental",
        bool,
        False,
        "Incremental checkpoints of the RocksDB backend: a checkpoint uploads only the SST files the last completed "
        "one did not hold, into `<dir>/<job-id>/shared/`, where a file lives as long as a retained checkpoint "
        "references it. The heap backend and savepoints stay full. Flink's `state.backend.incremental` is read as "
        "this key.",
        deprecated_keys=("state.backend.incremental",),
    )
    RESTORE_MODE: ConfigOption[str] = _opt(
        "execution.savepoint-restore-mode",
        str,
        "NO_CLAIM",
        "Who owns the checkpoint a job is started from (`execution.savepoint.path`): NO_CLAIM (the new job never "
        "deletes it; its first checkpoint uploads every file) or CLAIM (the new job owns it: a retained checkpoint of "
        "its own, deleted once subsumed, with the shared files no newer checkpoint references). Savepoints are never "
        "claimed.",
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
