"""``TimestampedCollector``: gathers what user functions emit while an operator works through a batch
(Flink's ``TimestampedCollector``): the main output and side outputs, each record stamped with the
timestamp of the input record (or firing timer) it came from. ``flush`` hands it all downstream as one batch
per output — without a timestamp column when no record carries a timestamp.

With ``route_tags`` set (the job's client made an ``OutputTag``), a result ``(tag, value)`` whose first element is
an :class:`~strom.api.output_tag.OutputTag` goes to that side output, as PyFlink's ``yield output_tag, value``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from strom.api.output_tag import OutputTag
from strom.runtime.operators.base import Output
from strom.runtime.streamrecord import with_timestamps

__all__ = ["TimestampedCollector"]


class TimestampedCollector:
    __slots__ = ("route_tags", "side", "timed", "timestamps", "values")

    def __init__(self) -> None:
        self.values: list[Any] = []
        self.timestamps: list[int | None] = []
        self.timed = False  # whether any record so far has a timestamp (timestamps is kept only then)
        self.side: dict[str, TimestampedCollector] = {}
        self.route_tags = False

    def add_all(self, results: Iterable[Any], timestamp: int | None) -> None:
        values = self.values
        n = len(values)
        values.extend(results)
        if timestamp is not None or self.timed:
            if not self.timed:
                self.timed = True
                self.timestamps = [None] * n
            self.timestamps.extend([timestamp] * (len(values) - n))

    def add_timestamped(self, values: list[Any], timestamps: list[int | None]) -> None:
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
        batch = with_timestamps(self.values, self.timestamps if self.timed else None)
        self.values = []
        self.timestamps = []
        self.timed = False
        return batch

    def _route_tagged(self) -> None:
        """Moves the ``(OutputTag, value)`` results to their side outputs (PyFlink's form of ``ctx.output``)."""
        values = self.values
        if OutputTag not in {type(v[0]) for v in values if type(v) is tuple and len(v) == 2}:
            return
        timestamps = self.timestamps if self.timed else None
        self.values, self.timestamps = [], []
        timed, self.timed = self.timed, False
        for i, v in enumerate(values):
            t = timestamps[i] if timestamps is not None else None
            if type(v) is tuple and len(v) == 2 and type(v[0]) is OutputTag:
                self.add_side(v[0].tag_id, v[1], t)
            elif timed:
                self.add(v, t)
            else:
                self.values.append(v)

    def flush(self, output: Output) -> None:
        if self.route_tags and self.values:
            self._route_tagged()
        if self.values:
            output.emit(self._take())
        if self.side:
            sides, self.side = self.side, {}
            for tag_id, collector in sides.items():
                if collector.values:
                    output.emit_side(tag_id, collector._take())
