"""Restart strategies as pure state machines: failure times in, can_restart / backoff out."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strom.config import Configuration, RestartStrategyOptions
from strom.exceptions import ConfigurationError
from strom.runtime.scheduler.restart_strategy import (
    ExponentialDelayRestartBackoffTimeStrategy,
    FailureRateRestartBackoffTimeStrategy,
    FixedDelayRestartBackoffTimeStrategy,
    NoRestartBackoffTimeStrategy,
    RestartBackoffTimeStrategy,
    describe_exhausted,
    describe_unbounded,
    restart_strategy_from_configuration,
)

pytestmark = pytest.mark.timeout(60)


def _feed(strategy: RestartBackoffTimeStrategy, times: list[int]) -> list[tuple[bool, int]]:
    """Notify a failure at each time; collect (can_restart, backoff) right after each, as the scheduler asks."""
    out = []
    for t in times:
        strategy.notify_failure(RuntimeError("boom"), t)
        strategy.validate()
        out.append((strategy.can_restart(), strategy.get_backoff_time()))
    return out


def _exponential(**kw: object) -> ExponentialDelayRestartBackoffTimeStrategy:
    args: dict[str, object] = {
        "initial_ms": 1000,
        "max_ms": 60_000,
        "multiplier": 2.0,
        "reset_threshold_ms": 3_600_000,
        "jitter_factor": 0.0,
        "attempts_before_reset": 2_147_483_647,
        "rng": random.Random(7),
    }
    args.update(kw)
    return ExponentialDelayRestartBackoffTimeStrategy(**args)  # type: ignore[arg-type]


# --- none -----------------------------------------------------------------------------------------------------


def test_no_restart_never_restarts() -> None:
    s = NoRestartBackoffTimeStrategy()
    assert _feed(s, [0]) == [(False, 0)]
    assert s.describe() == "none (no restarts)"
    assert "set restart-strategy.type" in describe_exhausted(s)


# --- fixed-delay ----------------------------------------------------------------------------------------------


def test_fixed_delay_counts_attempts() -> None:
    s = FixedDelayRestartBackoffTimeStrategy(max_attempts=3, backoff_ms=1000)
    assert _feed(s, [0, 10, 20, 30]) == [(True, 1000), (True, 1000), (True, 1000), (False, 1000)]
    assert s.current_restart_attempt == 4


def test_fixed_delay_time_does_not_matter() -> None:
    s = FixedDelayRestartBackoffTimeStrategy(max_attempts=1, backoff_ms=5)
    assert [c for c, _ in _feed(s, [0, 10**12])] == [True, False]


def test_fixed_delay_zero_attempts_fails_on_first_failure() -> None:
    s = FixedDelayRestartBackoffTimeStrategy(max_attempts=0, backoff_ms=0)
    assert _feed(s, [0]) == [(False, 0)]


def test_fixed_delay_messages() -> None:
    s = FixedDelayRestartBackoffTimeStrategy(max_attempts=3, backoff_ms=1000)
    assert s.describe() == "fixed-delay (3 attempts, 1000 ms delay)"
    assert describe_exhausted(s) == (
        "the restart strategy fixed-delay (3 attempts, 1000 ms delay) allows no further restart; "
        "hint: raise restart-strategy.fixed-delay.attempts or fix the cause above"
    )
    assert FixedDelayRestartBackoffTimeStrategy(max_attempts=1, backoff_ms=0).describe() == (
        "fixed-delay (1 attempt, 0 ms delay)"
    )


# --- failure-rate ---------------------------------------------------------------------------------------------


def test_failure_rate_allows_max_failures_within_interval() -> None:
    s = FailureRateRestartBackoffTimeStrategy(max_failures_per_interval=2, interval_ms=100, backoff_ms=7)
    assert _feed(s, [0, 10, 20]) == [(True, 7), (True, 7), (False, 7)]


def test_failure_rate_window_boundary_is_exclusive() -> None:
    # Three failures (max 2 + 1): allowed only if the oldest lies *more* than interval_ms before the newest.
    at_boundary = FailureRateRestartBackoffTimeStrategy(max_failures_per_interval=2, interval_ms=100, backoff_ms=0)
    assert [c for c, _ in _feed(at_boundary, [0, 50, 100])] == [True, True, False]
    past_boundary = FailureRateRestartBackoffTimeStrategy(max_failures_per_interval=2, interval_ms=100, backoff_ms=0)
    assert [c for c, _ in _feed(past_boundary, [0, 50, 101])] == [True, True, True]


def test_failure_rate_window_slides() -> None:
    s = FailureRateRestartBackoffTimeStrategy(max_failures_per_interval=2, interval_ms=100, backoff_ms=0)
    verdicts = [c for c, _ in _feed(s, [0, 60, 120, 180, 200, 400])]
    # 120: {0,60,120} spans 120 > 100 -> ok; 180: {60,120,180} spans 120 -> ok;
    # 200: {120,180,200} spans 80 -> too many; 400: {180,200,400} spans 220 -> ok again.
    assert verdicts == [True, True, True, True, False, True]
    assert s.failure_timestamps == (180, 200, 400)


def test_failure_rate_default_one_failure_per_interval() -> None:
    s = FailureRateRestartBackoffTimeStrategy(max_failures_per_interval=1, interval_ms=60_000, backoff_ms=1000)
    assert [c for c, _ in _feed(s, [0, 60_000])] == [True, False]
    s = FailureRateRestartBackoffTimeStrategy(max_failures_per_interval=1, interval_ms=60_000, backoff_ms=1000)
    assert [c for c, _ in _feed(s, [0, 60_001])] == [True, True]


def test_failure_rate_messages() -> None:
    s = FailureRateRestartBackoffTimeStrategy(max_failures_per_interval=1, interval_ms=60_000, backoff_ms=1000)
    assert s.describe() == "failure-rate (at most 1 failure per 60000 ms, 1000 ms delay)"
    assert "restart-strategy.failure-rate.max-failures-per-interval" in describe_exhausted(s)


def test_failure_times_must_not_decrease() -> None:
    s = FailureRateRestartBackoffTimeStrategy(max_failures_per_interval=1, interval_ms=10, backoff_ms=0)
    s.notify_failure(None, 100)
    with pytest.raises(ValueError, match="monotonic clock"):
        s.notify_failure(None, 99)


# --- exponential-delay ----------------------------------------------------------------------------------------


def test_exponential_grows_and_caps() -> None:
    s = _exponential(initial_ms=1000, max_ms=10_000, multiplier=2.0)
    backoffs = []
    t = 0
    for _ in range(7):
        s.notify_failure("boom", t)
        s.validate()
        assert s.can_restart()
        backoffs.append(s.get_backoff_time())
        t += s.get_backoff_time() + 1  # fail again right after each restart
    assert backoffs == [1000, 2000, 4000, 8000, 10_000, 10_000, 10_000]


def test_exponential_multiplier_truncates_like_flink() -> None:
    s = _exponential(initial_ms=1000, max_ms=60_000, multiplier=1.5)
    got = []
    t = 0
    for _ in range(4):
        s.notify_failure(None, t)
        got.append(s.get_backoff_time())
        t += got[-1] + 1
    assert got == [1000, 1500, 2250, 3375]


def test_exponential_merges_failures_before_pending_restart() -> None:
    s = _exponential(initial_ms=1000, multiplier=2.0)
    assert s.notify_failure("task 1", 0) is True
    assert s.get_backoff_time() == 1000
    # Other tasks of the same failover fail while the restart is pending: same attempt, remaining backoff.
    assert s.notify_failure("task 2", 400) is False
    assert s.get_backoff_time() == 600
    assert s.notify_failure("task 3", 1000) is False  # exactly when due: still merged (now <= next restart)
    assert s.get_backoff_time() == 0
    assert s.current_restart_attempt == 1
    assert s.notify_failure("after restart", 1001) is True
    assert s.get_backoff_time() == 2000
    assert s.current_restart_attempt == 2


def test_exponential_resets_after_threshold() -> None:
    s = _exponential(initial_ms=1000, multiplier=2.0, reset_threshold_ms=10_000)
    s.notify_failure(None, 0)  # due at 1000
    s.notify_failure(None, 1001)  # due at 3001
    s.notify_failure(None, 3002)  # backoff 4000, due at 7002
    assert s.get_backoff_time() == 4000
    # Just under the threshold after the pending restart was due: keeps growing.
    s.notify_failure(None, 7002 + 9_999)  # 8000, due at 25001
    assert s.get_backoff_time() == 8000
    # At the threshold: back to the initial backoff and the attempt count restarts.
    s.notify_failure(None, 25_001 + 10_000)
    assert s.get_backoff_time() == 1000
    assert s.current_restart_attempt == 1
    s.validate()


def test_exponential_attempts_before_reset_limit() -> None:
    s = _exponential(initial_ms=10, multiplier=2.0, attempts_before_reset=2, reset_threshold_ms=1000)
    verdicts = []
    t = 0
    for _ in range(3):
        s.notify_failure(None, t)
        verdicts.append(s.can_restart())
        t += s.get_backoff_time() + 1
    assert verdicts == [True, True, False]
    assert describe_exhausted(s).endswith(
        "hint: raise restart-strategy.exponential-delay.attempts-before-reset-backoff or fix the cause above"
    )
    # A quiet period resets the count: the job may restart again.
    s.notify_failure(None, t + 10_000)
    assert s.can_restart()


def test_exponential_jitter_bounds_with_seeded_rng() -> None:
    seen = set()
    for seed in range(200):
        s = _exponential(initial_ms=1000, max_ms=100_000, multiplier=2.0, jitter_factor=0.25, rng=random.Random(seed))
        s.notify_failure(None, 0)  # attempt 0: 1000 ± 250, clamped below at the initial backoff
        first = s.get_backoff_time()
        assert 1000 <= first <= 1250
        s.notify_failure(None, first + 1)  # attempt 1: 2000 ± 500
        second = s.get_backoff_time()
        assert 1500 <= second <= 2500
        seen.add(second)
    assert len(seen) > 50  # jitter really varies


def test_exponential_jitter_is_reproducible() -> None:
    def run(seed: int) -> list[int]:
        s = _exponential(jitter_factor=0.5, rng=random.Random(seed))
        out, t = [], 0
        for _ in range(5):
            s.notify_failure(None, t)
            out.append(s.get_backoff_time())
            t += out[-1] + 1
        return out

    assert run(3) == run(3)


def test_exponential_huge_attempt_count_saturates() -> None:
    s = _exponential(initial_ms=1, max_ms=5000, multiplier=10.0, jitter_factor=1.0)
    t = 0
    for _ in range(400):  # 10**400 overflows a float; the backoff saturates instead
        s.notify_failure(None, t)
        assert 1 <= s.get_backoff_time() <= 5000
        t += s.get_backoff_time() + 1


def test_exponential_backoff_needs_a_failure_first() -> None:
    with pytest.raises(RuntimeError, match="notify_failure"):
        _exponential().get_backoff_time()


def test_exponential_describe() -> None:
    s = _exponential(initial_ms=1000, max_ms=60_000, multiplier=1.5, jitter_factor=0.1)
    assert s.describe() == (
        "exponential-delay (1000 ms initial backoff, 60000 ms max backoff, multiplier 1.5, reset after 3600000 ms, "
        "jitter 0.1, 2147483647 attempts before reset)"
    )


@settings(max_examples=200, deadline=None)
@given(
    initial=st.integers(1, 10_000),
    extra=st.integers(0, 1_000_000),
    multiplier=st.floats(1.001, 10.0),
    jitter=st.floats(0.0, 1.0),
    reset=st.integers(1, 10**7),
    gaps=st.lists(st.integers(0, 10**7), min_size=1, max_size=40),
    rng=st.randoms(use_true_random=False),
)
def test_exponential_backoff_within_bounds(
    initial: int,
    extra: int,
    multiplier: float,
    jitter: float,
    reset: int,
    gaps: list[int],
    rng: random.Random,
) -> None:
    max_ms = initial + extra
    s = ExponentialDelayRestartBackoffTimeStrategy(
        initial_ms=initial,
        max_ms=max_ms,
        multiplier=multiplier,
        reset_threshold_ms=reset,
        jitter_factor=jitter,
        attempts_before_reset=2_147_483_647,
        rng=rng,
    )
    t = 0
    for gap in gaps:
        t += gap
        new_attempt = s.notify_failure(None, t)
        s.validate()
        backoff = s.get_backoff_time()
        if new_attempt:
            assert initial * (1 - jitter) <= backoff <= max_ms * (1 + jitter)
            assert initial <= backoff <= max_ms  # Flink clamps the jittered backoff
        else:
            assert 0 <= backoff <= max_ms


# --- configuration --------------------------------------------------------------------------------------------


def test_default_with_checkpointing_is_exponential_delay_with_defaults() -> None:
    conf = Configuration({"restart-strategy.exponential-delay.initial-backoff": 5})  # ignored, as in Flink
    s = restart_strategy_from_configuration(conf, checkpointing_enabled=True)
    assert isinstance(s, ExponentialDelayRestartBackoffTimeStrategy)
    assert (s.initial_ms, s.max_ms, s.multiplier, s.reset_threshold_ms, s.jitter_factor, s.attempts_before_reset) == (
        1000,
        60_000,
        1.5,
        3_600_000,
        0.1,
        2_147_483_647,
    )


def test_default_without_checkpointing_is_none() -> None:
    s = restart_strategy_from_configuration(Configuration(), checkpointing_enabled=False)
    assert isinstance(s, NoRestartBackoffTimeStrategy)


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("none", NoRestartBackoffTimeStrategy),
        ("off", NoRestartBackoffTimeStrategy),
        ("Disable", NoRestartBackoffTimeStrategy),
        ("fixed-delay", FixedDelayRestartBackoffTimeStrategy),
        ("FixedDelay", FixedDelayRestartBackoffTimeStrategy),
        ("failure-rate", FailureRateRestartBackoffTimeStrategy),
        ("failurerate", FailureRateRestartBackoffTimeStrategy),
        ("EXPONENTIAL-DELAY", ExponentialDelayRestartBackoffTimeStrategy),
        ("exponentialdelay", ExponentialDelayRestartBackoffTimeStrategy),
    ],
)
def test_type_aliases(value: str, kind: type[RestartBackoffTimeStrategy]) -> None:
    conf = Configuration({"restart-strategy.type": value})
    for checkpointing in (False, True):
        assert type(restart_strategy_from_configuration(conf, checkpointing_enabled=checkpointing)) is kind


def test_fixed_delay_from_configuration() -> None:
    conf = Configuration(
        {
            "restart-strategy.type": "fixed-delay",
            "restart-strategy.fixed-delay.attempts": "3",
            "restart-strategy.fixed-delay.delay": 250,
        }
    )
    s = restart_strategy_from_configuration(conf, checkpointing_enabled=False)
    assert isinstance(s, FixedDelayRestartBackoffTimeStrategy)
    assert (s.max_attempts, s.backoff_ms) == (3, 250)


def test_failure_rate_from_configuration() -> None:
    conf = Configuration({"restart-strategy.type": "failure-rate"})
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FAILURE_RATE_MAX_FAILURES_PER_INTERVAL, 4)
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FAILURE_RATE_FAILURE_RATE_INTERVAL, 5000)
    s = restart_strategy_from_configuration(conf, checkpointing_enabled=True)
    assert isinstance(s, FailureRateRestartBackoffTimeStrategy)
    assert (s.max_failures_per_interval, s.interval_ms, s.backoff_ms) == (4, 5000, 1000)


def test_exponential_from_configuration_with_seeded_rng() -> None:
    conf = Configuration(
        {
            "restart-strategy.type": "exponential-delay",
            "restart-strategy.exponential-delay.initial-backoff": 10,
            "restart-strategy.exponential-delay.max-backoff": 100,
            "restart-strategy.exponential-delay.backoff-multiplier": "3",
            "restart-strategy.exponential-delay.jitter-factor": 0,
            "restart-strategy.exponential-delay.attempts-before-reset-backoff": 2,
        }
    )
    s = restart_strategy_from_configuration(conf, checkpointing_enabled=False, rng=random.Random(1))
    assert _feed(s, [0, 11, 42, 133]) == [(True, 10), (True, 30), (False, 90), (False, 100)]


def test_unknown_type_is_rejected() -> None:
    conf = Configuration({"restart-strategy.type": "x"})
    with pytest.raises(ConfigurationError) as info:
        restart_strategy_from_configuration(conf, checkpointing_enabled=True)
    msg = str(info.value)
    assert msg.startswith(
        "expected one of none, fixed-delay, failure-rate, exponential-delay for restart-strategy.type; got 'x'; hint: "
    )


def test_misspelled_type_gets_a_suggestion() -> None:
    conf = Configuration({"restart-strategy.type": "fixed-dealy"})
    with pytest.raises(ConfigurationError, match="did you mean 'fixed-delay'"):
        restart_strategy_from_configuration(conf, checkpointing_enabled=False)


@pytest.mark.parametrize(
    ("settings_", "key"),
    [
        ({"restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": -1}, "attempts"),
        ({"restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.delay": -5}, "fixed-delay.delay"),
        (
            {"restart-strategy.type": "failure-rate", "restart-strategy.failure-rate.max-failures-per-interval": 0},
            "max-failures-per-interval",
        ),
        (
            {"restart-strategy.type": "failure-rate", "restart-strategy.failure-rate.failure-rate-interval": 0},
            "failure-rate-interval",
        ),
        ({"restart-strategy.type": "failure-rate", "restart-strategy.failure-rate.delay": -1}, "failure-rate.delay"),
        (
            {"restart-strategy.type": "exponential-delay", "restart-strategy.exponential-delay.initial-backoff": 0},
            "initial-backoff",
        ),
        (
            {"restart-strategy.type": "exponential-delay", "restart-strategy.exponential-delay.max-backoff": 500},
            "max-backoff",
        ),
        (
            {"restart-strategy.type": "exponential-delay", "restart-strategy.exponential-delay.backoff-multiplier": 1},
            "backoff-multiplier",
        ),
        (
            {
                "restart-strategy.type": "exponential-delay",
                "restart-strategy.exponential-delay.reset-backoff-threshold": 0,
            },
            "reset-backoff-threshold",
        ),
        (
            {"restart-strategy.type": "exponential-delay", "restart-strategy.exponential-delay.jitter-factor": 1.5},
            "jitter-factor",
        ),
        (
            {
                "restart-strategy.type": "exponential-delay",
                "restart-strategy.exponential-delay.attempts-before-reset-backoff": 0,
            },
            "attempts-before-reset-backoff",
        ),
    ],
)
def test_bad_values_are_rejected(settings_: dict[str, object], key: str) -> None:
    conf = Configuration(settings_)
    with pytest.raises(ConfigurationError, match=rf"^expected .* for restart-strategy\.\S*{key}; got .*; hint: "):
        restart_strategy_from_configuration(conf, checkpointing_enabled=False)


def test_wrong_type_is_rejected_by_configuration() -> None:
    with pytest.raises(ConfigurationError, match=r"restart-strategy\.fixed-delay\.attempts"):
        Configuration({"restart-strategy.fixed-delay.attempts": "three"})


# -- strategies that never give up on a recurring failure (the submit-time warning) ---------------------------------
def test_the_default_with_checkpointing_restarts_forever_as_flinks_does() -> None:
    strategy = restart_strategy_from_configuration(Configuration(), checkpointing_enabled=True)
    assert isinstance(strategy, ExponentialDelayRestartBackoffTimeStrategy)
    assert strategy.attempts_before_reset == 2**31 - 1
    assert strategy.restarts_forever()
    assert "attempts-before-reset-backoff" in describe_unbounded(strategy)


@pytest.mark.parametrize(
    ("strategy", "forever"),
    [
        (NoRestartBackoffTimeStrategy(), False),
        (FixedDelayRestartBackoffTimeStrategy(max_attempts=3, backoff_ms=10), False),
        (FixedDelayRestartBackoffTimeStrategy(max_attempts=2**31 - 1, backoff_ms=10), True),
        (_exponential(attempts_before_reset=10), False),
        # a failure right after each restart comes every 1000 ms at the soonest: the second falls within 60 s ...
        (FailureRateRestartBackoffTimeStrategy(1, interval_ms=60_000, backoff_ms=1000), False),
        # ... while a 100 ms window has always let the previous one go
        (FailureRateRestartBackoffTimeStrategy(1, interval_ms=100, backoff_ms=1000), True),
    ],
)
def test_restarts_forever_says_whether_a_recurring_failure_ever_fails_the_job(
    strategy: RestartBackoffTimeStrategy, forever: bool
) -> None:
    assert strategy.restarts_forever() is forever
    if not forever:
        return
    # the claim checked: a failure at each restart (backoff after the previous one) is always restartable
    now = 0
    for _ in range(1000):
        strategy.notify_failure(RuntimeError("bad record"), now)
        assert strategy.can_restart()
        now += strategy.get_backoff_time() + 1
