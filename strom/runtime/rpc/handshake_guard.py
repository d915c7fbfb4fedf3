"""``HandshakeGuard``: what one endpoint lets unauthenticated connections cost it.

Every TCP connection to an RPC or data endpoint starts unauthenticated and may stay so for up to the
handshake timeout (:data:`~strom.runtime.rpc.auth.HANDSHAKE_TIMEOUT`). Without a bound, a connect flood
holds an unbounded number of them open and writes one warning per connection. The guard bounds both:

* **Pending handshakes**: at most ``max_pending`` at once. A new connection beyond that *evicts the
  oldest* pending one (its driver aborts it) rather than being refused: a flood then cannot lock peers
  holding the secret out by keeping ``max_pending`` silent connections open — a real peer finishes its
  handshake in a round trip, long before ``max_pending`` newer connections push it out.
* **Warnings**: one per ``log_interval`` seconds; the rejections in between are counted and the next
  warning (or :meth:`HandshakeGuard.flush` when the endpoint closes) says how many there were.

Pure bookkeeping over an injected :class:`~strom.runtime.rpc.heartbeat.Clock`: no sockets, no tasks.
:func:`strom.runtime.rpc.auth.authenticate_admitted` is its driver.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

from strom.runtime.rpc.heartbeat import Clock, SystemClock

__all__ = [
    "MAX_PENDING_HANDSHAKES",
    "REJECTION_LOG_INTERVAL",
    "HandshakeGuard",
    "HandshakeGuardStatistics",
]

MAX_PENDING_HANDSHAKES = 128
"""Unauthenticated connections an endpoint keeps at once; the oldest goes when another arrives."""
REJECTION_LOG_INTERVAL = 10.0
"""Seconds between two warnings about rejected connections of one endpoint."""

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True, slots=True, kw_only=True)
class HandshakeGuardStatistics:
    """Handshakes running now, and connections that passed / failed / were evicted since the start."""

    pending: int
    accepted: int
    rejected: int
    evicted: int


class HandshakeGuard(Generic[K]):
    """Admission of unauthenticated connections (keys of type ``K``) to one endpoint named ``endpoint``."""

    def __init__(
        self,
        endpoint: str,
        *,
        max_pending: int = MAX_PENDING_HANDSHAKES,
        log_interval: float = REJECTION_LOG_INTERVAL,
        clock: Clock | None = None,
    ) -> None:
        if max_pending < 1:
            raise ValueError(f"expected at least 1 pending handshake; got max_pending={max_pending}")
        self.endpoint = endpoint
        self.max_pending = max_pending
        self.log_interval = log_interval
        self.clock: Clock = clock or SystemClock()
        self._pending: dict[K, None] = {}  # insertion order: the oldest first
        self._evicted: set[K] = set()  # evicted, their drivers not finished yet
        self._evictions = 0
        self._accepted = 0
        self._rejected = 0
        self._suppressed = 0  # rejections not yet reported in a warning
        self._next_warning_at = float("-inf")

    # -- events ------------------------------------------------------------------------------------
    def admit(self, key: K) -> K | None:
        """A connection arrived: its handshake is pending now. Returns the pending connection the driver
        must abort to make room (the oldest), or ``None``."""
        evict: K | None = None
        if len(self._pending) >= self.max_pending:
            evict = next(iter(self._pending))
            del self._pending[evict]
            self._evicted.add(evict)
            self._evictions += 1
        self._pending[key] = None
        return evict

    def finish(self, key: K, *, authenticated: bool) -> bool:
        """The handshake of ``key`` ended; ``False`` if the guard had evicted it (it counts as rejected)."""
        self._pending.pop(key, None)
        if key in self._evicted:
            self._evicted.discard(key)
            return False
        if authenticated:
            self._accepted += 1
        return True

    def rejected(self, peer: str, reason: str) -> str | None:
        """Count a connection that failed its handshake; returns the warning to log now, or ``None`` when
        one was logged less than ``log_interval`` seconds ago (this one is then counted for the next)."""
        self._rejected += 1
        now = self.clock.monotonic()
        if now < self._next_warning_at:
            self._suppressed += 1
            return None
        self._next_warning_at = now + self.log_interval
        more = self._take_suppressed()
        return f"{self.endpoint}: rejected connection from {peer}: {reason}" + (f" ({more})" if more else "")

    def flush(self) -> str | None:
        """At close: the warning about rejections not reported yet, or ``None``."""
        more = self._take_suppressed()
        return f"{self.endpoint}: {more}" if more else None

    # -- inspection --------------------------------------------------------------------------------
    @property
    def pending(self) -> int:
        return len(self._pending)

    def statistics(self) -> HandshakeGuardStatistics:
        return HandshakeGuardStatistics(
            pending=len(self._pending),
            accepted=self._accepted,
            rejected=self._rejected,
            evicted=self._evictions,
        )

    def validate(self) -> None:
        """Check the invariants; raise :class:`AssertionError` naming the first that is broken."""
        assert len(self._pending) <= self.max_pending, f"{len(self._pending)} pending > {self.max_pending}"
        assert not self._evicted & self._pending.keys(), "an evicted connection is still pending"
        assert 0 <= self._suppressed <= self._rejected, f"suppressed {self._suppressed} of {self._rejected}"

    # -- internals ---------------------------------------------------------------------------------
    def _take_suppressed(self) -> str:
        """How many rejections went unlogged (as words; empty if none), and start counting again."""
        n, self._suppressed = self._suppressed, 0
        return f"{n} more connection{'s' if n != 1 else ''} rejected since the last warning" if n else ""
