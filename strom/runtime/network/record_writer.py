"""``RecordWriter``: routes an operator's output batches into the subpartitions of its result partition.

Records collect per channel and leave as one buffer when the channel holds a buffer's worth: about
``taskmanager.memory.segment-size`` serialized bytes, at most ``execution.batch-size`` records. The
records-per-buffer figure adapts to the stream and is known before the first buffer fills: the first batch
the writer is given, and every ``SAMPLE_EVERY``-th after, is measured before it is routed — by the bytes per
record the partition saw serializing for remote consumers, or else by serializing its first records with the
stream's serializer (``SAMPLE_RECORDS`` of them, or only the first when that one fills a good part of a
segment). The sample is also a check: records that cannot be serialized fail the job whether their channels
stay in this TaskManager or not, with an error naming the record and its position in the operator's output.
A single record larger than a segment travels as a buffer of its own.

:meth:`flush` hands over partial buffers: on the buffer timeout, at the end of input, or after every emit
when the buffer timeout is 0. Emitting blocks while the partition's buffer pool is exhausted
(backpressure; the time is measured by the partition's back-pressure gauge).

Batches keep their timestamp column (:mod:`strom.runtime.streamrecord`): from the first batch that has one, the
writer collects a parallel timestamp list per channel (the partitioner's one ``route`` moves both columns) and
sends timestamped buffers. A watermark (or watermark
status) first flushes every channel — records are never overtaken by the event time that follows them — and
then goes to every channel as an event.
"""

from __future__ import annotations

from typing import Any

from strom.exceptions import UserFunctionError
from strom.runtime.network.events import WatermarkEvent, WatermarkStatusEvent
from strom.runtime.network.partitioner import StreamPartitioner
from strom.runtime.network.result_partition import ResultPartition
from strom.runtime.streamrecord import short_repr, timestamps_of, with_timestamps

__all__ = ["RecordWriter"]

SAMPLE_EVERY = 16
#: records serialized to measure a batch of small records
SAMPLE_RECORDS = 64


class RecordWriter:
    def __init__(
        self,
        partition: ResultPartition,
        partitioner: StreamPartitioner,
        *,
        max_records_per_buffer: int,
        segment_size: int,
        flush_always: bool,
        subtask_index: int,
        owner: Any,
        consumer: str = "",
    ) -> None:
        self.partition = partition
        self.partitioner = partitioner
        self.max_records = max(1, max_records_per_buffer)
        self.segment_size = segment_size
        self.flush_always = flush_always
        self.owner = owner  # the operator whose output this is; names it in routing errors
        self.consumer = consumer  # the operator downstream, whose key selector routes a keyed stream
        partition.producer_name = owner.name  # and in serialization errors
        n = len(partition.subpartitions)
        partitioner.setup(n, subtask_index)
        self._n = n
        self._outs: list[list[Any]] = [[] for _ in range(n)]
        #: per channel, the timestamps of ``_outs`` once the stream carried event time (``None`` before)
        self._touts: list[list[Any]] | None = None
        self.records_per_buffer = self.max_records
        self._until_sample = 0
        self._checked = False  # whether a sample of the records was serialized yet
        self.num_records_out = 0
        self.num_buffers_out = 0

    def emit(self, batch: list[Any]) -> None:
        self._until_sample -= 1
        if self._until_sample < 0:
            self._sample(batch)
        outs = self._outs
        touts = self._touts
        if touts is None and timestamps_of(batch) is not None:  # the stream carries event time from here on
            touts = self._touts = [[None] * len(o) for o in outs]
        try:
            self.partitioner.route(batch, outs, touts)
        except UserFunctionError:
            raise
        except Exception as exc:
            raise self._routing_error(batch, exc) from exc
        self.num_records_out += len(batch)
        size = self.records_per_buffer
        for c in range(self._n):
            if len(outs[c]) >= size:
                self._emit_full(c)
        if self.flush_always:
            self.flush()

    def _routing_error(self, batch: list[Any], exc: Exception) -> BaseException:
        """``exc`` of the partitioner as the user's error: the key selector of the downstream operator (whose
        ``key_by`` it is), routing which operator's output, on which record (found again, on this error path only)."""
        selector = getattr(self.partitioner, "key_selector", None)
        strategy = self.partitioner.ship_strategy
        downstream = f" of operator '{self.consumer}'" if self.consumer else ""
        what = f"the key selector ({strategy}){downstream}" if selector is not None else f"the partitioner ({strategy})"
        role = f"{what}, routing the output of operator '{self.owner.name}'"
        record = self._failing_record(batch)
        where = f" on output record ({short_repr(record[0])})" if record else ""
        error: BaseException = self.owner.user_error(exc, None, role=role, where=where)
        return error

    def _failing_record(self, batch: list[Any]) -> tuple[Any] | None:
        """The first record of ``batch`` the partitioner cannot route (a one-tuple), if one alone fails."""
        single: list[list[Any]] = [[] for _ in range(self._n)]
        for value in batch:
            try:
                self.partitioner.route([value], single, None)
            except Exception:
                return (value,)
            finally:
                for out in single:
                    out.clear()
        return None

    def _emit_full(self, c: int) -> None:
        lst = self._outs[c]
        self._outs[c] = []
        touts = self._touts
        ts: list[Any] | None = None
        if touts is not None:
            ts = touts[c]
            touts[c] = []
        size = self.records_per_buffer
        if len(lst) == size:
            self._send(c, with_timestamps(lst, ts))
            return
        start = 0
        while len(lst) - start >= size:
            part = lst[start : start + size]
            self._send(c, with_timestamps(part, None if ts is None else ts[start : start + size]))
            start += size
            size = self.records_per_buffer  # a sample may have resized buffers
        if start < len(lst):
            self._outs[c] = lst[start:]
            if touts is not None and ts is not None:
                touts[c] = ts[start:]

    def _send(self, c: int, buf: list[Any]) -> None:
        self.num_buffers_out += 1
        self.partition.emit(c, buf)

    def _sample(self, batch: list[Any]) -> None:
        """Size buffers for the records of ``batch`` (before it is routed), checking that they serialize."""
        if not batch:
            return
        self._until_sample = SAMPLE_EVERY - 1
        per_record = self.partition.observed_bytes_per_record  # measured for free by remote serialization
        if per_record <= 0.0 or not self._checked:
            per_record = self._measure(batch)
            self._checked = True
        per_record = max(1.0, per_record)
        self.records_per_buffer = max(1, min(self.max_records, int(self.segment_size / per_record)))

    def _measure(self, batch: list[Any]) -> float:
        serialize = self.partition.serializer.serialize
        try:
            first = len(serialize(batch[:1]))
            if len(batch) == 1 or first * 4 >= self.segment_size:
                return float(first)
            k = min(len(batch), SAMPLE_RECORDS)
            return len(serialize(batch[:k])) / k
        except Exception as exc:
            raise self.partition.serialization_error(batch, exc, first_position=self.num_records_out) from exc

    def flush(self) -> None:
        outs = self._outs
        for c in range(self._n):
            if outs[c]:
                if len(outs[c]) >= self.records_per_buffer:
                    self._emit_full(c)
                if outs[c]:
                    lst = outs[c]
                    outs[c] = []
                    touts = self._touts
                    ts = None
                    if touts is not None:
                        ts = touts[c]
                        touts[c] = []
                    self._send(c, with_timestamps(lst, ts))

    def emit_watermark(self, timestamp: int) -> None:
        self.flush()
        self.partition.broadcast_event(WatermarkEvent(timestamp))

    def emit_watermark_status(self, idle: bool) -> None:
        self.flush()
        self.partition.broadcast_event(WatermarkStatusEvent(idle))

    def finish(self) -> None:
        self.flush()
        self.partition.finish()
