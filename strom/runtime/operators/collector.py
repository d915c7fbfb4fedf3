"""``TimestampedCollector``: gathers what user functions emit while an operator works through a batch
(Flink's ``TimestampedCollector``): the main output and side outputs, each record stamped with the
timestamp of the input record (or firing timer) it came from. ``flush`` hands it all downstream as one batch
per output — a plain list when no record carries a timestamp.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from strom.runtime.operators.base import Output
from strom.runtime.streamrecord import TimestampedBatch

__all__ = ["TimestampedCollector"]


class TimestampedCollector:
    __slots__ = ("side", "timed", "timestamps", "values")

    def __init__(self) -> None:
        self.values: list[Any] = []
        self.timestamps: list[int | None] = []
        self.timed = False  # whether any record so far has a timestamp (timestamps is kept only then)
        self.side: dict[str, TimestampedCollector] = {}

    def add_all(self, results: Iterable[Any], timestamp: int | None) -> None:
        values = self.values
        n = len(values)
        values.extend(results)
        if timestamp is not None or self.timed:
            if not self.timed:
                self.timed = True
                self.timestamps = [None] * n
            self.timestamps.extend([timestamp] * (len(values) - n))

    def add_timestamped(self, values: list[Any], timestamps: list[int]) -> None:
        """Records with their own timestamps (``len(values) == len(timestamps)``)."""
        if not self.timed:
            self.timed = True
            self.timestamps = [None] * len(self.values)
        self.values.extend(values)
        self.timestamps.extend(timestamps)

    def add(self, value: Any, timestamp: int | None) -> None:
        self.values.append(value)
        if timestamp is not None or self.timed:
            if not self.timed:
                self.timed = True
                self.timestamps = [None] * (len(self.values) - 1)
            self.timestamps.append(timestamp)

    def add_side(self, tag_id: str, value: Any, timestamp: int | None) -> None:
        side = self.side.get(tag_id)
        if side is None:
            side = self.side[tag_id] = TimestampedCollector()
        side.add(value, timestamp)

    def _take(self) -> list[Any]:
        batch: list[Any] = TimestampedBatch(self.values, self.timestamps) if self.timed else self.values
        self.values = []
        self.timestamps = []
        self.timed = False
        return batch

    def flush(self, output: Output) -> None:
        if self.values:
            output.emit(self._take())
        if self.side:
            sides, self.side = self.side, {}
            for tag_id, collector in sides.items():
                if collector.values:
                    output.emit_side(tag_id, collector._take())
