"""User metrics with PyFlink's names (``pyflink.metrics``): :class:`MetricGroup`, :class:`Counter`,
:class:`Meter`, :class:`Distribution`; a function gets its group from ``runtime_context.get_metrics_group()``."""

from __future__ import annotations

from strom.metrics.metricbase import Counter, Distribution, Histogram, Meter, Metric, MetricGroup

__all__ = ["Counter", "Distribution", "Histogram", "Meter", "Metric", "MetricGroup"]
