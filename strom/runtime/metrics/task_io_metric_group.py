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

from strom.runtime.metrics.metric_group import MetricRegistry
from strom.runtime.metrics.metrics import metric_values
from strom.runtime.metrics.prometheus import Reading, readings_of
from strom.runtime.metrics.scope import TASK_SCOPE
from strom.runtime.metrics.timer_gauge import TimerGauge

if TYPE_CHECKING:
    from strom.runtime.network.input_gate import InputGate
    from strom.runtime.network.record_writer import RecordWriter
    from strom.runtime.network.result_partition import ResultPartition

__all__ = ["METER_TIME_SPAN_S", "TaskIOMetricGroup"]

METER_TIME_SPAN_S = 60.0  # Flink's MeterView default time span

_COUNTERS = ("numRecordsIn", "numRecordsOut", "numBytesIn", "numBytesOut")
#: where Flink reports the buffer metrics of a task (its "Default shuffle service" metrics): an infix of the scope
_INFIX = {
    "inPoolUsage": ("Shuffle", "Netty", "Input", "Buffers"),
    "inputQueueLength": ("Shuffle", "Netty", "Input", "Buffers"),
    "outPoolUsage": ("Shuffle", "Netty", "Output", "Buffers"),
    "outputQueueLength": ("Shuffle", "Netty", "Output", "Buffers"),
}


class TaskIOMetricGroup:
    def __init__(self) -> None:
        self.back_pressured = TimerGauge()  # writer blocked on an exhausted buffer pool
        self.idle = TimerGauge()  # waiting for input (or for a source to have data)
        self.writers: list[RecordWriter] = []
        self.partitions: list[ResultPartition] = []
        self.gate: InputGate | None = None
        self.head_operator: Any = None
        self._last_time = time.monotonic()
        self._created = self._last_time
        self._last: dict[str, float] = dict.fromkeys((*_COUNTERS, "idle", "backPressured"), 0.0)
        # (time, counters) of past samples within the meter time span, oldest first
        self._history: deque[tuple[float, dict[str, float]]] = deque([(self._last_time, dict(self._last))])
        #: the operator and user metrics of the task's groups (:mod:`strom.runtime.metrics.metric_group`)
        self.registry = MetricRegistry()
        #: the task's variables (``<host>``, ``<tm_id>``, ``<job_name>``, ...; set by the Task)
        self.variables: dict[str, str] = {}
        #: the I/O metrics of the latest sample, what a Prometheus scrape reports of them
        self.last_io: dict[str, float] = {}

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
        # Flink's accumulated busy time: the task's time neither idle nor back-pressured (since its creation)
        out["accumulatedBusyTimeMs"] = max(0.0, now - self._created - idle - bp) * 1000.0
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
        self.last_io = dict(out)
        out.update(self.registered_values())
        return out

    def registered_values(self) -> dict[str, float]:
        """The operator and user metrics by their names in ``JobClient.get_metrics()`` (``"Map.records"``; a
        distribution as ``"Map.sizes_count"``, ``_min``, ``_max``, ``_mean``, ``_p50`` ... ``_p999``; a meter's rate,
        and its count as ``_count``). A gauge whose function raises is left out."""
        out: dict[str, float] = {}
        for e in self.registry.entries():
            try:
                for suffix, value in metric_values(e.metric).items():
                    out[e.query_name + suffix] = value
            except Exception:  # a user's gauge must not cost the heartbeat
                continue
        return out

    def readings(self) -> list[Reading]:
        """Everything this task reports to Prometheus: its I/O metrics (of the latest sample) at the task scope,
        its operators' and user metrics as they are now."""
        v = self.variables
        out = [Reading((*TASK_SCOPE, *_INFIX.get(k, ())), k, v, value=x) for k, x in self.last_io.items()]
        out += readings_of(self.registry.entries())
        return out
