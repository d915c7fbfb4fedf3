"""Credit-based flow control as pure state machines (Flink's ``CreditBasedSequenceNumberingViewReader``
on the sender and ``RemoteInputChannel`` + ``BufferManager`` on the receiver).

Nothing here does I/O, takes a lock or knows a thread: the drivers (``connection_manager`` on the
TaskManager's event loop) call these methods and carry out what they return. That is what the property
tests in ``tests/unit/runtime/network/test_credit.py`` exercise under random interleavings.

The protocol, per remote channel:

* The receiver owns ``exclusive`` buffers from the start and announces them as the initial credit in its
  partition request. It may also borrow *floating* buffers from its gate's :class:`FloatingBufferPool`.
* Every free buffer the receiver owns is promised to the sender exactly once, as one credit.
* The sender sends a data buffer only while it holds credit and spends one credit per buffer; events
  (end of partition, later barriers and watermarks) need none — as in Flink, they are small and rare.
  Each buffer carries the sender's *backlog*: the data buffers still queued behind it.
* On each buffer the receiver learns the backlog and asks the pool for floating buffers until it owns
  ``backlog + exclusive`` free ones; each floating buffer it gets becomes one new credit. When the pool is
  empty the channel waits in line; a recycled floating buffer goes to the first channel in line.
* When the task has consumed a buffer, the receiver recycles it: an exclusive buffer is free again (one new
  credit); a floating buffer the channel no longer needs goes back to the pool instead.

* A released channel (ended, cancelled, or its task gone) gives its floating buffers back at once. Buffers
  of it still on the wire are dropped when they arrive and need no recycling: a released channel owns
  nothing any more. Only a channel the pool never knew is a protocol error.

Invariant: for every channel, free buffers at the receiver = credit at the sender + credit announced but
not yet arrived + data buffers in flight. So a buffer that arrives always has a free buffer to land in.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

__all__ = ["CreditAnnouncement", "CreditError", "CreditSender", "FloatingBufferPool", "RemoteChannelCredit"]


class CreditError(Exception):
    """The peer broke the credit protocol (sent without credit, announced a non-positive credit)."""


# -- sender side ----------------------------------------------------------------------------------------
class CreditSender:
    """The sender's view of one remote channel: its credit and the next sequence number."""

    __slots__ = ("credit", "sequence")

    def __init__(self, initial_credit: int) -> None:
        if initial_credit < 0:
            raise CreditError(f"expected a non-negative initial credit; got {initial_credit}")
        self.credit = initial_credit
        self.sequence = 0

    def add_credit(self, credit: int) -> None:
        if credit <= 0:
            raise CreditError(f"expected a positive credit announcement; got {credit}")
        self.credit += credit

    def can_send(self, next_is_event: bool) -> bool:
        """Whether the head of the queue may go now: data needs a credit, an event does not."""
        return next_is_event or self.credit > 0

    def on_send(self, is_event: bool) -> int:
        """Account for one buffer put on the wire; returns its sequence number."""
        if not is_event:
            if self.credit <= 0:
                raise CreditError("expected credit before sending a data buffer; got none")
            self.credit -= 1
        seq = self.sequence
        self.sequence += 1
        return seq


# -- receiver side --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CreditAnnouncement:
    """Tell the sender of ``channel`` that ``credit`` more buffers are free for it."""

    channel: int
    credit: int


@dataclass(slots=True)
class RemoteChannelCredit:
    """Buffer accounting of one remote input channel."""

    channel: int
    exclusive: int
    free: int = 0  # buffers owned and empty; each is promised to the sender as one credit
    floating: int = 0  # floating buffers owned (free or holding data)
    in_use: int = 0  # buffers holding received data the task has not consumed yet
    required: int = 0  # free buffers wanted: last backlog + exclusive
    waiting: bool = False  # in line at the pool for a floating buffer
    next_sequence: int = 0

    @property
    def owned(self) -> int:
        return self.exclusive + self.floating


@dataclass(slots=True)
class FloatingBufferPool:
    """The floating buffers of one input gate, shared by its remote channels; plus their bookkeeping."""

    size: int
    available: int = -1
    channels: dict[int, RemoteChannelCredit] = field(default_factory=dict)
    released: set[int] = field(default_factory=set)
    """Channels released while open: their late buffers are dropped, not a protocol error."""
    dropped_buffers: int = 0
    """Buffers that arrived for a released channel."""
    _waiting: deque[int] = field(default_factory=deque)

    def __post_init__(self) -> None:
        if self.size < 0:
            raise CreditError(f"expected a non-negative number of floating buffers; got {self.size}")
        if self.available < 0:
            self.available = self.size

    def add_channel(self, channel: int, exclusive: int) -> int:
        """Register a remote channel; returns its initial credit (its exclusive buffers)."""
        if exclusive < 1:
            raise CreditError(f"expected at least 1 exclusive buffer per remote channel; got {exclusive}")
        state = RemoteChannelCredit(channel=channel, exclusive=exclusive, free=exclusive, required=exclusive)
        self.channels[channel] = state
        self.released.discard(channel)
        return exclusive

    def is_open(self, channel: int) -> bool:
        """Whether ``channel`` is registered and not released: only then may it request its partition."""
        return channel in self.channels

    # -- events of the protocol -------------------------------------------------------------------------
    def on_buffer(self, channel: int, sequence: int, backlog: int, is_event: bool) -> list[CreditAnnouncement]:
        """A buffer arrived; returns the credit to announce (floating buffers granted by backlog).

        A buffer of a released channel is dropped (counted in :attr:`dropped_buffers`): it was on the wire
        when the channel let go of its buffers, so there is nothing to land in and nothing to recycle."""
        ch = self._channel(channel)
        if ch is None:
            self.dropped_buffers += 1
            return []
        if sequence != ch.next_sequence:
            raise CreditError(
                f"expected buffer #{ch.next_sequence} on channel {channel}; got #{sequence}: data was lost or reordered"
            )
        ch.next_sequence += 1
        if not is_event:
            if ch.free <= 0:
                raise CreditError(f"expected no data buffer on channel {channel} without credit; got one")
            ch.free -= 1
            ch.in_use += 1
        return self._on_backlog(ch, backlog)

    def on_recycle(self, channel: int) -> list[CreditAnnouncement]:
        """The task consumed one data buffer of ``channel``: free it or return it to the pool.

        Nothing happens for a released channel: its buffers went with it."""
        ch = self._channel(channel)
        if ch is None:
            return []
        if ch.in_use <= 0:
            raise CreditError(f"expected a buffer in use on channel {channel} to recycle; got none")
        ch.in_use -= 1
        if ch.floating > 0 and ch.free >= ch.required:
            ch.floating -= 1  # a floating buffer no longer needed here
            return self._give_back()
        ch.free += 1
        return [CreditAnnouncement(channel, 1)]

    def release_channel(self, channel: int) -> list[CreditAnnouncement]:
        """The channel ended or was cancelled: all its floating buffers go back to the pool."""
        ch = self.channels.pop(channel, None)
        if ch is None:
            return []
        self.released.add(channel)
        if ch.waiting:
            self._waiting.remove(channel)
        returned = ch.floating
        out: list[CreditAnnouncement] = []
        for _ in range(returned):
            out.extend(self._give_back())
        return out

    def validate(self) -> None:
        """Check the pool's invariants; raise :class:`AssertionError` naming the first that is broken."""
        owned = sum(ch.floating for ch in self.channels.values())
        assert 0 <= self.available <= self.size, f"available {self.available} outside 0..{self.size}"
        assert self.available + owned == self.size, (
            f"floating buffers leaked: {self.available} available + {owned} owned != {self.size}"
        )
        assert not self.released & self.channels.keys(), f"released channels still open: {self.released}"
        assert all(c in self.channels and self.channels[c].waiting for c in self._waiting), "waiting line broken"
        assert len(set(self._waiting)) == len(self._waiting), f"a channel waits twice: {list(self._waiting)}"
        for ch in self.channels.values():
            assert min(ch.free, ch.in_use, ch.floating) >= 0, f"negative count on channel {ch.channel}: {ch}"
            assert ch.free + ch.in_use == ch.owned, f"channel {ch.channel} holds more than it owns: {ch}"
            assert ch.waiting == (ch.channel in self._waiting), f"channel {ch.channel} waiting flag broken"

    # -- internals -----------------------------------------------------------------------------------------
    def _channel(self, channel: int) -> RemoteChannelCredit | None:
        ch = self.channels.get(channel)
        if ch is None and channel not in self.released:
            raise CreditError(
                f"expected a registered input channel; got channel {channel}, which this gate never registered; "
                "hint: the sender answered a request this gate never made"
            )
        return ch

    def _on_backlog(self, ch: RemoteChannelCredit, backlog: int) -> list[CreditAnnouncement]:
        ch.required = backlog + ch.exclusive
        granted = 0
        while ch.free < ch.required and not ch.waiting:
            if self.available > 0:
                self.available -= 1
                ch.floating += 1
                ch.free += 1
                granted += 1
            else:
                ch.waiting = True
                self._waiting.append(ch.channel)
        return [CreditAnnouncement(ch.channel, granted)] if granted else []

    def _give_back(self) -> list[CreditAnnouncement]:
        """One floating buffer returns to the pool; hand it to the first channel still in need."""
        while self._waiting:
            idx = self._waiting.popleft()
            ch = self.channels[idx]
            ch.waiting = False
            if ch.free < ch.required:
                ch.floating += 1
                ch.free += 1
                if ch.free < ch.required:
                    ch.waiting = True
                    self._waiting.append(idx)
                return [CreditAnnouncement(idx, 1)]
        self.available += 1
        return []
