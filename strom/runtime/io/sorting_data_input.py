"""``SortingDataInput``: the input of a keyed one-input operator in BATCH execution (Flink's ``SortingDataInput``,
``execution.sorted-inputs.enabled``).

It takes the records the input processor pushes, groups them by key and, at the end of input (the final watermark
or ``EndOfData``), hands them to the operator key after key, in Flink's BATCH key order
(:func:`~strom.runtime.operators.timer_service.batch_key_order`: the pickled key's bytes), the records of a key in
order of their timestamps (records without one first, as Flink's ``Long.MIN_VALUE``), then in arrival order. After
each key it calls the operator's ``end_key()``: the key's timers fire with the watermark at +∞ and its state is
dropped (:class:`~strom.runtime.state.batch_execution_keyed_state_backend.BatchExecutionKeyedStateBackend`), so the
operator holds one key's state at a time. Watermarks before the final one are dropped (Flink's sorted input emits
only the last); the final one reaches the operator after the last key.

Grouping is by hash (a dict of per-key lists, C-level ``map`` for the key selector), not by comparing records: in
CPython that is the cheap way to make a key's records contiguous, and keys need not be orderable. Only the
distinct keys are sorted. Memory is bounded by ``execution.sorted-inputs.memory``, counted in pickled bytes (the
size of a sample batch, re-measured every 64th batch): when the groups exceed it they are *spilled*, sorted by key,
to a run file under ``io.tmp.dirs``; the end of input merges the runs and the groups in memory by key
(``heapq.merge``: a comparison per key, not per record) — Flink's external merge sort, run at key granularity.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import operator
import os
import pickle
import tempfile
from collections.abc import Callable, Iterator
from operator import itemgetter
from typing import Any, BinaryIO

from strom.runtime.io.data_output import DataOutput
from strom.runtime.operators.timer_service import LONG_MAX, batch_key_order
from strom.runtime.streamrecord import timestamps_of, with_timestamps

__all__ = ["KeyGroup", "SortingDataInput"]

log = logging.getLogger(__name__)

#: one key's records: ``(order, key, records)``, a record ``(value, timestamp)`` once the input had timestamps
KeyGroup = tuple[bytes, Any, list[Any]]

_SAMPLE_EVERY = 64
_VALUE, _TIME = itemgetter(0), itemgetter(1)
_MIN_TS = -(1 << 63)


def _in_time_order(group: list[tuple[Any, int | None]]) -> list[tuple[Any, int | None]]:
    """A key's ``(value, timestamp)`` records in order of time (stable; no timestamp = Flink's Long.MIN_VALUE)."""
    ts = list(map(_TIME, group))
    if None in ts:
        ts = [_MIN_TS if t is None else t for t in ts]
    elif all(map(operator.le, ts, itertools.islice(ts, 1, None))):
        return group  # in order already (the common case: sorted runs cost one pass)
    return [group[i] for i in sorted(range(len(group)), key=ts.__getitem__)]


class SortingDataInput:
    """Groups one input's records by key until the end of input, then feeds them to ``head`` key by key.

    ``head`` needs ``process_batch``, ``process_watermark``, ``process_watermark_status`` and ``end_key``;
    ``key_of`` is its key selector; ``batch_records`` bounds the batches it gets (a key's records are cut into
    batches of that many)."""

    def __init__(
        self,
        head: Any,
        key_of: Callable[[Any], Any],
        *,
        memory_bytes: int,
        batch_records: int,
        spill_directory: str = "",
    ) -> None:
        self.head = head
        self.key_of = key_of
        self.memory_bytes = memory_bytes
        self.batch_records = max(1, batch_records)
        self.spill_directory = spill_directory or tempfile.gettempdir()
        self._groups: dict[Any, list[Any]] = {}
        self._timed = False  # a batch carried timestamps: records are kept as (value, timestamp) from then on
        self._records = 0
        self._bytes_per_record = 0.0
        self._until_sample = 0
        self._runs: list[BinaryIO] = []
        self.num_spills = 0
        #: the bytes written to run files (Flink's ``spilledBytes`` of a sorter)
        self.spilled_bytes = 0
        self.num_records = 0
        self.drained = False

    # -- the DataOutput the input processor pushes into ---------------------------------------------------------
    def data_output(self) -> DataOutput:
        return DataOutput(
            emit_batch=self.add_batch,
            emit_watermark=self.process_watermark,
            emit_watermark_status=self.head.process_watermark_status,
        )

    def add_batch(self, batch: list[Any]) -> None:
        groups = self._groups
        get = groups.get
        keys = map(self.key_of, batch)
        ts = timestamps_of(batch)
        if ts is not None or self._timed:
            if not self._timed:  # the first batch with timestamps: the records before it had none
                self._timed = True
                for k, g in groups.items():
                    groups[k] = [(v, None) for v in g]
            entries: Any = zip(batch, ts if ts is not None else itertools.repeat(None), strict=False)
        else:
            entries = batch
        for k, e in zip(keys, entries, strict=False):
            group = get(k)
            if group is None:
                groups[k] = [e]
            else:
                group.append(e)
        self._records += len(batch)
        self.num_records += len(batch)
        self._until_sample -= 1
        if self._until_sample <= 0:
            self._until_sample = _SAMPLE_EVERY
            self._bytes_per_record = len(pickle.dumps(list(batch), protocol=5)) / max(1, len(batch))
        if self._records * self._bytes_per_record > self.memory_bytes:
            self._spill()

    def process_watermark(self, timestamp: int) -> None:
        """Only the final watermark counts in BATCH: it ends the input (the keys go first)."""
        if timestamp == LONG_MAX:
            self.drain()
            self.head.process_watermark(timestamp)

    # -- the end of input ----------------------------------------------------------------------------------------
    def drain(self) -> None:
        """Feed every key's records to the head, key by key in BATCH key order, ``end_key()`` after each (once)."""
        if self.drained:
            return
        self.drained = True
        head = self.head
        process_batch, end_key, n = head.process_batch, head.end_key, self.batch_records
        timed = self._timed
        try:
            for _order, _key, group in self._sorted_groups():
                if timed:
                    group = _in_time_order(group)
                for start in range(0, len(group), n):
                    chunk = group[start : start + n]
                    if timed:
                        process_batch(with_timestamps(list(map(_VALUE, chunk)), list(map(_TIME, chunk))))
                    else:
                        process_batch(chunk)
                end_key()
        finally:
            self.close()
        if self.num_spills:
            log.info(
                "sorted input spilled %d runs, %d bytes, of %d records (execution.sorted-inputs.memory %d bytes)",
                self.num_spills,
                self.spilled_bytes,
                self.num_records,
                self.memory_bytes,
            )

    def _in_memory_groups(self) -> list[KeyGroup]:
        groups = self._groups
        self._groups, self._records = {}, 0
        out = [(batch_key_order(k), k, g) for k, g in groups.items()]
        out.sort(key=itemgetter(0))
        return out

    def _sorted_groups(self) -> Iterator[KeyGroup]:
        in_memory = self._in_memory_groups()
        if not self._runs:
            yield from in_memory
            return
        sources = [_read_run(f) for f in self._runs] + [iter(in_memory)]
        merged = heapq.merge(*sources, key=itemgetter(0))
        for order, same in itertools.groupby(merged, key=itemgetter(0)):
            parts = list(same)  # this key's groups: one per run that holds it, and the one in memory
            yield order, parts[0][1], [e for part in parts for e in part[2]]

    def _spill(self) -> None:
        """Write the groups in memory, sorted by key, as one run file (deleted once read or closed)."""
        os.makedirs(self.spill_directory, exist_ok=True)
        f = tempfile.TemporaryFile(dir=self.spill_directory)  # noqa: SIM115 - closed by close()
        dump = pickle.dump  # a pickler per key group: a shared one's memo would keep every record alive
        for entry in self._in_memory_groups():
            dump(entry, f, protocol=5)
        f.flush()
        self.spilled_bytes += f.tell()
        f.seek(0)
        self._runs.append(f)
        self.num_spills += 1

    def close(self) -> None:
        """Delete the runs (after the drain, or when the task ends early)."""
        runs, self._runs = self._runs, []
        for f in runs:
            with contextlib.suppress(OSError):
                f.close()
        self._groups = {}


def _read_run(f: BinaryIO) -> Iterator[KeyGroup]:
    while True:
        try:
            yield pickle.load(f)
        except EOFError:
            return
