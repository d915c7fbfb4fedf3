"""Job submission over REST: Flink's ``POST /jobs`` and ``GET /jobs/:jobid/execution-result``.

As Flink's ``JobSubmitHandler``, ``POST /jobs`` takes a ``multipart/form-data`` body: a part named ``request``
holding the ``JobSubmitRequestBody`` JSON, and one file part per file it names::

    {"jobGraphFileName": "job.graph", "jobJarFileNames": [],
     "jobArtifactFileNames": [{"entryName": "python_files", "fileName": "python_files.zip"}]}

strom's job graph file is the client's JobGraph pickled with cloudpickle (Flink's is a Java-serialized
``JobGraph``); the artifact ``python_files`` is the zip of the job's modules (:mod:`strom.runtime.python_files`).
It answers ``202 {"jobUrl": "/jobs/<job id>"}``; 400 for a malformed body, 409 for a job id already submitted,
413 above ``rest.server.max-content-length``.

**Unpickling is code execution.** The body is read only after the endpoint's token check passed (POST needs
``Authorization: Bearer <token>``, :mod:`strom.web.auth`), so only a holder of the cluster secret can submit — and
whoever can submit can run any code as the JobManager's user, as with Flink's jar submission.

``GET /jobs/:jobid/execution-result`` is Flink's ``JobExecutionResultHandler``: ``{"status": {"id":
"IN_PROGRESS"}}`` while the job runs, then ``COMPLETED`` with ``job-execution-result`` (``application-status``
``SUCCEEDED`` / ``FAILED`` / ``CANCELED``, ``net-runtime``, and for a failure ``failure-cause`` with the failure text,
the user's traceback included, as ``stack-trace``).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import cloudpickle
from aiohttp import BodyPartReader, web

from strom.exceptions import StromError
from strom.graph.job_graph import JobGraph
from strom.runtime.execution_state import JobStatus
from strom.runtime.python_files import PYTHON_FILES_KEY, PythonFilesCache
from strom.web.accessor import RestHandlerError

if TYPE_CHECKING:
    from strom.runtime.jobmaster.dispatcher import Dispatcher
    from strom.runtime.jobmaster.jobmaster import JobResult

__all__ = ["PYTHON_FILES_ENTRY", "JobSubmissionHandlers", "execution_result_body"]

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

#: the ``entryName`` of the artifact holding the job's Python files
PYTHON_FILES_ENTRY = "python_files"

_APPLICATION_STATUS = {
    JobStatus.FINISHED: "SUCCEEDED",
    JobStatus.FAILED: "FAILED",
    JobStatus.CANCELED: "CANCELED",
}


def execution_result_body(result: JobResult | None) -> dict[str, Any]:
    """Flink's ``JobExecutionResultResponseBody`` of a job's result (None: still running)."""
    if result is None:
        return {"status": {"id": "IN_PROGRESS"}}
    body: dict[str, Any] = {
        "id": result.job_id,
        "application-status": _APPLICATION_STATUS.get(result.status, "UNKNOWN"),
        "accumulator-results": {},
        "net-runtime": result.net_runtime_ms,
    }
    if result.status is not JobStatus.FINISHED and result.failure_text:
        name = type(result.failure).__qualname__ if result.failure is not None else "JobExecutionError"
        body["failure-cause"] = {"class": name, "stack-trace": result.failure_text}
    return {"status": {"id": "COMPLETED"}, "job-execution-result": body}


class JobSubmissionHandlers:
    """The submission routes of one standalone JobManager's REST endpoint."""

    def __init__(self, dispatcher: Dispatcher, *, max_content_length: int) -> None:
        self.dispatcher = dispatcher
        self.max_content_length = max_content_length
        #: the job's modules, on the JobManager (its operator coordinators and sources unpickle them)
        self.python_files = PythonFilesCache("jobmanager")

    def routes(self) -> list[tuple[str, str, Handler]]:
        return [
            ("POST", "/jobs", self._submit),
            ("GET", "/jobs/{jobid}/execution-result", self._execution_result),
        ]

    def close(self) -> None:
        self.python_files.close()

    # -- POST /jobs ------------------------------------------------------------------------------------
    async def _read_parts(self, request: web.Request) -> tuple[dict[str, Any], dict[str, bytes]]:
        if request.content_length is not None and request.content_length > self.max_content_length:
            raise self._too_large(request.content_length)
        if not request.content_type.startswith("multipart/"):
            raise RestHandlerError(
                f"expected a multipart/form-data body (Flink's job submission); got {request.content_type!r}", 400
            )
        reader = await request.multipart()
        body: dict[str, Any] | None = None
        files: dict[str, bytes] = {}
        total = 0
        while True:
            part = await reader.next()
            if part is None:
                break
            if not isinstance(part, BodyPartReader):
                raise RestHandlerError("expected flat multipart parts; got a nested multipart", 400)
            data = bytearray()
            while chunk := await part.read_chunk(1 << 16):
                total += len(chunk)
                if total > self.max_content_length:
                    raise self._too_large(total)
                data += chunk
            if part.name == "request":
                try:
                    parsed = json.loads(bytes(data))
                except ValueError:
                    raise RestHandlerError(
                        "expected the 'request' part to hold JSON; got something else", 400
                    ) from None
                if not isinstance(parsed, dict):
                    raise RestHandlerError(f"expected a JSON object as 'request'; got {type(parsed).__name__}", 400)
                body = parsed
            else:
                files[part.filename or part.name or ""] = bytes(data)
        if body is None:
            raise RestHandlerError("expected a 'request' part (Flink's JobSubmitRequestBody); got none", 400)
        return body, files

    def _too_large(self, size: int) -> RestHandlerError:
        return RestHandlerError(
            f"expected a submission of at most {self.max_content_length} bytes; got {size}; hint: raise "
            "rest.server.max-content-length on the JobManager, or ship large data through a file system",
            413,
        )

    @staticmethod
    def _file(body: dict[str, Any], files: dict[str, bytes], name: object, what: str) -> bytes:
        if not isinstance(name, str) or name not in files:
            raise RestHandlerError(f"expected {what} as a file part; got {name!r} (parts: {sorted(files)})", 400)
        return files[name]

    async def _submit(self, request: web.Request) -> web.Response:
        body, files = await self._read_parts(request)
        graph_bytes = self._file(body, files, body.get("jobGraphFileName"), "the job graph named by jobGraphFileName")
        python_files = b""
        for artifact in body.get("jobArtifactFileNames") or []:
            if isinstance(artifact, dict) and artifact.get("entryName") == PYTHON_FILES_ENTRY:
                python_files = self._file(body, files, artifact.get("fileName"), "the job's Python files")
        try:
            graph = await asyncio.to_thread(self._load_graph, graph_bytes, python_files)
        except RestHandlerError:
            raise
        except Exception as exc:
            raise RestHandlerError(
                f"expected a JobGraph pickled by a strom client of the cluster's version; got {type(exc).__name__}: "
                f"{exc}; hint: modules the program imports must lie next to it (strom run ships those) or be "
                "installed where the cluster runs",
                400,
            ) from None
        if graph.job_id in self.dispatcher.job_masters:
            raise RestHandlerError(f"expected a new job; got job {graph.job_id}, submitted already", 409)
        if python_files:
            graph.config[PYTHON_FILES_KEY] = python_files
        try:
            job_id = await self.dispatcher.submit_job(graph)
        except StromError as exc:
            raise RestHandlerError(
                f"the JobManager refused job '{graph.job_name}' ({graph.job_id}): {exc}", 400
            ) from None
        log.info("job '%s' (%s) submitted over REST", graph.job_name, job_id)
        return web.Response(text=json.dumps({"jobUrl": f"/jobs/{job_id}"}), status=202, content_type="application/json")

    def _load_graph(self, graph_bytes: bytes, python_files: bytes) -> JobGraph:
        """Off the loop: the job's modules on ``sys.path``, then the graph (which may import them)."""
        if python_files:
            self.python_files.install("submitted", python_files)
        graph = cloudpickle.loads(graph_bytes)
        if not isinstance(graph, JobGraph):
            raise RestHandlerError(f"expected a pickled JobGraph; got a {type(graph).__name__}", 400)
        return graph

    # -- GET /jobs/:jobid/execution-result ---------------------------------------------------------------
    async def _execution_result(self, request: web.Request) -> web.Response:
        job_id = request.match_info["jobid"]
        jm = self.dispatcher.job_masters.get(job_id)
        if jm is None:
            raise RestHandlerError(f"expected a known job id; got {job_id!r}; hint: GET /jobs", 404)
        result = jm.result.result() if jm.result.done() else None
        return web.Response(text=json.dumps(execution_result_body(result)), content_type="application/json")
