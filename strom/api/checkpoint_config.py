"""``CheckpointConfig`` and ``CheckpointingMode``: how a job checkpoints (Flink's ``CheckpointConfig``).

    env.enable_checkpointing(1000, CheckpointingMode.EXACTLY_ONCE)
    cfg = env.get_checkpoint_config()
    cfg.set_checkpoint_timeout(60_000)
    cfg.set_checkpoint_storage("file:///data/checkpoints")

Every setter writes the matching ``execution.checkpointing.*`` option of the environment's
configuration, so settings made in code and in a configuration are the same thing.
"""

from __future__ import annotations

import enum
from datetime import timedelta
from typing import TYPE_CHECKING

from strom.api._time import duration_argument
from strom.api.time import Duration
from strom.config import CheckpointingOptions, ConfigOption, millis
from strom.exceptions import InvalidProgramError
from strom.runtime.checkpoint.storage import ExternalizedCheckpointRetention

if TYPE_CHECKING:
    from strom.config import Configuration

__all__ = ["CheckpointConfig", "CheckpointingMode", "ExternalizedCheckpointRetention"]


_JAVA_INT_MAX = 2**31 - 1


class CheckpointingMode(enum.Enum):
    EXACTLY_ONCE = "EXACTLY_ONCE"
    AT_LEAST_ONCE = "AT_LEAST_ONCE"


def _non_negative_int(value: object, what: str, hint: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InvalidProgramError(f"expected {what} as an int >= 0; got {value!r}; hint: {hint}")
    return value


class CheckpointConfig:
    def __init__(self, configuration: Configuration) -> None:
        self._config = configuration

    # -- enabling ----------------------------------------------------------------------------------
    def is_checkpointing_enabled(self) -> bool:
        return self.get_checkpoint_interval() > 0

    def set_checkpoint_interval(self, interval_ms: int | timedelta | str) -> None:
        """Checkpoint every ``interval_ms``: milliseconds, a ``timedelta`` or a string such as ``"10 s"``."""
        interval = duration_argument(CheckpointingOptions.CHECKPOINTING_INTERVAL, interval_ms, "a checkpoint interval")
        if interval < timedelta(milliseconds=10):
            raise InvalidProgramError(
                f"expected a checkpoint interval of at least 10 ms; got {interval_ms!r}; "
                "hint: env.enable_checkpointing(1000) checkpoints every second"
            )
        self._config.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, interval)

    def get_checkpoint_interval(self) -> int:
        """The checkpoint interval in milliseconds; 0 when checkpointing is disabled."""
        return millis(self._config.get(CheckpointingOptions.CHECKPOINTING_INTERVAL))

    def set_checkpointing_mode(self, mode: CheckpointingMode) -> None:
        if not isinstance(mode, CheckpointingMode):
            raise InvalidProgramError(
                f"expected a CheckpointingMode; got {mode!r}; hint: CheckpointingMode.EXACTLY_ONCE or AT_LEAST_ONCE"
            )
        self._config.set(CheckpointingOptions.CHECKPOINTING_CONSISTENCY_MODE, mode.value)

    def get_checkpointing_mode(self) -> CheckpointingMode:
        return CheckpointingMode(self._config.get(CheckpointingOptions.CHECKPOINTING_CONSISTENCY_MODE).upper())

    # -- limits ------------------------------------------------------------------------------------
    def set_checkpoint_timeout(self, timeout_ms: int | timedelta | str) -> None:
        """Abort a pending checkpoint after ``timeout_ms``: milliseconds, a ``timedelta`` or ``"10 min"``."""
        self._set_duration(
            CheckpointingOptions.CHECKPOINTING_TIMEOUT,
            timeout_ms,
            "a checkpoint timeout",
            "a pending checkpoint is aborted after it",
        )

    def get_checkpoint_timeout(self) -> int:
        """The checkpoint timeout in milliseconds."""
        return millis(self._config.get(CheckpointingOptions.CHECKPOINTING_TIMEOUT))

    def set_min_pause_between_checkpoints(self, min_pause_ms: int | timedelta | str) -> None:
        """Least time between the end of one checkpoint and the next: milliseconds, a ``timedelta`` or ``"1 s"``."""
        self._set_duration(
            CheckpointingOptions.MIN_PAUSE_BETWEEN_CHECKPOINTS,
            min_pause_ms,
            "a minimum pause",
            "the time between the end of one checkpoint and the next",
        )

    def _set_duration(
        self, option: ConfigOption[timedelta], value: int | timedelta | str, what: str, hint: str
    ) -> None:
        duration = duration_argument(option, value, what)
        if duration < timedelta(0):
            raise InvalidProgramError(f"expected {what} >= 0 ms; got {value!r}; hint: {hint}")
        self._config.set(option, duration)

    def get_min_pause_between_checkpoints(self) -> int:
        """The minimum pause between checkpoints in milliseconds."""
        return millis(self._config.get(CheckpointingOptions.MIN_PAUSE_BETWEEN_CHECKPOINTS))

    def set_max_concurrent_checkpoints(self, max_concurrent: int) -> None:
        if _non_negative_int(max_concurrent, "a number of concurrent checkpoints", "1 or more") < 1:
            raise InvalidProgramError("expected at least 1 concurrent checkpoint; got 0; hint: 1 is the default")
        self._config.set(CheckpointingOptions.MAX_CONCURRENT_CHECKPOINTS, max_concurrent)

    def get_max_concurrent_checkpoints(self) -> int:
        return self._config.get(CheckpointingOptions.MAX_CONCURRENT_CHECKPOINTS)

    def set_tolerable_checkpoint_failure_number(self, number: int) -> None:
        _non_negative_int(number, "a number of tolerable failed checkpoints", "0 fails over at the first failure")
        self._config.set(CheckpointingOptions.TOLERABLE_FAILURE_NUMBER, number)

    def get_tolerable_checkpoint_failure_number(self) -> int:
        return self._config.get(CheckpointingOptions.TOLERABLE_FAILURE_NUMBER)

    def set_fail_on_checkpointing_errors(self, fail_on_checkpointing_errors: bool) -> None:
        """Flink's deprecated form of :meth:`set_tolerable_checkpoint_failure_number`: ``True`` is 0 tolerated
        failures, ``False`` tolerates any number (Java's ``Integer.MAX_VALUE``)."""
        self.set_tolerable_checkpoint_failure_number(0 if fail_on_checkpointing_errors else _JAVA_INT_MAX)

    def is_fail_on_checkpointing_errors(self) -> bool:
        return self.get_tolerable_checkpoint_failure_number() == 0

    # -- storage and retention ---------------------------------------------------------------------
    def set_checkpoint_storage(self, directory: str) -> None:
        """Where checkpoints go: a directory URI (``file://``, ``s3://``, ``memory://``) or a local path."""
        if not isinstance(directory, str) or not directory:
            raise InvalidProgramError(
                f"expected a checkpoint directory URI; got {directory!r}; hint: 'file:///tmp/checkpoints'"
            )
        self._config.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, directory)

    def set_externalized_checkpoint_retention(self, retention: ExternalizedCheckpointRetention) -> None:
        if not isinstance(retention, ExternalizedCheckpointRetention):
            raise InvalidProgramError(
                f"expected an ExternalizedCheckpointRetention; got {retention!r}; "
                "hint: ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION keeps checkpoints for a manual restore"
            )
        self._config.set(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION, retention.value)

    def get_externalized_checkpoint_retention(self) -> ExternalizedCheckpointRetention:
        return ExternalizedCheckpointRetention.parse(
            self._config.get(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION)
        )

    def is_externalized_checkpoints_enabled(self) -> bool:
        """Whether completed checkpoints outlive a failed or cancelled job (any retention but NO_EXTERNALIZED)."""
        retention = self.get_externalized_checkpoint_retention()
        return retention is not ExternalizedCheckpointRetention.NO_EXTERNALIZED_CHECKPOINTS

    def set_max_retained_checkpoints(self, number: int) -> None:
        if _non_negative_int(number, "a number of retained checkpoints", "1 or more") < 1:
            raise InvalidProgramError("expected at least 1 retained checkpoint; got 0; hint: 1 is the default")
        self._config.set(CheckpointingOptions.MAX_RETAINED_CHECKPOINTS, number)

    def enable_unaligned_checkpoints(self, enabled: bool = True) -> None:
        self._config.set(CheckpointingOptions.ENABLE_UNALIGNED, bool(enabled))

    def disable_unaligned_checkpoints(self) -> None:
        self.enable_unaligned_checkpoints(False)

    def is_unaligned_checkpoints_enabled(self) -> bool:
        return self._config.get(CheckpointingOptions.ENABLE_UNALIGNED)

    def set_aligned_checkpoint_timeout(self, alignment_timeout: int | timedelta | str) -> None:
        """With unaligned checkpoints: start each checkpoint aligned and switch it to unaligned in a task whose
        alignment takes longer than ``alignment_timeout`` (milliseconds, a ``timedelta``/``Duration`` or
        ``"200 ms"``); 0 (the default) starts every checkpoint unaligned."""
        self._set_duration(
            CheckpointingOptions.ALIGNED_CHECKPOINT_TIMEOUT,
            alignment_timeout,
            "an aligned checkpoint timeout",
            "Duration.of_millis(200) starts checkpoints aligned and switches them to unaligned after 200 ms",
        )

    def get_aligned_checkpoint_timeout(self) -> Duration:
        return Duration.of_millis(millis(self._config.get(CheckpointingOptions.ALIGNED_CHECKPOINT_TIMEOUT)))

    def set_alignment_timeout(self, alignment_timeout: int | timedelta | str) -> None:
        """Flink's deprecated name of :meth:`set_aligned_checkpoint_timeout`."""
        self.set_aligned_checkpoint_timeout(alignment_timeout)

    def get_alignment_timeout(self) -> Duration:
        """Flink's deprecated name of :meth:`get_aligned_checkpoint_timeout`."""
        return self.get_aligned_checkpoint_timeout()
