"""``BatchExecutionOptions``: the keys of BATCH execution's scheduling (Flink's class of that name; re-exported by
:mod:`strom.config`): speculative execution under Flink's keys and defaults, and strom's local aggregation.
"""

from __future__ import annotations

from datetime import timedelta

from strom.config_option import ConfigOption, _opt

__all__ = ["BatchExecutionOptions"]


class BatchExecutionOptions:
    """BATCH execution: map-side pre-aggregation (strom's) and speculative execution (Flink's)."""

    LOCAL_AGGREGATION_ENABLED: ConfigOption[bool] = _opt(
        "execution.batch.local-aggregation.enabled",
        bool,
        True,
        "BATCH execution (strom's, not Flink DataStream's): a keyed reduce (reduce, sum, min, max, min_by, max_by) "
        "also runs chained behind each producer of its hash exchange, so the shuffle carries one partial value per "
        "key and producer (Flink SQL's local-global aggregation, DataSet's combinable reduce). Needs the reduce "
        "function to be associative, as Flink's reduce contract says; false shuffles every record, as Flink's "
        "DataStream BATCH does.",
    )
    LOCAL_AGGREGATION_MAX_KEYS: ConfigOption[int] = _opt(
        "execution.batch.local-aggregation.max-keys",
        int,
        100_000,
        "BATCH local aggregation: the keys a producer-side combiner holds before it emits its partial values and "
        "starts again from none (its memory bound).",
    )
    SPECULATIVE_ENABLED: ConfigOption[bool] = _opt(
        "execution.batch.speculative.enabled",
        bool,
        False,
        "BATCH execution: a task the slow task detector finds slow gets a copy (a speculative attempt) on another "
        "TaskManager; the first attempt to finish wins, its blocking partitions alone are read, the others are "
        "cancelled and their files deleted.",
    )
    SPECULATIVE_MAX_CONCURRENT_EXECUTIONS: ConfigOption[int] = _opt(
        "execution.batch.speculative.max-concurrent-executions",
        int,
        2,
        "BATCH speculative execution: the most attempts of one subtask running at once (the original included).",
    )
    SLOW_TASK_CHECK_INTERVAL: ConfigOption[timedelta] = _opt(
        "slow-task-detector.check-interval",
        timedelta,
        "1 s",
        "How often the slow task detector looks at the running tasks of a BATCH job with speculative execution.",
    )
    SLOW_TASK_BASELINE_LOWER_BOUND: ConfigOption[timedelta] = _opt(
        "slow-task-detector.execution-time.baseline-lower-bound",
        timedelta,
        "1 min",
        "The least execution time a task must have run for before it counts as slow.",
    )
    SLOW_TASK_BASELINE_MULTIPLIER: ConfigOption[float] = _opt(
        "slow-task-detector.execution-time.baseline-multiplier",
        float,
        1.5,
        "A task is slow when it has run longer than the median execution time of its vertex's finished tasks times "
        "this (and than the lower bound).",
    )
    SLOW_TASK_BASELINE_RATIO: ConfigOption[float] = _opt(
        "slow-task-detector.execution-time.baseline-ratio",
        float,
        0.75,
        "The share of a vertex's tasks that must have finished before its median is a baseline (no task of it is "
        "slow before).",
    )
