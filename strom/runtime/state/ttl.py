"""State time-to-live (Flink's ``TtlStateFactory`` / ``AbstractTtlDecorator``), for the heap backend.

A state with TTL stores every value as a :class:`TtlValue` — the user value and the time (ms, from the
backend's TTL clock) it was last written or, with ``OnReadAndWrite``, read. List state and map state keep
one timestamp per element / per entry, as Flink does. An entry is expired once
``timestamp + ttl_ms <= now``. Expired entries are removed when they are accessed (returned one last
time under ``ReturnExpiredIfNotCleanedUp``) and left out of snapshots.

    >>> policy = TtlPolicy(StateTtlConfig(ttl_ms=10), lambda: 100)
    >>> policy.expired(TtlValue("x", 90), 100), policy.expired(TtlValue("x", 91), 100)
    (True, False)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, NamedTuple

from strom.api.state import StateTtlConfig, StateVisibility, UpdateType

__all__ = ["TtlPolicy", "TtlValue", "wall_clock_ms"]


class TtlValue(NamedTuple):
    """A user value with its last-access timestamp (ms)."""

    value: Any
    timestamp: int


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class TtlPolicy:
    """One state's TTL settings bound to the backend's clock."""

    __slots__ = ("clock", "return_expired", "ttl_ms", "update_on_read")

    def __init__(self, config: StateTtlConfig, clock: Callable[[], int]) -> None:
        self.ttl_ms = config.ttl_ms
        self.update_on_read = config.update_type is UpdateType.OnReadAndWrite
        self.return_expired = config.state_visibility is StateVisibility.ReturnExpiredIfNotCleanedUp
        self.clock = clock

    def expired(self, tv: TtlValue, now: int) -> bool:
        return tv.timestamp + self.ttl_ms <= now

    def wrap(self, value: Any, now: int | None = None) -> TtlValue:
        return TtlValue(value, self.clock() if now is None else now)

    def purge(self, kind: str, stored: Any, now: int) -> Any:
        """``stored`` without its expired parts (``None`` if nothing is left); for snapshots."""
        if kind == "list":
            fresh = [tv for tv in stored if not self.expired(tv, now)]
            return fresh or None
        if kind == "map":
            fresh_map = {k: tv for k, tv in stored.items() if not self.expired(tv, now)}
            return fresh_map or None
        return None if self.expired(stored, now) else stored
