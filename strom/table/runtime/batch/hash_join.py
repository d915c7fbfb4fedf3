"""Flink's ``BatchExecHashJoin`` on Arrow batches: both inputs' batches are held until the end of input (strom's
two-input operators get no per-input end of input), then one hash join (pyarrow's, which builds its table over the
build side) gives the joined rows as batches of ``left ++ right`` columns. SQL's ``=`` on the keys: a NULL key
matches nothing; the outer joins pad the unmatched side with NULLs.

>>> import pyarrow as pa
>>> left = pa.table({"f0": pa.array([1, None, 2], pa.int64())})
>>> right = pa.table({"f0": pa.array([1, None], pa.int64()), "f1": ["x", "y"]})
>>> sorted(hash_join(left, right, "LEFT", (0,), (0,), "right").to_pylist(), key=str)
[{'f0': 1, 'f1': 1, 'f2': 'x'}, {'f0': 2, 'f1': None, 'f2': None}, {'f0': None, 'f1': None, 'f2': None}]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from strom.runtime.operators.two_input import TwoInputStreamOperator
from strom.table.runtime.batch.arrow_scan import BATCH_ROWS
from strom.table.runtime.batch.hash_exchange import batch_of

__all__ = ["HashJoinOperator", "hash_join"]

_ARROW_KIND = {"INNER": "inner", "LEFT": "left outer", "RIGHT": "right outer", "FULL": "full outer"}
_MIRRORED = {"INNER": "INNER", "LEFT": "RIGHT", "RIGHT": "LEFT", "FULL": "FULL"}


def hash_join(
    left: pa.Table, right: pa.Table, kind: str, left_keys: Sequence[int], right_keys: Sequence[int], build: str
) -> pa.Table:
    """``left`` joined with ``right`` on the key columns (by position), hashing the ``build`` side; columns
    ``f0 … fN`` = left's then right's."""
    ln = [f"l{i}" for i in range(left.num_columns)]
    rn = [f"r{i}" for i in range(right.num_columns)]
    lt, rt = left.rename_columns(ln), right.rename_columns(rn)
    lk, rk = [ln[k] for k in left_keys], [rn[k] for k in right_keys]
    if build == "right":
        joined = lt.join(rt, lk, rk, join_type=_ARROW_KIND[kind], coalesce_keys=False, use_threads=False)
    else:  # pyarrow hashes its right input: put the build side there
        joined = rt.join(lt, rk, lk, join_type=_ARROW_KIND[_MIRRORED[kind]], coalesce_keys=False, use_threads=False)
    columns = [joined.column(n) for n in (*ln, *rn)]
    return pa.table(columns, names=[f"f{i}" for i in range(len(columns))])


class HashJoinOperator(TwoInputStreamOperator):
    """Holds both inputs' batches; joins them at the end of input and emits the joined batches."""

    def __init__(
        self,
        kind: str,
        left_keys: tuple[int, ...],
        right_keys: tuple[int, ...],
        schemas: tuple[pa.Schema, pa.Schema],
        build: str,
    ) -> None:
        super().__init__()
        self.kind = kind
        self.left_keys = left_keys
        self.right_keys = right_keys
        self.schemas = schemas
        self.build = build
        self._inputs: tuple[list[Any], list[Any]] = ([], [])

    def process_batch1(self, batch: list[Any]) -> None:
        self._inputs[0].extend(batch_of(r) for r in batch)

    def process_batch2(self, batch: list[Any]) -> None:
        self._inputs[1].extend(batch_of(r) for r in batch)

    def finish(self) -> None:
        left, right = (
            pa.Table.from_batches(batches, schema=schema)
            for batches, schema in zip(self._inputs, self.schemas, strict=True)
        )
        self._inputs = ([], [])
        joined = hash_join(left, right, self.kind, self.left_keys, self.right_keys, self.build)
        batches = joined.to_batches(max_chunksize=BATCH_ROWS)  # slices of its chunks, no copy
        for start in range(0, len(batches), 16):
            self.output.emit(batches[start : start + 16])
        super().finish()
