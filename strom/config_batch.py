"""``BatchExecutionOptions``: the keys of BATCH execution's scheduling (Flink's class of that name; re-exported by
:mod:`strom.config`): speculative execution under Flink's keys and defaults, and strom's local aggregation.
"""

from __future__ import annotations

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
