"""The JobManager's own REST paths (Flink's ``ClusterConfigHandler``, ``JobManagerEnvironmentHandler``,
``JobManagerMetricsHandler`` and the JobManager log handlers of :mod:`log_messages`).

============================ ===================================================================================
``GET /jobmanager/config``   ``ClusterConfigurationInfo``: ``[{"key", "value"}]``, the JobManager's configured
                             options (not the defaults) in Flink's string form, sorted by key; the value of a key
                             naming a secret (``password``, ``secret``, ``token``, ...) is ``******``, as Flink
                             hides it
``GET /jobmanager/environment`` ``EnvironmentInfo``: ``{"jvm": {"version", "arch", "options"}, "classpath"}`` —
                             for strom the Python interpreter: its version, the machine, its command line, and
                             ``sys.path``
``GET /jobmanager/metrics``  ``MetricCollectionResponseBody`` of ``numRegisteredTaskManagers``, ``numRunningJobs``,
                             ``taskSlotsTotal``, ``taskSlotsAvailable`` and the process's ``Status.JVM.*`` figures
                             (:mod:`strom.runtime.metrics.process_metrics`; ``?get=`` as every metrics path)
``GET /jobmanager/thread-dump`` ``ThreadDumpInfo``: every thread of the JobManager's process with its Python stack
``GET /jobmanager/logs`` ... its log files (:class:`~strom.web.log_messages.JobManagerLogHandlers`)
============================ ===================================================================================
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from aiohttp import web

from strom.config import Configuration
from strom.config_security import HIDDEN_CONTENT, hide_sensitive_arguments, is_sensitive_key
from strom.config_units import format_duration
from strom.runtime.thread_info import thread_dump
from strom.web import metric_messages as mm
from strom.web.accessor import DispatcherGateway
from strom.web.job_messages import thread_dump_info
from strom.web.log_messages import JobManagerLogHandlers

__all__ = ["JobManagerHandlers", "cluster_configuration_info", "environment_info"]

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _flink_string(value: Any) -> str:
    if isinstance(value, timedelta):
        return format_duration(value)
    return str(value).lower() if isinstance(value, bool) else str(value)


def cluster_configuration_info(config: Configuration) -> list[dict[str, str]]:
    """``ClusterConfigurationInfo`` of ``config``: its set keys with their values as strings, secrets hidden."""
    out = []
    for key, value in sorted(config.to_dict().items()):
        out.append({"key": key, "value": HIDDEN_CONTENT if is_sensitive_key(key) else _flink_string(value)})
    return out


def environment_info() -> dict[str, Any]:
    """``EnvironmentInfo`` of this process (Flink's JVM fields filled with the Python interpreter's)."""
    return {
        "jvm": {
            "version": f"{platform.python_implementation()} {platform.python_version()}",
            "arch": platform.machine(),
            "options": hide_sensitive_arguments(list(sys.orig_argv)),  # -D...password=... as Flink hides it
        },
        "classpath": [p for p in sys.path if p],
    }


def _get_list(request: web.Request, name: str) -> list[str] | None:
    raw = request.query.get(name)
    return None if raw is None else [x.strip() for x in raw.split(",") if x.strip()]


class JobManagerHandlers:
    """The ``/jobmanager/*`` routes of :class:`~strom.web.server.DispatcherRestEndpoint`."""

    def __init__(self, gateway: DispatcherGateway) -> None:
        self.gateway = gateway
        self.logs = JobManagerLogHandlers(gateway)
        self._environment = environment_info()  # as Flink's: taken once, when the endpoint is created

    def routes(self) -> list[tuple[str, str, Handler]]:
        return [
            ("GET", "/jobmanager/config", self._config),
            ("GET", "/jobmanager/environment", self._environment_info),
            ("GET", "/jobmanager/metrics", self._metrics),
            ("GET", "/jobmanager/thread-dump", self._thread_dump),
            *self.logs.routes(),
        ]

    async def _config(self, request: web.Request) -> web.Response:
        return web.json_response(cluster_configuration_info(self.gateway.configuration))

    async def _environment_info(self, request: web.Request) -> web.Response:
        return web.json_response(self._environment)

    async def _metrics(self, request: web.Request) -> web.Response:
        return web.json_response(mm.metric_collection(self.gateway.job_manager_metrics(), _get_list(request, "get")))

    async def _thread_dump(self, request: web.Request) -> web.Response:
        return web.json_response(thread_dump_info(thread_dump()))
