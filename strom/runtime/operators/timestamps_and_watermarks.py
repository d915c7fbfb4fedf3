"""``TimestampsAndWatermarksOperator``: applies a :class:`~strom.api.eventtime.WatermarkStrategy` to a stream
(Flink's operator of the same name, behind ``assign_timestamps_and_watermarks`` and ``from_source``).

Per batch it asks the strategy's timestamp assigner for every record's event time (given the timestamp the
record already carries, or ``Long.MIN_VALUE``), emits the records with those timestamps and shows them to the
watermark generator. Every ``pipeline.auto-watermark-interval`` ms of processing time it calls the generator's
``on_periodic_emit``; watermarks only go out when they rise. Watermarks from upstream are swallowed — this
operator defines the stream's event time — except ``MAX_WATERMARK``, the end of input, which is forwarded. At
the end of input the generator gets one last periodic emit, as in Flink.

A source reader that reads several splits asks for an output per split (:meth:`create_output_for_split`, Flink's
``ReaderOutput.createOutputForSplit`` behind ``KafkaSource``'s per-partition watermarks): each split gets its own
generator, fed with that split's records of the reader's :class:`~strom.runtime.streamrecord.SplitBatch`
batches, and the stream's watermark is the minimum over the splits that are not idle
(:class:`~strom.runtime.operators.watermark_output_multiplexer.WatermarkOutputMultiplexer`).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import repeat
from typing import Any

from strom.api.eventtime import (
    LONG_MAX,
    LONG_MIN,
    NoWatermarksGenerator,
    RecordTimestampAssigner,
    TimestampAssigner,
    Watermark,
    WatermarkGenerator,
    WatermarkGeneratorSupplierContext,
    WatermarkOutput,
    WatermarkStrategy,
    _FunctionTimestampAssigner,
    emits_only_periodically,
    feed_events,
)
from strom.exceptions import InvalidProgramError
from strom.runtime.operators.base import StreamOperator
from strom.runtime.operators.watermark_output_multiplexer import WatermarkOutputMultiplexer
from strom.runtime.streamrecord import timestamps_of, with_timestamps

__all__ = ["TimestampsAndWatermarksOperator"]


class _WatermarkEmitter:
    """Flink's ``WatermarkEmitter``: the generator's :class:`WatermarkOutput`, monotonic, with idleness."""

    __slots__ = ("current_watermark", "idle", "operator")

    def __init__(self, operator: TimestampsAndWatermarksOperator) -> None:
        self.operator = operator
        self.current_watermark = LONG_MIN
        self.idle = False

    def emit_watermark(self, watermark: Watermark) -> None:
        ts = watermark.timestamp
        if ts <= self.current_watermark:
            return
        self.current_watermark = ts
        self.mark_active()
        self.operator.flush_pending()
        self.operator.output.emit_watermark(ts)

    def mark_idle(self) -> None:
        if not self.idle:
            self.idle = True
            self.operator.flush_pending()
            self.operator.output.emit_watermark_status(True)

    def mark_active(self) -> None:
        if self.idle:
            self.idle = False
            self.operator.flush_pending()
            self.operator.output.emit_watermark_status(False)


class TimestampsAndWatermarksOperator(StreamOperator):
    def __init__(self, strategy: WatermarkStrategy[Any]) -> None:
        super().__init__()
        if not isinstance(strategy, WatermarkStrategy):
            raise InvalidProgramError(
                f"expected a WatermarkStrategy; got {type(strategy).__name__}; hint: "
                "WatermarkStrategy.for_bounded_out_of_orderness(timedelta(seconds=5)).with_timestamp_assigner(...)"
            )
        self.strategy = strategy
        self._generator: WatermarkGenerator[Any] | None = None
        self._extract: Callable[[Any, int], int] | None = None  # None: keep the records' own timestamps
        self._emitter = _WatermarkEmitter(self)
        self._interval = 0
        self._batched = False  # whether the generator may see a whole batch at once (see _emit_and_feed)
        # records handed to a punctuated generator one by one but not emitted yet: batch, timestamps, from, to
        self._pending: tuple[list[Any], list[Any] | None, int, int] | None = None
        self._context = WatermarkGeneratorSupplierContext()
        #: per-split generators and their outputs (a reader's splits), combined by the multiplexer
        self._splits: dict[Any, tuple[WatermarkGenerator[Any], WatermarkOutput]] = {}
        self._multiplexer = WatermarkOutputMultiplexer(self._emitter)

    def open(self) -> None:
        ctx = self.runtime_context
        assert ctx is not None
        context = self._context
        try:
            assigner: TimestampAssigner[Any] = self.strategy.create_timestamp_assigner(context)
            self._generator = self.strategy.create_watermark_generator(context)
        except Exception as exc:
            raise self.user_error(exc, None, role=f"the WatermarkStrategy of operator '{self.name}'") from exc
        if isinstance(assigner, _FunctionTimestampAssigner):
            self._extract = assigner.function
        elif not isinstance(assigner, RecordTimestampAssigner):
            self._extract = assigner.extract_timestamp
        self._batched = emits_only_periodically(self._generator)
        self._interval = ctx.info.auto_watermark_interval_ms
        if self._interval > 0:
            pts = ctx.processing_time_service
            pts.register_timer(pts.get_current_processing_time() + self._interval, self._on_processing_time)

    def process_batch(self, batch: list[Any]) -> None:
        previous: Any = timestamps_of(batch)
        extract = self._extract
        if extract is None:  # the records keep what they carry; without timestamps they stay plain (Long.MIN_VALUE)
            if previous is None:
                self._records_in += len(batch)
                self._emit_and_feed(batch, None)
                return
            timestamps = previous
        else:
            if previous is not None:
                previous = [LONG_MIN if t is None else t for t in previous]
            try:
                timestamps = list(map(extract, batch, previous if previous is not None else repeat(LONG_MIN)))
            except Exception as exc:
                raise self.user_error(exc, batch, _culprit(batch, extract, previous)) from exc
            if timestamps and set(map(type, timestamps)) != {int}:  # one pass in C
                raise self._bad_timestamp(batch, timestamps)
        self._records_in += len(batch)
        self._emit_and_feed(batch, timestamps)

    @property
    def generates_watermarks(self) -> bool:
        """Whether the strategy makes watermarks at all (not ``no_watermarks()``); known once open."""
        return not isinstance(self._generator, NoWatermarksGenerator)

    def create_output_for_split(self, split_id: Any) -> None:
        """A generator of its own for the split ``split_id`` (the reader's ``SplitBatch`` batches name each record's
        split); from now on the stream's watermark is the minimum over the splits (Flink's
        ``createOutputForSplit``)."""
        if split_id in self._splits:
            return
        try:
            generator = self.strategy.create_watermark_generator(self._context)
        except Exception as exc:
            raise self.user_error(exc, None, role=f"the WatermarkStrategy of operator '{self.name}'") from exc
        self._splits[split_id] = (generator, self._multiplexer.register_new_output(split_id))

    def release_output_for_split(self, split_id: Any) -> None:
        """The split ``split_id`` is finished: it no longer holds the watermark back."""
        if self._splits.pop(split_id, None) is not None:
            self._multiplexer.unregister_output(split_id)

    def _emit_and_feed(self, batch: list[Any], timestamps: list[Any] | None) -> None:
        """Emit the records and show them to the generator. A generator that only emits periodically sees the
        batch at once, after it left; any other may emit a watermark after any record (punctuated), so it sees
        them one by one and each watermark goes out right after the record that caused it, as in Flink. The
        records of a reader's splits go to their split's generator."""
        generator = self._generator
        assert generator is not None
        event_timestamps = timestamps if timestamps is not None else [LONG_MIN] * len(batch)
        split_ids = getattr(batch, "split_ids", None)
        try:
            if self._batched:
                self.output.emit(with_timestamps(batch, timestamps))
                if split_ids is None:
                    feed_events(generator, batch, event_timestamps, self._emitter)
                else:
                    self._feed_splits(batch, event_timestamps, split_ids)
                return
            outputs = [(generator, self._emitter)] * len(batch) if split_ids is None else self._outputs(split_ids)
            self._pending = (batch, timestamps, 0, 0)
            for i, (v, t, (gen, out)) in enumerate(zip(batch, event_timestamps, outputs, strict=True)):
                self._pending = (batch, timestamps, self._pending[2], i + 1)
                gen.on_event(v, t, out)
            self.flush_pending()
        except Exception as exc:
            raise self.user_error(exc, batch, None, role=f"the watermark generator of operator '{self.name}'") from exc
        finally:
            self._pending = None

    def _outputs(self, split_ids: list[Any]) -> list[tuple[WatermarkGenerator[Any], WatermarkOutput]]:
        """The generator and output of each record's split (a split the reader did not announce gets them now)."""
        splits = self._splits
        for split_id in set(split_ids).difference(splits):
            self.create_output_for_split(split_id)
        return [splits[s] for s in split_ids]

    def _feed_splits(self, batch: list[Any], timestamps: list[int], split_ids: list[Any]) -> None:
        """A batched generator per split: each sees its split's records at once."""
        first = split_ids[0] if split_ids else None
        if split_ids.count(first) == len(split_ids):  # one split (counted in C)
            if first is not None:
                generator, output = self._outputs([first])[0]
                feed_events(generator, batch, timestamps, output)
            return
        groups: dict[Any, tuple[list[Any], list[int]]] = {}
        for v, t, s in zip(batch, timestamps, split_ids, strict=True):
            group = groups.get(s)
            if group is None:
                group = groups[s] = ([], [])
            group[0].append(v)
            group[1].append(t)
        for s, (values, stamps) in groups.items():
            generator, output = self._outputs([s])[0]
            feed_events(generator, values, stamps, output)

    def flush_pending(self) -> None:
        """Emit the records the generator has seen but that did not leave yet (before a watermark it emits)."""
        pending = self._pending
        if pending is None:
            return
        batch, timestamps, start, end = pending
        if end > start:
            part = batch[start:end]
            self.output.emit(with_timestamps(part, None if timestamps is None else timestamps[start:end]))
        self._pending = (batch, timestamps, end, end)

    def _on_processing_time(self, time: int) -> None:
        self._periodic_emit()
        ctx = self.runtime_context
        assert ctx is not None
        pts = ctx.processing_time_service
        pts.register_timer(pts.get_current_processing_time() + self._interval, self._on_processing_time)

    def _periodic_emit(self) -> None:
        generator = self._generator
        if generator is None:
            return
        try:
            if self._splits:  # a reader of splits: their generators decide (the main one sees no records)
                for split_generator, output in list(self._splits.values()):
                    split_generator.on_periodic_emit(output)
            else:
                generator.on_periodic_emit(self._emitter)
        except Exception as exc:
            raise self.user_error(exc, None, role=f"the watermark generator of operator '{self.name}'") from exc

    def output_watermark(self) -> int:
        return self._emitter.current_watermark

    def process_watermark(self, timestamp: int) -> None:
        # only the end of input passes: this operator's generator decides the stream's event time
        if timestamp == LONG_MAX and self._emitter.current_watermark != LONG_MAX:
            self._emitter.current_watermark = LONG_MAX
            self.output.emit_watermark(LONG_MAX)

    def process_watermark_status(self, idle: bool) -> None:
        """Upstream idleness does not pass: this operator's generator decides the stream's status."""

    def finish(self) -> None:
        self._periodic_emit()

    # -- errors --------------------------------------------------------------------------------------
    def _bad_timestamp(self, batch: list[Any], timestamps: list[Any]) -> InvalidProgramError:
        i = next(i for i, t in enumerate(timestamps) if type(t) is not int)
        ctx = self.runtime_context
        where = f"subtask {ctx.info.subtask_index + 1}/{ctx.info.parallelism}, " if ctx is not None else ""
        return InvalidProgramError(
            f"expected the timestamp assigner of operator '{self.name}' to return an int of milliseconds; got "
            f"{timestamps[i]!r} ({type(timestamps[i]).__name__}) for input record #{self._records_in + i} "
            f"({where}record {batch[i]!r:.80}); hint: return int(seconds * 1000) for a float, or "
            "int(dt.timestamp() * 1000) for a datetime"
        )


def _culprit(batch: list[Any], extract: Callable[[Any, int], int], previous: list[int] | None) -> Any:
    """The first record the assigner fails on (to name it in the error)."""
    for i, v in enumerate(batch):
        try:
            extract(v, previous[i] if previous is not None else LONG_MIN)
        except Exception:
            return v
    return None
