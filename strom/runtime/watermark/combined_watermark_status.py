"""Flink's ``IndexedCombinedWatermarkStatus``: how an operator with several inputs combines their watermarks.

Each input of a two-input operator arrives already merged over its channels (one
:class:`~strom.runtime.watermark.status_watermark_valve.StatusWatermarkValve` per input). The operator's event
time is the minimum of its inputs' watermarks, idle inputs left out; it only rises. The operator is idle when
every input is. A pure state machine: ``update_watermark`` / ``update_status`` say whether the combined
watermark rose; :attr:`combined_watermark` and :attr:`idle` tell where it stands.

    >>> c = IndexedCombinedWatermarkStatus(2)
    >>> c.update_watermark(0, 10), c.update_watermark(1, 5), c.combined_watermark
    (False, True, 5)
    >>> c.update_status(1, idle=True), c.combined_watermark   # the slow input turns idle: the other leads
    (True, 10)
"""

from __future__ import annotations

from strom.api.eventtime import LONG_MIN

__all__ = ["IndexedCombinedWatermarkStatus"]


class IndexedCombinedWatermarkStatus:
    __slots__ = ("_idle", "_watermarks", "combined_watermark", "idle")

    def __init__(self, num_inputs: int) -> None:
        if num_inputs < 1:
            raise ValueError(f"expected at least one input; got {num_inputs}")
        self._watermarks = [LONG_MIN] * num_inputs
        self._idle = [False] * num_inputs
        self.combined_watermark = LONG_MIN
        self.idle = False

    def update_watermark(self, index: int, timestamp: int) -> bool:
        """Input ``index`` reached ``timestamp``; ``True`` if the combined watermark rose."""
        if self._idle[index]:
            raise ValueError(f"expected no watermark from idle input {index + 1}; got {timestamp}")
        self._watermarks[index] = timestamp
        return self._update_combined()

    def update_status(self, index: int, *, idle: bool) -> bool:
        """Input ``index`` turned idle / active; ``True`` if the combined watermark rose."""
        self._idle[index] = idle
        return self._update_combined()

    def _update_combined(self) -> bool:
        active = [wm for wm, idle in zip(self._watermarks, self._idle, strict=True) if not idle]
        self.idle = not active
        if active:
            low = min(active)
            if low > self.combined_watermark:
                self.combined_watermark = low
                return True
        return False
