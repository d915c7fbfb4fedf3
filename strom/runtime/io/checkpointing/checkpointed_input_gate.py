"""``CheckpointedInputGate``: an :class:`~strom.runtime.network.input_gate.InputGate` with its barrier handler
(Flink's ``CheckpointedInputGate`` over a ``CheckpointBarrierHandler``).

:meth:`CheckpointedInputGate.poll_next` hands its input processor the data buffers (a ``list`` of records) and
the events the processor acts on (watermarks, watermark statuses, ``EndOfData``, ``EndOfPartition``); it keeps the
checkpoint barriers and cancel markers to itself. Those go through the pure handler of
:mod:`~strom.runtime.io.checkpointing.barrier_handler` — :class:`BarrierAligner` (EXACTLY_ONCE, aligned or
unaligned per checkpoint) or :class:`BarrierTracker` (AT_LEAST_ONCE) — and the gate carries out the actions it
returns: block and unblock channels, time the alignment, trigger or abort the checkpoint on its
:class:`CheckpointableTask`, and, for an unaligned checkpoint, record the data buffers that arrive on a channel
before its barrier (the input channel state) and hand them over once every barrier is in. An unaligned barrier
is a priority event: it overtakes the buffers queued in its input channel (the gate polls it first), and those
buffers — :meth:`~strom.runtime.network.input_gate.InputGate.take_overtaken` — join the channel's state at once
(Flink's ``RemoteInputChannel.checkpointStarted`` and ``ChannelStatePersister``), so the checkpoint never waits
for backpressured data to be processed. They are processed after the barrier as usual.

With an aligned checkpoint timeout (``CheckpointOptions.aligned_timeout_ms``, Flink's
``execution.checkpointing.aligned-checkpoint-timeout``) a checkpoint's barriers come aligned; the gate switches it
to unaligned when its first barrier arrives later than the timeout after the trigger, or when the alignment lasts
longer than the timeout (checked as the task polls: :meth:`CheckpointedInputGate.poll_next` and
:meth:`seconds_until_alignment_timeout`, which bounds the task's idle wait). The switch unblocks the channels,
snapshots, sends the barrier on unaligned, and turns the barriers still queued in the other channels into priority
events (:meth:`~strom.runtime.network.input_gate.InputGate.convert_to_priority`), so they overtake the data ahead
of them as an unaligned barrier does.

A barrier or cancel marker costs its task no unit of work of its own: :meth:`CheckpointedInputGate.poll_next`
goes on to the next buffer (Flink hands them on to the network input, which ignores them). A gate of a job
without checkpoints has no handler: its barriers and cancel markers are dropped.
"""

from __future__ import annotations

import pickle
import time
from typing import Any, Protocol

from strom.runtime.io.checkpointing.barrier_handler import (
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
from strom.runtime.network.events import CancelCheckpointMarker, CheckpointBarrier, EndOfPartitionEvent
from strom.runtime.network.input_gate import InputGate

__all__ = ["CheckpointableTask", "CheckpointedInputGate"]


class CheckpointableTask(Protocol):
    """What a :class:`CheckpointedInputGate` tells its task (Flink's ``CheckpointableTask`` and the input side of
    its ``ChannelStateWriter``)."""

    def trigger_checkpoint_on_barrier(self, barrier: CheckpointBarrier, alignment_ms: float) -> None:
        """Snapshot and send ``barrier`` downstream: its barriers are in (aligned) or the first one is (unaligned)."""

    def abort_checkpoint_on_barrier(self, checkpoint_id: int, reason: str, counts: bool) -> None:
        """Decline ``checkpoint_id`` and send a cancel marker downstream."""

    def complete_channel_state(self, checkpoint_id: int, inputs: dict[int, list[bytes]]) -> None:
        """Unaligned: the input channel state of ``checkpoint_id`` (pickled buffers per channel) is complete."""


class CheckpointedInputGate:
    """The task thread's view of one input gate: data and the events to act on; barriers handled here."""

    __slots__ = (
        "_alignment_start",
        "_barriers",
        "_channel_state",
        "_deadline",
        "_deadline_checkpoint",
        "_handler",
        "_poll",
        "_recording",
        "_recording_checkpoint",
        "_task",
        "gate",
    )

    def __init__(
        self, gate: InputGate, handler: BarrierAligner | BarrierTracker | None, task: CheckpointableTask
    ) -> None:
        self.gate = gate
        self._poll = gate.poll_next
        self._handler = handler
        self._task = task
        self._barriers: dict[int, CheckpointBarrier] = {}  # barriers seen, by checkpoint, until triggered/aborted
        self._alignment_start: float | None = None
        self._deadline: float | None = None  # monotonic time the aligned checkpoint in progress times out
        self._deadline_checkpoint = -1
        # unaligned checkpoint in progress: channels still owing its barrier, and what they delivered meanwhile
        self._recording: frozenset[int] = frozenset()
        self._channel_state: dict[int, list[bytes]] = {}
        self._recording_checkpoint = -1

    @classmethod
    def create(
        cls, gate: InputGate, task: CheckpointableTask, *, checkpointing: bool, exactly_once: bool
    ) -> CheckpointedInputGate:
        """The gate with the handler of the job's checkpointing mode (none without checkpoints)."""
        n = len(gate.channels)
        handler: BarrierAligner | BarrierTracker | None = None
        if checkpointing:
            handler = BarrierAligner(n) if exactly_once else BarrierTracker(n)
        return cls(gate, handler, task)

    @property
    def num_channels(self) -> int:
        return len(self.gate.channels)

    @property
    def barrier_handler(self) -> BarrierAligner | BarrierTracker | None:
        return self._handler

    @property
    def recording(self) -> frozenset[int]:
        """The channels whose data goes into the unaligned checkpoint in progress (empty without one)."""
        return self._recording

    def is_finished(self) -> bool:
        return self.gate.is_finished()

    def validate(self) -> None:
        """Check the invariants, the handler's too; raises :class:`AssertionError` (for tests, after each step)."""
        handler = self._handler
        if handler is None:
            if self._barriers or self._recording or self.gate.blocked_channels:
                raise AssertionError("a gate without checkpoints keeps no barriers, records and blocks nothing")
            return
        handler.validate()
        if self.gate.blocked_channels != handler.blocked:
            raise AssertionError(
                f"gate blocks {sorted(self.gate.blocked_channels)}; the handler blocks {sorted(handler.blocked)}"
            )
        if not self._recording <= self._channel_state.keys():
            raise AssertionError(f"recording {sorted(self._recording)} without channel state for each")
        if self._recording and not (isinstance(handler, BarrierAligner) and handler.unaligned and handler.aligning):
            raise AssertionError(f"recording {sorted(self._recording)} with no unaligned checkpoint in progress")

    def seconds_until_alignment_timeout(self, at_most: float) -> float:
        """How long the task may wait for input before the alignment in progress times out (``at_most`` if none)."""
        if self._deadline is None:
            return at_most
        return max(0.0, min(at_most, self._deadline - time.monotonic()))

    # -- task thread -----------------------------------------------------------------------------------
    def poll_next(self) -> tuple[int, Any] | None:
        """The next data buffer or event to act on, with its channel index; ``None`` if none is ready."""
        if self._deadline is not None and time.monotonic() >= self._deadline:
            self._alignment_timed_out()
        while True:
            polled = self._poll()
            if polled is None:
                return None
            buf = polled[1]
            if isinstance(buf, list):
                if self._recording and polled[0] in self._recording:
                    self._record(polled[0], buf)
                return polled
            if not self._handle_event(polled[0], buf):
                return polled

    def _handle_event(self, channel: int, event: Any) -> bool:
        """``True`` if the event was the gate's alone (a barrier or a cancel marker)."""
        handler = self._handler
        if isinstance(event, CheckpointBarrier):
            options = event.options
            unaligned = options.unaligned
            overtaken = self.gate.take_overtaken(channel) if unaligned else []
            if handler is not None:
                if options.aligned_timeout_ms and not unaligned and isinstance(handler, BarrierAligner):
                    unaligned = self._first_barrier_late(handler, event)
                self._barriers[event.checkpoint_id] = event
                self._act(handler.on_barrier(channel, event.checkpoint_id, unaligned), (channel, overtaken))
            return True
        if isinstance(event, CancelCheckpointMarker):
            if handler is not None:
                self._act(handler.on_cancel_marker(channel, event.checkpoint_id))
            return True
        if isinstance(event, EndOfPartitionEvent) and handler is not None:
            self._act(handler.on_end_of_partition(channel))
        return False

    def _first_barrier_late(self, handler: BarrierAligner, barrier: CheckpointBarrier) -> bool:
        """A timeoutable aligned barrier: ``True`` if it is the checkpoint's first here and came later than the
        timeout after the trigger (the checkpoint starts unaligned); else its alignment's deadline is set."""
        if barrier.checkpoint_id <= handler.current:
            return False
        timeout_ms = barrier.options.aligned_timeout_ms
        if time.time() * 1000.0 - barrier.timestamp_ms > timeout_ms:
            return True
        self._deadline = time.monotonic() + timeout_ms / 1000.0
        self._deadline_checkpoint = barrier.checkpoint_id
        return False

    def _alignment_timed_out(self) -> None:
        handler = self._handler
        self._deadline = None
        if isinstance(handler, BarrierAligner):
            self._act(handler.on_alignment_timeout(self._deadline_checkpoint))

    def _record(self, channel: int, batch: list[Any]) -> None:
        """Before its barrier: part of the unaligned checkpoint's input channel state. Records that cannot be
        pickled (a stream may have a serializer of its own, and the writer only checks a sample of local
        records) abort the checkpoint."""
        try:
            self._channel_state[channel].append(pickle.dumps(batch, protocol=5))
        except Exception as exc:
            self._recording = frozenset()
            self._channel_state = {}
            self._task.abort_checkpoint_on_barrier(
                self._recording_checkpoint,
                f"in-flight records of input channel {channel} cannot be pickled: {exc!r}",
                True,
            )

    # -- the handler's actions ---------------------------------------------------------------------------
    def _act(self, actions: list[BarrierHandlerAction], overtaken: tuple[int, list[bytes]] | None = None) -> None:
        """``overtaken``: the barrier's channel and the buffers it overtook there (part of that channel's state if
        the barrier starts or continues an unaligned checkpoint)."""
        for action in actions:
            if isinstance(action, BlockChannel):
                if self._alignment_start is None:
                    self._alignment_start = time.monotonic()
                self.gate.block(action.channel)
            elif isinstance(action, UnblockAllChannels):
                self.gate.unblock_all()
            elif isinstance(action, TriggerCheckpoint):
                self._trigger(action, overtaken)
            elif isinstance(action, StopRecording):
                self._recording = self._recording - {action.channel}
                state = self._channel_state.get(action.channel)  # None: the recording was aborted
                if state is not None and overtaken is not None and overtaken[0] == action.channel:
                    state += overtaken[1]
            elif isinstance(action, ChannelStateComplete):
                inputs, self._channel_state = self._channel_state, {}
                self._recording = frozenset()
                self._task.complete_channel_state(action.checkpoint_id, inputs)
            elif isinstance(action, AbortCheckpoint):
                self._alignment_start = None
                self._deadline = None
                self._recording = frozenset()
                self._channel_state = {}
                self._forget_barriers(action.checkpoint_id)
                self._task.abort_checkpoint_on_barrier(action.checkpoint_id, action.reason, action.counts)

    def _trigger(self, action: TriggerCheckpoint, overtaken: tuple[int, list[bytes]] | None) -> None:
        start, self._alignment_start = self._alignment_start, None
        alignment_ms = (time.monotonic() - start) * 1000.0 if start is not None else 0.0
        self._deadline = None
        barrier = self._barriers.get(action.checkpoint_id)
        self._forget_barriers(action.checkpoint_id)
        if action.unaligned:
            self._recording_checkpoint = action.checkpoint_id
            self._recording = action.record_channels
            self._channel_state = {c: [] for c in action.record_channels}
            if overtaken is not None and overtaken[1]:
                self._channel_state[overtaken[0]] = list(overtaken[1])
            if barrier is not None and barrier.options.aligned_timeout_ms:  # switched: on unaligned from here
                if not barrier.options.unaligned:
                    options = barrier.options.to_unaligned()
                    barrier = CheckpointBarrier(barrier.checkpoint_id, barrier.timestamp_ms, options)
                for c in sorted(action.record_channels):
                    self.gate.convert_to_priority(c, action.checkpoint_id)
        if barrier is not None:
            self._task.trigger_checkpoint_on_barrier(barrier, alignment_ms)

    def _forget_barriers(self, up_to: int) -> None:
        for cid in [c for c in self._barriers if c <= up_to]:
            del self._barriers[cid]
