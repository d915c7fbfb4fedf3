"""Flink's restart strategies (``RestartBackoffTimeStrategy``) as pure state machines.

The scheduler tells a strategy about each failure (:meth:`~RestartBackoffTimeStrategy.notify_failure`), then
asks whether the job may restart (:meth:`~RestartBackoffTimeStrategy.can_restart`) and how many milliseconds to
wait first (:meth:`~RestartBackoffTimeStrategy.get_backoff_time`). Strategies read no clock and never sleep: the
time of each failure comes in as ``now_ms`` (a monotonic clock in milliseconds), and ``can_restart`` /
``get_backoff_time`` answer for the time of the latest failure, which is when Flink's ``ExecutionFailureHandler``
asks them.

    >>> strategy = FixedDelayRestartBackoffTimeStrategy(max_attempts=1, backoff_ms=500)
    >>> strategy.notify_failure("boom", now_ms=0), strategy.can_restart(), strategy.get_backoff_time()
    (True, True, 500)
    >>> strategy.notify_failure("boom again", now_ms=900), strategy.can_restart()
    (True, False)
    >>> describe_exhausted(strategy)  # doctest: +NORMALIZE_WHITESPACE
    'the restart strategy fixed-delay (1 attempt, 500 ms delay) allows no further restart;
     hint: raise restart-strategy.fixed-delay.attempts or fix the cause above'

:func:`restart_strategy_from_configuration` builds one from the ``restart-strategy.*`` options
(:class:`strom.config.RestartStrategyOptions`) as Flink's ``RestartBackoffTimeStrategyFactoryLoader`` does.
"""

from __future__ import annotations

import difflib
import math
import random
from abc import ABC, abstractmethod
from collections import deque
from typing import Any, ClassVar

from strom.config import ConfigOption, Configuration, RestartStrategyOptions, millis
from strom.exceptions import ConfigurationError

__all__ = [
    "UNBOUNDED_ATTEMPTS",
    "ExponentialDelayRestartBackoffTimeStrategy",
    "FailureRateRestartBackoffTimeStrategy",
    "FixedDelayRestartBackoffTimeStrategy",
    "NoRestartBackoffTimeStrategy",
    "RestartBackoffTimeStrategy",
    "describe_exhausted",
    "describe_unbounded",
    "restart_strategy_from_configuration",
]

_O = RestartStrategyOptions

#: ``restart-strategy.type`` values (lower case) and the strategy each names, as Flink's ``RestartStrategyType``.
_TYPE_ALIASES: dict[str, str] = {
    "none": "none",
    "off": "none",
    "disable": "none",
    "fixed-delay": "fixed-delay",
    "fixeddelay": "fixed-delay",
    "failure-rate": "failure-rate",
    "failurerate": "failure-rate",
    "exponential-delay": "exponential-delay",
    "exponentialdelay": "exponential-delay",
}

#: Attempts from which a strategy counts as unbounded: Java's ``Integer.MAX_VALUE``, the default of
#: ``exponential-delay.attempts-before-reset-backoff`` (and of Flink's old fixed-delay default with checkpointing).
UNBOUNDED_ATTEMPTS = 2**31 - 1

#: Raw exponential backoffs saturate here (Java's ``(long)`` of a huge double does the same near 2**63).
_RAW_BACKOFF_CAP_MS = 2**62


class RestartBackoffTimeStrategy(ABC):
    """Decides whether a failed job may restart and after how long (Flink's ``RestartBackoffTimeStrategy``)."""

    #: The canonical ``restart-strategy.type`` value of this strategy.
    NAME: ClassVar[str]
    #: What the user can change when the strategy allows no further restart.
    EXHAUSTED_HINT: ClassVar[str]
    #: how to bound the strategy when :meth:`restarts_forever`
    BOUND_HINT: ClassVar[str] = ""

    def __init__(self) -> None:
        self._now_ms: int | None = None

    def notify_failure(self, cause: BaseException | str | None, now_ms: int) -> bool:
        """Record a failure at ``now_ms``; ``True`` if it starts a new restart attempt.

        ``False`` means it was merged into the attempt already scheduled (only ``exponential-delay`` merges
        failures that arrive before its pending restart, as Flink 1.19 does). ``cause`` is informational.
        """
        if self._now_ms is not None and now_ms < self._now_ms:
            raise ValueError(
                f"expected failure times that never decrease; got now_ms={now_ms} after {self._now_ms}; "
                "hint: feed restart strategies from a monotonic clock"
            )
        self._now_ms = now_ms
        return self._on_failure(now_ms)

    @abstractmethod
    def _on_failure(self, now_ms: int) -> bool: ...

    @abstractmethod
    def can_restart(self) -> bool:
        """Whether the job may restart after the failures notified so far."""

    @abstractmethod
    def get_backoff_time(self) -> int:
        """Milliseconds to wait, counted from the latest failure, before restarting."""

    @abstractmethod
    def describe(self) -> str:
        """The strategy and its parameters for messages, e.g. ``fixed-delay (3 attempts, 1000 ms delay)``."""

    def restarts_forever(self) -> bool:
        """Whether a failure that recurs right after every restart — a bad record replayed from the checkpoint
        — would restart the job without end instead of failing it."""
        return False

    def validate(self) -> None:
        """Assert the strategy's invariants (for tests; cheap)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.describe()})"


def describe_exhausted(strategy: RestartBackoffTimeStrategy) -> str:
    """The user-facing reason a job fails because ``strategy`` allows no further restart."""
    return f"the restart strategy {strategy.describe()} allows no further restart; hint: {strategy.EXHAUSTED_HINT}"


def describe_unbounded(strategy: RestartBackoffTimeStrategy) -> str:
    """The warning for a checkpointing job whose ``strategy`` :meth:`~RestartBackoffTimeStrategy.restarts_forever`."""
    return (
        f"the restart strategy {strategy.describe()} restarts the job forever when a failure recurs after every "
        f"restart (a bad record replayed from the checkpoint) instead of failing it; hint: {strategy.BOUND_HINT}"
    )


class NoRestartBackoffTimeStrategy(RestartBackoffTimeStrategy):
    """Never restart: the first failure fails the job (``restart-strategy.type: none``)."""

    NAME = "none"
    EXHAUSTED_HINT = (
        f"set {_O.RESTART_STRATEGY.key} to fixed-delay, failure-rate or exponential-delay "
        "to restart failed jobs, or fix the cause above"
    )

    def _on_failure(self, now_ms: int) -> bool:
        return True

    def can_restart(self) -> bool:
        return False

    def get_backoff_time(self) -> int:
        return 0

    def describe(self) -> str:
        return "none (no restarts)"


class FixedDelayRestartBackoffTimeStrategy(RestartBackoffTimeStrategy):
    """Restart at most ``max_attempts`` times, waiting ``backoff_ms`` before each restart."""

    NAME = "fixed-delay"
    EXHAUSTED_HINT = f"raise {_O.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS.key} or fix the cause above"
    BOUND_HINT = f"set {_O.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS.key} to a few attempts"

    def __init__(self, max_attempts: int, backoff_ms: int) -> None:
        super().__init__()
        _require(max_attempts >= 0, _O.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, "a number >= 0", max_attempts)
        _require(backoff_ms >= 0, _O.RESTART_STRATEGY_FIXED_DELAY_DELAY, "milliseconds >= 0", backoff_ms)
        self.max_attempts = max_attempts
        self.backoff_ms = backoff_ms
        self._attempt = 0

    @property
    def current_restart_attempt(self) -> int:
        """Failures notified so far."""
        return self._attempt

    def _on_failure(self, now_ms: int) -> bool:
        self._attempt += 1
        return True

    def can_restart(self) -> bool:
        return self._attempt <= self.max_attempts

    def get_backoff_time(self) -> int:
        return self.backoff_ms

    def describe(self) -> str:
        return f"fixed-delay ({_plural(self.max_attempts, 'attempt')}, {self.backoff_ms} ms delay)"

    def restarts_forever(self) -> bool:
        return self.max_attempts >= UNBOUNDED_ATTEMPTS

    def validate(self) -> None:
        assert self._attempt >= 0


class FailureRateRestartBackoffTimeStrategy(RestartBackoffTimeStrategy):
    """Restart unless more than ``max_failures_per_interval`` failures fall within ``interval_ms``.

    As Flink, the timestamps of the latest ``max_failures_per_interval + 1`` failures are kept; once that many
    are kept, a restart is allowed only if the oldest lies more than ``interval_ms`` before the latest.
    """

    NAME = "failure-rate"
    EXHAUSTED_HINT = (
        f"raise {_O.RESTART_STRATEGY_FAILURE_RATE_MAX_FAILURES_PER_INTERVAL.key} or shorten "
        f"{_O.RESTART_STRATEGY_FAILURE_RATE_FAILURE_RATE_INTERVAL.key}, or fix the cause above"
    )
    BOUND_HINT = (
        f"lengthen {_O.RESTART_STRATEGY_FAILURE_RATE_FAILURE_RATE_INTERVAL.key} beyond max-failures-per-interval "
        f"times {_O.RESTART_STRATEGY_FAILURE_RATE_DELAY.key}"
    )

    def __init__(self, max_failures_per_interval: int, interval_ms: int, backoff_ms: int) -> None:
        super().__init__()
        _require(
            max_failures_per_interval > 0,
            _O.RESTART_STRATEGY_FAILURE_RATE_MAX_FAILURES_PER_INTERVAL,
            "a number > 0",
            max_failures_per_interval,
        )
        _require(
            interval_ms > 0, _O.RESTART_STRATEGY_FAILURE_RATE_FAILURE_RATE_INTERVAL, "milliseconds > 0", interval_ms
        )
        _require(backoff_ms >= 0, _O.RESTART_STRATEGY_FAILURE_RATE_DELAY, "milliseconds >= 0", backoff_ms)
        self.max_failures_per_interval = max_failures_per_interval
        self.interval_ms = interval_ms
        self.backoff_ms = backoff_ms
        self._failure_timestamps: deque[int] = deque()

    @property
    def failure_timestamps(self) -> tuple[int, ...]:
        """Times of the failures still in the window (at most ``max_failures_per_interval + 1``)."""
        return tuple(self._failure_timestamps)

    def _is_full(self) -> bool:
        return len(self._failure_timestamps) > self.max_failures_per_interval

    def _on_failure(self, now_ms: int) -> bool:
        if self._is_full():
            self._failure_timestamps.popleft()
        self._failure_timestamps.append(now_ms)
        return True

    def can_restart(self) -> bool:
        if not self._is_full() or self._now_ms is None:
            return True
        return self._now_ms - self._failure_timestamps[0] > self.interval_ms

    def get_backoff_time(self) -> int:
        return self.backoff_ms

    def restarts_forever(self) -> bool:
        # a failure right after each restart comes every backoff_ms at the soonest: when the allowed failures
        # span more than the interval, the oldest has always left the window by the time the next one comes
        return self.max_failures_per_interval * self.backoff_ms > self.interval_ms

    def describe(self) -> str:
        return (
            f"failure-rate (at most {_plural(self.max_failures_per_interval, 'failure')} per {self.interval_ms} ms, "
            f"{self.backoff_ms} ms delay)"
        )

    def validate(self) -> None:
        stamps = list(self._failure_timestamps)
        assert len(stamps) <= self.max_failures_per_interval + 1, stamps
        assert stamps == sorted(stamps), stamps


class ExponentialDelayRestartBackoffTimeStrategy(RestartBackoffTimeStrategy):
    """Restart with a backoff that grows by ``multiplier`` per attempt up to ``max_ms`` (Flink 1.19 semantics).

    Attempt ``n`` (from 0) waits ``initial_ms · multiplier**n`` plus a random jitter of up to ``± jitter_factor``
    of that, clamped to ``[initial_ms, max_ms]``. Failures before the pending restart is due are merged into
    its attempt. A failure ``reset_threshold_ms`` or more after the previous restart was due resets the attempt
    count (and so the backoff). More than ``attempts_before_reset`` attempts without a reset fail the job.
    """

    NAME = "exponential-delay"
    EXHAUSTED_HINT = f"raise {_O.RESTART_STRATEGY_EXPONENTIAL_DELAY_ATTEMPTS.key} or fix the cause above"
    BOUND_HINT = f"set {_O.RESTART_STRATEGY_EXPONENTIAL_DELAY_ATTEMPTS.key} to a few attempts, e.g. 10"

    def __init__(
        self,
        initial_ms: int,
        max_ms: int,
        multiplier: float,
        reset_threshold_ms: int,
        jitter_factor: float,
        attempts_before_reset: int,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__()
        _require(
            initial_ms >= 1, _O.RESTART_STRATEGY_EXPONENTIAL_DELAY_INITIAL_BACKOFF, "milliseconds >= 1", initial_ms
        )
        _require(max_ms >= 1, _O.RESTART_STRATEGY_EXPONENTIAL_DELAY_MAX_BACKOFF, "milliseconds >= 1", max_ms)
        _require(
            initial_ms <= max_ms,
            _O.RESTART_STRATEGY_EXPONENTIAL_DELAY_MAX_BACKOFF,
            f"at least the initial backoff ({initial_ms} ms)",
            max_ms,
        )
        _require(multiplier > 1, _O.RESTART_STRATEGY_EXPONENTIAL_DELAY_BACKOFF_MULTIPLIER, "a number > 1", multiplier)
        _require(
            reset_threshold_ms >= 1,
            _O.RESTART_STRATEGY_EXPONENTIAL_DELAY_RESET_BACKOFF_THRESHOLD,
            "milliseconds >= 1",
            reset_threshold_ms,
        )
        _require(0 <= jitter_factor <= 1, _O.RESTART_STRATEGY_EXPONENTIAL_DELAY_JITTER_FACTOR, "0 to 1", jitter_factor)
        _require(
            attempts_before_reset >= 1,
            _O.RESTART_STRATEGY_EXPONENTIAL_DELAY_ATTEMPTS,
            "a number >= 1",
            attempts_before_reset,
        )
        self.initial_ms = initial_ms
        self.max_ms = max_ms
        self.multiplier = multiplier
        self.reset_threshold_ms = reset_threshold_ms
        self.jitter_factor = jitter_factor
        self.attempts_before_reset = attempts_before_reset
        self._rng = rng if rng is not None else random.Random()
        self._attempt = 0
        self._next_restart_ms: int | None = None

    @property
    def current_restart_attempt(self) -> int:
        """Attempts since the last reset."""
        return self._attempt

    @property
    def next_restart_ms(self) -> int | None:
        """When the pending restart is due; ``None`` before the first failure."""
        return self._next_restart_ms

    def _on_failure(self, now_ms: int) -> bool:
        if self._next_restart_ms is not None and now_ms <= self._next_restart_ms:
            return False  # the restart for an earlier failure is still pending: same attempt
        if self._next_restart_ms is None or now_ms - self._next_restart_ms >= self.reset_threshold_ms:
            self._attempt = 0
        self._next_restart_ms = now_ms + self._actual_backoff()
        self._attempt += 1
        return True

    def _actual_backoff(self) -> int:
        if self._attempt * math.log(self.multiplier) >= math.log(_RAW_BACKOFF_CAP_MS / self.initial_ms):
            raw = _RAW_BACKOFF_CAP_MS
        else:
            raw = int(self.initial_ms * self.multiplier**self._attempt)
        jitter = 0
        if self.jitter_factor > 0:
            offset = int(raw * self.jitter_factor)
            jitter = self._rng.randint(-offset, offset)
        return max(self.initial_ms, min(raw + jitter, self.max_ms))

    def can_restart(self) -> bool:
        return self._attempt <= self.attempts_before_reset

    def get_backoff_time(self) -> int:
        if self._next_restart_ms is None or self._now_ms is None:
            raise RuntimeError(
                "expected notify_failure() before get_backoff_time(); got no failure yet; "
                "hint: the backoff is measured from the latest failure"
            )
        return max(0, self._next_restart_ms - self._now_ms)

    def restarts_forever(self) -> bool:
        return self.attempts_before_reset >= UNBOUNDED_ATTEMPTS

    def describe(self) -> str:
        return (
            f"exponential-delay ({self.initial_ms} ms initial backoff, {self.max_ms} ms max backoff, "
            f"multiplier {self.multiplier:g}, reset after {self.reset_threshold_ms} ms, jitter {self.jitter_factor:g}, "
            f"{_plural(self.attempts_before_reset, 'attempt')} before reset)"
        )

    def validate(self) -> None:
        assert self._attempt >= 0
        assert (self._next_restart_ms is None) == (self._attempt == 0), (self._next_restart_ms, self._attempt)


def restart_strategy_from_configuration(
    config: Configuration, *, checkpointing_enabled: bool, rng: random.Random | None = None
) -> RestartBackoffTimeStrategy:
    """A fresh strategy for one job from ``restart-strategy.*`` (Flink's ``RestartBackoffTimeStrategyFactoryLoader``).

    With ``restart-strategy.type`` empty, checkpointing jobs get ``exponential-delay`` with the *default* values
    of its options (as Flink, the configured ``exponential-delay.*`` values apply only when the type names it);
    other jobs get ``none``. ``rng`` seeds the exponential jitter (tests).
    """
    raw_type = config.get(_O.RESTART_STRATEGY)
    name = raw_type.strip().lower()
    if not name:
        if checkpointing_enabled:
            return _exponential_delay(Configuration(), rng)
        return NoRestartBackoffTimeStrategy()
    kind = _TYPE_ALIASES.get(name)
    if kind is None:
        near = difflib.get_close_matches(name, list(_TYPE_ALIASES), n=1)
        hint = (
            f"did you mean '{_TYPE_ALIASES[near[0]]}'?"
            if near
            else "leave it empty for the default (exponential-delay with checkpointing, else none)"
        )
        raise ConfigurationError(
            f"expected one of none, fixed-delay, failure-rate, exponential-delay for {_O.RESTART_STRATEGY.key}; "
            f"got {raw_type!r}; hint: {hint}"
        )
    if kind == "none":
        return NoRestartBackoffTimeStrategy()
    if kind == "fixed-delay":
        return FixedDelayRestartBackoffTimeStrategy(
            max_attempts=config.get(_O.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS),
            backoff_ms=millis(config.get(_O.RESTART_STRATEGY_FIXED_DELAY_DELAY)),
        )
    if kind == "failure-rate":
        return FailureRateRestartBackoffTimeStrategy(
            max_failures_per_interval=config.get(_O.RESTART_STRATEGY_FAILURE_RATE_MAX_FAILURES_PER_INTERVAL),
            interval_ms=millis(config.get(_O.RESTART_STRATEGY_FAILURE_RATE_FAILURE_RATE_INTERVAL)),
            backoff_ms=millis(config.get(_O.RESTART_STRATEGY_FAILURE_RATE_DELAY)),
        )
    return _exponential_delay(config, rng)


def _exponential_delay(config: Configuration, rng: random.Random | None) -> ExponentialDelayRestartBackoffTimeStrategy:
    get = config.get
    return ExponentialDelayRestartBackoffTimeStrategy(
        initial_ms=millis(get(_O.RESTART_STRATEGY_EXPONENTIAL_DELAY_INITIAL_BACKOFF)),
        max_ms=millis(get(_O.RESTART_STRATEGY_EXPONENTIAL_DELAY_MAX_BACKOFF)),
        multiplier=get(_O.RESTART_STRATEGY_EXPONENTIAL_DELAY_BACKOFF_MULTIPLIER),
        reset_threshold_ms=millis(get(_O.RESTART_STRATEGY_EXPONENTIAL_DELAY_RESET_BACKOFF_THRESHOLD)),
        jitter_factor=get(_O.RESTART_STRATEGY_EXPONENTIAL_DELAY_JITTER_FACTOR),
        attempts_before_reset=get(_O.RESTART_STRATEGY_EXPONENTIAL_DELAY_ATTEMPTS),
        rng=rng,
    )


def _require(ok: bool, option: ConfigOption[Any], expected: str, got: object) -> None:
    if not ok:
        raise ConfigurationError(
            f"expected {expected} for {option.key}; got {got!r}; hint: the default is {option.format_default()}"
        )


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
