"""``BatchBudget``: how many records the next batch may hold so that it stays within a byte budget.

A batch is cut at ``execution.batch-size`` records *and* at about ``execution.batch-bytes`` bytes, so that a
task's memory does not grow with the size of its records: 1,024 records of 200 KB are 200 MB, 1,024 tuples of
four small fields 200 KB. Sources size their polls with it and the operators that make records out of records
(map, flat_map, process) their input slices: their output is what grows.

Sizes are estimates, as cheap as a batch allows. Records are not serialized here (a batch that stays in its
TaskManager never is); ``sys.getsizeof`` of the middle record of a batch, descending two levels into tuples,
lists, dicts and instance dicts, is taken every :data:`SAMPLE_EVERY`-th batch. The first batch holds at most
:data:`FIRST_BATCH` records: nothing is known of the records before it.

    >>> b = BatchBudget(1 << 20, max_records=1024)
    >>> b.records
    16
    >>> b.observe([b"x" * 200_000] * 16, 16)
    >>> b.records  # five 200 KB records per MiB
    5
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

from strom.runtime.streamrecord import batch_slice

__all__ = ["FIRST_BATCH", "SAMPLE_EVERY", "BatchBudget", "estimate_record_bytes", "sizeof"]

#: records of the first batch, before anything is known of their size
FIRST_BATCH = 16
#: batches between two estimates (the first batch is always measured)
SAMPLE_EVERY = 8
#: elements of a container looked at; the rest are assumed alike
_HEAD = 8

_getsizeof = sys.getsizeof
#: types whose size ``sys.getsizeof`` tells in full
_FLAT = frozenset({int, float, str, bytes, bytearray, bool, complex, type(None)})


def sizeof(value: Any, depth: int = 2) -> int:
    """Estimated bytes of ``value`` and of what it holds, ``depth`` levels down (the first few elements of a
    container stand for all of them)."""
    n = _getsizeof(value)
    t = type(value)
    if depth <= 0 or t in _FLAT:
        return n
    flat = _FLAT
    if t is tuple or t is list:
        k = len(value)
        if k:
            head = value[:_HEAD] if k > _HEAD else value
            inner = 0
            for x in head:
                inner += _getsizeof(x) if type(x) in flat else sizeof(x, depth - 1)
            n += inner * k // len(head)
    elif t is dict:
        k = len(value)
        if k:
            items = list(value.items())[:_HEAD] if k > _HEAD else value.items()
            inner = 0
            for a, b in items:
                inner += sizeof(a, depth - 1) + sizeof(b, depth - 1)
            n += inner * k // len(items)
    elif t.__dictoffset__:  # instances with a __dict__ (asking the others for one would raise and catch)
        d = getattr(value, "__dict__", None)
        if type(d) is dict:
            n += sizeof(d, depth - 1)
    return n


def estimate_record_bytes(batch: list[Any]) -> float:
    """Bytes per record of ``batch`` (non-empty), from its middle record."""
    return float(sizeof(batch[len(batch) // 2]))


class BatchBudget:
    """Records per batch for a byte budget, adapted to the records seen (see the module docstring).

    ``observe(produced, consumed)`` after each batch: ``consumed`` inputs (polled or input records) made the
    records ``produced``; the next batch of inputs may hold :attr:`records` of them.
    """

    __slots__ = ("_until_sample", "budget_bytes", "max_records", "records")

    def __init__(self, budget_bytes: int, *, max_records: int = 1 << 30) -> None:
        self.budget_bytes = max(1, budget_bytes)
        self.max_records = max(1, max_records)
        self.records = min(FIRST_BATCH, self.max_records)
        self._until_sample = 0

    def observe(self, produced: list[Any], consumed: int) -> None:
        self._until_sample -= 1
        if self._until_sample >= 0 or not produced:
            return
        self._until_sample = SAMPLE_EVERY - 1
        per_input = estimate_record_bytes(produced) * len(produced) / max(1, consumed)
        self.records = max(1, min(self.max_records, int(self.budget_bytes / max(1.0, per_input))))

    def slices(self, batch: list[Any]) -> Iterator[list[Any]]:
        """``batch`` in slices of :attr:`records` (re-read before each slice: an observation may lower it)."""
        start, n = 0, len(batch)
        while start < n:
            end = min(n, start + self.records)
            yield batch_slice(batch, start, end)
            start = end
