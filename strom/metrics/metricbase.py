"""PyFlink's metric interfaces (``pyflink.metrics.metricbase``): what a user function registers metrics with.

    class CountingMap(MapFunction):
        def open(self, runtime_context: RuntimeContext) -> None:
            group = runtime_context.get_metrics_group()
            self.records = group.counter("records")
            self.rate = group.meter("rate", time_span_in_seconds=60)
            self.sizes = group.add_group("sizes").distribution("bytes")
            group.gauge("last_size", lambda: self.last)

        def map(self, value: str) -> str:
            self.records.inc()
            ...

Every user function's runtime context returns a group scoped to its operator and subtask; the metrics show
in ``JobClient.get_metrics()`` and, with a Prometheus reporter configured, on each TaskManager's ``/metrics``
as ``flink_taskmanager_job_task_operator_<scope>_<name>`` (see docs/operations.md, "Metrics").
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

__all__ = ["Counter", "Distribution", "Histogram", "Meter", "Metric", "MetricGroup"]


class MetricGroup(ABC):
    """A named container of metrics and further groups (PyFlink's ``MetricGroup``)."""

    __slots__ = ()

    @abstractmethod
    def add_group(self, name: str, extra: str | None = None) -> MetricGroup:
        """A sub-group ``name``; with ``extra``, a key group ``name`` holding a value group ``extra`` (returned),
        whose metrics carry the user variable ``<name>=extra`` (a Prometheus label ``name="extra"``)."""

    @abstractmethod
    def counter(self, name: str) -> Counter:
        """Register a :class:`Counter` (the same one again for the same name)."""

    @abstractmethod
    def gauge(self, name: str, obj: Callable[[], int | float]) -> None:
        """Register a gauge: ``obj()`` is read whenever the metric is reported (not on the task thread)."""

    @abstractmethod
    def meter(self, name: str, time_span_in_seconds: int = 60) -> Meter:
        """Register a :class:`Meter`: events per second averaged over ``time_span_in_seconds``."""

    @abstractmethod
    def distribution(self, name: str) -> Distribution:
        """Register a :class:`Distribution` of values (count, min, max, mean and quantiles are reported)."""

    def histogram(self, name: str) -> Histogram:
        """Flink's ``histogram``: the same metric as :meth:`distribution`."""
        return self.distribution(name)

    @abstractmethod
    def get_scope_components(self) -> list[str]:
        """The scope as its components, e.g. ``["localhost", "taskmanager", "tm-1", "job", "Map", "0"]``."""

    @abstractmethod
    def get_all_variables(self) -> dict[str, str]:
        """Every variable of this group and its parents, e.g. ``{"<host>": "localhost", "<tm_id>": "tm-1"}``."""

    @abstractmethod
    def get_metric_identifier(self, metric_name: str) -> str:
        """The fully qualified name of ``metric_name``: the scope components and the name joined by ``.``."""


class Metric(ABC):  # noqa: B024 - a marker base, as PyFlink's
    """Base of every metric."""

    __slots__ = ()


class Counter(Metric):
    """A count that goes up and down (PyFlink's ``Counter``)."""

    __slots__ = ()

    @abstractmethod
    def inc(self, n: int = 1) -> None:
        """Add ``n``."""

    @abstractmethod
    def dec(self, n: int = 1) -> None:
        """Subtract ``n``."""

    @abstractmethod
    def get_count(self) -> int:
        """The current count."""


class Meter(Metric):
    """Throughput: events marked and their rate per second (PyFlink's ``Meter``)."""

    __slots__ = ()

    @abstractmethod
    def mark_event(self, value: int = 1) -> None:
        """``value`` events happened."""

    @abstractmethod
    def get_count(self) -> int:
        """Events marked so far."""


class Distribution(Metric):
    """Statistics of the values it is updated with (PyFlink's ``Distribution``)."""

    __slots__ = ()

    @abstractmethod
    def update(self, value: int | float) -> None:
        """Account one value."""


#: Flink's name of the same metric
Histogram = Distribution
