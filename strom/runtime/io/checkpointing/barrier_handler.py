"""What a task does with the checkpoint barriers on its input channels, as pure state machines (Flink's
``SingleCheckpointBarrierHandler`` in aligned mode and ``CheckpointBarrierTracker``).

Events go in (a barrier, a cancel marker or the end of a channel); actions come out (block a channel,
unblock all, trigger the checkpoint, abort it). The
:class:`~strom.runtime.io.checkpointing.checkpointed_input_gate.CheckpointedInputGate` carries the actions out;
it never decides anything about checkpoints itself. ``tests/unit/io/test_barrier_handler.py`` drives both handlers
through it under random barrier orders.

* :class:`BarrierAligner` — EXACTLY_ONCE. The first barrier of checkpoint *n* starts an alignment; each
  channel that delivered barrier *n* is blocked (its later records wait in its bounded channel queue) until
  every open channel has delivered it; then the task snapshots and all channels resume. A barrier of a newer
  checkpoint aborts an alignment in progress; a cancel marker aborts it too; a barrier older than the last
  one seen is ignored. A channel that ends counts as aligned.
  With ``unaligned=True`` (Flink's unaligned checkpoints, FLIP-76) the *first* barrier triggers the checkpoint
  at once and nothing blocks: the barrier has overtaken the in-flight buffers upstream, and the records that
  still arrive on the other channels before their barrier are the checkpoint's input channel state — the task
  records them (``TriggerCheckpoint.record_channels``) until :class:`StopRecording` for each channel, and the
  channel state is complete with :class:`ChannelStateComplete`. A checkpoint's first barrier decides its mode,
  so an aligned savepoint and unaligned checkpoints share one state machine. An aligned checkpoint switches to
  unaligned (:meth:`BarrierAligner.on_alignment_timeout`, Flink's aligned checkpoint timeout) when its alignment
  times out or an unaligned barrier of it arrives (an upstream task switched): the blocked channels are unblocked,
  the task snapshots, and the channels still owing the barrier are recorded from then on.
* :class:`BarrierTracker` — AT_LEAST_ONCE. Nothing blocks: the checkpoint triggers once every open channel
  has delivered its barrier; records after a barrier may be in the snapshot's "before" part (duplicates on
  replay, no loss).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "AbortCheckpoint",
    "BarrierAligner",
    "BarrierHandlerAction",
    "BarrierTracker",
    "BlockChannel",
    "ChannelStateComplete",
    "StopRecording",
    "TriggerCheckpoint",
    "UnblockAllChannels",
]


@dataclass(frozen=True, slots=True)
class BlockChannel:
    channel: int


@dataclass(frozen=True, slots=True)
class UnblockAllChannels:
    pass


@dataclass(frozen=True, slots=True)
class TriggerCheckpoint:
    """Snapshot now and send the barrier downstream: all barriers are in (aligned), or the first one is
    (unaligned: the barrier overtakes the output buffers, and ``record_channels`` are recorded from now on)."""

    checkpoint_id: int
    unaligned: bool = False
    record_channels: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class StopRecording:
    """Unaligned: ``channel`` delivered the barrier; what it sent before is recorded, nothing after."""

    channel: int


@dataclass(frozen=True, slots=True)
class ChannelStateComplete:
    """Unaligned: every open channel delivered the barrier; the recorded channel state is complete."""

    checkpoint_id: int


@dataclass(frozen=True, slots=True)
class AbortCheckpoint:
    """The checkpoint cannot complete here: decline it and send a cancel marker downstream.

    ``counts`` is False where the decline is no checkpoint failure of its own (Flink's
    ``CheckpointFailureManager`` ignores ``CHECKPOINT_DECLINED_SUBSUMED``): a newer checkpoint's barrier or cancel
    marker overtook it here, or an upstream task declined it already."""

    checkpoint_id: int
    reason: str
    counts: bool = True


BarrierHandlerAction = (
    BlockChannel | UnblockAllChannels | TriggerCheckpoint | StopRecording | ChannelStateComplete | AbortCheckpoint
)


class BarrierAligner:
    """Exactly-once barrier handling over ``num_channels`` input channels: aligned, or unaligned per
    checkpoint (Flink's ``SingleCheckpointBarrierHandler``)."""

    def __init__(self, num_channels: int) -> None:
        self.num_channels = num_channels
        self.finished: set[int] = set()
        self.current: int = -1  # checkpoint being aligned, or the last one triggered/aborted
        self.aligning = False  # barriers of `current` still outstanding
        self.unaligned = False  # `current` was triggered by its first barrier
        self.arrived: set[int] = set()  # channels that delivered barrier `current` (blocked while aligning)

    @property
    def blocked(self) -> frozenset[int]:
        return frozenset(self.arrived) if self.aligning and not self.unaligned else frozenset()

    def _open_channels(self) -> int:
        return self.num_channels - len(self.finished)

    def on_barrier(self, channel: int, checkpoint_id: int, unaligned: bool = False) -> list[BarrierHandlerAction]:
        if channel in self.finished:
            raise ValueError(f"expected no barrier on finished channel {channel}; got checkpoint {checkpoint_id}")
        if checkpoint_id < self.current or (checkpoint_id == self.current and not self.aligning):
            return []  # a barrier of a checkpoint already triggered, aborted or subsumed here
        actions: list[BarrierHandlerAction] = []
        if checkpoint_id > self.current:
            if self.aligning:
                actions += self._abort(
                    f"checkpoint {checkpoint_id} began before {self.current} was aligned", counts=False
                )
            self.current = checkpoint_id
            self.aligning = True
            self.unaligned = unaligned
            self.arrived = {channel}
            if unaligned:
                rest = frozenset(c for c in range(self.num_channels) if c not in self.finished and c != channel)
                actions.append(TriggerCheckpoint(checkpoint_id, unaligned=True, record_channels=rest))
        else:
            if channel in self.arrived:
                raise ValueError(f"expected one barrier {checkpoint_id} on channel {channel}; got a second")
            self.arrived.add(channel)
            if self.unaligned:
                actions.append(StopRecording(channel))
            elif unaligned:  # an upstream task's alignment timed out: this one goes unaligned too
                actions += self._to_unaligned()
        if len(self.arrived) >= self._open_channels():
            return [*actions, *self._complete()]
        return actions if self.unaligned else [*actions, BlockChannel(channel)]

    def on_alignment_timeout(self, checkpoint_id: int) -> list[BarrierHandlerAction]:
        """The aligned checkpoint ``checkpoint_id`` took longer than its aligned checkpoint timeout here: it goes on
        unaligned (Flink's ``AlternatingWaitingForFirstBarrier`` → ``AlternatingCollectingBarriersUnaligned``)."""
        if checkpoint_id != self.current or not self.aligning or self.unaligned:
            return []
        return self._to_unaligned()

    def _to_unaligned(self) -> list[BarrierHandlerAction]:
        """Unblock, snapshot now, and record the channels whose barrier is still to come."""
        self.unaligned = True
        rest = frozenset(c for c in range(self.num_channels) if c not in self.finished and c not in self.arrived)
        return [UnblockAllChannels(), TriggerCheckpoint(self.current, unaligned=True, record_channels=rest)]

    def on_cancel_marker(self, channel: int, checkpoint_id: int) -> list[BarrierHandlerAction]:
        if checkpoint_id < self.current or (checkpoint_id == self.current and not self.aligning):
            return []
        if checkpoint_id > self.current:
            actions: list[BarrierHandlerAction] = []
            if self.aligning:
                actions += self._abort(
                    f"checkpoint {checkpoint_id} was cancelled before {self.current} aligned", counts=False
                )
            self.current = checkpoint_id
            self.aligning = False
            self.arrived = set()
            return [*actions, AbortCheckpoint(checkpoint_id, "cancelled upstream", counts=False)]
        return self._abort("cancelled upstream", counts=False)

    def on_end_of_partition(self, channel: int) -> list[BarrierHandlerAction]:
        self.finished.add(channel)
        self.arrived.discard(channel)
        if self.aligning and len(self.arrived) >= self._open_channels():
            return self._complete()
        return []

    def validate(self) -> None:
        """Check the invariants; raises :class:`AssertionError` (cheap enough for tests to call after each step)."""
        if not self.finished <= set(range(self.num_channels)):
            raise AssertionError(f"finished channels {sorted(self.finished)} outside 0..{self.num_channels - 1}")
        if not self.aligning and self.arrived:
            raise AssertionError(f"channels {sorted(self.arrived)} arrived while no checkpoint aligns")
        if self.arrived & self.finished:
            raise AssertionError(f"finished channels {sorted(self.arrived & self.finished)} counted as arrived")
        if self.aligning and len(self.arrived) >= self._open_channels():
            raise AssertionError(f"checkpoint {self.current} has every barrier but still aligns")

    def _complete(self) -> list[BarrierHandlerAction]:
        self.aligning = False
        self.arrived = set()
        if self.unaligned:
            return [ChannelStateComplete(self.current)]
        return [UnblockAllChannels(), TriggerCheckpoint(self.current)]

    def _abort(self, reason: str, *, counts: bool) -> list[BarrierHandlerAction]:
        self.aligning = False
        self.arrived = set()
        if self.unaligned:
            return [AbortCheckpoint(self.current, reason, counts)]
        return [UnblockAllChannels(), AbortCheckpoint(self.current, reason, counts)]


class BarrierTracker:
    """Unaligned-in-time (at-least-once) barrier counting: never blocks a channel."""

    def __init__(self, num_channels: int) -> None:
        self.num_channels = num_channels
        self.finished: set[int] = set()
        self.pending: dict[int, set[int]] = {}  # checkpoint id -> channels that delivered its barrier
        self.latest: int = -1  # newest checkpoint triggered or aborted here

    @property
    def blocked(self) -> frozenset[int]:
        return frozenset()

    def on_barrier(self, channel: int, checkpoint_id: int, unaligned: bool = False) -> list[BarrierHandlerAction]:
        """``unaligned`` is ignored: at-least-once never blocks a channel, so it has nothing to overtake."""
        if checkpoint_id <= self.latest:
            return []
        seen = self.pending.setdefault(checkpoint_id, set())
        seen.add(channel)
        if len(seen) >= self.num_channels - len(self.finished):
            return self._trigger(checkpoint_id)
        return []

    def on_cancel_marker(self, channel: int, checkpoint_id: int) -> list[BarrierHandlerAction]:
        if checkpoint_id <= self.latest:
            return []
        actions = self._drop_older_than(checkpoint_id, f"checkpoint {checkpoint_id} was cancelled first")
        self.pending.pop(checkpoint_id, None)
        self.latest = checkpoint_id
        return [*actions, AbortCheckpoint(checkpoint_id, "cancelled upstream", counts=False)]

    def on_end_of_partition(self, channel: int) -> list[BarrierHandlerAction]:
        """The channel counts as aligned for every pending checkpoint: each one whose barriers are now all in
        triggers, oldest first (as Flink's ``CheckpointBarrierTracker``), a newer one subsuming the older."""
        self.finished.add(channel)
        open_channels = self.num_channels - len(self.finished)
        for seen in self.pending.values():
            seen.discard(channel)
        actions: list[BarrierHandlerAction] = []
        for cid in sorted(self.pending):
            if cid in self.pending and len(self.pending[cid]) >= open_channels:
                actions += self._trigger(cid)
        return actions

    def validate(self) -> None:
        """Check the invariants; raises :class:`AssertionError` (cheap enough for tests to call after each step)."""
        if not self.finished <= set(range(self.num_channels)):
            raise AssertionError(f"finished channels {sorted(self.finished)} outside 0..{self.num_channels - 1}")
        for cid, seen in self.pending.items():
            if cid <= self.latest:
                raise AssertionError(f"checkpoint {cid} pending though {self.latest} was triggered or aborted")
            if not seen <= set(range(self.num_channels)):
                raise AssertionError(f"checkpoint {cid} has barriers from unknown channels {sorted(seen)}")

    def _trigger(self, checkpoint_id: int) -> list[BarrierHandlerAction]:
        actions = self._drop_older_than(checkpoint_id, f"checkpoint {checkpoint_id} completed its barriers first")
        self.pending.pop(checkpoint_id, None)
        self.latest = checkpoint_id
        return [*actions, TriggerCheckpoint(checkpoint_id)]

    def _drop_older_than(self, checkpoint_id: int, reason: str) -> list[BarrierHandlerAction]:
        older = sorted(c for c in self.pending if c < checkpoint_id)
        for c in older:
            del self.pending[c]
        return [AbortCheckpoint(c, reason, counts=False) for c in older]
