"""Metric groups (Flink's ``AbstractMetricGroup`` family): where a metric sits and what it is reported as.

A group knows its *scope components* (``localhost.taskmanager.tm-1.job.Map.0``, what
``get_metric_identifier`` joins), its *logical scope* (``taskmanager.job.task.operator`` plus the user's
groups: what Flink's PrometheusReporter turns into the metric name) and its *variables* (``<host>``,
``<tm_id>``, ``<job_id>``, ...: the Prometheus labels). Every metric registered anywhere in a task's groups
lands in that task's :class:`MetricRegistry`, which the heartbeat sampler and the Prometheus reporter read.

Registration happens on the task thread (a function's ``open``); readers copy the registry's entries first.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from strom.metrics.metricbase import Counter, Distribution, Meter, Metric, MetricGroup
from strom.runtime.metrics.metrics import DistributionView, GaugeView, MeterView, SimpleCounter

__all__ = ["GenericMetricGroup", "MetricEntry", "MetricRegistry"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class MetricEntry:
    """One registered metric."""

    logical_scope: tuple[str, ...]  # ("taskmanager", "job", "task", "operator", <user groups>...)
    name: str
    variables: dict[str, str]  # "<host>" -> "localhost", ...
    metric: Metric
    #: its name in ``JobClient.get_metrics()`` (as Flink's REST API): "<operator name>.<user groups>.<name>"
    query_name: str


class MetricRegistry:
    """The metrics of one task (or of one JobManager), by identifier."""

    def __init__(self) -> None:
        self._entries: dict[tuple[tuple[str, ...], str, tuple[tuple[str, str], ...]], MetricEntry] = {}

    def register(self, entry: MetricEntry) -> MetricEntry:
        """Register ``entry``; a metric of the same kind already registered under its identifier is kept and
        returned instead (a function opened twice counts on), a gauge is replaced."""
        key = (entry.logical_scope, entry.name, tuple(sorted(entry.variables.items())))
        old = self._entries.get(key)
        if old is not None and type(old.metric) is type(entry.metric) and not isinstance(entry.metric, GaugeView):
            return old
        if old is not None and not isinstance(entry.metric, GaugeView):
            log.warning(
                "metric %r of %s is registered again as a %s; the new one replaces it",
                entry.name,
                ".".join(entry.logical_scope),
                type(entry.metric).__name__,
            )
        self._entries[key] = entry
        return entry

    def entries(self) -> list[MetricEntry]:
        """A copy of every entry (any thread)."""
        for _ in range(3):
            try:
                return list(self._entries.values())
            except RuntimeError:  # registered to while copied
                continue
        return []


class GenericMetricGroup(MetricGroup):
    """A group of a task's or operator's scope, or a user's group under it."""

    __slots__ = ("_logical_scope", "_query_prefix", "_registry", "_scope", "_variables")

    def __init__(
        self,
        registry: MetricRegistry,
        *,
        scope: tuple[str, ...],
        logical_scope: tuple[str, ...],
        variables: dict[str, str],
        query_prefix: str = "",
    ) -> None:
        self._registry = registry
        self._scope = scope
        self._logical_scope = logical_scope
        self._variables = variables
        self._query_prefix = query_prefix

    # -- groups ------------------------------------------------------------------------------------------
    def add_group(self, name: str, extra: str | None = None) -> MetricGroup:
        name = _check_name(name, "group")
        key = GenericMetricGroup(
            self._registry,
            scope=(*self._scope, name),
            logical_scope=(*self._logical_scope, name),
            variables=self._variables,
            query_prefix=f"{self._query_prefix}{name}.",
        )
        if extra is None:
            return key
        value = str(extra)
        # Flink's GenericValueMetricGroup: in the scope, not in the logical scope; a user variable <name>
        return GenericMetricGroup(
            self._registry,
            scope=(*key._scope, value),
            logical_scope=key._logical_scope,
            variables={**self._variables, f"<{name}>": value},
            query_prefix=f"{key._query_prefix}{value}.",
        )

    # -- metrics -----------------------------------------------------------------------------------------
    def counter(self, name: str) -> Counter:
        metric = self._register(name, SimpleCounter())
        assert isinstance(metric, Counter)
        return metric

    def gauge(self, name: str, obj: Callable[[], int | float]) -> None:
        self._register(name, GaugeView(obj))

    def meter(self, name: str, time_span_in_seconds: int = 60) -> Meter:
        metric = self._register(name, MeterView(time_span_in_seconds))
        assert isinstance(metric, Meter)
        return metric

    def distribution(self, name: str) -> Distribution:
        metric = self._register(name, DistributionView())
        assert isinstance(metric, Distribution)
        return metric

    def register_metric(self, name: str, metric: Metric) -> Metric:
        """strom's own metrics of a scope (``currentInputWatermark``, ``numLateRecordsDropped``)."""
        return self._register(name, metric)

    def _register(self, name: str, metric: Metric) -> Metric:
        name = _check_name(name, "metric")
        entry = MetricEntry(
            logical_scope=self._logical_scope,
            name=name,
            variables=self._variables,
            metric=metric,
            query_name=self._query_prefix + name,
        )
        return self._registry.register(entry).metric

    # -- scope -------------------------------------------------------------------------------------------
    def get_scope_components(self) -> list[str]:
        return list(self._scope)

    def get_all_variables(self) -> dict[str, str]:
        return dict(self._variables)

    def get_metric_identifier(self, metric_name: str) -> str:
        return ".".join((*self._scope, metric_name))

    def __repr__(self) -> str:
        return f"MetricGroup({'.'.join(self._scope)})"


def _check_name(name: Any, what: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"expected a non-empty string as the {what} name; got {name!r}; hint: counter('records_seen')")
    return name
