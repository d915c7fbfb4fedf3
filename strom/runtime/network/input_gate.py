"""``InputGate``: the consumer side of one input — one channel per producing subtask.

Channels report "I have data" with :meth:`InputGate.notify_channel_non_empty` (from any thread); the
task thread takes buffers with :meth:`poll_next`, channel by channel in arrival order, so no channel
starves. ``on_available`` wakes the task's mailbox loop when the gate goes from empty to non-empty.

A channel with a priority event at its head (an unaligned checkpoint's barrier) reports it with
:meth:`InputGate.notify_priority_event`; :meth:`poll_next` takes those first, ahead of every channel's data and
whether or not the channel is blocked (Flink's ``SingleInputGate`` priority queue of channels).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from strom.runtime.network.credit import FloatingBufferPool
from strom.runtime.network.events import EndOfPartitionEvent

if TYPE_CHECKING:
    from strom.runtime.network.input_channel import InputChannel

__all__ = ["InputGate", "InputGateStatistics"]


@dataclass(frozen=True, slots=True, kw_only=True)
class InputGateStatistics:
    num_channels: int
    finished_channels: int
    queued_channels: int
    queued_buffers: int


class InputGate:
    def __init__(self, gate_index: int, on_available: Callable[[], None], *, floating_buffers: int = 8) -> None:
        self.gate_index = gate_index
        self.channels: list[InputChannel] = []
        #: credit of the remote channels; touched only on the TaskManager's event loop once requested
        self.credit = FloatingBufferPool(size=floating_buffers)
        self._on_available = on_available
        self._lock = threading.Lock()
        self._available: deque[int] = deque()
        self._priority: deque[int] = deque()  # channels that reported a priority event at their head
        self._queued: list[bool] = []
        self._finished: list[bool] = []
        self._num_finished = 0
        self._blocked: set[int] = set()  # channels held back by barrier alignment (task thread only)
        self._deferred: set[int] = set()  # blocked channels that had data when polled

    def set_channels(self, channels: Sequence[InputChannel]) -> None:
        self.channels = list(channels)
        self._queued = [False] * len(channels)
        self._finished = [False] * len(channels)

    def request_partitions(self) -> None:
        for ch in self.channels:
            ch.request_subpartition()

    # -- any thread --------------------------------------------------------------------------------
    def notify_channel_non_empty(self, channel_index: int) -> None:
        with self._lock:
            if self._queued[channel_index]:
                return
            self._queued[channel_index] = True
            self._available.append(channel_index)
            was_empty = len(self._available) == 1
        if was_empty:
            self._on_available()

    def notify_priority_event(self, channel_index: int) -> None:
        with self._lock:
            self._priority.append(channel_index)
        self._on_available()

    # -- task thread -------------------------------------------------------------------------------
    def poll_next(self) -> tuple[int, Any] | None:
        """The next buffer (a batch or an event) with its channel index, or ``None`` if none is ready."""
        while True:
            with self._lock:
                if self._priority:
                    idx = self._priority.popleft()
                    priority = True
                elif not self._available:
                    return None
                else:
                    idx = self._available.popleft()
                    self._queued[idx] = False
                    priority = False
            if priority:
                polled = self._poll_priority(idx)
                if polled is None:
                    continue
                return polled
            if idx in self._blocked:
                self._deferred.add(idx)  # its data stays in its (bounded) channel queue until unblocked
                continue
            ch = self.channels[idx]
            buf = ch.poll()
            if buf is None:
                continue
            if isinstance(buf, EndOfPartitionEvent):
                self._finished[idx] = True
                self._num_finished += 1
                ch.release()
            elif ch.has_more():
                self.notify_channel_non_empty(idx)
            return idx, buf

    def _poll_priority(self, idx: int) -> tuple[int, Any] | None:
        ch = self.channels[idx]
        event = ch.poll_priority()  # None: the channel's data path took it already
        if event is None:
            return None
        if ch.has_more():
            self.notify_channel_non_empty(idx)
        return idx, event

    def convert_to_priority(self, channel_index: int, checkpoint_id: int) -> None:
        """An aligned checkpoint switched to unaligned: its barrier on ``channel_index`` becomes a priority event
        (now if queued, else when it arrives), overtaking the buffers ahead of it (Flink's
        ``InputChannel.convertToPriorityEvent``)."""
        self.channels[channel_index].convert_to_priority(checkpoint_id)

    def take_overtaken(self, channel_index: int) -> list[bytes]:
        """The data buffers (pickled batches) the priority event just polled from the channel overtook there."""
        return self.channels[channel_index].take_overtaken()

    # -- barrier alignment (task thread) ----------------------------------------------------------------
    def block(self, channel_index: int) -> None:
        """Stop reading ``channel_index`` until :meth:`unblock_all` (exactly-once alignment)."""
        self._blocked.add(channel_index)

    def unblock_all(self) -> None:
        self._blocked.clear()
        deferred, self._deferred = self._deferred, set()
        for idx in sorted(deferred):
            self.notify_channel_non_empty(idx)

    @property
    def blocked_channels(self) -> frozenset[int]:
        return frozenset(self._blocked)

    def has_available(self) -> bool:
        with self._lock:
            return bool(self._available) or bool(self._priority)

    def is_finished(self) -> bool:
        return self._num_finished == len(self.channels)

    def release(self) -> None:
        for ch in self.channels:
            ch.release()

    def statistics(self) -> InputGateStatistics:
        with self._lock:
            queued_channels = len(self._available)
        return InputGateStatistics(
            num_channels=len(self.channels),
            finished_channels=self._num_finished,
            queued_channels=queued_channels,
            queued_buffers=sum(ch.queued() for ch in self.channels),
        )

    def in_pool_usage(self) -> float:
        """Share of the gate's network buffers (exclusive + floating) holding unconsumed data.

        Call on the event loop, where the credit state lives. Local channels use no network buffers."""
        pool = self.credit
        total = pool.size + sum(ch.exclusive for ch in pool.channels.values())
        used = sum(ch.in_use for ch in pool.channels.values())
        return used / total if total else 0.0
