"""The hash exchange of Arrow batches (Flink's ``BatchExecExchange`` with a ``HASH`` distribution): each batch split
into one slice per consumer subtask by a hash of its key columns that is the same in every process, sent as
``(subtask, batch)`` to a ``partition_custom`` that routes by the first field.

>>> import pyarrow as pa
>>> t = pa.table({"f0": pa.array([1, 2, 3, None], pa.int64())})
>>> sorted((c, b.num_rows) for c, b in hash_slices(t, ("f0",), 2))
[(0, 2), (1, 2)]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from strom.runtime.state.key_groups import stable_hash

__all__ = ["ChannelOf", "SubtaskPartitioner", "batch_of", "hash_slices"]


def _buckets(table: pa.Table | pa.RecordBatch, keys: Sequence[str], n: int) -> pa.Array:
    """The consumer subtask of each row: integer keys by value modulo ``n`` (column-wise), others by
    ``stable_hash`` of the key tuple (per row)."""
    columns = [table.column(k) for k in keys]
    if len(columns) == 1 and pa.types.is_integer(columns[0].type):
        values = pc.fill_null(pc.cast(columns[0], pa.int64()), 0)
        return pc.modulo(values, n)
    lists = [c.to_pylist() for c in columns]
    return pa.array([stable_hash(key) % n for key in zip(*lists, strict=True)], pa.int64())


def hash_slices(table: pa.Table | pa.RecordBatch, keys: Sequence[str], n: int) -> list[tuple[int, Any]]:
    """``(subtask, rows)`` for each of the ``n`` subtasks that gets rows of ``table``."""
    if n == 1:
        return [(0, table)] if table.num_rows else []
    buckets = _buckets(table, keys, n)
    out = []
    for channel in range(n):
        part = table.filter(pc.equal(buckets, channel))
        if part.num_rows:
            out.append((channel, part))
    return out


def batch_of(record: Any) -> Any:
    """The Arrow batch of a record: itself, or the batch of a ``(subtask, batch)`` of a hash exchange."""
    return record[1] if isinstance(record, tuple) else record


class ChannelOf:
    """The key selector of the exchange: the subtask a record was sliced for."""

    def __call__(self, record: tuple[int, Any]) -> int:
        return record[0]


class SubtaskPartitioner:
    """``partition_custom``'s partitioner: the subtask as chosen by the producer."""

    def __call__(self, channel: int, num_partitions: int) -> int:
        return channel % num_partitions
