"""Fakes for the input side's unit tests: an input gate over in-memory channel queues, a task that records what
its CheckpointedInputGate tells it, and a data output that records what an input processor pushes. No processes,
no sockets, no threads."""

from __future__ import annotations

import pickle
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from strom.runtime.io.checkpointing.checkpointed_input_gate import CheckpointedInputGate
from strom.runtime.io.data_output import DataOutput
from strom.runtime.network.events import (
    CancelCheckpointMarker,
    CheckpointBarrier,
    CheckpointOptions,
    EndOfData,
    EndOfPartitionEvent,
    WatermarkEvent,
    WatermarkStatusEvent,
)

EOP = EndOfPartitionEvent()
EOD = EndOfData()


def barrier(
    checkpoint_id: int, *, unaligned: bool = False, timeout_ms: int = 0, timestamp_ms: int | None = None
) -> CheckpointBarrier:
    """``timeout_ms`` > 0: an aligned barrier that times out (its checkpoint triggered at ``timestamp_ms``)."""
    stamp = 1000 + checkpoint_id if timestamp_ms is None else timestamp_ms
    return CheckpointBarrier(
        checkpoint_id, stamp, CheckpointOptions(unaligned=unaligned, aligned_timeout_ms=timeout_ms)
    )


class FakeClock:
    """Stands in for the ``time`` module of the checkpointed gate: ``monotonic`` and ``time`` move only when told."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def monotonic(self) -> float:
        return self.now

    def time(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def cancel(checkpoint_id: int) -> CancelCheckpointMarker:
    return CancelCheckpointMarker(checkpoint_id)


def watermark(timestamp: int) -> WatermarkEvent:
    return WatermarkEvent(timestamp)


def idle(is_idle: bool = True) -> WatermarkStatusEvent:
    return WatermarkStatusEvent(is_idle)


class FakeInputGate:
    """An ``InputGate`` over per-channel queues of buffers (lists) and events. ``poll_next`` takes from the
    ready (non-empty, unblocked) channels, the ``picks``-th modulo their number (the first without picks), and
    blocks and finishes channels as the real gate does."""

    def __init__(self, channels: Iterable[Iterable[Any]], picks: Iterable[int] = ()) -> None:
        self.queues: list[deque[Any]] = [deque(c) for c in channels]
        self.channels = list(range(len(self.queues)))
        self.blocked: set[int] = set()
        self.finished: set[int] = set()
        self._picks: Iterator[int] = iter(picks)
        self.block_calls: list[int] = []
        self.unblock_calls = 0
        #: per channel: the buffers (pickled) its next priority event overtook in the channel's queue
        self.overtaken: dict[int, list[bytes]] = {}
        self.converted: list[tuple[int, int]] = []
        self._converted: dict[tuple[int, int], list[bytes]] = {}  # (channel, checkpoint) -> what it overtook
        self._last_barrier: dict[int, int] = {}  # channel -> checkpoint of the barrier it delivered last

    def push(self, channel: int, *items: Any) -> None:
        self.queues[channel].extend(items)

    def poll_next(self) -> tuple[int, Any] | None:
        ready = [c for c, q in enumerate(self.queues) if q and c not in self.blocked]
        if not ready:
            return None
        c = ready[next(self._picks, 0) % len(ready)]
        buf = self.queues[c].popleft()
        if isinstance(buf, CheckpointBarrier):
            self._last_barrier[c] = buf.checkpoint_id
        if isinstance(buf, EndOfPartitionEvent):
            self.finished.add(c)
        return c, buf

    def take_overtaken(self, channel_index: int) -> list[bytes]:
        last = self._last_barrier.get(channel_index)
        if last is not None and (channel_index, last) in self._converted:
            return self._converted.pop((channel_index, last))
        return self.overtaken.pop(channel_index, [])

    def convert_to_priority(self, channel_index: int, checkpoint_id: int) -> None:
        """The queued barrier of ``checkpoint_id`` jumps to the head, unaligned; the data it overtook is recorded
        in ``overtaken`` (as the real channels do). ``converted`` lists the calls."""
        self.converted.append((channel_index, checkpoint_id))
        queue = self.queues[channel_index]
        for i, item in enumerate(queue):
            if isinstance(item, CheckpointBarrier) and item.checkpoint_id == checkpoint_id:
                ahead = list(queue)[:i]
                del queue[i]
                options = item.options.to_unaligned()
                head = 0  # behind the priority events already at the head, as the real channels keep them
                while (
                    head < len(queue) and isinstance(queue[head], CheckpointBarrier) and queue[head].options.unaligned
                ):
                    head += 1
                queue.insert(head, CheckpointBarrier(checkpoint_id, item.timestamp_ms, options))
                self._converted[(channel_index, checkpoint_id)] = [
                    pickle.dumps(b) for b in ahead if isinstance(b, list)
                ]
                return

    def block(self, channel_index: int) -> None:
        self.block_calls.append(channel_index)
        self.blocked.add(channel_index)

    def unblock_all(self) -> None:
        self.unblock_calls += 1
        self.blocked.clear()

    @property
    def blocked_channels(self) -> frozenset[int]:
        return frozenset(self.blocked)

    def is_finished(self) -> bool:
        return len(self.finished) == len(self.queues)

    def has_data_left(self) -> bool:
        return any(self.queues)


@dataclass
class RecordingTask:
    """A ``CheckpointableTask`` that remembers every call; ``snapshot_of`` (if set) is read at each trigger."""

    triggered: list[tuple[CheckpointBarrier, float]] = field(default_factory=list)
    aborted: list[tuple[int, str, bool]] = field(default_factory=list)
    channel_states: dict[int, dict[int, list[bytes]]] = field(default_factory=dict)
    snapshots: dict[int, list[Any]] = field(default_factory=dict)
    processed: list[Any] | None = None

    def trigger_checkpoint_on_barrier(self, barrier: CheckpointBarrier, alignment_ms: float) -> None:
        self.triggered.append((barrier, alignment_ms))
        if self.processed is not None:
            self.snapshots[barrier.checkpoint_id] = list(self.processed)

    def abort_checkpoint_on_barrier(self, checkpoint_id: int, reason: str, counts: bool) -> None:
        self.aborted.append((checkpoint_id, reason, counts))

    def complete_channel_state(self, checkpoint_id: int, inputs: dict[int, list[bytes]]) -> None:
        assert checkpoint_id not in self.channel_states
        self.channel_states[checkpoint_id] = inputs

    def recorded_records(self, checkpoint_id: int) -> list[Any]:
        """The records of the input channel state of ``checkpoint_id``, unpickled."""
        return [r for blobs in self.channel_states[checkpoint_id].values() for b in blobs for r in pickle.loads(b)]

    @property
    def triggered_ids(self) -> list[int]:
        return [b.checkpoint_id for b, _ in self.triggered]

    @property
    def aborted_ids(self) -> list[int]:
        return [cid for cid, _, _ in self.aborted]


@dataclass
class RecordingOutput:
    """What an input pushed into its ``DataOutput``: records, and ("wm", t) / ("idle", bool) markers in order."""

    records: list[Any] = field(default_factory=list)
    events: list[tuple[str, Any]] = field(default_factory=list)

    def emit_batch(self, batch: list[Any]) -> None:
        self.records.extend(batch)

    def emit_watermark(self, timestamp: int) -> None:
        self.events.append(("wm", timestamp))

    def emit_watermark_status(self, is_idle: bool) -> None:
        self.events.append(("idle", is_idle))

    def data_output(self) -> DataOutput:
        return DataOutput(
            emit_batch=self.emit_batch,
            emit_watermark=self.emit_watermark,
            emit_watermark_status=self.emit_watermark_status,
        )


def checkpointed(
    gate: FakeInputGate, task: RecordingTask, *, checkpointing: bool = True, exactly_once: bool = True
) -> CheckpointedInputGate:
    return CheckpointedInputGate.create(
        gate,  # duck-typed: the fake has what CheckpointedInputGate uses of an InputGate
        task,
        checkpointing=checkpointing,
        exactly_once=exactly_once,
    )
