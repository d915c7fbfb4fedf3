"""The metric implementations behind :mod:`strom.metrics` (Flink's ``SimpleCounter``, ``MeterView``,
``DescriptiveStatisticsHistogram``, ``Gauge``).

The task thread only ever bumps plain attributes: ``Counter.inc`` is one attribute add, ``Meter.mark_event``
the same, ``Distribution.update`` a handful (count, sum, min, max, a bounded window). Rates and statistics are
computed by whoever reads them — the heartbeat sampler on the TaskManager's loop, a Prometheus scrape on its
HTTP thread — without locks on the task side: a reading may be a few events stale, never torn.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from strom.metrics.metricbase import Counter, Distribution, Meter, Metric

__all__ = [
    "QUANTILES",
    "AttributeCounter",
    "DistributionView",
    "GaugeView",
    "MeterView",
    "SimpleCounter",
    "metric_values",
    "quantile_key",
]

#: the quantiles Flink's PrometheusReporter reports of a histogram (besides 0.0 = min and 1.0 = max)
QUANTILES = (0.5, 0.75, 0.95, 0.98, 0.99, 0.999)
#: values a distribution keeps for its quantiles (Flink's DescriptiveStatisticsHistogram window size)
DISTRIBUTION_WINDOW = 1024


class SimpleCounter(Counter):
    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0

    def inc(self, n: int = 1) -> None:
        self.count += n

    def dec(self, n: int = 1) -> None:
        self.count -= n

    def get_count(self) -> int:
        return self.count


class AttributeCounter(Counter):
    """A counter some operator keeps as a plain attribute (``numLateRecordsDropped``), read where it lives."""

    __slots__ = ("_attribute", "_owner")

    def __init__(self, owner: object, attribute: str) -> None:
        self._owner = owner
        self._attribute = attribute

    def inc(self, n: int = 1) -> None:
        setattr(self._owner, self._attribute, self.get_count() + n)

    def dec(self, n: int = 1) -> None:
        self.inc(-n)

    def get_count(self) -> int:
        return int(getattr(self._owner, self._attribute, 0))


class MeterView(Meter):
    """Events marked, and their rate per second over the last ``time_span_in_seconds`` (Flink's ``MeterView``)."""

    __slots__ = ("_history", "_lock", "count", "time_span")

    def __init__(self, time_span_in_seconds: int = 60) -> None:
        if time_span_in_seconds <= 0:
            raise ValueError(
                f"expected a meter time span > 0 seconds; got {time_span_in_seconds}; hint: the default is 60"
            )
        self.count = 0
        self.time_span = float(time_span_in_seconds)
        self._lock = threading.Lock()  # readers only: the heartbeat and a scrape may read at once
        self._history: deque[tuple[float, int]] = deque([(time.monotonic(), 0)])

    def mark_event(self, value: int = 1) -> None:
        self.count += value

    def get_count(self) -> int:
        return self.count

    def get_rate(self, now: float | None = None) -> float:
        """Events per second since the oldest reading within the time span (readers' side, any thread)."""
        now = time.monotonic() if now is None else now
        count = self.count
        with self._lock:
            history = self._history
            while len(history) > 1 and now - history[1][0] >= self.time_span:
                history.popleft()
            since, base = history[0]
            history.append((now, count))
        return max(0, count - base) / max(now - since, 1e-6)


class DistributionView(Distribution):
    """Count, sum, min and max of every value and quantiles of the latest :data:`DISTRIBUTION_WINDOW`."""

    __slots__ = ("count", "max", "min", "sum", "window")

    def __init__(self, window: int = DISTRIBUTION_WINDOW) -> None:
        self.count = 0
        self.sum = 0.0
        self.min = math.inf
        self.max = -math.inf
        self.window: deque[float] = deque(maxlen=window)

    def update(self, value: int | float) -> None:
        self.count += 1
        self.sum += value
        if value < self.min:
            self.min = value
        if value > self.max:
            self.max = value
        self.window.append(value)

    def statistics(self) -> dict[str, float]:
        """``count``, ``min``, ``max``, ``mean`` and ``p50`` … ``p999`` (0 for each while empty)."""
        values = sorted(_copy(self.window))
        count = self.count
        out = {"count": float(count), "min": 0.0, "max": 0.0, "mean": 0.0}
        if count and values:
            out.update(min=float(self.min), max=float(self.max), mean=self.sum / count)
        for q in QUANTILES:
            out[quantile_key(q)] = _quantile(values, q)
        return out


def _copy(window: deque[float]) -> list[float]:
    for _ in range(3):
        try:
            return list(window)
        except RuntimeError:  # appended to while copied
            continue
    return []


def _quantile(values: list[float], q: float) -> float:
    """Linear interpolation between the closest ranks (the R-7 estimate)."""
    if not values:
        return 0.0
    pos = q * (len(values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(values) - 1)
    return float(values[lo] + (values[hi] - values[lo]) * (pos - lo))


def quantile_key(q: float) -> str:
    return "p" + f"{q:g}"[2:].ljust(2, "0")  # 0.5 -> p50, 0.75 -> p75, 0.999 -> p999


class GaugeView(Metric):
    """A value read on demand from a user's function (Flink's ``Gauge``)."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[], Any]) -> None:
        if not callable(fn):
            raise TypeError(
                f"expected a gauge function taking no arguments; got a {type(fn).__name__!r}; "
                "hint: gauge('name', lambda: self.value)"
            )
        self.fn = fn

    def get_value(self) -> float:
        """The gauge as a number: a bool is 1/0, ``None`` or a non-number 0 (as Flink's PrometheusReporter)."""
        value = self.fn()
        if isinstance(value, bool):
            return 1.0 if value else 0.0
        if isinstance(value, int | float):
            return float(value)
        return 0.0


def metric_values(metric: Metric) -> dict[str, float]:
    """What a metric reports, by suffix: ``""`` for one value; ``_count``, ``_min``, ... for a distribution."""
    if isinstance(metric, Counter):
        return {"": float(metric.get_count())}
    if isinstance(metric, MeterView):  # the rate, as Flink reports a meter; the count beside it
        return {"": metric.get_rate(), "_count": float(metric.get_count())}
    if isinstance(metric, GaugeView):
        return {"": metric.get_value()}
    if isinstance(metric, DistributionView):
        return {f"_{k}": v for k, v in metric.statistics().items()}
    raise TypeError(f"expected a metric strom created; got a {type(metric).__name__!r}")
