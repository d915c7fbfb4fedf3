"""TTL cleanup without reads (the role of Flink's ``RocksDbTtlCompactFiltersManager`` and its compaction filter).

Flink drops expired entries of a state with TTL while RocksDB compacts them: the filter reads each entry's
timestamp (the first 8 bytes of the value, as here) and asks for the current time again after every
``query_time_after_num_entries`` entries. rocksdict lets no compaction filter be written in Python, so the same
filter runs as a **sweep**: every :data:`SWEEP_INTERVAL_MS` of processing time one step visits at most
:data:`SWEEP_ENTRIES_PER_STEP` RocksDB entries, walking the column families of the registered states round-robin
from where the last step stopped, and deletes each expired entry (a value, one list element, one map entry — an
entry, as Flink's filter). Expired entries thus leave RocksDB although nothing reads them.

The step runs on the task thread (a callback of the task's
:class:`~strom.runtime.tasks.processing_time_service.ProcessingTimeService`, between two units of input), never
on another thread: a concurrent delete could remove an entry the task has just written fresh. Snapshot
iterators opened before a step still see what it deletes (RocksDB pins their data), and leave expired entries out
anyway.

A state takes part when its ``StateTtlConfig`` has ``cleanup_in_rocksdb_compact_filter`` (Flink's default for
TTL state since 1.17 with 1 000 entries; ``disable_cleanup_in_background()`` turns it off).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from strom.api.state import StateTtlConfig
    from strom.runtime.state.ttl import TtlPolicy
    from strom.runtime.tasks.processing_time_service import ProcessingTimeService

__all__ = ["SWEEP_ENTRIES_PER_STEP", "SWEEP_INTERVAL_MS", "RocksDbTtlCompactFiltersManager"]

#: RocksDB entries one sweep step visits at most
SWEEP_ENTRIES_PER_STEP = 500
#: processing time (ms) between two sweep steps
SWEEP_INTERVAL_MS = 100
_TS = struct.Struct(">q")


class RocksDbTtlCompactFiltersManager:
    """The sweep over the column families of the states with TTL; ``column_family(name)`` gives a state's column
    family to read and delete in directly (the backend's write cache written into it first and forgotten), ``None``
    for a state without one yet."""

    def __init__(self, column_family: Callable[[str], Any | None]) -> None:
        self._column_family = column_family
        #: state name → (policy, entries between two reads of the clock)
        self._states: dict[str, tuple[TtlPolicy, int]] = {}
        self._order: list[str] = []
        self._next = 0  # index into _order of the state the sweep is in
        self._cursor: bytes | None = None  # the first key the next step visits in that state (None: its start)
        self._timers: ProcessingTimeService | None = None
        self._scheduled = False
        #: entries deleted so far (metrics and tests)
        self.num_deleted = 0

    def register(self, name: str, policy: TtlPolicy, config: StateTtlConfig) -> None:
        """A state with TTL: swept if its config asks for the compaction-filter cleanup."""
        every = config.rocksdb_compact_filter_query_time_after_num_entries
        if every is None or name in self._states:
            return
        self._states[name] = (policy, max(1, every))
        self._order.append(name)
        self._schedule()

    def attach(self, timers: ProcessingTimeService) -> None:
        """The task's processing-time service: the sweep's steps run as its callbacks, on the task thread."""
        if self._timers is None:
            self._timers = timers
            self._schedule()

    def _schedule(self) -> None:
        timers = self._timers
        if timers is None or self._scheduled or not self._states:
            return
        self._scheduled = True
        timers.register_timer(timers.get_current_processing_time() + SWEEP_INTERVAL_MS, self._on_timer)

    def _on_timer(self, _time: int) -> None:
        self._scheduled = False
        self.sweep_step()
        self._schedule()

    def sweep_step(self, budget: int = SWEEP_ENTRIES_PER_STEP) -> int:
        """Visit at most ``budget`` entries (each state at most once per step); the number deleted."""
        deleted = 0
        for _ in range(len(self._order)):
            if budget <= 0:
                break
            name = self._order[self._next]
            visited, removed, done = self._sweep(name, budget)
            budget -= visited
            deleted += removed
            if not done:
                break
            self._next = (self._next + 1) % len(self._order)
            self._cursor = None
        self.num_deleted += deleted
        return deleted

    def _sweep(self, name: str, budget: int) -> tuple[int, int, bool]:
        """Sweep state ``name`` from the cursor: (entries visited, deleted, reached its end)."""
        cf = self._column_family(name)
        if cf is None:
            return 0, 0, True
        policy, every = self._states[name]
        ttl_ms = policy.ttl_ms
        now = policy.clock()
        unpack = _TS.unpack_from
        expired: list[bytes] = []
        it = cf.iter()
        if self._cursor is None:
            it.seek_to_first()
        else:
            it.seek(self._cursor)
        visited = 0
        while visited < budget and it.valid():
            visited += 1
            if visited % every == 0:
                now = policy.clock()
            value = it.value()
            if len(value) >= 8 and unpack(value)[0] + ttl_ms <= now:
                expired.append(it.key())
            it.next()
        done = not it.valid()
        self._cursor = None if done else it.key()
        for key in expired:
            cf.delete(key)
        return visited, len(expired), done
