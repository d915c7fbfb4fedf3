"""``ReduceCombineOperator``: a keyed reduce's map-side pre-aggregation in BATCH execution (Flink DataSet's
``ChainedReduceCombineDriver``, the local half of the SQL planner's local-global aggregation).

Chained behind the producer of a hash exchange into a ``StreamGroupedReduce`` (inserted by
:mod:`strom.graph.local_aggregation`), it runs the reduce's own function on the producer side: one partial value per
key in a dict, in arrival order, so the blocking shuffle carries one record per key and producer instead of every
record. When the dict holds ``max_keys`` keys it is emitted and emptied (bounded memory); the rest leaves at the end of
input. The reduce downstream combines the partials with the same function: exact for the function Flink's reduce
contract asks for (``(accumulated, value) -> accumulated``, associative: ``sum``, ``min``, ``max``, ``min_by``,
``max_by`` and a user's reduce). Partials carry no timestamps: a BATCH reduce emits its final values without them.

>>> from strom.runtime.operators.reduce_combine import ReduceCombineOperator
>>> op = ReduceCombineOperator(lambda a, b: (a[0], a[1] + b[1]), lambda t: t[0], max_keys=10)
>>> op.max_keys
10
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from strom.api.functions import ReduceFunction, as_callable
from strom.runtime.operators.abstract_udf_stream_operator import AbstractUdfStreamOperator
from strom.runtime.operators.keyed import hash_reduce, key_selector_callable

__all__ = ["ReduceCombineOperator"]


class ReduceCombineOperator(AbstractUdfStreamOperator):
    """One partial value per key of the reduce function ``fn``, emitted when ``max_keys`` keys are held and at the
    end of input. Not keyed: it holds no state backend and takes no checkpoint (it exists in BATCH only)."""

    output_grows = False

    def __init__(self, fn: object, key_selector: object, *, max_keys: int) -> None:
        super().__init__(fn)
        self.key_selector = key_selector
        self._key: Callable[[Any], Any] = key_selector_callable(key_selector)
        self._reduce: Callable[[Any, Any], Any] = as_callable(fn, ReduceFunction, "reduce", "reduce()")
        self.max_keys = max_keys
        self._table: dict[Any, Any] = {}

    def process_batch(self, batch: list[Any]) -> None:
        hash_reduce(self, self._table, batch, self._key, self._reduce)
        if len(self._table) >= self.max_keys:
            self._flush()

    def _flush(self) -> None:
        """Emit every partial value, in slices of the output's batch budget, and start from no key."""
        values = list(self._table.values())
        self._table = {}
        step = max(1, self.output_budget.records)
        for start in range(0, len(values), step):
            self.output.emit(values[start : start + step])

    def finish(self) -> None:
        self._flush()
        super().finish()
