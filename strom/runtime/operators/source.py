"""``SourceOperator``: reads the splits its enumerator assigns to its subtask through a ``SourceReader`` (Flink's
``SourceOperator``)."""

from __future__ import annotations

import enum
import socket
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from strom.api.eventtime import WatermarkAlignmentParams
from strom.api.source import Source, SourceReader, SourceReaderContext, SourceSplit
from strom.api.state import ListState, ListStateDescriptor
from strom.runtime.operators.base import ChainingStrategy, StreamOperator
from strom.runtime.operators.batch_budget import BatchBudget
from strom.runtime.operators.coordination import OperatorCoordinatorProvider, OperatorEventGateway
from strom.runtime.source.event import (
    AddSplitEvent,
    NoMoreSplitsEvent,
    ReaderRegistrationEvent,
    ReportedWatermarkEvent,
    RequestSplitEvent,
    SourceEventWrapper,
    WatermarkAlignmentEvent,
)

LONG_MAX = (1 << 63) - 1

if TYPE_CHECKING:
    from strom.runtime.checkpoint.snapshot import OperatorRestoreState, OperatorSnapshot

__all__ = ["InputStatus", "SourceOperator"]


class InputStatus(enum.Enum):
    MORE_AVAILABLE = 0
    NOTHING_AVAILABLE = 1
    END_OF_INPUT = 2


class SourceOperator(StreamOperator):
    """Polls its reader for batches; its splits come from the source's enumerator on the JobMaster.

    At ``open`` it creates the reader, adds the splits restored from the checkpoint, starts the reader and
    registers it with the enumerator (whose ``add_reader`` runs then); split requests and custom events go to the
    enumerator through the operator's ``gateway``, and the enumerator's answers (``AddSplitEvent``,
    ``NoMoreSplitsEvent``, custom events) arrive in ``handle_operator_event`` on the task thread. The input ends
    when ``poll_batch()`` returns ``None`` *and* the enumerator said no more splits will come; a reader that
    returns ``None`` before is polled again. At a checkpoint the reader's unfinished splits, with their positions,
    go into the list state ``SourceReaderState``; a restored subtask adds that state's splits (redistributed on
    rescale). Without a gateway (the operator driven outside a job, in a unit test) it reads ``splits`` and ends
    with them.

    A poll is bounded by records (``execution.batch-size``) and by estimated bytes (``execution.batch-bytes``):
    a :class:`~strom.runtime.operators.batch_budget.BatchBudget` follows the size of the records polled and
    sets the reader context's ``batch_size`` for the next poll. A batch larger than that (a reader that does
    not read ``batch_size``) is emitted in slices of it.

    With watermark alignment (the strategy's ``with_watermark_alignment``, FLIP-182) the operator reports its
    watermark to the coordinator every update interval (a processing-time timer) and polls no batch while its
    watermark is above the highest the coordinator last allowed (Flink's ``SourceOperator.checkWatermarkAlignment``;
    the task waits on its mailbox, where the next allowance arrives). At the end of its input it reports the
    maximal watermark, so it no longer holds its group back."""

    chaining_strategy = ChainingStrategy.HEAD

    def __init__(self, source: Source[Any], watermark_strategy: Any = None) -> None:
        super().__init__()
        self.source = source
        #: the WatermarkStrategy of ``from_source(...)``, applied to every polled batch (as Flink's SourceOperator)
        self.watermark_strategy = watermark_strategy
        self._timestamps: Any = None  # a TimestampsAndWatermarksOperator fed by this source
        self.splits: Sequence[SourceSplit] = ()
        self._budget = BatchBudget(1 << 20)
        self._reader_context: SourceReaderContext | None = None
        self._reader: SourceReader[Any] | None = None
        self._split_state: ListState[Any] | None = None
        #: set by the OperatorChain: the line to the source's coordinator
        self.gateway: OperatorEventGateway | None = None
        self.no_more_splits = False
        #: watermark alignment: the parameters, and the highest watermark the group allows now
        self.alignment: WatermarkAlignmentParams | None = (
            watermark_strategy.alignment_parameters() if watermark_strategy is not None else None
        )
        self.max_allowed_watermark = LONG_MAX

    def coordinator_provider(self) -> OperatorCoordinatorProvider:
        from strom.runtime.source.coordinator import SourceCoordinatorProvider

        return SourceCoordinatorProvider(self.operator_id, self.source, self.alignment)

    def initialize_state(self, restore: OperatorRestoreState | None) -> None:
        super().initialize_state(restore)
        self._split_state = self.operator_state_backend.get_list_state(ListStateDescriptor("SourceReaderState"))
        if restore is not None:
            self.splits = list(self._split_state.get() or ())

    def snapshot_state(self, checkpoint_id: int, timestamp_ms: int) -> OperatorSnapshot | None:
        reader = self._reader
        if reader is not None and self._split_state is not None:
            try:
                splits = reader.snapshot_state(checkpoint_id)
            except Exception as exc:
                raise self.user_error(exc, None) from exc
            self._split_state.update(list(splits))
        return super().snapshot_state(checkpoint_id, timestamp_ms)

    def open(self) -> None:
        ctx = self.runtime_context
        assert ctx is not None
        self._budget = budget = BatchBudget(ctx.info.batch_bytes, max_records=ctx.info.batch_size)
        host = socket.gethostname()
        self._reader_context = reader_context = SourceReaderContext(
            subtask_index=ctx.info.subtask_index,
            parallelism=ctx.info.parallelism,
            batch_size=budget.max_records,
            local_host_name=host,
            side_output_emitter=self._emit_side,
        )
        gateway = self.gateway
        if gateway is not None:
            send = gateway.send_event_to_coordinator_nowait
            reader_context.split_request_sender = lambda: send(RequestSplitEvent(hostname=host))
            reader_context.source_event_sender = lambda e: send(SourceEventWrapper(event=e))
        else:
            self.no_more_splits = True  # standalone: ``splits`` is all there is
        if self.watermark_strategy is not None:
            from strom.runtime.operators.timestamps_and_watermarks import TimestampsAndWatermarksOperator

            inner = TimestampsAndWatermarksOperator(self.watermark_strategy)
            inner.name = self.name
            inner.setup(ctx, self.output)
            inner.open()
            self._timestamps = inner
            if inner.generates_watermarks:  # per-split outputs (no_watermarks(): nothing to split)
                reader_context.create_output_for_split = inner.create_output_for_split
                reader_context.release_output_for_split = inner.release_output_for_split
        try:
            self._reader = self.source.create_reader(reader_context)
            if self.splits:
                self._reader.add_splits(list(self.splits))
        except Exception as exc:
            raise self.user_error(exc, None) from exc
        if gateway is not None:  # before start(): a split request sent in start() follows the registration
            registration = ReaderRegistrationEvent(subtask_id=ctx.info.subtask_index, location=host)
            gateway.send_event_to_coordinator_nowait(registration)
        try:
            self._reader.start()
            if gateway is None:
                self._reader.notify_no_more_splits()
        except Exception as exc:
            raise self.user_error(exc, None) from exc
        # a reader that takes batch_size once, when created, polls full batches as before (emitted in slices);
        # one that reads it at every poll follows the budget from the first poll on
        reader_context.batch_size = budget.records
        if self.alignment is not None and gateway is not None:
            self._report_watermark(ctx.processing_time_service.get_current_processing_time())

    def emit_next(self) -> InputStatus:
        reader = self._reader
        assert reader is not None
        if self.max_allowed_watermark < LONG_MAX and self.output_watermark() > self.max_allowed_watermark:
            return InputStatus.NOTHING_AVAILABLE  # aligned: wait for the group (the allowance arrives as mail)
        try:
            batch = reader.poll_batch()
        except Exception as exc:
            raise self.user_error(exc, None) from exc
        if batch is None:
            # the reader is done with its splits; without "no more splits" more may come
            return InputStatus.END_OF_INPUT if self.no_more_splits else InputStatus.NOTHING_AVAILABLE
        if not batch:
            return InputStatus.NOTHING_AVAILABLE
        budget = self._budget
        budget.observe(batch, len(batch))
        assert self._reader_context is not None
        self._reader_context.batch_size = budget.records
        if len(batch) > budget.records:  # the reader did not follow batch_size
            for part in budget.slices(batch):
                self._emit(part)
        else:
            self._emit(batch)
        return InputStatus.MORE_AVAILABLE

    def handle_operator_event(self, event: object) -> None:
        reader = self._reader
        if reader is None:
            return  # closed
        try:
            if isinstance(event, AddSplitEvent):
                reader.add_splits(list(event.splits))
            elif isinstance(event, NoMoreSplitsEvent):
                self.no_more_splits = True
                reader.notify_no_more_splits()
            elif isinstance(event, SourceEventWrapper):
                reader.handle_source_events(event.event)
            elif isinstance(event, WatermarkAlignmentEvent):
                self.max_allowed_watermark = event.max_watermark
            else:
                raise TypeError(f"expected a source operator event; got {type(event).__name__}")
        except Exception as exc:
            raise self.user_error(exc, None) from exc

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        if self._reader is not None:
            try:
                self._reader.notify_checkpoint_complete(checkpoint_id)
            except Exception as exc:
                raise self.user_error(exc, None) from exc

    def _emit_side(self, tag_id: str, records: list[Any]) -> None:
        self.output.emit_side(tag_id, records)

    def _emit(self, batch: list[Any]) -> None:
        self._records_in += len(batch)
        if self._timestamps is not None:
            self._timestamps.process_batch(batch)
        else:
            self.output.emit(batch)

    def output_watermark(self) -> int:
        return int(self._timestamps.output_watermark()) if self._timestamps is not None else self.current_watermark

    def emit_max_watermark(self) -> None:
        """The end of input: event time ends (Flink's ``advanceToEndOfEventTime``)."""
        if self._timestamps is not None:
            self._timestamps.finish()  # the generator's last periodic watermark first, as Flink's finish()
            self._timestamps.process_watermark(LONG_MAX)
        else:
            self.output.emit_watermark(LONG_MAX)
        if self.alignment is not None and self.gateway is not None:
            self.gateway.send_event_to_coordinator_nowait(ReportedWatermarkEvent(watermark=LONG_MAX))

    def _report_watermark(self, now_ms: int) -> None:
        """Every update interval: this subtask's watermark to the coordinator, whose answer is the allowance."""
        if self._reader is None or self.gateway is None or self.alignment is None:
            return  # closed
        self.gateway.send_event_to_coordinator_nowait(ReportedWatermarkEvent(watermark=self.output_watermark()))
        ctx = self.runtime_context
        assert ctx is not None
        ctx.processing_time_service.register_timer(now_ms + self.alignment.update_interval_ms, self._report_watermark)

    def process_batch(self, batch: list[Any]) -> None:
        raise TypeError("a source operator has no input")

    def close(self) -> None:
        if self._reader is not None:
            try:
                self._reader.close()
            except Exception as exc:
                raise self.user_error(exc, None) from exc
            finally:
                self._reader = None
