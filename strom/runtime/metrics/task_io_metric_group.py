"""``TaskIOMetricGroup``: the I/O metrics of one task (Flink's ``TaskIOMetricGroup``).

The task thread only bumps counters and marks its timer gauges; :meth:`TaskIOMetricGroup.sample` runs on
the TaskManager's event loop (where the credit state of the input gate lives), reads the cumulative
values and turns them into per-second rates — Flink's ``numRecordsInPerSecond`` and
``backPressuredTimeMsPerSecond`` family. Record and byte rates are averaged over the last
:data:`METER_TIME_SPAN_S` seconds like Flink's ``MeterView`` (a task that counts a batch of records at once
would otherwise read 0/s between batches); the time gauges cover the time since the previous sample.
Counters are plain ints read without locks: a sample may be a few records stale, never torn.
"""

from __future__ import annotations

import time
from collections import deque
from typing import TYPE_CHECKING, Any

from strom.runtime.metrics.timer_gauge import TimerGauge

if TYPE_CHECKING:
    from strom.runtime.network.input_gate import InputGate
    from strom.runtime.network.record_writer import RecordWriter
    from strom.runtime.network.result_partition import ResultPartition

__all__ = ["METER_TIME_SPAN_S", "TaskIOMetricGroup"]

METER_TIME_SPAN_S = 60.0  # Flink's MeterView default time span

_COUNTERS = ("numRecordsIn", "numRecordsOut", "numBytesIn", "numBytesOut")


class TaskIOMetricGroup:
    def __init__(self) -> None:
        self.back_pressured = TimerGauge()  # writer blocked on an exhausted buffer pool
        self.idle = TimerGauge()  # waiting for input (or for a source to have data)
        self.writers: list[RecordWriter] = []
        self.partitions: list[ResultPartition] = []
        self.gate: InputGate | None = None
        self.head_operator: Any = None
        self._last_time = time.monotonic()
        self._last: dict[str, float] = dict.fromkeys((*_COUNTERS, "idle", "backPressured"), 0.0)
        # (time, counters) of past samples within the meter time span, oldest first
        self._history: deque[tuple[float, dict[str, float]]] = deque([(self._last_time, dict(self._last))])

    def counters(self) -> dict[str, float]:
        head = self.head_operator
        gate = self.gate
        return {
            "numRecordsIn": float(getattr(head, "_records_in", 0)),
            "numRecordsOut": float(sum(w.num_records_out for w in self.writers)),
            "numBytesIn": float(sum(ch.num_bytes_in for ch in gate.channels)) if gate is not None else 0.0,
            "numBytesOut": float(sum(p.num_bytes_out for p in self.partitions)),
        }

    def sample(self) -> dict[str, float]:
        """All metrics now; rates cover the time since the previous call."""
        now = time.monotonic()
        elapsed = max(now - self._last_time, 1e-6)
        values = self.counters()
        idle = self.idle.total_seconds(now)
        bp = self.back_pressured.total_seconds(now)
        out: dict[str, float] = dict(values)
        while len(self._history) > 1 and now - self._history[1][0] >= METER_TIME_SPAN_S:
            self._history.popleft()
        since, base = self._history[0]
        span = max(now - since, 1e-6)
        for name in _COUNTERS:
            out[name + "PerSecond"] = max(0.0, values[name] - base[name]) / span
        idle_ms = min(1000.0, max(0.0, idle - self._last["idle"]) / elapsed * 1000.0)
        bp_ms = min(1000.0, max(0.0, bp - self._last["backPressured"]) / elapsed * 1000.0)
        out["idleTimeMsPerSecond"] = idle_ms
        out["backPressuredTimeMsPerSecond"] = bp_ms
        out["busyTimeMsPerSecond"] = max(0.0, 1000.0 - idle_ms - bp_ms)
        out["accumulatedIdleTimeMs"] = idle * 1000.0
        out["accumulatedBackPressuredTimeMs"] = bp * 1000.0
        gate = self.gate
        out["inPoolUsage"] = gate.in_pool_usage() if gate is not None else 0.0
        out["inputQueueLength"] = float(gate.statistics().queued_buffers) if gate is not None else 0.0
        size = sum(p.pool_size for p in self.partitions)
        used = sum(p.buffers_in_use() for p in self.partitions)
        out["outPoolUsage"] = used / size if size else 0.0
        out["outputQueueLength"] = float(used)
        self._last_time = now
        self._last = {**values, "idle": idle, "backPressured": bp}
        self._history.append((now, dict(values)))
        return out
