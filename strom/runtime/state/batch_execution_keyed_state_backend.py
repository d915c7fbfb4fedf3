"""``BatchExecutionKeyedStateBackend``: the keyed state of an operator fed sorted input in BATCH execution (Flink's
class of that name).

A :class:`~strom.runtime.io.sorting_data_input.SortingDataInput` hands the operator its records key after key, so
only the current key's state is ever needed: :meth:`end_key` drops it when the key is done, and the tables hold
one key at a time whatever the number of keys. Every state kind, TTL and window namespaces work as in the heap
backend it extends (a dict of one entry costs what a field would: CPython has no cheaper single-key store), and
whatever ``state.backend.type`` says, as in Flink, where BATCH replaces the configured backend with this one.
BATCH takes no checkpoints: a snapshot is refused.
"""

from __future__ import annotations

from collections.abc import Callable

from strom.exceptions import CheckpointError
from strom.runtime.state.heap_keyed_state_backend import HeapKeyedStateBackend

__all__ = ["BatchExecutionKeyedStateBackend"]


class BatchExecutionKeyedStateBackend(HeapKeyedStateBackend):
    """Keyed state of the current key only (BATCH execution with sorted inputs)."""

    def end_key(self) -> None:
        """The current key's records and timers are done: forget its state (every state, every namespace)."""
        for table in self._tables.values():
            if table:
                table.clear()
        for ns_table in self._ns_tables.values():
            if ns_table:
                ns_table.clear()

    def async_snapshot(self) -> Callable[[], dict[int, bytes]]:
        raise CheckpointError(
            "expected no checkpoint of a BATCH job's keyed state; got a snapshot request; hint: BATCH execution "
            "recovers by re-running tasks from their inputs, not from checkpoints"
        )
