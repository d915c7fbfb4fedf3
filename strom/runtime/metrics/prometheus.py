"""The Prometheus endpoint of a JobManager or TaskManager (Flink's ``PrometheusReporter``).

Configured with Flink's keys — ``metrics.reporter.prom.factory.class:
org.apache.flink.metrics.prometheus.PrometheusReporterFactory`` and ``metrics.reporter.prom.port`` (a port, a
range ``9249-9260`` or a list; each process takes the first free one) — plus strom's
``metrics.reporter.prom.host`` (``127.0.0.1`` unless set; Flink binds every interface). Off unless configured,
as in Flink. Each scrape reads the process's metrics on the server's own thread: the task threads never
see it (:mod:`strom.runtime.metrics.metrics`).

:func:`families` is the pure mapping from readings to Prometheus metric families, with the names and labels
of Flink's reporter (:mod:`strom.runtime.metrics.scope`): counters, meters (their rate) and gauges as gauges,
distributions as summaries with Flink's quantiles (0.0 = min … 1.0 = max) and ``_count``.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from strom.exceptions import ConfigurationError
from strom.runtime.metrics.metrics import QUANTILES, DistributionView, metric_values, quantile_key
from strom.runtime.metrics.scope import filter_characters, prometheus_labels, prometheus_name

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

    from prometheus_client.metrics_core import Metric as PromMetric

    from strom.config import Configuration
    from strom.runtime.metrics.metric_group import MetricEntry

__all__ = [
    "PROMETHEUS_FACTORY",
    "PrometheusReporter",
    "PrometheusSettings",
    "Reading",
    "families",
    "parse_port_range",
    "prometheus_settings",
    "readings_of",
]

log = logging.getLogger(__name__)

PROMETHEUS_FACTORY = "org.apache.flink.metrics.prometheus.PrometheusReporterFactory"


@dataclass(frozen=True, slots=True)
class Reading:
    """One metric's value(s) at a scrape: a number, or a distribution's statistics."""

    logical_scope: tuple[str, ...]
    name: str
    variables: Mapping[str, str]
    value: float = 0.0
    statistics: dict[str, float] | None = field(default=None)


def readings_of(entries: Iterable[MetricEntry]) -> list[Reading]:
    """Read every entry; a gauge whose function raises is left out of this scrape (logged at DEBUG)."""
    out: list[Reading] = []
    for e in entries:
        try:
            if isinstance(e.metric, DistributionView):
                out.append(Reading(e.logical_scope, e.name, e.variables, statistics=e.metric.statistics()))
            else:
                out.append(Reading(e.logical_scope, e.name, e.variables, value=metric_values(e.metric)[""]))
        except Exception as exc:
            log.debug("metric %s could not be read: %r", e.query_name, exc)
    return out


def families(readings: Iterable[Reading]) -> list[PromMetric]:
    """The Prometheus metric families of ``readings``, named and labelled as Flink's PrometheusReporter."""
    from prometheus_client.metrics_core import Metric as PromMetric  # only where a reporter is configured

    by_name: dict[str, PromMetric] = {}
    for r in readings:
        labels = prometheus_labels(r.variables)
        if labels is None:
            log.debug("metric %s: two variables map to one label name; not reported", r.name)
            continue
        name = prometheus_name(r.logical_scope, r.name)
        kind = "gauge" if r.statistics is None else "summary"
        family = by_name.get(name)
        if family is None:
            scope = "_".join(filter_characters(c) for c in r.logical_scope)
            family = by_name[name] = PromMetric(name, f"{r.name} (scope: {scope})", kind)
        elif family.type != kind:
            continue
        if r.statistics is None:
            family.add_sample(name, labels, r.value)
            continue
        s = r.statistics
        family.add_sample(name + "_count", labels, s["count"])
        family.add_sample(name, {**labels, "quantile": "0.0"}, s["min"])
        for q in QUANTILES:
            family.add_sample(name, {**labels, "quantile": str(q)}, s[quantile_key(q)])
        family.add_sample(name, {**labels, "quantile": "1.0"}, s["max"])
    return list(by_name.values())


# -- configuration ---------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class PrometheusSettings:
    ports: str
    host: str


def prometheus_settings(config: Configuration) -> PrometheusSettings | None:
    """The reporter's settings, or ``None`` when no Prometheus reporter is configured."""
    from strom.config import MetricOptions

    factory = config.get(MetricOptions.PROMETHEUS_FACTORY_CLASS).strip()
    if not factory:
        return None
    if factory not in (PROMETHEUS_FACTORY, "prometheus"):
        raise ConfigurationError(
            f"expected {PROMETHEUS_FACTORY} for {MetricOptions.PROMETHEUS_FACTORY_CLASS.key}; got {factory!r}; "
            "hint: strom has Flink's PrometheusReporter only"
        )
    ports = config.get(MetricOptions.PROMETHEUS_PORT)
    parse_port_range(ports)  # refused here, in the client, rather than in every TaskManager
    return PrometheusSettings(ports=ports, host=config.get(MetricOptions.PROMETHEUS_HOST))


def parse_port_range(text: str) -> list[int]:
    """Flink's ``PortRange``: ``9249``, ``9249-9260``, ``9249,9251-9253``; ``0`` is any free port."""
    ports: list[int] = []
    try:
        for part in str(text).split(","):
            part = part.strip()
            if "-" in part:
                lo, hi = (int(p) for p in part.split("-", 1))
                if lo > hi:
                    raise ValueError(part)
                ports.extend(range(lo, hi + 1))
            else:
                ports.append(int(part))
    except ValueError:
        ports = []
    if not ports or any(not 0 <= p <= 65535 for p in ports):
        raise ConfigurationError(
            f"expected a port, a port range or a list of them for metrics.reporter.prom.port; got {text!r}; "
            "hint: '9249-9260' (each JobManager and TaskManager takes the first free port), '0' for any free port"
        )
    return ports


# -- the server ------------------------------------------------------------------------------------------
class _Collector:
    def __init__(self, read: Callable[[], list[Reading]]) -> None:
        self._read = read

    def collect(self) -> Iterator[PromMetric]:
        try:
            readings = self._read()
        except Exception as exc:  # a scrape must never take the process down
            log.warning("reading the metrics for a Prometheus scrape failed: %r", exc)
            return
        yield from families(readings)


class PrometheusReporter:
    """An HTTP server on a thread of its own serving ``/metrics`` of ``read()``'s readings."""

    def __init__(self, read: Callable[[], list[Reading]], settings: PrometheusSettings, *, owner: str) -> None:
        from prometheus_client import CollectorRegistry  # imported where a reporter is configured, not by every process

        self._registry = CollectorRegistry(auto_describe=False)
        self._registry.register(_Collector(read))
        self.settings = settings
        self.owner = owner
        self._server: WSGIServer | None = None
        self.url = ""

    def start(self) -> str:
        """Bind the first free port of the range; returns the endpoint's URL."""
        last: OSError | None = None
        host = self.settings.host
        from prometheus_client.exposition import start_http_server

        for port in parse_port_range(self.settings.ports):
            try:
                server, _thread = start_http_server(port, addr=host, registry=self._registry)
            except OSError as exc:
                last = exc
                continue
            self._server = server
            bound = server.server_address[1]
            shown = host if host not in ("0.0.0.0", "::", "") else socket.gethostname()
            self.url = f"http://{shown}:{bound}/metrics"
            log.info("Prometheus metrics of %s at %s", self.owner, self.url)
            return self.url
        raise ConfigurationError(
            f"expected a free port for the Prometheus reporter of {self.owner} in metrics.reporter.prom.port "
            f"{self.settings.ports!r} on {host}; got none ({last}); hint: a wider range, one port per JobManager and "
            "TaskManager on the machine"
        )

    def close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def __enter__(self) -> PrometheusReporter:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
