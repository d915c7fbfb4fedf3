"""Watermark alignment on the JobMaster (FLIP-182; Flink's ``SourceCoordinator.WatermarkAggregator`` and its
``CoordinatorStore`` entry per watermark group).

Each source coordinator keeps the latest watermark every reader reported (:class:`WatermarkAggregator`, the minimum
over its subtasks) and files that minimum under its operator id in the job's :class:`CoordinatorStore`, in the
entry of its watermark group; the group's combined watermark is the minimum over the group's sources, and a reader
may run up to ``max_allowed_watermark_drift`` ahead of it. Pure bookkeeping: the coordinator sends the events.

    >>> from strom.runtime.operators.coordination import CoordinatorStore
    >>> store = CoordinatorStore()
    >>> a, b = WatermarkAggregator(), WatermarkAggregator()
    >>> a.report(0, 5_000), b.report(0, 60_000)
    (5000, 60000)
    >>> max_allowed_watermark(store, "g", "A", a.aggregated, 1_000)
    6000
    >>> max_allowed_watermark(store, "g", "B", b.aggregated, 1_000)  # the group's lowest is A's
    6000
"""

from __future__ import annotations

from typing import Any

__all__ = ["WatermarkAggregator", "max_allowed_watermark"]

LONG_MIN = -(1 << 63)
LONG_MAX = (1 << 63) - 1


class WatermarkAggregator:
    """The latest reported watermark per subtask of one source, and their minimum."""

    def __init__(self) -> None:
        self._watermarks: dict[int, int] = {}

    def report(self, subtask: int, watermark: int) -> int:
        """Record ``subtask``'s watermark; the new minimum."""
        self._watermarks[subtask] = watermark
        return self.aggregated

    def forget(self, subtask: int) -> None:
        """A restarted subtask reports anew (its old watermark may be ahead of what it restores)."""
        self._watermarks.pop(subtask, None)

    @property
    def aggregated(self) -> int:
        return min(self._watermarks.values(), default=LONG_MIN)


def max_allowed_watermark(store: dict[Any, Any], group: str, operator_id: str, watermark: int, drift: int) -> int:
    """File ``operator_id``'s aggregated ``watermark`` in ``group``'s entry of ``store``; the highest watermark a
    reader of the group may have: the group's lowest plus ``drift`` (bounded to a long, as Java's arithmetic would
    not be: Flink's overflow guard)."""
    entry: dict[str, int] = store.setdefault(("watermark-alignment", group), {})
    entry[operator_id] = watermark
    combined = min(entry.values())
    return max(LONG_MIN, min(LONG_MAX, combined + drift))
