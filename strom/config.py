"""Typed configuration: one registry of options under Flink's key names.

    >>> conf = Configuration()
    >>> conf.set_string("taskmanager.numberOfTaskSlots", "2")
    >>> conf.get(TaskManagerOptions.NUM_TASK_SLOTS)
    2

The configuration reference in ``docs/configuration.md`` is generated from :data:`REGISTRY`
(``python -m strom.config``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from strom.exceptions import ConfigurationError

__all__ = [
    "REGISTRY",
    "CheckpointingOptions",
    "ClusterOptions",
    "ConfigOption",
    "Configuration",
    "CoreOptions",
    "DeploymentOptions",
    "ExecutionOptions",
    "HeartbeatOptions",
    "NetworkOptions",
    "PipelineOptions",
    "RestartStrategyOptions",
    "SparkOptions",
    "StateBackendOptions",
    "TaskManagerOptions",
]

T = TypeVar("T")

REGISTRY: dict[str, ConfigOption[Any]] = {}
#: unknown keys under this prefix are Spark's own settings, kept as strings for the SparkSession
SPARK_PASSTHROUGH_PREFIX = "spark."


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigOption(Generic[T]):
    key: str
    type: type
    default: T
    description: str

    def __post_init__(self) -> None:
        REGISTRY[self.key] = self

    def parse(self, raw: object) -> T:
        """Coerce ``raw`` (a value or its string form) into this option's type."""
        if self.type is bool and isinstance(raw, str):
            low = raw.strip().lower()
            if low in ("true", "1", "yes"):
                return True  # type: ignore[return-value]
            if low in ("false", "0", "no"):
                return False  # type: ignore[return-value]
        elif isinstance(raw, self.type) and not (self.type is int and isinstance(raw, bool)):
            return raw  # type: ignore[return-value]
        elif self.type in (int, float) and isinstance(raw, str | int | float) and not isinstance(raw, bool):
            try:
                return self.type(raw)  # type: ignore[no-any-return,return-value,unused-ignore]
            except ValueError:
                pass
        raise ConfigurationError(
            f"option '{self.key}' expects a {self.type.__name__}; got {raw!r}; hint: the default is {self.default!r}"
        )


def _opt(key: str, typ: type, default: Any, description: str) -> ConfigOption[Any]:
    return ConfigOption(key=key, type=typ, default=default, description=description)


class CoreOptions:
    DEFAULT_PARALLELISM: ConfigOption[int] = _opt(
        "parallelism.default", int, 1, "Parallelism of operators that set none."
    )
    MAX_PARALLELISM: ConfigOption[int] = _opt(
        "pipeline.max-parallelism",
        int,
        128,
        "Upper bound for rescaling; the number of key groups.",
    )


class PipelineOptions:
    OPERATOR_CHAINING: ConfigOption[bool] = _opt(
        "pipeline.operator-chaining.enabled",
        bool,
        True,
        "Chain operators into one task where Flink's rules allow.",
    )
    NAME: ConfigOption[str] = _opt("pipeline.name", str, "strom job", "Name of the job.")
    AUTO_WATERMARK_INTERVAL: ConfigOption[int] = _opt(
        "pipeline.auto-watermark-interval",
        int,
        200,
        "Milliseconds between periodic watermarks of a WatermarkStrategy's generator; 0 disables periodic "
        "watermarks (punctuated generators still emit).",
    )


class ExecutionOptions:
    BUFFER_TIMEOUT: ConfigOption[int] = _opt(
        "execution.buffer-timeout",
        int,
        100,
        "Milliseconds after which a partly filled output buffer is flushed; 0 flushes every batch.",
    )
    BATCH_SIZE: ConfigOption[int] = _opt(
        "execution.batch-size",
        int,
        1024,
        "Most records per batch (a source's poll, a network buffer); buffers are also cut at the segment size.",
    )
    BATCH_BYTES: ConfigOption[int] = _opt(
        "execution.batch-bytes",
        int,
        1024 * 1024,
        "Estimated bytes (sys.getsizeof) at which a source's poll or an operator's output batch is cut, whatever "
        "its record count: large records make short batches, so a task's memory does not grow with record size.",
    )
    CANCELLATION_TIMEOUT: ConfigOption[float] = _opt(
        "task.cancellation.timeout",
        float,
        30.0,
        "Seconds a cancelled task may take to stop before its TaskManager is treated as broken.",
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
        "Milliseconds a TaskManager's threads may hold the GIL while another waits for it (sys.setswitchinterval); "
        "short, so the network thread is not held back by busy task threads; 0 keeps Python's 5 ms.",
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
        int,
        32 * 1024,
        "Bytes of serialized records per network buffer; a larger single record travels alone.",
    )
    MAX_FRAME_BYTES: ConfigOption[int] = _opt(
        "taskmanager.network.max-frame-size",
        int,
        256 * 1024 * 1024,
        "Largest frame accepted on any connection; larger frames close the connection.",
    )


class ClusterOptions:
    NUM_TASK_MANAGERS: ConfigOption[int] = _opt(
        "minicluster.number-of-taskmanagers",
        int,
        0,
        "TaskManager processes the MiniCluster starts; 0 = as many as the job's slots need.",
    )
    JOBMANAGER_HOST: ConfigOption[str] = _opt(
        "jobmanager.rpc.address", str, "127.0.0.1", "Address the JobManager binds (loopback by default)."
    )
    REGISTRATION_TIMEOUT: ConfigOption[float] = _opt(
        "taskmanager.registration.timeout",
        float,
        60.0,
        "Seconds the MiniCluster waits for its TaskManagers to register.",
    )
    SLOT_REQUEST_TIMEOUT: ConfigOption[float] = _opt(
        "slot.request.timeout", float, 60.0, "Seconds a job waits for the slots it needs."
    )


class DeploymentOptions:
    TARGET: ConfigOption[str] = _opt(
        "execution.target",
        str,
        "local",
        "Where execute() runs the job: 'local' (an embedded MiniCluster) or 'spark' (TaskManagers hosted in "
        "Spark tasks; see docs/deploy-spark.md).",
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
        "TaskManagers (one long-running Spark task each) to start; 0 = as many as the job's slots need.",
    )
    TASK_MANAGER_CPUS: ConfigOption[int] = _opt(
        "spark.taskmanager.cpus",
        int,
        0,
        "CPUs each TaskManager's Spark task asks for through stage-level scheduling (not in local mode); "
        "0 = Spark's spark.task.cpus.",
    )


class HeartbeatOptions:
    INTERVAL: ConfigOption[float] = _opt("heartbeat.interval", float, 1.0, "Seconds between heartbeats.")
    TIMEOUT: ConfigOption[float] = _opt(
        "heartbeat.timeout", float, 10.0, "Seconds without a heartbeat after which a peer is declared lost."
    )


class StateBackendOptions:
    """Where keyed state lives (Flink's ``StateBackendOptions``)."""

    STATE_BACKEND: ConfigOption[str] = _opt(
        "state.backend.type",
        str,
        "hashmap",
        "The state backend: 'hashmap' keeps keyed state as objects on the TaskManagers' heap, per key group.",
    )


class CheckpointingOptions:
    """Checkpoints and savepoints (Flink's ``CheckpointingOptions`` / ``SavepointConfigOptions``)."""

    CHECKPOINTS_DIRECTORY: ConfigOption[str] = _opt(
        "execution.checkpointing.dir",
        str,
        "",
        "Directory URI for checkpoints, through fsspec: `file://`, `s3://`, ... or a plain local path; each job "
        "writes `<dir>/<job-id>/chk-<n>/`. Empty: a temporary directory chosen by the MiniCluster. "
        "`memory://` works only when JobManager and TaskManagers share one process (tests).",
    )
    MAX_RETAINED_CHECKPOINTS: ConfigOption[int] = _opt(
        "execution.checkpointing.num-retained",
        int,
        1,
        "Completed checkpoints kept; older ones are deleted when a newer one completes.",
    )
    CHECKPOINTING_INTERVAL: ConfigOption[int] = _opt(
        "execution.checkpointing.interval",
        int,
        0,
        "Milliseconds between checkpoint triggers; 0 disables periodic checkpoints.",
    )
    CHECKPOINTING_CONSISTENCY_MODE: ConfigOption[str] = _opt(
        "execution.checkpointing.mode",
        str,
        "EXACTLY_ONCE",
        "EXACTLY_ONCE (barriers are aligned) or AT_LEAST_ONCE (no alignment; records may be replayed twice).",
    )
    CHECKPOINTING_TIMEOUT: ConfigOption[int] = _opt(
        "execution.checkpointing.timeout",
        int,
        600_000,
        "Milliseconds after which a pending checkpoint is aborted.",
    )
    MIN_PAUSE_BETWEEN_CHECKPOINTS: ConfigOption[int] = _opt(
        "execution.checkpointing.min-pause",
        int,
        0,
        "Least milliseconds between the end of one checkpoint and the trigger of the next.",
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
    SAVEPOINT_PATH: ConfigOption[str] = _opt(
        "execution.savepoint.path",
        str,
        "",
        "Savepoint or retained checkpoint directory (or its `_metadata` file) to restore the job from; empty: "
        "start without state.",
    )
    SAVEPOINT_IGNORE_UNCLAIMED_STATE: ConfigOption[bool] = _opt(
        "execution.savepoint.ignore-unclaimed-state",
        bool,
        False,
        "Allow restoring from a savepoint that holds state of operators no longer in the job "
        "(allow_non_restored_state); otherwise such a restore fails.",
    )


class RestartStrategyOptions:
    """How a failed job is restarted (Flink's ``RestartStrategyOptions``).

    Durations are whole milliseconds here where Flink takes a ``Duration`` (``10 s``).
    """

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
    RESTART_STRATEGY_FIXED_DELAY_DELAY: ConfigOption[int] = _opt(
        "restart-strategy.fixed-delay.delay",
        int,
        1000,
        "Milliseconds `fixed-delay` waits before each restart (Flink takes a Duration).",
    )
    RESTART_STRATEGY_FAILURE_RATE_MAX_FAILURES_PER_INTERVAL: ConfigOption[int] = _opt(
        "restart-strategy.failure-rate.max-failures-per-interval",
        int,
        1,
        "Failures `failure-rate` restarts within one interval; one more within the interval fails the job.",
    )
    RESTART_STRATEGY_FAILURE_RATE_FAILURE_RATE_INTERVAL: ConfigOption[int] = _opt(
        "restart-strategy.failure-rate.failure-rate-interval",
        int,
        60_000,
        "Milliseconds of the sliding window in which `failure-rate` counts failures (Flink takes a Duration).",
    )
    RESTART_STRATEGY_FAILURE_RATE_DELAY: ConfigOption[int] = _opt(
        "restart-strategy.failure-rate.delay",
        int,
        1000,
        "Milliseconds `failure-rate` waits before each restart (Flink takes a Duration).",
    )
    RESTART_STRATEGY_EXPONENTIAL_DELAY_INITIAL_BACKOFF: ConfigOption[int] = _opt(
        "restart-strategy.exponential-delay.initial-backoff",
        int,
        1000,
        "Milliseconds `exponential-delay` waits before the first restart (Flink takes a Duration).",
    )
    RESTART_STRATEGY_EXPONENTIAL_DELAY_MAX_BACKOFF: ConfigOption[int] = _opt(
        "restart-strategy.exponential-delay.max-backoff",
        int,
        60_000,
        "Most milliseconds `exponential-delay` waits before a restart (Flink takes a Duration).",
    )
    RESTART_STRATEGY_EXPONENTIAL_DELAY_BACKOFF_MULTIPLIER: ConfigOption[float] = _opt(
        "restart-strategy.exponential-delay.backoff-multiplier",
        float,
        1.5,
        "Factor (> 1) by which the `exponential-delay` backoff grows with each restart.",
    )
    RESTART_STRATEGY_EXPONENTIAL_DELAY_RESET_BACKOFF_THRESHOLD: ConfigOption[int] = _opt(
        "restart-strategy.exponential-delay.reset-backoff-threshold",
        int,
        3_600_000,
        "Milliseconds a job must run after a restart for `exponential-delay` to reset its backoff and attempt "
        "count (Flink takes a Duration).",
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


class Configuration:
    """A mutable map of option keys to values, validated against :data:`REGISTRY`."""

    __slots__ = ("_values",)

    def __init__(self, values: dict[str, Any] | None = None) -> None:
        self._values: dict[str, Any] = {}
        for key, value in (values or {}).items():
            self.set_string(key, value)

    def get(self, option: ConfigOption[T]) -> T:
        return self._values.get(option.key, option.default)  # type: ignore[no-any-return]

    def set(self, option: ConfigOption[T], value: T) -> Configuration:
        self._values[option.key] = option.parse(value)
        return self

    def set_string(self, key: str, value: object) -> Configuration:
        option = REGISTRY.get(key)
        if option is None and key.startswith(SPARK_PASSTHROUGH_PREFIX):
            self._values[key] = str(value).lower() if isinstance(value, bool) else str(value)
            return self
        if option is None:
            near = [k for k in REGISTRY if k.split(".")[-1] == key.split(".")[-1]]
            hint = f"did you mean '{near[0]}'?" if near else "see docs/configuration.md for the known keys"
            raise ConfigurationError(f"expected a known configuration key; got '{key}'; hint: {hint}")
        self._values[key] = option.parse(value)
        return self

    def contains(self, option: ConfigOption[Any]) -> bool:
        return option.key in self._values

    def to_dict(self) -> dict[str, Any]:
        return dict(self._values)

    def spark_settings(self) -> dict[str, str]:
        """The ``spark.*`` keys that are Spark's own (not strom options), for a SparkSession builder."""
        return {k: v for k, v in self._values.items() if k.startswith(SPARK_PASSTHROUGH_PREFIX) and k not in REGISTRY}

    def copy(self) -> Configuration:
        conf = Configuration()
        conf._values = dict(self._values)
        return conf

    def __repr__(self) -> str:
        return f"Configuration({self._values!r})"


def render_reference() -> str:
    """The configuration reference as Markdown."""
    lines = ["# Configuration reference", "", "Generated by `python -m strom.config`.", ""]
    lines += ["| key | type | default | description |", "|---|---|---|---|"]
    for key in sorted(REGISTRY):
        o = REGISTRY[key]
        lines.append(f"| `{key}` | {o.type.__name__} | `{o.default!r}` | {o.description} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render_reference(), end="")
