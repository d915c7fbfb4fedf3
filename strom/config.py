"""Typed configuration: one registry of options under Flink's key names.

    >>> conf = Configuration()
    >>> conf.set_string("taskmanager.numberOfTaskSlots", "2")
    >>> conf.get(TaskManagerOptions.NUM_TASK_SLOTS)
    2

The configuration reference in ``docs/configuration.md`` is generated from :data:`REGISTRY`
(``python -m strom.config``).
"""

from __future__ import annotations

import builtins
import logging
from datetime import timedelta
from typing import Any, TypeVar

from strom.config_batch import BatchExecutionOptions
from strom.config_option import (
    _ABSENT,
    DEPRECATED_KEYS,
    JVM_ONLY_PREFIXES,
    LEGACY_SECONDS_MIN_MILLIS,
    REGISTRY,
    SPARK_PASSTHROUGH_PREFIX,
    ConfigOption,
    _opt,
    format_map,
)
from strom.config_python import PythonOptions
from strom.config_security import SecurityOptions
from strom.config_state import CheckpointingOptions, RocksDBOptions, StateBackendOptions, WorkingDirectoryOptions
from strom.config_units import (
    MemorySize,
    format_duration,
    millis,
)
from strom.exceptions import ConfigurationError

__all__ = [
    "DEPRECATED_KEYS",
    "JVM_ONLY_PREFIXES",
    "LEGACY_SECONDS_MIN_MILLIS",
    "REGISTRY",
    "SPARK_PASSTHROUGH_PREFIX",
    "BatchExecutionOptions",
    "CheckpointingOptions",
    "ClusterOptions",
    "ConfigOption",
    "Configuration",
    "CoreOptions",
    "DeploymentOptions",
    "ExecutionOptions",
    "HeartbeatOptions",
    "JobManagerOptions",
    "MemorySize",
    "MetricOptions",
    "NetworkOptions",
    "PipelineOptions",
    "PythonOptions",
    "RestOptions",
    "RestartStrategyOptions",
    "RocksDBOptions",
    "SecurityOptions",
    "SparkOptions",
    "StateBackendOptions",
    "TaskManagerOptions",
    "WebOptions",
    "WorkingDirectoryOptions",
    "millis",
]

T = TypeVar("T")
_log = logging.getLogger(__name__)


class CoreOptions:
    DEFAULT_PARALLELISM: ConfigOption[int] = _opt(
        "parallelism.default",
        int,
        1,
        "Parallelism of operators that set none. Unset, a job on the local MiniCluster runs with the number of "
        "CPU cores the client may use (as Flink's local environment).",
    )
    MAX_PARALLELISM: ConfigOption[int] = _opt(
        "pipeline.max-parallelism",
        int,
        128,
        "Upper bound for rescaling; the number of key groups.",
    )
    FLINK_LOG_DIR: ConfigOption[str] = _opt(
        "env.log.dir",
        str,
        "",
        "Directory of the TaskManagers' log files (`taskmanager-<id>.log`, served by `GET /taskmanagers/:id/logs`). "
        "Unset: a standalone cluster's `<cluster directory>/log`, a MiniCluster's temporary directory (removed when "
        "it closes); set, a MiniCluster writes into a new `minicluster-<time>-<pid>-*` directory in it and keeps it.",
    )
    FLINK_LOG_MAX: ConfigOption[int] = _opt(
        "env.log.max",
        int,
        10,
        "Old log files a TaskManager keeps; its log is rolled over at 100 MB (Flink's log4j default).",
    )


class PipelineOptions:
    OPERATOR_CHAINING: ConfigOption[bool] = _opt(
        "pipeline.operator-chaining.enabled",
        bool,
        True,
        "Chain operators into one task where Flink's rules allow.",
    )
    NAME: ConfigOption[str] = _opt("pipeline.name", str, "strom job", "Name of the job.")
    GLOBAL_JOB_PARAMETERS: ConfigOption[dict[str, str]] = _opt(
        "pipeline.global-job-parameters",
        dict,
        {},
        "Parameters every function of the job reads with `RuntimeContext.get_job_parameter(key, default)` "
        "(`env.get_config().set_global_job_parameters({...})`); Flink's map form `key1:value1,key2:value2`.",
    )
    AUTO_WATERMARK_INTERVAL: ConfigOption[timedelta] = _opt(
        "pipeline.auto-watermark-interval",
        timedelta,
        "200 ms",
        "Interval between periodic watermarks of a WatermarkStrategy's generator; 0 disables periodic "
        "watermarks (punctuated generators still emit).",
    )


class ExecutionOptions:
    RUNTIME_MODE: ConfigOption[str] = _opt(
        "execution.runtime-mode",
        str,
        "STREAMING",
        "STREAMING, BATCH or AUTOMATIC. BATCH gives a bounded job Flink's batch results: keyed aggregations emit "
        "one final value per key, event-time windows and timers fire at the end of input, nothing is late; its "
        "exchanges are blocking (sort-merge files) and it runs stage after stage. AUTOMATIC runs as BATCH when "
        "every source is bounded, else as STREAMING.",
    )
    SORTED_INPUTS_ENABLED: ConfigOption[bool] = _opt(
        "execution.sorted-inputs.enabled",
        bool,
        False,
        "BATCH execution: keyed one-input operators (process, map/flat_map/filter after key_by) get their input "
        "grouped by key, key after key, and keep only the current key's state; its timers fire when its records "
        "are done: memory for one key's state, not all. Off (strom's default; Flink's is on): they keep every key's "
        "state until the end of input, which CPython runs about twice as fast. A reduce always aggregates by hash.",
    )
    SORTED_INPUTS_MEMORY: ConfigOption[int] = _opt(
        "execution.sorted-inputs.memory",
        MemorySize,
        "128 mb",
        "BATCH execution: the records a sorted input holds (estimated as pickled bytes) before it spills them, "
        "sorted by key, to a file under io.tmp.dirs; the end of input merges the files.",
    )
    BUFFER_TIMEOUT: ConfigOption[timedelta] = _opt(
        "execution.buffer-timeout.interval",
        timedelta,
        "100 ms",
        "Time after which a partly filled output buffer is flushed; 0 flushes every batch. Also read from "
        "Flink's deprecated key `execution.buffer-timeout`.",
        deprecated_keys=("execution.buffer-timeout",),
    )
    BATCH_SIZE: ConfigOption[int] = _opt(
        "execution.batch-size",
        int,
        1024,
        "strom's own: most records per batch (a source's poll, a network buffer); buffers are also cut at the "
        "segment size.",
    )
    BATCH_BYTES: ConfigOption[int] = _opt(
        "execution.batch-bytes",
        MemorySize,
        "1 mb",
        "strom's own: estimated size (sys.getsizeof) at which a source's poll or an operator's output batch is cut, "
        "whatever its record count: large records make short batches, so a task's memory does not grow with "
        "record size.",
    )
    CANCELLATION_INTERVAL: ConfigOption[timedelta] = _opt(
        "task.cancellation.interval",
        timedelta,
        "30 s",
        "Time between two interrupts of a cancelled task whose thread is still running (Flink's TaskInterrupter): "
        "each raises TaskCancelledError in the task thread at its next Python instruction, so user code that "
        "loops (a sleep, a poll) ends; code blocked in C sees it when it returns. The first comes one interval after "
        "the cancellation.",
    )
    CANCELLATION_TIMEOUT: ConfigOption[timedelta] = _opt(
        "task.cancellation.timeout",
        timedelta,
        "30 s",
        "Time a cancelled task may take to stop before its TaskManager stops with a fatal error; 0 disables "
        "this watchdog. A bare number is milliseconds (strom took seconds until 0.1.0).",
        legacy_seconds=True,
    )


class TaskManagerOptions:
    NUM_TASK_SLOTS: ConfigOption[int] = _opt("taskmanager.numberOfTaskSlots", int, 1, "Slots per TaskManager process.")
    HOST: ConfigOption[str] = _opt(
        "taskmanager.host", str, "127.0.0.1", "Address TaskManagers bind and advertise (loopback by default)."
    )

    SWITCH_INTERVAL: ConfigOption[float] = _opt(
        "taskmanager.python.switch-interval",
        float,
        1.0,
        "strom's own: milliseconds a TaskManager's threads may hold the GIL while another waits for it "
        "(sys.setswitchinterval); short, so the network thread is not held back by busy task threads; 0 keeps "
        "Python's 5 ms.",
        unit="ms",
    )


class NetworkOptions:
    BUFFERS_PER_CHANNEL: ConfigOption[int] = _opt(
        "taskmanager.network.memory.buffers-per-channel",
        int,
        2,
        "Exclusive buffers (initial credit) of each remote input channel; also the buffers per "
        "subpartition in each result partition's pool.",
    )
    FLOATING_BUFFERS_PER_GATE: ConfigOption[int] = _opt(
        "taskmanager.network.memory.floating-buffers-per-gate",
        int,
        8,
        "Buffers an input gate lends to its remote channels by backlog; also the spare buffers of each "
        "result partition's pool.",
    )
    MAX_BUFFERS_PER_CHANNEL: ConfigOption[int] = _opt(
        "taskmanager.network.memory.max-buffers-per-channel",
        int,
        10,
        "Most buffers one subpartition may hold queued before its writer blocks (backpressure).",
    )
    SEGMENT_SIZE: ConfigOption[int] = _opt(
        "taskmanager.memory.segment-size",
        MemorySize,
        "32 kb",
        "Serialized records per network buffer; a larger single record travels alone.",
    )
    MAX_FRAME_BYTES: ConfigOption[int] = _opt(
        "taskmanager.network.max-frame-size",
        MemorySize,
        "256 mb",
        "strom's own: largest frame accepted on any connection; larger frames close the connection.",
    )
    SORT_SHUFFLE_MIN_BUFFERS: ConfigOption[int] = _opt(
        "taskmanager.network.sort-shuffle.min-buffers",
        int,
        512,
        "BATCH execution: the sort buffer of each blocking result partition holds this many segments "
        "(taskmanager.memory.segment-size each) of serialized records before it is spilled to the partition's file.",
    )
    BATCH_SHUFFLE_COMPRESSION: ConfigOption[bool] = _opt(
        "taskmanager.network.batch-shuffle.compression.enabled",
        bool,
        True,
        "BATCH execution: compress the data buffers of blocking result partitions written to disk (with "
        "taskmanager.network.compression.codec).",
    )
    COMPRESSION_CODEC: ConfigOption[str] = _opt(
        "taskmanager.network.compression.codec",
        str,
        "LZ4",
        "BATCH execution: the codec of compressed partition files: LZ4 (Flink's default, the fastest), ZSTD "
        "(smallest files; needs the zstandard package) or ZLIB (strom's own; Flink's LZO is not available).",
    )
    TMP_DIRS: ConfigOption[str] = _opt(
        "io.tmp.dirs",
        str,
        "",
        "Directory where TaskManagers write the files of blocking result partitions (BATCH execution); empty: the "
        "system's temporary directory. Deleted when the job ends.",
    )


class ClusterOptions:
    NUM_TASK_MANAGERS: ConfigOption[int] = _opt(
        "minicluster.number-of-taskmanagers",
        int,
        0,
        "TaskManager processes the MiniCluster starts; 0 = as many as the job's slots need.",
    )
    #: strom's own key (Flink's MiniCluster always runs its TaskManagers in its own JVM)
    TASK_MANAGER_MODE: ConfigOption[str] = _opt(
        "minicluster.taskmanager-mode",
        str,
        "process",
        "strom's own: how the MiniCluster hosts its TaskManagers. 'process' (the default): each is a child process "
        "with its own interpreter and GIL, as in a real cluster. 'thread': each is a thread of the client process "
        "with its own event loop (as Flink's MiniCluster runs them in one JVM) — they start in milliseconds and "
        "share one GIL; for tests (`make test-fast`). In thread mode the TaskManagers write no log files, leave the "
        "interpreter's garbage collector and switch interval alone, and a stuck task closes its TaskManager "
        "instead of ending the process.",
    )
    JOBMANAGER_HOST: ConfigOption[str] = _opt(
        "jobmanager.rpc.address", str, "127.0.0.1", "Address the JobManager binds (loopback by default)."
    )
    JOBMANAGER_PORT: ConfigOption[int] = _opt(
        "jobmanager.rpc.port",
        int,
        6123,
        "Port of `strom jobmanager`'s RPC endpoint, which TaskManagers register with (Flink's port); 0: a free one, "
        "written into the cluster directory. The embedded MiniCluster always takes a free one.",
    )
    REGISTRATION_TIMEOUT: ConfigOption[timedelta] = _opt(
        "taskmanager.registration.timeout",
        timedelta,
        "60 s",
        "Time the cluster waits for its TaskManagers to register. A bare number is milliseconds (strom took "
        "seconds until 0.1.0).",
        legacy_seconds=True,
    )
    SLOT_REQUEST_TIMEOUT: ConfigOption[timedelta] = _opt(
        "slot.request.timeout",
        timedelta,
        "60 s",
        "Time a job waits for the slots it needs. A bare number is milliseconds (strom took seconds until 0.1.0).",
        legacy_seconds=True,
    )
    START_WORKER_MAX_FAILURE_RATE: ConfigOption[float] = _opt(
        "resourcemanager.start-worker.max-failure-rate",
        float,
        10.0,
        "Start failures per minute — TaskManagers of the MiniCluster or Spark that end before they register, each "
        "replaced at once — at which starting new ones pauses for `resourcemanager.start-worker.retry-interval`; "
        "reaching it also fails the cluster's start, or the job waiting for slots (without a restart), naming the "
        "last one's exit code and log. > 0.",
    )
    START_WORKER_RETRY_INTERVAL: ConfigOption[timedelta] = _opt(
        "resourcemanager.start-worker.retry-interval",
        timedelta,
        "3 s",
        "Pause before starting TaskManagers again once `resourcemanager.start-worker.max-failure-rate` is reached; "
        "after it, new ones start only when a job waits for slots.",
    )
    #: strom's own key: Flink sets log levels in log4j files, not in its configuration
    LOGGING_LEVEL: ConfigOption[str] = _opt(
        "logging.level",
        str,
        "WARNING",
        "strom's own: Python logging level (DEBUG, INFO, WARNING, ERROR) of the TaskManagers: records of strom "
        "and of user functions (`logging.getLogger(__name__).info(...)`) at or above it reach the client's standard "
        "error "
        "(from Spark, forwarded to the driver's `strom.taskmanager` logger). It is the level of the client's `strom` "
        "logger too, whatever the root logger's (a level the program gave that logger itself stays unless this is "
        "set), so nothing of strom's reaches a program's stdout. At DEBUG a failed task's error also shows strom's "
        "own traceback.",
    )


class DeploymentOptions:
    TARGET: ConfigOption[str] = _opt(
        "execution.target",
        str,
        "local",
        "Where execute() runs the job: 'local' (an embedded MiniCluster), 'spark' (TaskManagers hosted in "
        "Spark tasks; see docs/deploy-spark.md) or 'remote' (submitted over REST to a running cluster at "
        "rest.address:rest.port; see docs/operations.md, Cluster and CLI).",
    )
    ATTACHED: ConfigOption[bool] = _opt(
        "execution.attached",
        bool,
        True,
        "With execution.target 'remote': whether execute() waits for the job's end (true) or returns once the "
        "cluster accepted it (false, `strom run -d`). Flink's key; strom's default is true, as execute() behaves.",
    )


class WebOptions:
    """What the JobManager keeps for its REST API and dashboard (Flink's ``WebOptions``)."""

    CHECKPOINTS_HISTORY_SIZE: ConfigOption[int] = _opt(
        "web.checkpoints.history",
        int,
        10,
        "Checkpoints whose statistics the JobManager keeps in full per job (`GET /jobs/:id/checkpoints` history, "
        "`JobClient.get_checkpoint_statistics()`); the counts and the latest of each kind are kept whatever it is.",
    )
    EXCEPTION_HISTORY_SIZE: ConfigOption[int] = _opt(
        "web.exception-history-size",
        int,
        16,
        "Failures the JobManager keeps per job for `GET /jobs/:id/exceptions` (the newest; older ones are dropped).",
    )


class RestOptions:
    """The JobManager's REST API (Flink's ``RestOptions``; served by :mod:`strom.web`)."""

    ADDRESS: ConfigOption[str] = _opt(
        "rest.address",
        str,
        "",
        "Address clients use to reach the REST API; empty: the bind address.",
    )
    PORT: ConfigOption[int] = _opt(
        "rest.port",
        int,
        8081,
        "Port of the REST API. The embedded MiniCluster takes a free ephemeral port unless this is set; "
        "`JobClient.get_rest_url()` tells which.",
    )
    BIND_ADDRESS: ConfigOption[str] = _opt(
        "rest.bind-address",
        str,
        "127.0.0.1",
        "Address the REST server binds (loopback by default; Flink binds every interface). Calls that change a "
        "job (PATCH, POST) need the cluster's REST token as `Authorization: Bearer <token>`.",
    )
    MAX_CONTENT_LENGTH: ConfigOption[int] = _opt(
        "rest.server.max-content-length",
        MemorySize,
        "100 mb",
        "Largest job submission (`POST /jobs`: the pickled JobGraph plus the job's Python files) the REST server "
        "reads; a larger one is refused with 413.",
    )


class SparkOptions:
    """``execution.target: spark``. Any other ``spark.*`` key is Spark's own and goes to the SparkSession
    strom creates (e.g. ``spark.executor.memory``)."""

    MASTER: ConfigOption[str] = _opt(
        "spark.master",
        str,
        "local[*]",
        "Spark master of the SparkSession strom creates (when the program brings none): local[N], "
        "local[N,maxFailures], spark://host:port, yarn, k8s://...",
    )
    TASK_MANAGERS: ConfigOption[int] = _opt(
        "spark.taskmanagers",
        int,
        0,
        "strom's own: TaskManagers (one long-running Spark task each) to start; 0 = as many as the job's slots need.",
    )
    TASK_MANAGER_CPUS: ConfigOption[int] = _opt(
        "spark.taskmanager.cpus",
        int,
        0,
        "strom's own: CPUs each TaskManager's Spark task asks for through stage-level scheduling (not in local mode); "
        "0 = Spark's spark.task.cpus.",
    )


class MetricOptions:
    """Flink's PrometheusReporter under the reporter name ``prom`` (``metrics.reporter.prom.*``)."""

    PROMETHEUS_FACTORY_CLASS: ConfigOption[str] = _opt(
        "metrics.reporter.prom.factory.class",
        str,
        "",
        "`org.apache.flink.metrics.prometheus.PrometheusReporterFactory` serves `/metrics` in Prometheus' text "
        "format on the JobManager and on every TaskManager, with Flink's names and labels "
        "(`flink_taskmanager_job_task_numRecordsIn{job_name=...}`); empty (the default): no reporter.",
    )
    PROMETHEUS_PORT: ConfigOption[str] = _opt(
        "metrics.reporter.prom.port",
        str,
        "9249",
        "Port of the Prometheus endpoint: a port, a range (`9249-9260`) or a list; each JobManager and TaskManager "
        "takes the first free one and logs it at INFO (`JobClient.get_metric_urls()` lists them); `0` = any free "
        "port.",
    )
    PROMETHEUS_HOST: ConfigOption[str] = _opt(
        "metrics.reporter.prom.host",
        str,
        "127.0.0.1",
        "strom's own: address the Prometheus endpoints bind (Flink binds every interface; strom loopback unless "
        "set, e.g. `0.0.0.0`).",
    )


class HeartbeatOptions:
    INTERVAL: ConfigOption[timedelta] = _opt(
        "heartbeat.interval",
        timedelta,
        "1 s",
        "Time between heartbeats; > 0. A bare number is milliseconds (strom took seconds until 0.1.0).",
        legacy_seconds=True,
    )
    TIMEOUT: ConfigOption[timedelta] = _opt(
        "heartbeat.timeout",
        timedelta,
        "10 s",
        "Time without a heartbeat after which a peer is declared lost; at least `heartbeat.interval`. A bare "
        "number is milliseconds (strom took seconds until 0.1.0).",
        legacy_seconds=True,
    )


class HighAvailabilityOptions:
    """JobManager high availability (Flink's ``HighAvailabilityOptions``; the ``file`` type is strom's: a lease and
    the HA stores on a shared fsspec directory, :mod:`strom.runtime.highavailability`)."""

    TYPE: ConfigOption[str] = _opt(
        "high-availability.type",
        str,
        "NONE",
        "NONE (default) or `file`: standby JobManagers, a leader lease and the job graphs and completed-checkpoint "
        "pointers in `high-availability.storageDir` (Flink's `zookeeper` / `kubernetes` are not available).",
    )
    STORAGE_DIR: ConfigOption[str] = _opt(
        "high-availability.storageDir",
        str,
        "",
        "With `high-availability.type: file`: the directory (any fsspec URL with an atomic exclusive create: a "
        "local or NFSv4 path, s3://, gs://) every JobManager, TaskManager and client of the cluster shares.",
    )
    CLUSTER_ID: ConfigOption[str] = _opt(
        "high-availability.cluster-id",
        str,
        "default",
        "The cluster's sub-directory of `high-availability.storageDir` (several clusters may share one).",
    )
    LEASE_DURATION: ConfigOption[timedelta] = _opt(
        "high-availability.file.leader-election.lease-duration",
        timedelta,
        "5 s",
        "strom's own (after Flink's `high-availability.kubernetes.leader-election.lease-duration`): how long a "
        "lease holds without renewal; a standby takes over this long after the leader's last renewal. Must exceed "
        "the clock skew between the JobManagers' machines.",
    )
    RETRY_PERIOD: ConfigOption[timedelta] = _opt(
        "high-availability.file.leader-election.retry-period",
        timedelta,
        "1 s",
        "strom's own (after Flink's `...kubernetes.leader-election.retry-period`): how often the leader renews its "
        "lease and standbys, TaskManagers and clients read it; well below the lease duration.",
    )
    JOB_RESULT_DELETE_ON_COMMIT: ConfigOption[bool] = _opt(
        "job-result-store.delete-on-commit",
        bool,
        True,
        "With high availability: delete a job's entry in the JobResultStore (`<storageDir>/<cluster-id>/"
        "job-results`) once its clean-up is done. `false` keeps it, so a leader that takes over later still "
        "answers the job's `execution-result`; entries then accumulate, one small file per job.",
    )


class RestartStrategyOptions:
    """How a failed job is restarted (Flink's ``RestartStrategyOptions``)."""

    RESTART_STRATEGY: ConfigOption[str] = _opt(
        "restart-strategy.type",
        str,
        "",
        "Restart strategy of a failed job, case-insensitive: `none` (also `off`, `disable`), `fixed-delay` "
        "(`fixeddelay`), `failure-rate` (`failurerate`) or `exponential-delay` (`exponentialdelay`). Empty: "
        "`exponential-delay` with its default options when checkpointing is enabled, else `none`.",
    )
    RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS: ConfigOption[int] = _opt(
        "restart-strategy.fixed-delay.attempts",
        int,
        1,
        "Restarts `fixed-delay` allows before the job is declared failed.",
    )
    RESTART_STRATEGY_FIXED_DELAY_DELAY: ConfigOption[timedelta] = _opt(
        "restart-strategy.fixed-delay.delay",
        timedelta,
        "1 s",
        "Time `fixed-delay` waits before each restart.",
    )
    RESTART_STRATEGY_FAILURE_RATE_MAX_FAILURES_PER_INTERVAL: ConfigOption[int] = _opt(
        "restart-strategy.failure-rate.max-failures-per-interval",
        int,
        1,
        "Failures `failure-rate` restarts within one interval; one more within the interval fails the job.",
    )
    RESTART_STRATEGY_FAILURE_RATE_FAILURE_RATE_INTERVAL: ConfigOption[timedelta] = _opt(
        "restart-strategy.failure-rate.failure-rate-interval",
        timedelta,
        "1 min",
        "Length of the sliding window in which `failure-rate` counts failures.",
    )
    RESTART_STRATEGY_FAILURE_RATE_DELAY: ConfigOption[timedelta] = _opt(
        "restart-strategy.failure-rate.delay",
        timedelta,
        "1 s",
        "Time `failure-rate` waits before each restart.",
    )
    RESTART_STRATEGY_EXPONENTIAL_DELAY_INITIAL_BACKOFF: ConfigOption[timedelta] = _opt(
        "restart-strategy.exponential-delay.initial-backoff",
        timedelta,
        "1 s",
        "Time `exponential-delay` waits before the first restart.",
    )
    RESTART_STRATEGY_EXPONENTIAL_DELAY_MAX_BACKOFF: ConfigOption[timedelta] = _opt(
        "restart-strategy.exponential-delay.max-backoff",
        timedelta,
        "1 min",
        "Longest time `exponential-delay` waits before a restart.",
    )
    RESTART_STRATEGY_EXPONENTIAL_DELAY_BACKOFF_MULTIPLIER: ConfigOption[float] = _opt(
        "restart-strategy.exponential-delay.backoff-multiplier",
        float,
        1.5,
        "Factor (> 1) by which the `exponential-delay` backoff grows with each restart.",
    )
    RESTART_STRATEGY_EXPONENTIAL_DELAY_RESET_BACKOFF_THRESHOLD: ConfigOption[timedelta] = _opt(
        "restart-strategy.exponential-delay.reset-backoff-threshold",
        timedelta,
        "1 h",
        "Time a job must run after a restart for `exponential-delay` to reset its backoff and attempt count.",
    )
    RESTART_STRATEGY_EXPONENTIAL_DELAY_JITTER_FACTOR: ConfigOption[float] = _opt(
        "restart-strategy.exponential-delay.jitter-factor",
        float,
        0.1,
        "Random share (0 to 1) of the `exponential-delay` backoff added or subtracted, so that many jobs do "
        "not restart at once.",
    )
    RESTART_STRATEGY_EXPONENTIAL_DELAY_ATTEMPTS: ConfigOption[int] = _opt(
        "restart-strategy.exponential-delay.attempts-before-reset-backoff",
        int,
        2_147_483_647,
        "Restarts `exponential-delay` allows before its backoff is reset; one more fails the job.",
    )


class JobManagerOptions:
    """Options of the JobManager's scheduling (Flink's ``JobManagerOptions``)."""

    EXECUTION_FAILOVER_STRATEGY: ConfigOption[str] = _opt(
        "jobmanager.execution.failover-strategy",
        str,
        "region",
        "Which tasks a task failure restarts, case-insensitive: `region` (Flink's default) restarts only the "
        "pipelined region of the failed task — the subtasks linked to it by data exchanges (a keyBy joins all "
        "of its producers and consumers; forward edges and independent pipelines keep regions apart) — while the "
        "other regions keep running; `full` restarts every task of the job. Either way the restart strategy "
        "decides whether and when, counting each failure once, and the restarted tasks restore the latest "
        "completed checkpoint.",
    )


class Configuration:
    """A mutable map of option keys to values, validated against :data:`REGISTRY`."""

    __slots__ = ("_values",)

    def __init__(self, values: dict[str, Any] | None = None) -> None:
        self._values: dict[str, Any] = {}
        for key, value in (values or {}).items():
            self.set_string(key, value)

    def get(self, option: ConfigOption[T]) -> T:
        return self._values.get(option.key, option.default)  # type: ignore[no-any-return]

    def set(self, option: ConfigOption[T], value: T | int | str) -> Configuration:
        """Set ``option``; a duration or memory size may also be given as a number or a string (``"10 s"``)."""
        self._values[option.key] = option.parse(value)
        return self

    @staticmethod
    def knows(key: str) -> bool:
        """Whether :meth:`set_string` takes ``key``: a strom option or a deprecated key of one, a ``spark.*`` key,
        or a key of PyFlink's JVM side (kept, ignored)."""
        return (
            (REGISTRY.get(key) or DEPRECATED_KEYS.get(key)) is not None
            or key.startswith(SPARK_PASSTHROUGH_PREFIX)
            or key.startswith(JVM_ONLY_PREFIXES)
        )

    def set_string(self, key: str, value: object) -> Configuration:
        option = REGISTRY.get(key) or DEPRECATED_KEYS.get(key)
        if option is None and key.startswith(SPARK_PASSTHROUGH_PREFIX):
            self._values[key] = str(value).lower() if isinstance(value, bool) else str(value)
            return self
        if option is None and key.startswith(JVM_ONLY_PREFIXES):
            _log.info("configuration key '%s' configures PyFlink's JVM side; strom keeps it and ignores it", key)
            self._values[key] = str(value).lower() if isinstance(value, bool) else str(value)
            return self
        if option is None:
            near = [k for k in REGISTRY if k.split(".")[-1] == key.split(".")[-1]]
            hint = f"did you mean '{near[0]}'?" if near else "see docs/configuration.md for the known keys"
            raise ConfigurationError(f"expected a known configuration key; got '{key}'; hint: {hint}")
        if key != option.key:  # Flink's ConfigOption fallback: the value counts, with Flink's warning
            _log.warning("Config uses deprecated configuration key '%s' instead of proper key '%s'", key, option.key)
        self._values[option.key] = option.parse(value)
        return self

    def contains(self, option: ConfigOption[Any]) -> bool:
        return option.key in self._values

    def to_dict(self) -> dict[str, Any]:
        return dict(self._values)

    # -- PyFlink's Configuration methods -------------------------------------------------------------------
    def _raw(self, key: str) -> Any:
        option = REGISTRY.get(key) or DEPRECATED_KEYS.get(key)
        return self._values.get(option.key if option is not None else key, _ABSENT)

    def get_string(self, key: str, default_value: str) -> str:
        """The value of ``key`` in Flink's string form (``"10 s"``, ``"true"``), or ``default_value``."""
        value = self._raw(key)
        if value is _ABSENT:
            return default_value
        if isinstance(value, timedelta):
            return format_duration(value)
        if isinstance(value, dict):
            return format_map(value)
        return str(value).lower() if isinstance(value, bool) else str(value)

    def get_integer(self, key: str, default_value: int) -> int:
        value = self._raw(key)
        return default_value if value is _ABSENT else int(value)

    def get_float(self, key: str, default_value: float) -> float:
        value = self._raw(key)
        return default_value if value is _ABSENT else float(value)

    def get_boolean(self, key: str, default_value: bool) -> bool:
        value = self._raw(key)
        if value is _ABSENT:
            return default_value
        return value if isinstance(value, bool) else str(value).strip().lower() == "true"

    def set_integer(self, key: str, value: int) -> Configuration:
        return self.set_string(key, value)

    def set_float(self, key: str, value: float) -> Configuration:
        return self.set_string(key, value)

    def set_boolean(self, key: str, value: bool) -> Configuration:
        return self.set_string(key, value)

    def contains_key(self, key: str) -> bool:
        return self._raw(key) is not _ABSENT

    def key_set(self) -> builtins.set[str]:
        return builtins.set(self._values)

    def add_all(self, other: Configuration, prefix: str | None = None) -> Configuration:
        """Every value of ``other`` (under ``prefix`` + its key, when given) set here."""
        for key, value in other._values.items():
            self.set_string(f"{prefix}{key}" if prefix else key, value)
        return self

    def add_all_to_dict(self, target: dict[str, Any]) -> None:
        target.update(self._values)

    def remove_config(self, option: ConfigOption[Any] | str) -> bool:
        """Remove ``option`` (or a key); whether it was set."""
        key = option.key if isinstance(option, ConfigOption) else option
        return self._values.pop(key, _ABSENT) is not _ABSENT

    def spark_settings(self) -> dict[str, str]:
        """The ``spark.*`` keys that are Spark's own (not strom options), for a SparkSession builder."""
        return {k: v for k, v in self._values.items() if k.startswith(SPARK_PASSTHROUGH_PREFIX) and k not in REGISTRY}

    def copy(self) -> Configuration:
        conf = Configuration()
        conf._values = dict(self._values)
        return conf

    def __repr__(self) -> str:
        return f"Configuration({self._values!r})"


_REFERENCE_INTRO = """\
Keys, types and units are Flink's, except the options marked *strom's own* (names Flink does not use).
Options come from the configuration file `$STROM_CONF_DIR/config.yaml` (Flink's `config.yaml`: nested keys are
joined with `.`; see docs/operations.md), then `-D key=value` on the command line, which wins. Values are read the
same way in the file, in a `Configuration`, in `-D` and by the `StreamExecutionEnvironment`:

- **Duration**: a whole number of milliseconds, or a whole number with a unit: `500 ms`, `10 s`, `1 min`,
  `2 h`, `1 d` (also `ns`, `us`, `m` and the long forms `millis`, `seconds`, `minutes`, `hours`, `days`; the
  space is optional). From Python also a `datetime.timedelta`; `Configuration.get` returns a `timedelta`.
- **MemorySize**: a whole number of bytes, or a whole number with a unit: `32 kb`, `64 mb`, `1 gb` (also `b`,
  `k`, `m`, `g`, `t`, `tb`, `bytes`; case-insensitive). `Configuration.get` returns an `int` of bytes.

A value of the wrong shape is refused with the key, the expected form and an example. Options that took seconds
until strom 0.1.0 refuse a decimal number and a bare number below 100 (write `10 s` or `10 ms`).
"""


def render_reference() -> str:
    """The configuration reference as Markdown."""
    lines = ["# Configuration reference", "", "Generated by `python -m strom.config`.", "", _REFERENCE_INTRO]
    lines += ["| key | type | default | description |", "|---|---|---|---|"]
    for key in sorted(REGISTRY):
        o = REGISTRY[key]
        lines.append(f"| `{key}` | {o.type_name()} | `{o.format_default()}` | {o.description} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render_reference(), end="")
