"""``StreamTask``: runs an operator chain in the task thread (Flink's ``StreamTask`` and its
``SourceStreamTask`` / ``OneInputStreamTask`` variants).

``restore()`` initializes the operators' state and opens the chain; ``invoke()`` runs the mailbox loop, whose
default action processes one input buffer (or polls the source once), until the end of input. Mail from
other threads (checkpoint triggers and notifications, operator events from the JobMaster's coordinators — all at
``MAX_PRIORITY``, so an event and a trigger run in the order the JobMaster sent them) and due processing-time
callbacks (timers, periodic watermarks) run between two units, on the task thread. A source task whose reader has
nothing waits on its mailbox — an operator event (new splits) wakes it — for a time that doubles from
``_SOURCE_BACKOFF_MIN`` up to ``_SOURCE_BACKOFF_MAX`` while it stays idle and starts over with the next data.

Event time: a one-input task merges the watermarks and watermark statuses of its input channels in a
:class:`StatusWatermarkValve` and hands the head operator what the valve lets through; a two-input task keeps
one valve per input and the head operator combines the two (Flink's ``StreamTwoInputProcessor``). A source task sends
``MAX_WATERMARK`` at the end of its input (Flink's ``advanceToEndOfEventTime``), so every event-time window
and timer downstream fires before the end of data.

The end of a task follows FLIP-147: at the end of its data a task finishes its operators (they emit what they
buffered) and sends ``EndOfData`` downstream; with checkpointing on it then waits — still taking checkpoints —
until a checkpoint taken after that point has completed, so that the final checkpoint covers, and commits,
everything it emitted; only then does it send ``EndOfPartition`` and finish.
"""

from __future__ import annotations

import pickle
import time
from abc import ABC, abstractmethod
from typing import Any

from strom.api.eventtime import Watermark
from strom.exceptions import TaskCancelledError
from strom.runtime.checkpoint.barrier_handler import (
    AbortCheckpoint,
    BarrierAligner,
    BarrierHandlerAction,
    BarrierTracker,
    BlockChannel,
    ChannelStateComplete,
    StopRecording,
    TriggerCheckpoint,
    UnblockAllChannels,
)
from strom.runtime.metrics.timer_gauge import TimerGauge
from strom.runtime.network.events import (
    CancelCheckpointMarker,
    CheckpointBarrier,
    CheckpointOptions,
    EndOfData,
    EndOfPartitionEvent,
    WatermarkEvent,
    WatermarkStatusEvent,
)
from strom.runtime.network.input_gate import InputGate
from strom.runtime.network.result_partition import ResultPartition
from strom.runtime.operators.source import InputStatus, SourceOperator
from strom.runtime.tasks.mailbox import MAX_PRIORITY, MailboxClosedError, MailboxProcessor, TaskMailbox
from strom.runtime.tasks.operator_chain import OperatorChain
from strom.runtime.tasks.subtask_checkpoint_coordinator import ChannelState, SubtaskCheckpointCoordinator
from strom.runtime.watermark.status_watermark_valve import StatusWatermarkValve, WatermarkStatus

__all__ = ["OneInputStreamTask", "SourceStreamTask", "StreamTask", "TwoInputStreamTask"]

_IDLE_WAIT = 1.0
_SOURCE_BACKOFF_MIN = 0.001
_SOURCE_BACKOFF_MAX = 0.05
_END_OF_DATA = EndOfData()


class StreamTask(ABC):
    def __init__(
        self,
        chain: OperatorChain,
        mailbox: TaskMailbox,
        *,
        buffer_timeout_ms: int,
        idle: TimerGauge | None = None,
        partitions: list[ResultPartition] | None = None,
        checkpoint_coordinator: SubtaskCheckpointCoordinator | None = None,
    ) -> None:
        self.chain = chain
        self.mailbox = mailbox
        self.processor = MailboxProcessor(mailbox)
        self.canceled = False
        self.flush_interval = buffer_timeout_ms / 1000.0
        self._last_flush = time.monotonic()
        self.idle = idle or TimerGauge()
        self.partitions = partitions or []
        #: ``None`` when the job does not checkpoint
        self.subtask_checkpoint = checkpoint_coordinator
        self.end_of_data = False
        self._final_checkpoint_id: int | None = None  # first checkpoint taken after the end of data
        #: in-flight buffers of the unaligned checkpoint this task restores from (set while INITIALIZING)
        self.recovered_channel_state: ChannelState | None = None
        self.timers = chain.processing_time_service

    # -- lifecycle (task thread) -------------------------------------------------------------------
    def restore(self) -> None:
        self.chain.open()

    def invoke(self) -> None:
        recovered, self.recovered_channel_state = self.recovered_channel_state, None
        if recovered is not None:
            self.recover_channel_state(recovered)
        self.run_mailbox_loop()
        self._check_canceled()
        if not self.end_of_data:
            self.end_data()
        self.wait_for_final_checkpoint()
        self.chain.end_output()

    def cleanup(self) -> BaseException | None:
        error = self.chain.close()
        if self.subtask_checkpoint is not None:
            self.subtask_checkpoint.close()
        return error

    def cancel(self) -> None:
        """Any thread: stop the loop at the next opportunity."""
        self.canceled = True
        self.processor.stop()

    def _check_canceled(self) -> None:
        if self.canceled:
            raise TaskCancelledError("task cancelled")

    def recover_channel_state(self, state: ChannelState) -> None:
        """Before anything new: re-send the output buffers the restored checkpoint's barrier had overtaken (they
        come first on their channels), then process the input buffers it persisted."""
        for (pi, si), batches in sorted(state.output.items()):
            for blob in batches:
                self.partitions[pi].emit(si, pickle.loads(blob))
        self.recover_input(state.input)

    def recover_input(self, inputs: dict[int, list[bytes]]) -> None:
        if inputs:
            raise ValueError(
                f"expected no input channel state for a task without inputs; got channels {sorted(inputs)}"
            )

    # -- end of data -------------------------------------------------------------------------------
    def end_data(self) -> None:
        """No more records will come: operators emit what they buffered; ``EndOfData`` goes downstream."""
        self.end_of_data = True
        self.timers.quiesce()  # no processing-time timer fires after the end of input (as Flink)
        self.chain.finish_operators()
        for p in self.partitions:
            p.broadcast_event(_END_OF_DATA)

    def wait_for_final_checkpoint(self) -> None:
        """With checkpointing on: keep serving mail (triggers, notifications) until a checkpoint taken after
        the end of data has completed."""
        sc = self.subtask_checkpoint
        if sc is None:
            return
        processor = self.processor
        mailbox = self.mailbox
        while not self._final_checkpoint_done(sc):
            self._check_canceled()
            if mailbox.has_mail():
                processor.run_mail()
            else:
                self.idle.mark_start()
                mailbox.wait(_IDLE_WAIT)
                self.idle.mark_end()
        self._check_canceled()

    def _final_checkpoint_done(self, sc: SubtaskCheckpointCoordinator) -> bool:
        final = self._final_checkpoint_id
        return final is not None and sc.last_completed_id >= final

    # -- checkpoints (task thread) -----------------------------------------------------------------
    def perform_checkpoint(self, barrier: CheckpointBarrier, alignment_ms: float = 0.0) -> None:
        sc = self.subtask_checkpoint
        if sc is None:
            return
        sc.checkpoint_state(barrier, alignment_ms)
        if self.end_of_data and self._final_checkpoint_id is None:
            self._final_checkpoint_id = barrier.checkpoint_id

    # -- checkpoints (any thread → mailbox) --------------------------------------------------------
    def trigger_checkpoint_async(self, checkpoint_id: int, timestamp_ms: int, options: CheckpointOptions) -> bool:
        """A checkpoint trigger from the JobMaster (to a task no running producer sends barriers to);
        ``False`` if the task can take no mail."""
        barrier = CheckpointBarrier(checkpoint_id, timestamp_ms, options)
        return self._put_mail(lambda: self.on_triggered(barrier), f"checkpoint {checkpoint_id}")

    def on_triggered(self, barrier: CheckpointBarrier) -> None:
        self.perform_checkpoint(barrier)
        if barrier.options.unaligned and self.subtask_checkpoint is not None:
            self.subtask_checkpoint.complete_channel_state(barrier.checkpoint_id, {})  # no input to record

    def notify_checkpoint_complete_async(self, checkpoint_id: int) -> bool:
        sc = self.subtask_checkpoint
        if sc is None:
            return False
        return self._put_mail(
            lambda: sc.notify_checkpoint_complete(checkpoint_id), f"checkpoint {checkpoint_id} complete"
        )

    def notify_checkpoint_aborted_async(self, checkpoint_id: int) -> bool:
        sc = self.subtask_checkpoint
        if sc is None:
            return False
        return self._put_mail(
            lambda: sc.notify_checkpoint_aborted(checkpoint_id), f"checkpoint {checkpoint_id} aborted"
        )

    def dispatch_operator_event_async(self, operator_id: str, event: object) -> bool:
        """An event from the coordinator of ``operator_id``: mail, at the priority of checkpoint triggers so the
        two keep the order the JobMaster sent them in; ``False`` if the task can take no mail."""
        chain = self.chain
        return self._put_mail(
            lambda: chain.handle_operator_event(operator_id, event), f"operator event {type(event).__name__}"
        )

    def _put_mail(self, run: Any, description: str) -> bool:
        try:
            self.mailbox.put(run, description, MAX_PRIORITY)
        except MailboxClosedError:
            return False
        return True

    # -- the loop ----------------------------------------------------------------------------------
    @abstractmethod
    def process_input(self) -> InputStatus:
        """The default action: process one unit of input and say whether more may come."""

    def idle_wait(self) -> float:
        """The longest wait for mail or input after ``process_input`` found nothing."""
        return _IDLE_WAIT

    def run_mailbox_loop(self) -> None:
        processor = self.processor
        mailbox = self.mailbox
        interval = self.flush_interval
        process_input = self.process_input
        monotonic = time.monotonic
        idle = self.idle
        timers = self.timers
        while processor.running:
            if mailbox.has_mail():
                processor.run_mail()
                if not processor.running:
                    break
            timers.fire_due()
            status = process_input()
            if status is InputStatus.END_OF_INPUT:
                return
            now = monotonic()
            if interval > 0 and now - self._last_flush >= interval:
                self.chain.flush()
                self._last_flush = now
            if status is InputStatus.NOTHING_AVAILABLE:
                wait = self.idle_wait()
                if interval > 0:
                    wait = min(wait, interval - (now - self._last_flush))
                wait = timers.seconds_until_next(wait)
                idle.mark_start()
                mailbox.wait(max(wait, 0.0005))
                idle.mark_end()


class SourceStreamTask(StreamTask):
    def __init__(self, chain: OperatorChain, mailbox: TaskMailbox, **kwargs: Any) -> None:
        super().__init__(chain, mailbox, **kwargs)
        head = chain.head
        assert isinstance(head, SourceOperator)
        self.source_operator: SourceOperator = head
        self._backoff = 0.0  # the next idle wait; 0: the last poll had data

    def process_input(self) -> InputStatus:
        status = self.source_operator.emit_next()
        if status is InputStatus.END_OF_INPUT:
            self.source_operator.emit_max_watermark()
        elif status is InputStatus.NOTHING_AVAILABLE:
            # no wake-up signal from the reader: poll again after a wait that grows while it stays idle
            # (events from the enumerator are mail and end the wait at once)
            self._backoff = min(max(self._backoff * 2, _SOURCE_BACKOFF_MIN), _SOURCE_BACKOFF_MAX)
        else:
            self._backoff = 0.0
        return status

    def idle_wait(self) -> float:
        return self._backoff


class OneInputStreamTask(StreamTask):
    """Reads one input gate; checkpoint barriers on it go through the barrier handler (Flink's
    ``CheckpointedInputGate``): aligned for EXACTLY_ONCE, counted for AT_LEAST_ONCE."""

    def __init__(self, chain: OperatorChain, mailbox: TaskMailbox, gate: InputGate, **kwargs: Any) -> None:
        exactly_once: bool = kwargs.pop("exactly_once", True)
        super().__init__(chain, mailbox, **kwargs)
        self.gate = gate
        self._process_batch = chain.head.process_batch
        n = len(gate.channels)
        self.valve = StatusWatermarkValve(n)
        self.barrier_handler: BarrierAligner | BarrierTracker = BarrierAligner(n) if exactly_once else BarrierTracker(n)
        self._barriers: dict[int, CheckpointBarrier] = {}
        self._end_of_data_channels: set[int] = set()
        self._alignment_start: float | None = None
        # unaligned checkpoint in progress: channels still owing its barrier, and what they delivered meanwhile
        self._recording: frozenset[int] = frozenset()
        self._channel_state: dict[int, list[bytes]] = {}
        self._recording_checkpoint = -1
        self._triggered_at_end: CheckpointBarrier | None = None

    def on_triggered(self, barrier: CheckpointBarrier) -> None:
        """Triggered directly: every producer finished, so no barrier comes. The checkpoint waits until the
        records they sent are processed — the end of input — and is then the task's final checkpoint."""
        if self.gate.is_finished():
            super().on_triggered(barrier)
        else:
            self._triggered_at_end = barrier

    def wait_for_final_checkpoint(self) -> None:
        barrier, self._triggered_at_end = self._triggered_at_end, None
        if barrier is not None:
            super().on_triggered(barrier)
        super().wait_for_final_checkpoint()

    def recover_input(self, inputs: dict[int, list[bytes]]) -> None:
        for channel in sorted(inputs):
            for blob in inputs[channel]:
                self._process_batch(pickle.loads(blob))

    def process_input(self) -> InputStatus:
        polled: Any = self.gate.poll_next()
        if polled is None:
            return InputStatus.END_OF_INPUT if self.gate.is_finished() else InputStatus.NOTHING_AVAILABLE
        buf = polled[1]
        if isinstance(buf, list):
            if self._recording and polled[0] in self._recording:
                self._record(polled[0], buf)
            self._process_batch(buf)
            return InputStatus.MORE_AVAILABLE
        return self._process_event(polled[0], buf)

    def _record(self, channel: int, batch: list[Any]) -> None:
        """Before its barrier: part of the unaligned checkpoint's input channel state. Records that cannot be
        pickled (a stream may have a serializer of its own, and the writer only checks a sample of local
        records) abort the checkpoint."""
        try:
            self._channel_state[channel].append(pickle.dumps(batch, protocol=5))
        except Exception as exc:
            self._recording = frozenset()
            self._channel_state = {}
            assert self.subtask_checkpoint is not None
            self.subtask_checkpoint.abort(
                self._recording_checkpoint, f"in-flight records of input channel {channel} cannot be pickled: {exc!r}"
            )

    def _process_event(self, channel: int, event: Any) -> InputStatus:
        handler = self.barrier_handler
        if isinstance(event, WatermarkEvent):
            self._forward_valve_output(self.valve.input_watermark(Watermark(event.timestamp), channel))
        elif isinstance(event, WatermarkStatusEvent):
            status = WatermarkStatus.IDLE if event.idle else WatermarkStatus.ACTIVE
            self._forward_valve_output(self.valve.input_watermark_status(status, channel))
        elif isinstance(event, CheckpointBarrier):
            if self.subtask_checkpoint is not None:
                self._barriers[event.checkpoint_id] = event
                self._act(handler.on_barrier(channel, event.checkpoint_id, event.options.unaligned))
        elif isinstance(event, CancelCheckpointMarker):
            if self.subtask_checkpoint is not None:
                self._act(handler.on_cancel_marker(channel, event.checkpoint_id))
        elif isinstance(event, EndOfData):
            self._end_of_data_channels.add(channel)
            if len(self._end_of_data_channels) == len(self.gate.channels) and not self.end_of_data:
                self.end_data()
        elif isinstance(event, EndOfPartitionEvent):
            if self.subtask_checkpoint is not None:
                self._act(handler.on_end_of_partition(channel))
            if self.gate.is_finished():
                return InputStatus.END_OF_INPUT
        return InputStatus.MORE_AVAILABLE

    def _forward_valve_output(self, outputs: list[Watermark | WatermarkStatus]) -> None:
        head = self.chain.head
        for out in outputs:
            if isinstance(out, Watermark):
                head.process_watermark(out.timestamp)
            else:
                head.process_watermark_status(out.is_idle())

    def _act(self, actions: list[BarrierHandlerAction]) -> None:
        for action in actions:
            if isinstance(action, BlockChannel):
                if self._alignment_start is None:
                    self._alignment_start = time.monotonic()
                self.gate.block(action.channel)
            elif isinstance(action, UnblockAllChannels):
                self.gate.unblock_all()
            elif isinstance(action, TriggerCheckpoint):
                start, self._alignment_start = self._alignment_start, None
                alignment_ms = (time.monotonic() - start) * 1000.0 if start is not None else 0.0
                barrier = self._barriers.get(action.checkpoint_id)
                self._forget_barriers(action.checkpoint_id)
                if action.unaligned:
                    self._recording_checkpoint = action.checkpoint_id
                    self._recording = action.record_channels
                    self._channel_state = {c: [] for c in action.record_channels}
                if barrier is not None:
                    self.perform_checkpoint(barrier, alignment_ms)
            elif isinstance(action, StopRecording):
                self._recording = self._recording - {action.channel}
            elif isinstance(action, ChannelStateComplete):
                inputs, self._channel_state = self._channel_state, {}
                self._recording = frozenset()
                assert self.subtask_checkpoint is not None
                self.subtask_checkpoint.complete_channel_state(action.checkpoint_id, inputs)
            elif isinstance(action, AbortCheckpoint):
                self._alignment_start = None
                self._recording = frozenset()
                self._channel_state = {}
                self._forget_barriers(action.checkpoint_id)
                assert self.subtask_checkpoint is not None
                self.subtask_checkpoint.abort(action.checkpoint_id, action.reason, counts=action.counts)

    def _forget_barriers(self, up_to: int) -> None:
        for cid in [c for c in self._barriers if c <= up_to]:
            del self._barriers[cid]


class TwoInputStreamTask(OneInputStreamTask):
    """Heads a :class:`~strom.runtime.operators.two_input.TwoInputStreamOperator` (Flink's
    ``TwoInputStreamTask``): one gate over the channels of both inputs — so barrier alignment, end of data and
    unaligned channel state span both, as Flink's checkpointed input gates do — with ``channel_inputs[c]``
    (0 or 1) telling which input channel ``c`` feeds. Each input merges its channels' watermarks in a valve of
    its own."""

    def __init__(
        self, chain: OperatorChain, mailbox: TaskMailbox, gate: InputGate, channel_inputs: list[int], **kwargs: Any
    ) -> None:
        super().__init__(chain, mailbox, gate, **kwargs)
        if len(channel_inputs) != len(gate.channels) or set(channel_inputs) - {0, 1}:
            raise ValueError(
                f"expected input 0 or 1 for each of the {len(gate.channels)} channels; got {channel_inputs}"
            )
        head: Any = chain.head
        self._batch_handlers = (head.process_batch1, head.process_batch2)
        self._watermark_handlers = (head.process_watermark1, head.process_watermark2)
        self._status_handlers = (head.process_watermark_status1, head.process_watermark_status2)
        self._channel_inputs = channel_inputs
        # each channel's index within its input, and one valve per input
        counts = [0, 0]
        self._local_index: list[int] = []
        for i in channel_inputs:
            self._local_index.append(counts[i])
            counts[i] += 1
        self.valves = (StatusWatermarkValve(max(counts[0], 1)), StatusWatermarkValve(max(counts[1], 1)))

    def recover_input(self, inputs: dict[int, list[bytes]]) -> None:
        for channel in sorted(inputs):
            handler = self._batch_handlers[self._channel_inputs[channel]]
            for blob in inputs[channel]:
                handler(pickle.loads(blob))

    def process_input(self) -> InputStatus:
        polled: Any = self.gate.poll_next()
        if polled is None:
            return InputStatus.END_OF_INPUT if self.gate.is_finished() else InputStatus.NOTHING_AVAILABLE
        channel, buf = polled
        if isinstance(buf, list):
            if self._recording and channel in self._recording:
                self._record(channel, buf)
            self._batch_handlers[self._channel_inputs[channel]](buf)
            return InputStatus.MORE_AVAILABLE
        if isinstance(buf, WatermarkEvent | WatermarkStatusEvent):
            i = self._channel_inputs[channel]
            valve = self.valves[i]
            if isinstance(buf, WatermarkEvent):
                outputs = valve.input_watermark(Watermark(buf.timestamp), self._local_index[channel])
            else:
                status = WatermarkStatus.IDLE if buf.idle else WatermarkStatus.ACTIVE
                outputs = valve.input_watermark_status(status, self._local_index[channel])
            for out in outputs:
                if isinstance(out, Watermark):
                    self._watermark_handlers[i](out.timestamp)
                else:
                    self._status_handlers[i](out.is_idle())
            return InputStatus.MORE_AVAILABLE
        return self._process_event(channel, buf)
