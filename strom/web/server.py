"""``DispatcherRestEndpoint``: Flink's REST API on the JobManager's event loop (aiohttp).

Paths and bodies are Flink 2.x's (``rest_v1_dispatcher.yml``), served both as ``/<path>`` and ``/v1/<path>``.
With ``security.ssl.rest.enabled`` it serves HTTPS (and with ``security.ssl.rest.authentication-enabled`` only to
clients with a certificate its truststore signed). Reads (GET) are open to whoever reaches the address (loopback
unless ``rest.bind-address`` says otherwise); calls that change a job (PATCH, POST) need ``Authorization: Bearer
<token>`` (:mod:`strom.web.auth`), else 401. Errors answer in Flink's shape, ``{"errors": ["..."]}``: 400 for a
malformed id or body, 404 for an unknown job, vertex, checkpoint, TaskManager, trigger or path, 405 for a method a
path does not take.

The handlers read the runtime only through :class:`DispatcherGateway` and build their bodies with the pure
functions of :mod:`job_messages`, :mod:`checkpoint_messages` and :mod:`metric_messages`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import ssl
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from strom.web import application_messages as am
from strom.web import checkpoint_messages as cm
from strom.web import dashboard
from strom.web import job_messages as jm
from strom.web import metric_messages as mm
from strom.web import vertex_messages as vm
from strom.web.accessor import DispatcherGateway, JobSnapshot, RestHandlerError, VertexSnapshot
from strom.web.auth import bearer_token_matches
from strom.web.job_log_messages import JobLogRecordHandler
from strom.web.job_manager_messages import JobManagerHandlers
from strom.web.log_messages import TaskManagerLogHandlers
from strom.web.operations import AsynchronousOperations

__all__ = ["DispatcherRestEndpoint"]

log = logging.getLogger(__name__)

_HEX32 = re.compile(r"[0-9a-f]{32}")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
#: a flame graph's samples per task thread and their spacing (Flink's rest.flamegraph.num-samples / .delay-between-
#: samples default to 100 and 50 ms; fewer here, as it samples while the request waits)
FLAME_GRAPH_SAMPLES = 20
FLAME_GRAPH_DELAY_S = 0.02


def _json(body: Any, status: int = 200) -> web.Response:
    return web.Response(text=json.dumps(body), status=status, content_type="application/json")


def _error(message: str, status: int) -> web.Response:
    return _json({"errors": [message]}, status)


def _hex_id(request: web.Request, name: str, what: str) -> str:
    value = request.match_info[name]
    if not _HEX32.fullmatch(value):
        raise RestHandlerError(f"expected {what} as 32 lowercase hexadecimal characters; got {value!r}", 400)
    return value


def _get_list(request: web.Request, name: str) -> list[str] | None:
    raw = request.query.get(name)
    return None if raw is None else [x.strip() for x in raw.split(",") if x.strip()]


class DispatcherRestEndpoint:
    """The REST server of one JobManager; ``start()`` and ``close()`` run on its event loop."""

    def __init__(
        self,
        gateway: DispatcherGateway,
        *,
        token: str,
        version: str,
        bind_address: str = "127.0.0.1",
        port: int = 0,
        advertised_address: str = "",
        extra_routes: list[tuple[str, str, Handler]] | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.gateway = gateway
        #: HTTPS with this context (``security.ssl.rest.*``, :mod:`strom.runtime.net.ssl_utils`); None: plain HTTP
        self.ssl_context = ssl_context
        #: routes a kind of cluster adds (a standalone JobManager's job submission, :mod:`strom.web.submission`)
        self.extra_routes = list(extra_routes or [])
        self.token = token
        self.version = version
        self.bind_address = bind_address
        self.port = port
        self.advertised_address = advertised_address or bind_address
        self.operations = AsynchronousOperations()
        self.log_handlers = TaskManagerLogHandlers(gateway)
        self.job_log_handler = JobLogRecordHandler(gateway)
        self.job_manager_handlers = JobManagerHandlers(gateway)
        self._runner: web.AppRunner | None = None

    # -- lifecycle -------------------------------------------------------------------------------------
    async def start(self) -> None:
        app = web.Application(middlewares=[self._errors, self._auth])
        for prefix in ("", "/v1"):
            for method, path, handler in self._routes():
                app.router.add_route(method, prefix + path, handler)
        dashboard.add_routes(app)  # the web dashboard at / (static files; it reads the paths above)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, self.bind_address, self.port, ssl_context=self.ssl_context)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        bound = runner.addresses[0]
        self.port = int(bound[1])
        log.info("REST API at %s", self.url)

    async def close(self) -> None:
        await self.operations.close()
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    @property
    def url(self) -> str:
        host = self.advertised_address
        scheme = "https" if self.ssl_context is not None else "http"
        return f"{scheme}://[{host}]:{self.port}" if ":" in host else f"{scheme}://{host}:{self.port}"

    def _routes(self) -> list[tuple[str, str, Handler]]:
        job = "/jobs/{jobid}"
        vertex = job + "/vertices/{vertexid}"
        return [
            ("GET", "/config", self._config),
            *self.job_manager_handlers.routes(),  # /jobmanager/config, /metrics, /logs, ... (job_manager_messages)
            ("GET", "/overview", self._overview),
            ("GET", "/applications/overview", self._applications_overview),
            ("GET", "/applications/{applicationid}", self._application),
            ("GET", "/applications/{applicationid}/exceptions", self._application_exceptions),
            ("GET", "/jobs", self._jobs),
            ("GET", "/jobs/overview", self._jobs_overview),
            ("GET", job, self._job_details),
            ("PATCH", job, self._cancel),
            ("GET", job + "/plan", self._plan),
            ("GET", job + "/config", self._job_config),
            ("GET", job + "/exceptions", self._exceptions),
            ("GET", job + "/checkpoints", self._checkpoints),
            ("GET", job + "/checkpoints/config", self._checkpoint_config),
            ("GET", job + "/checkpoints/details/{checkpointid}", self._checkpoint_details),
            ("GET", job + "/checkpoints/details/{checkpointid}/subtasks/{vertexid}", self._checkpoint_subtasks),
            *[("GET", job + "/rescales/" + p, self._rescales) for p in ("overview", "summary", "history")],
            ("GET", job + "/rescales/details/{rescaleid}", self._rescales),
            ("GET", job + "/rescales/config", self._rescales_config),
            ("POST", job + "/savepoints", self._trigger_savepoint),
            ("GET", job + "/savepoints/{triggerid}", self._savepoint_status),
            ("POST", job + "/stop", self._stop),
            ("GET", vertex, self._vertex),
            ("GET", vertex + "/metrics", self._vertex_metrics),
            ("GET", vertex + "/subtasks/metrics", self._subtask_metrics),
            ("GET", vertex + "/backpressure", self._backpressure),
            ("GET", vertex + "/watermarks", self._watermarks),
            ("GET", vertex + "/taskmanagers", self._vertex_task_managers),
            ("GET", vertex + "/accumulators", self._vertex_accumulators),
            ("GET", vertex + "/subtasktimes", self._subtasks_times),
            ("GET", vertex + "/subtasks/accumulators", self._subtasks_accumulators),
            ("GET", vertex + "/flamegraph", self._flame_graph),
            ("GET", "/taskmanagers", self._task_managers),
            ("GET", "/taskmanagers/{tmid}", self._task_manager),
            ("GET", "/taskmanagers/{tmid}/metrics", self._task_manager_metrics),
            ("GET", "/taskmanagers/{tmid}/thread-dump", self._task_manager_thread_dump),
            *self.log_handlers.routes(),  # /logs, /log, /logs/:filename, /stdout (strom.web.log_messages)
            *self.job_log_handler.routes(),  # strom's own /jobs/:jobid/log-records (strom.web.job_log_messages)
            *self.extra_routes,
        ]

    # -- middlewares -----------------------------------------------------------------------------------
    @web.middleware
    async def _errors(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except RestHandlerError as exc:
            return _error(str(exc), exc.status)
        except web.HTTPException as exc:
            if exc.status == 404:
                return _error(f"Not found: {request.path}", 404)
            return _error(exc.reason, exc.status)
        except Exception as exc:  # a handler's bug: the caller gets a 500, the JobManager goes on
            log.warning("REST %s %s failed: %r", request.method, request.path, exc, exc_info=exc)
            return _error(f"internal server error: {type(exc).__name__}: {exc}", 500)

    @web.middleware
    async def _auth(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.method not in ("GET", "HEAD", "OPTIONS") and not bearer_token_matches(
            request.headers.get("Authorization"), self.token
        ):
            return _error(
                f"expected 'Authorization: Bearer <token>' with the cluster's REST token to {request.method} "
                f"{request.path}; got {'a wrong token' if 'Authorization' in request.headers else 'none'}; "
                "hint: strom's CLI sends it; strom cluster token (or JobClient.get_rest_token()) prints it, and "
                "Flink's CLI sends it with FLINK_REST_CLIENT_HEADERS='Authorization:Bearer <token>'",
                401,
            )
        return await handler(request)

    # -- lookups ---------------------------------------------------------------------------------------
    def _job(self, request: web.Request) -> JobSnapshot:
        return self.gateway.job(_hex_id(request, "jobid", "a job id"))

    def _job_and_vertex(self, request: web.Request) -> tuple[JobSnapshot, VertexSnapshot]:
        job = self._job(request)
        vid = _hex_id(request, "vertexid", "a job vertex id")
        for v in job.vertices:
            if v.id == vid:
                return job, v
        raise RestHandlerError(f"expected a vertex of job {job.job_id}; got {vid!r}; hint: GET /jobs/<jobid>", 404)

    def _task_manager_snapshot(self, request: web.Request) -> Any:
        tmid = request.match_info["tmid"]
        for t in self.gateway.task_managers():
            if t.id == tmid:
                return t
        raise RestHandlerError(f"expected a registered TaskManager id; got {tmid!r}; hint: GET /taskmanagers", 404)

    # -- cluster -------------------------------------------------------------------------------------
    async def _config(self, request: web.Request) -> web.Response:
        return _json(jm.dashboard_configuration(self.version))

    async def _overview(self, request: web.Request) -> web.Response:
        return _json(jm.cluster_overview(self.version, self.gateway.task_managers(), self.gateway.jobs()))

    async def _task_managers(self, request: web.Request) -> web.Response:
        tms = self.gateway.task_managers()
        hardware = await asyncio.gather(*(self._task_manager_hardware(t.id) for t in tms))
        return _json(jm.task_managers_info(tms, {t.id: hw for t, hw in zip(tms, hardware, strict=True)}))

    async def _task_manager_hardware(self, tm_id: str) -> dict[str, int]:
        try:
            return await self.gateway.request_task_manager_hardware(tm_id)
        except Exception as exc:  # gone, or an older TaskManager: its hardware is unknown, not an error
            log.debug("hardware of TaskManager %s: %r", tm_id, exc)
            return {}

    async def _task_manager_status(self, tm_id: str) -> dict[str, float]:
        try:
            return await self.gateway.request_task_manager_status_metrics(tm_id)
        except Exception as exc:  # gone, or an older TaskManager: its metrics are unknown, not an error
            log.debug("status metrics of TaskManager %s: %r", tm_id, exc)
            return {}

    async def _task_manager(self, request: web.Request) -> web.Response:
        tm = self._task_manager_snapshot(request)
        status, hardware = await asyncio.gather(self._task_manager_status(tm.id), self._task_manager_hardware(tm.id))
        return _json(jm.task_manager_details(tm, status, hardware))

    async def _task_manager_metrics(self, request: web.Request) -> web.Response:
        tm = self._task_manager_snapshot(request)
        return _json(mm.metric_collection(await self._task_manager_status(tm.id), _get_list(request, "get")))

    async def _task_manager_thread_dump(self, request: web.Request) -> web.Response:
        tm = self._task_manager_snapshot(request)
        return _json(jm.thread_dump_info(await self.gateway.request_task_manager_thread_dump(tm.id)))

    # -- applications (Flink 2.x: each strom job is a single-job application under the job's id) ----------
    async def _applications_overview(self, request: web.Request) -> web.Response:
        return _json(am.applications_overview(self.gateway.jobs()))

    def _application_job(self, request: web.Request) -> JobSnapshot:
        app_id = _hex_id(request, "applicationid", "an application id")
        if app_id not in self.gateway.job_ids():
            raise RestHandlerError(
                f"expected the id of an application of this cluster; got {app_id!r}; hint: GET "
                "/applications/overview lists them",
                404,
            )
        return self.gateway.job(app_id)

    async def _application(self, request: web.Request) -> web.Response:
        return _json(am.application_details(self._application_job(request)))

    async def _application_exceptions(self, request: web.Request) -> web.Response:
        return _json(am.application_exceptions(self._application_job(request)))

    # -- jobs ----------------------------------------------------------------------------------------
    async def _jobs(self, request: web.Request) -> web.Response:
        return _json(jm.jobs_with_status(self.gateway.jobs()))

    async def _jobs_overview(self, request: web.Request) -> web.Response:
        return _json(jm.jobs_overview(self.gateway.jobs()))

    async def _job_details(self, request: web.Request) -> web.Response:
        return _json(jm.job_details(self._job(request)))

    async def _job_config(self, request: web.Request) -> web.Response:
        return _json(jm.job_config_info(self._job(request)))

    async def _rescales(self, request: web.Request) -> web.Response:
        job = self._job(request)
        raise RestHandlerError(  # Flink's RescalesUnavailableException: rescale history needs its adaptive scheduler
            f"The job `{job.job_id}` has not enabled the `Adaptive` scheduler, or it has been enabled but the value "
            "of configuration option `web.adaptive-scheduler.rescale-history-size` has not been set to greater "
            "than `0`.",
            404,
        )

    async def _rescales_config(self, request: web.Request) -> web.Response:
        job = self._job(request)
        raise RestHandlerError(f"AdaptiveScheduler is not enabled for this job ({job.job_id}).", 404)

    async def _plan(self, request: web.Request) -> web.Response:
        return _json({"plan": jm.job_plan(self._job(request))})

    async def _exceptions(self, request: web.Request) -> web.Response:
        raw = request.query.get("maxExceptions")
        if raw is not None and not raw.isdigit():
            raise RestHandlerError(f"expected maxExceptions as a whole number; got {raw!r}", 400)
        return _json(jm.job_exceptions(self._job(request), int(raw) if raw is not None else None))

    async def _cancel(self, request: web.Request) -> web.Response:
        job_id = _hex_id(request, "jobid", "a job id")
        mode = request.query.get("mode", "cancel")
        if mode.lower() != "cancel":
            raise RestHandlerError(f"expected termination mode 'cancel'; got {mode!r}; hint: POST /jobs/<id>/stop", 400)
        self.gateway.cancel_job(job_id)
        return _json({}, 202)

    # -- checkpoints and savepoints ------------------------------------------------------------------
    def _checkpointed_job(self, request: web.Request) -> JobSnapshot:
        job = self._job(request)
        if job.checkpointing is None:
            raise RestHandlerError(f"Checkpointing is not enabled for job {job.job_id}", 404)
        return job

    async def _checkpoints(self, request: web.Request) -> web.Response:
        return _json(cm.checkpointing_statistics(self._checkpointed_job(request)))

    async def _checkpoint_config(self, request: web.Request) -> web.Response:
        job = self._checkpointed_job(request)
        assert job.checkpointing is not None
        return _json(cm.checkpoint_config(job.checkpointing))

    async def _checkpoint_details(self, request: web.Request) -> web.Response:
        job = self._checkpointed_job(request)
        raw = request.match_info["checkpointid"]
        if not raw.isdigit():
            raise RestHandlerError(f"expected a checkpoint id as a whole number; got {raw!r}", 400)
        for c in job.checkpoints:
            if c.id == int(raw):
                return _json(cm.checkpoint_statistics(job, c))
        raise RestHandlerError(f"Could not find checkpointing statistics for checkpoint {raw}", 404)

    async def _checkpoint_subtasks(self, request: web.Request) -> web.Response:
        job, v = self._job_and_vertex(request)
        if job.checkpointing is None:
            raise RestHandlerError(f"Checkpointing is not enabled for job {job.job_id}", 404)
        raw = request.match_info["checkpointid"]
        if not raw.isdigit():
            raise RestHandlerError(f"expected a checkpoint id as a whole number; got {raw!r}", 400)
        for c in job.checkpoints:
            if c.id == int(raw):
                return _json(cm.task_checkpoint_statistics_with_subtasks(job, c, v.id))
        raise RestHandlerError(f"Could not find checkpointing statistics for checkpoint {raw}", 404)

    async def _body(self, request: web.Request) -> dict[str, Any]:
        if not request.can_read_body:
            return {}
        try:
            body = await request.json()
        except ValueError:
            raise RestHandlerError("expected a JSON object as the request body; got something else", 400) from None
        if not isinstance(body, dict):
            raise RestHandlerError(f"expected a JSON object as the request body; got {type(body).__name__}", 400)
        return body

    def _savepoint_args(self, body: dict[str, Any], dir_key: str) -> tuple[str, str | None]:
        target = body.get(dir_key)
        if not isinstance(target, str) or not target:
            raise RestHandlerError(
                f"expected '{dir_key}' in the request body (strom has no default savepoint directory); got {target!r}",
                400,
            )
        trigger_id = body.get("triggerId")
        if trigger_id is not None and (not isinstance(trigger_id, str) or not _HEX32.fullmatch(trigger_id)):
            raise RestHandlerError(f"expected triggerId as 32 hexadecimal characters; got {trigger_id!r}", 400)
        return target, trigger_id

    async def _trigger_savepoint(self, request: web.Request) -> web.Response:
        job = self._job(request)
        body = await self._body(request)
        target, trigger_id = self._savepoint_args(body, "target-directory")
        if body.get("cancel-job"):
            work = self.gateway.stop_with_savepoint(job.job_id, target)
        else:
            work = self.gateway.trigger_savepoint(job.job_id, target)
        return _json({"request-id": self.operations.trigger(job.job_id, trigger_id, work)}, 202)

    async def _stop(self, request: web.Request) -> web.Response:
        job = self._job(request)
        body = await self._body(request)
        target, trigger_id = self._savepoint_args(body, "targetDirectory")
        if body.get("drain"):
            raise RestHandlerError("expected drain=false; got true; hint: strom cannot drain (MAX_WATERMARK) yet", 400)
        work = self.gateway.stop_with_savepoint(job.job_id, target)
        return _json({"request-id": self.operations.trigger(job.job_id, trigger_id, work)}, 202)

    async def _savepoint_status(self, request: web.Request) -> web.Response:
        job = self._job(request)
        return _json(self.operations.result(job.job_id, request.match_info["triggerid"]))

    # -- vertices ------------------------------------------------------------------------------------
    async def _vertex(self, request: web.Request) -> web.Response:
        return _json(jm.job_vertex_details(*self._job_and_vertex(request)))

    async def _vertex_metrics(self, request: web.Request) -> web.Response:
        _, v = self._job_and_vertex(request)
        return _json(mm.metric_collection(mm.vertex_metrics(v), _get_list(request, "get")))

    async def _subtask_metrics(self, request: web.Request) -> web.Response:
        _, v = self._job_and_vertex(request)
        chosen = set(mm.parse_subtask_ranges(request.query.get("subtasks"), v.parallelism))
        subtasks = [s for s in v.subtasks if s.subtask in chosen]
        return _json(mm.aggregated_metrics(subtasks, _get_list(request, "get"), _get_list(request, "agg")))

    async def _backpressure(self, request: web.Request) -> web.Response:
        return _json(mm.back_pressure_info(self._job_and_vertex(request)[1]))

    async def _watermarks(self, request: web.Request) -> web.Response:
        return _json(mm.watermarks(self._job_and_vertex(request)[1]))

    async def _vertex_task_managers(self, request: web.Request) -> web.Response:
        job, v = self._job_and_vertex(request)
        return _json(jm.vertex_task_managers(job, v, int(time.time() * 1000)))

    async def _subtasks_times(self, request: web.Request) -> web.Response:
        return _json(vm.subtasks_times(self._job_and_vertex(request)[1], int(time.time() * 1000)))

    async def _vertex_accumulators(self, request: web.Request) -> web.Response:
        return _json(vm.vertex_accumulators(self._job_and_vertex(request)[1]))

    async def _subtasks_accumulators(self, request: web.Request) -> web.Response:
        return _json(vm.subtasks_accumulators(self._job_and_vertex(request)[1]))

    async def _flame_graph(self, request: web.Request) -> web.Response:
        """Flink's ``JobVertexFlameGraphHandler``, sampling on request: ``FLAME_GRAPH_SAMPLES`` stacks of each
        running task thread of the vertex (or of ``subtaskindex``), ``FLAME_GRAPH_DELAY_S`` apart."""
        _, v = self._job_and_vertex(request)
        try:
            graph_type = vm.parse_flame_graph_type(request.query.get("type"))
        except ValueError as exc:
            raise RestHandlerError(str(exc), 400) from None
        subtasks = list(v.subtasks)
        raw = request.query.get("subtaskindex")
        if raw is not None:
            if not raw.isdigit():
                raise RestHandlerError(f"expected subtaskindex as a whole number; got {raw!r}", 400)
            subtasks = [s for s in subtasks if s.subtask == int(raw)]
        stacks = await self.gateway.request_thread_info_samples(subtasks, FLAME_GRAPH_SAMPLES, FLAME_GRAPH_DELAY_S)
        return _json(vm.vertex_flame_graph(stacks, graph_type, int(time.time() * 1000)))
