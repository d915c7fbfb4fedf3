"""Property tests of the credit protocol (``strom.runtime.network.credit``) under random interleavings.

The model: per channel a sender queue, a wire in each direction (FIFO, as one TCP connection), and a
receiver whose task consumes buffers in its own time. Hypothesis picks the order of every step; after each
step the invariants hold, and at the end everything produced has been consumed exactly once, in order.
"""

from __future__ import annotations

from collections import deque

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from strom.runtime.network.credit import CreditError, CreditSender, FloatingBufferPool

pytestmark = pytest.mark.timeout(120)


class CreditProtocol(RuleBasedStateMachine):
    @initialize(
        channels=st.integers(1, 4),
        exclusive=st.integers(1, 3),
        floating=st.integers(0, 5),
    )
    def setup(self, channels: int, exclusive: int, floating: int) -> None:
        self.n = channels
        self.pool = FloatingBufferPool(size=floating)
        self.senders = [CreditSender(self.pool.add_channel(c, exclusive)) for c in range(channels)]
        self.queues: list[deque[tuple[bool, int]]] = [deque() for _ in range(channels)]  # (is_event, value)
        self.data_wire: list[deque[tuple[int, int, bool, int]]] = [deque() for _ in range(channels)]
        self.credit_wire: list[deque[int]] = [deque() for _ in range(channels)]
        self.received: list[deque[tuple[bool, int]]] = [deque() for _ in range(channels)]
        self.produced = [0] * channels
        self.consumed: list[list[int]] = [[] for _ in range(channels)]

    def _announce(self, announcements: list) -> None:  # type: ignore[type-arg]
        for a in announcements:
            assert a.credit > 0
            self.credit_wire[a.channel].append(a.credit)

    @rule(c=st.integers(0, 3), event=st.booleans())
    def produce(self, c: int, event: bool) -> None:
        c %= self.n
        self.queues[c].append((event, self.produced[c]))
        self.produced[c] += 1

    @rule(c=st.integers(0, 3))
    def send(self, c: int) -> None:
        c %= self.n
        q, sender = self.queues[c], self.senders[c]
        if not q or not sender.can_send(q[0][0]):
            return
        is_event, value = q.popleft()
        credit_before = sender.credit
        seq = sender.on_send(is_event)
        assert is_event or credit_before > 0, "a data buffer was sent without credit"
        data_backlog = sum(1 for e, _ in q if not e)
        self.data_wire[c].append((seq, data_backlog, is_event, value))

    @rule(c=st.integers(0, 3))
    def deliver_data(self, c: int) -> None:
        c %= self.n
        if self.data_wire[c]:
            seq, backlog, is_event, value = self.data_wire[c].popleft()
            self._announce(self.pool.on_buffer(c, seq, backlog, is_event))
            self.received[c].append((is_event, value))

    @rule(c=st.integers(0, 3))
    def deliver_credit(self, c: int) -> None:
        c %= self.n
        if self.credit_wire[c]:
            self.senders[c].add_credit(self.credit_wire[c].popleft())

    @rule(c=st.integers(0, 3))
    def consume(self, c: int) -> None:
        c %= self.n
        if self.received[c]:
            is_event, value = self.received[c].popleft()
            self.consumed[c].append(value)
            if not is_event:
                self._announce(self.pool.on_recycle(c))

    @invariant()
    def credit_never_negative(self) -> None:
        if not hasattr(self, "pool"):
            return
        for c in range(self.n):
            assert self.senders[c].credit >= 0
            ch = self.pool.channels[c]
            assert ch.free >= 0 and ch.in_use >= 0 and ch.floating >= 0
            # every free buffer is promised exactly once: sender credit + credit on the wire + data in flight
            in_flight = sum(1 for _, _, e, _ in self.data_wire[c] if not e)
            assert ch.free == self.senders[c].credit + sum(self.credit_wire[c]) + in_flight
            # the receiver never holds more data than it owns buffers
            assert ch.in_use + ch.free == ch.owned
        assert self.pool.available >= 0
        assert self.pool.available + sum(ch.floating for ch in self.pool.channels.values()) == self.pool.size
        self.pool.validate()

    @invariant()
    def nothing_lost_or_reordered(self) -> None:
        if not hasattr(self, "pool"):
            return
        for c in range(self.n):
            seen = self.consumed[c] + [v for _, v in self.received[c]] + [v for *_, v in self.data_wire[c]]
            seen += [v for _, v in self.queues[c]]
            assert seen == list(range(self.produced[c]))

    def teardown(self) -> None:
        if not hasattr(self, "pool"):
            return
        # liveness: with no more production, the pipeline drains completely (no credit deadlock)
        for _ in range(100_000):
            progressed = False
            for c in range(self.n):
                for step in (self.send, self.deliver_data, self.deliver_credit, self.consume):
                    before = (len(self.queues[c]), len(self.data_wire[c]), len(self.credit_wire[c]))
                    before += (len(self.received[c]),)
                    step(c)
                    after = (len(self.queues[c]), len(self.data_wire[c]), len(self.credit_wire[c]))
                    after += (len(self.received[c]),)
                    progressed |= before != after
            if not progressed:
                break
        for c in range(self.n):
            assert self.consumed[c] == list(range(self.produced[c])), f"channel {c} did not drain"


TestCreditProtocol = CreditProtocol.TestCase
TestCreditProtocol.settings = settings(max_examples=300, stateful_step_count=80, deadline=None)


def test_sender_refuses_to_send_without_credit() -> None:
    sender = CreditSender(1)
    assert sender.on_send(is_event=False) == 0
    assert not sender.can_send(next_is_event=False)
    assert sender.can_send(next_is_event=True)
    with pytest.raises(CreditError, match="expected credit"):
        sender.on_send(is_event=False)


def test_receiver_rejects_a_buffer_beyond_its_credit() -> None:
    pool = FloatingBufferPool(size=0)
    pool.add_channel(0, exclusive=1)
    pool.on_buffer(0, 0, backlog=0, is_event=False)
    with pytest.raises(CreditError, match="without credit"):
        pool.on_buffer(0, 1, backlog=0, is_event=False)


def test_receiver_rejects_a_gap_in_sequence_numbers() -> None:
    pool = FloatingBufferPool(size=2)
    pool.add_channel(0, exclusive=2)
    with pytest.raises(CreditError, match="expected buffer #0"):
        pool.on_buffer(0, 1, backlog=0, is_event=False)


def test_backlog_borrows_floating_buffers_and_recycling_returns_them() -> None:
    pool = FloatingBufferPool(size=8)
    pool.add_channel(0, exclusive=2)
    # a buffer arrives announcing 5 more behind it: the channel wants 5 + 2 free buffers, has 1
    grants = pool.on_buffer(0, 0, backlog=5, is_event=False)
    assert [(a.channel, a.credit) for a in grants] == [(0, 6)]
    assert pool.available == 2
    # the backlog drains: consumed floating buffers go back to the pool, exclusive ones stay
    for seq in range(1, 7):
        pool.on_buffer(0, seq, backlog=0, is_event=False)
    for _ in range(7):
        pool.on_recycle(0)
    assert pool.channels[0].floating == 0 and pool.available == 8
    assert pool.channels[0].free == 2


def test_a_returned_floating_buffer_goes_to_the_channel_waiting_for_it() -> None:
    pool = FloatingBufferPool(size=1)
    pool.add_channel(0, exclusive=1)
    pool.add_channel(1, exclusive=1)
    assert [(a.channel, a.credit) for a in pool.on_buffer(0, 0, backlog=1, is_event=False)] == [(0, 1)]
    assert pool.on_buffer(1, 0, backlog=3, is_event=False) == []  # pool empty: channel 1 waits
    pool.on_buffer(0, 1, backlog=0, is_event=False)
    pool.on_recycle(0)  # keeps one (exclusive) buffer free for its sender
    grants = pool.on_recycle(0)  # the floating one is no longer needed by channel 0
    assert [(a.channel, a.credit) for a in grants] == [(1, 1)]


def test_a_released_channels_late_buffers_are_dropped_and_need_no_recycling() -> None:
    pool = FloatingBufferPool(size=2)
    pool.add_channel(0, exclusive=1)
    pool.add_channel(1, exclusive=1)
    assert [(a.channel, a.credit) for a in pool.on_buffer(0, 0, backlog=2, is_event=False)] == [(0, 2)]
    assert pool.on_buffer(1, 0, backlog=0, is_event=False) == []  # the pool is empty: channel 1 waits
    pool.validate()
    # the task lets go of channel 0 (cancelled, failed) while buffers of it are still on the wire
    assert [(a.channel, a.credit) for a in pool.release_channel(0)] == [(1, 1)]  # its floating buffers move on
    assert not pool.is_open(0) and pool.is_open(1)
    pool.validate()
    # what arrives for it afterwards is dropped and owns no buffer; a consumed one is not recycled
    assert pool.on_buffer(0, 1, backlog=5, is_event=False) == []
    assert pool.on_buffer(0, 2, backlog=0, is_event=True) == []
    assert pool.on_recycle(0) == []
    assert pool.dropped_buffers == 2
    assert pool.release_channel(0) == []  # releasing twice is harmless
    pool.validate()
    assert pool.available == 1 and pool.channels[1].floating == 1
    # a channel this gate never registered is still a protocol error
    with pytest.raises(CreditError, match="never registered"):
        pool.on_buffer(7, 0, backlog=0, is_event=False)
