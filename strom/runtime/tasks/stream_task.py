"""``StreamTask``: runs an operator chain in the task thread (Flink's ``StreamTask``); its kinds are siblings over
it — :class:`~strom.runtime.tasks.source_stream_task.SourceStreamTask`,
:class:`~strom.runtime.tasks.one_input_stream_task.OneInputStreamTask` and
:class:`~strom.runtime.tasks.two_input_stream_task.TwoInputStreamTask`.

``restore()`` initializes the operators' state and opens the chain; ``invoke()`` runs the
:class:`~strom.runtime.tasks.mailbox_processor.MailboxProcessor` loop, whose default action is the task's
``process_input`` — one unit from its input processor (:mod:`strom.runtime.io`), or one poll of its source —
until the end of input. Mail from other threads (checkpoint triggers and notifications, operator events from
the JobMaster's coordinators — all at ``MAX_PRIORITY``, so an event and a trigger run in the order the JobMaster
sent them) and due processing-time callbacks (timers, periodic watermarks) run between two units, on the task
thread. The task knows nothing of barriers, alignment or watermark valves: its input processor's
:class:`~strom.runtime.io.checkpointing.checkpointed_input_gate.CheckpointedInputGate` calls back
:meth:`StreamTask.trigger_checkpoint_on_barrier` and its kin (Flink's ``CheckpointableTask``).

The end of a task follows FLIP-147: at the end of its data a task finishes its operators (they emit what they
buffered) and sends ``EndOfData`` downstream; with checkpointing on it then waits — still taking checkpoints —
until a checkpoint taken after that point has completed, so that the final checkpoint covers, and commits,
everything it emitted; only then does it send ``EndOfPartition`` and finish.
"""

from __future__ import annotations

import pickle
from typing import Any

from strom.exceptions import TaskCancelledError
from strom.runtime.io.stream_input_processor import StreamInputProcessor
from strom.runtime.metrics.timer_gauge import TimerGauge
from strom.runtime.network.events import CheckpointBarrier, CheckpointOptions, EndOfData
from strom.runtime.network.result_partition import ResultPartition
from strom.runtime.operators.source import InputStatus
from strom.runtime.tasks.mailbox import MAX_PRIORITY, MailboxClosedError, TaskMailbox
from strom.runtime.tasks.mailbox_processor import MailboxProcessor
from strom.runtime.tasks.operator_chain import OperatorChain
from strom.runtime.tasks.subtask_checkpoint_coordinator import ChannelState, SubtaskCheckpointCoordinator

__all__ = ["StreamTask"]

_END_OF_DATA = EndOfData()
_IDLE_WAIT = 1.0


class StreamTask:
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
        self.canceled = False
        self.idle = idle or TimerGauge()
        self.partitions = partitions or []
        #: ``None`` when the job does not checkpoint
        self.subtask_checkpoint = checkpoint_coordinator
        self.end_of_data = False
        self._final_checkpoint_id: int | None = None  # first checkpoint taken after the end of data
        self._triggered_at_end: CheckpointBarrier | None = None
        #: in-flight buffers of the unaligned checkpoint this task restores from (set while INITIALIZING)
        self.recovered_channel_state: ChannelState | None = None
        self.timers = chain.processing_time_service
        #: ``None`` for a source task, which polls its source instead
        self.input_processor: StreamInputProcessor | None = None
        self.mailbox_processor = MailboxProcessor(
            mailbox,
            self.process_input,
            timers=self.timers,
            flush=chain.flush,
            flush_interval=buffer_timeout_ms / 1000.0,
            idle=self.idle,
            idle_wait=self.idle_wait,
        )

    def _set_input_processor(self, processor: StreamInputProcessor) -> None:
        """Flink's ``StreamTask.processInput`` asks the input processor; here the mailbox loop calls the
        processor's ``process_input`` itself — the same unit of work, one Python call less per buffer."""
        self.input_processor = processor
        self.mailbox_processor.default_action = processor.process_input

    # -- lifecycle (task thread) -------------------------------------------------------------------
    def restore(self) -> None:
        self.chain.open()

    def invoke(self) -> None:
        recovered, self.recovered_channel_state = self.recovered_channel_state, None
        if recovered is not None:
            self.recover_channel_state(recovered)
        self.mailbox_processor.run_mailbox_loop()
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
        self.mailbox_processor.stop()

    def _check_canceled(self) -> None:
        if self.canceled:
            raise TaskCancelledError("task cancelled")

    def recover_channel_state(self, state: ChannelState) -> None:
        """Before anything new: re-send the output buffers the restored checkpoint's barrier had overtaken (they
        come first on their channels), then process the input buffers it persisted."""
        for (pi, si), batches in sorted(state.output.items()):
            for blob in batches:
                self.partitions[pi].emit(si, pickle.loads(blob))
        if self.input_processor is not None:
            self.input_processor.recover(state.input)
        elif state.input:
            raise ValueError(
                f"expected no input channel state for a task without inputs; got channels {sorted(state.input)}"
            )

    # -- the default action ------------------------------------------------------------------------
    def process_input(self) -> InputStatus:
        """The default action: process one unit of input and say whether more may come."""
        assert self.input_processor is not None
        return self.input_processor.process_input()

    def idle_wait(self) -> float:
        """The longest wait for mail or input after ``process_input`` found nothing (less while an aligned
        checkpoint may time out: the switch to unaligned happens as the task polls)."""
        processor = self.input_processor
        if processor is None:
            return _IDLE_WAIT
        return processor.gate.seconds_until_alignment_timeout(_IDLE_WAIT)

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
        the end of data has completed. A checkpoint triggered while the input was still being drained is taken
        first: it is that final checkpoint."""
        barrier, self._triggered_at_end = self._triggered_at_end, None
        if barrier is not None:
            self._checkpoint_without_barriers(barrier)
        sc = self.subtask_checkpoint
        if sc is None:
            return
        self.mailbox_processor.run_mail_until(lambda: self._final_checkpoint_done(sc), self._check_canceled)

    def _final_checkpoint_done(self, sc: SubtaskCheckpointCoordinator) -> bool:
        final = self._final_checkpoint_id
        return final is not None and sc.last_completed_id >= final

    # -- checkpoints (task thread; Flink's CheckpointableTask) -------------------------------------
    def perform_checkpoint(self, barrier: CheckpointBarrier, alignment_ms: float = 0.0) -> None:
        sc = self.subtask_checkpoint
        if sc is None:
            return
        sc.checkpoint_state(barrier, alignment_ms)
        if self.end_of_data and self._final_checkpoint_id is None:
            self._final_checkpoint_id = barrier.checkpoint_id

    def trigger_checkpoint_on_barrier(self, barrier: CheckpointBarrier, alignment_ms: float) -> None:
        self.perform_checkpoint(barrier, alignment_ms)

    def abort_checkpoint_on_barrier(self, checkpoint_id: int, reason: str, counts: bool) -> None:
        assert self.subtask_checkpoint is not None
        self.subtask_checkpoint.abort(checkpoint_id, reason, counts=counts)

    def complete_channel_state(self, checkpoint_id: int, inputs: dict[int, list[bytes]]) -> None:
        assert self.subtask_checkpoint is not None
        self.subtask_checkpoint.complete_channel_state(checkpoint_id, inputs)

    def on_triggered(self, barrier: CheckpointBarrier) -> None:
        """Triggered directly: a source, or a task every producer of which finished, so no barrier comes. In the
        latter case the checkpoint waits until the records they sent are processed — the end of input — and is
        then the task's final checkpoint."""
        if self.input_processor is None or self.input_processor.is_finished():
            self._checkpoint_without_barriers(barrier)
        else:
            self._triggered_at_end = barrier

    def _checkpoint_without_barriers(self, barrier: CheckpointBarrier) -> None:
        self.perform_checkpoint(barrier)
        if barrier.options.unaligned and self.subtask_checkpoint is not None:
            self.subtask_checkpoint.complete_channel_state(barrier.checkpoint_id, {})  # no input to record

    # -- checkpoints (any thread → mailbox) --------------------------------------------------------
    def trigger_checkpoint_async(self, checkpoint_id: int, timestamp_ms: int, options: CheckpointOptions) -> bool:
        """A checkpoint trigger from the JobMaster (to a task no running producer sends barriers to);
        ``False`` if the task can take no mail."""
        barrier = CheckpointBarrier(checkpoint_id, timestamp_ms, options)
        return self._put_mail(lambda: self.on_triggered(barrier), f"checkpoint {checkpoint_id}")

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
