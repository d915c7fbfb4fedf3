"""Flink's ``BatchExecHashAggregate`` in its two phases, on Arrow batches: the local aggregate
(``LocalHashAggregate``) folds each batch into partial accumulators per key (pyarrow's hash aggregation) and, at the
end of its input, sends one partial row per key to the subtask that owns the key (a hash exchange); the global
aggregate (``HashAggregate(isMerge=true)``) merges the partials at the end of its input and emits the final rows.

Partials per call: ``COUNT(*)`` → count_all, ``COUNT(x)`` → count of non-NULL, ``SUM``/``MIN``/``MAX`` → the same,
``AVG(x)`` → sum and count; merged by sum (counts, sums), min and max. Results as Flink's: ``COUNT`` BIGINT and 0 on
no rows, ``SUM``/``MIN``/``MAX``/``AVG`` NULL over no non-NULL value, ``SUM`` of an integer type in that type
(wrapping as Java's), ``AVG`` of an integer type truncated toward zero in that type, of DOUBLE a DOUBLE.

>>> spec = AggSpec(keys=("f0",), calls=(("COUNT_STAR", None), ("AVG", "f1")), result_types=(pa.int64(), pa.int32()))
>>> local = partials(pa.table({"f0": ["a", "a", "b"], "f1": pa.array([1, -4, None], pa.int32())}), spec)
>>> sorted(final_rows(merge(local, spec), spec))
[['a', 2, -1], ['b', 1, None]]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from strom.api.row import _create_row
from strom.runtime.operators.base import StreamOperator
from strom.table.runtime.batch.hash_exchange import batch_of, hash_slices

__all__ = ["AggSpec", "GlobalHashAggregateOperator", "LocalHashAggregateOperator", "final_rows", "merge", "partials"]

_PARTIAL: dict[str, tuple[str, ...]] = {
    "COUNT_STAR": ("count_all",),
    "COUNT": ("count",),
    "SUM": ("sum",),
    "MIN": ("min",),
    "MAX": ("max",),
}
_PARTIAL["AVG"] = ("sum", "count")
_MERGE = {"count_all": "sum", "count": "sum", "sum": "sum", "min": "min", "max": "max"}
#: partial rows held before the local aggregate merges them (bounded memory over many batches)
COMPACT_ROWS = 1 << 20


@dataclass(frozen=True)
class AggSpec:
    """Group-key columns, calls ``(function, argument column or None)`` and the Arrow type of each result."""

    keys: tuple[str, ...]
    calls: tuple[tuple[str, str | None], ...]
    result_types: tuple[pa.DataType, ...]

    def partial_names(self) -> list[str]:
        return [f"p{i}_{j}" for i, (name, _) in enumerate(self.calls) for j in range(len(_PARTIAL[name]))]


def partials(table: pa.Table, spec: AggSpec) -> pa.Table:
    """One partial row per key of ``table`` (columns: the keys, then ``spec.partial_names()``)."""
    aggs: list[tuple[Any, str]] = []
    for name, arg in spec.calls:
        for kind in _PARTIAL[name]:
            aggs.append(([], kind) if kind == "count_all" else (arg, kind))
    return _renamed(table.group_by(list(spec.keys), use_threads=False).aggregate(aggs), spec)


def _renamed(grouped: pa.Table, spec: AggSpec) -> pa.Table:
    """pyarrow names the results ``<arg>_<kind>`` and places the keys as its version does: keys by name, the
    results in order."""
    names = grouped.column_names
    keys = [grouped.column(k) for k in spec.keys]
    rest = [grouped.column(i) for i, n in enumerate(names) if n not in spec.keys]
    return pa.table([*keys, *rest], names=[*spec.keys, *spec.partial_names()])


def merge(table: pa.Table, spec: AggSpec) -> pa.Table:
    """Partial rows merged into one per key (same columns)."""
    names = spec.partial_names()
    kinds = [kind for name, _ in spec.calls for kind in _PARTIAL[name]]
    grouped = table.group_by(list(spec.keys), use_threads=False).aggregate(
        [(n, _MERGE[k]) for n, k in zip(names, kinds, strict=True)]
    )
    return _renamed(grouped, spec)


def _final_columns(merged: pa.Table, spec: AggSpec) -> list[pa.Array | pa.ChunkedArray]:
    out: list[Any] = []
    i = 0
    for (name, _), result_type in zip(spec.calls, spec.result_types, strict=True):
        first = merged.column(len(spec.keys) + i)
        if name == "AVG":
            count = merged.column(len(spec.keys) + i + 1)
            empty = pc.equal(count, 0)
            divisor = pc.if_else(empty, pa.scalar(1, count.type), count)
            if pa.types.is_floating(result_type):
                quotient = pc.divide(pc.cast(first, pa.float64()), pc.cast(divisor, pa.float64()))
            else:  # Java's integer division: truncates toward zero
                quotient = pc.divide(first, divisor)
            first = pc.if_else(empty, pa.scalar(None, quotient.type), quotient)
        elif name in ("COUNT_STAR", "COUNT"):
            first = pc.fill_null(first, 0)
        out.append(first if first.type == result_type else pc.cast(first, result_type, safe=False))
        i += len(_PARTIAL[name])
    return out


def final_rows(merged: pa.Table, spec: AggSpec) -> list[list[Any]]:
    """The result values per key: the keys, then one value per call."""
    columns = [merged.column(k) for k in spec.keys] + _final_columns(merged, spec)
    return [list(values) for values in zip(*(c.to_pylist() for c in columns), strict=True)]


def empty_result(spec: AggSpec) -> list[Any]:
    """The one row of an aggregate without GROUP BY over no input: counts 0, the rest NULL."""
    return [0 if name in ("COUNT_STAR", "COUNT") else None for name, _ in spec.calls]


class LocalHashAggregateOperator(StreamOperator):
    """Partial accumulators per key over this subtask's batches; at the end of input, sent to the owners of the
    keys among ``consumers`` subtasks as ``(subtask, batch)``."""

    def __init__(self, spec: AggSpec, consumers: int) -> None:
        super().__init__()
        self.spec = spec
        self.consumers = consumers
        self._parts: list[pa.Table] = []
        self._rows = 0

    def process_batch(self, batch: list[Any]) -> None:
        for record in batch:
            part = partials(pa.Table.from_batches([batch_of(record)]), self.spec)
            self._parts.append(part)
            self._rows += part.num_rows
        if self._rows >= COMPACT_ROWS:
            self._compact()

    def _compact(self) -> None:
        if len(self._parts) > 1:
            self._parts = [merge(pa.concat_tables(self._parts), self.spec)]
        self._rows = sum(p.num_rows for p in self._parts)

    def finish(self) -> None:
        self._compact()
        if self._parts:
            slices = hash_slices(self._parts[0], self.spec.keys, self.consumers) if self.spec.keys else []
            if not self.spec.keys:
                slices = [(0, self._parts[0])]
            self._parts = []
            self.output.emit([(channel, part.combine_chunks().to_batches()) for channel, part in slices])
        super().finish()


class GlobalHashAggregateOperator(StreamOperator):
    """The partials of the keys this subtask owns, merged at the end of input into the final rows (``Row`` s)."""

    def __init__(self, spec: AggSpec) -> None:
        super().__init__()
        self.spec = spec
        self._parts: list[pa.RecordBatch] = []

    def process_batch(self, batch: list[Any]) -> None:
        for record in batch:
            self._parts.extend(batch_of(record))

    def finish(self) -> None:
        if self._parts:
            rows = final_rows(merge(pa.Table.from_batches(self._parts), self.spec), self.spec)
        else:
            rows = [] if self.spec.keys else [empty_result(self.spec)]
        self._parts = []
        step = max(1, self.output_budget.records)
        for start in range(0, len(rows), step):
            self.output.emit([_create_row(None, values) for values in rows[start : start + step]])
        super().finish()
