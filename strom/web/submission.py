"""Job submission over REST: Flink's ``POST /jobs`` and ``GET /jobs/:jobid/execution-result``.

As Flink's ``JobSubmitHandler`` (checked against Flink's ``JobSubmitRequestBody``, ``JobSubmitHandler`` and
``FileUploadHandler``), ``POST /jobs`` takes a ``multipart/form-data`` body: one form field (a part without a file
name) named ``request`` holding the ``JobSubmitRequestBody`` JSON, and one file part per file it names — Flink's
``RestClient`` names those parts ``file_0``, ``file_1``, …, but only their *file names* count (the name's last
path component, as Flink's ``FileUploadHandler`` keeps it)::

    {"jobGraphFileName": "job.graph", "jobJarFileNames": [],
     "jobArtifactFileNames": [{"entryName": "python_files", "fileName": "python_files.zip"}]}

As in Flink: a form field other than ``request`` is refused (``Received unknown attribute``), so are two files of
one name, a missing or null ``jobGraphFileName``, and a named graph, jar or artifact that was not uploaded (``<type>
file <name> could not be found on the server.``), each with 400.

strom's own parts: the job graph file is the client's JobGraph pickled with cloudpickle (Flink's is a Java-serialized
``JobGraph``), and the artifact of ``entryName`` ``python_files`` is the zip of the job's modules
(:mod:`strom.runtime.python_files`). strom runs no jars and has no distributed cache, so a non-empty
``jobJarFileNames`` or an artifact of another ``entryName`` is refused with 400 rather than dropped. It answers
``202 {"jobUrl": "/jobs/<job id>"}`` (Flink's ``JobSubmitResponseBody``); 409 for a job id already submitted, 413
above ``rest.server.max-content-length``.

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
from aiohttp import BodyPartReader, MultipartReader, web
from aiohttp.http_exceptions import HttpProcessingError

from strom.exceptions import StromError
from strom.graph.job_graph import JobGraph
from strom.runtime.execution_state import JobStatus
from strom.runtime.jobmaster.job_result import APPLICATION_STATUS
from strom.runtime.python_files import PYTHON_FILES_KEY, PythonFilesCache
from strom.web.accessor import RestHandlerError

if TYPE_CHECKING:
    from strom.runtime.dispatcher.dispatcher import Dispatcher
    from strom.runtime.jobmaster.jobmaster import JobResult

__all__ = ["PYTHON_FILES_ENTRY", "JobSubmissionHandlers", "execution_result_body"]

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

#: the ``entryName`` of the artifact holding the job's Python files (strom's own)
PYTHON_FILES_ENTRY = "python_files"
#: Flink's ``JobSubmitRequestBody`` fields
JOB_GRAPH_FIELD = "jobGraphFileName"
JOB_JARS_FIELD = "jobJarFileNames"
JOB_ARTIFACTS_FIELD = "jobArtifactFileNames"
#: Flink 2.x's client names its plan so (``JobSubmitRequestBody`` of Flink 2: a serialized ``ExecutionPlan``)
EXECUTION_PLAN_FIELD = "executionPlanFileName"
#: the first bytes of a Java-serialized object (``ObjectOutputStream``'s STREAM_MAGIC): a JVM client's plan
JAVA_SERIALIZATION_MAGIC = b"\xac\xed"
#: the answer to a JVM client (Flink's own ``flink run``): what strom runs instead
JVM_CLIENT_HINT = (
    "strom runs Python DataStream programs, not a JVM client's plan; hint: submit the program with strom's client, "
    "`strom run -m HOST:PORT job.py` (it accepts Flink's -py/--python spelling too)"
)


def execution_result_body(result: JobResult | None) -> dict[str, Any]:
    """Flink's ``JobExecutionResultResponseBody`` of a job's result (None: still running)."""
    if result is None:
        return {"status": {"id": "IN_PROGRESS"}}
    body: dict[str, Any] = {
        "id": result.job_id,
        "application-status": APPLICATION_STATUS.get(result.status, "UNKNOWN"),
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
        try:
            return await self._parts(await request.multipart())
        except (ValueError, HttpProcessingError) as exc:  # aiohttp's parser: no boundary, bad headers, early EOF
            raise RestHandlerError(
                f"expected a well-formed multipart/form-data body (Flink's job submission); got one that cannot be "
                f"parsed: {str(exc).strip()}; hint: submit with strom run -m HOST:PORT job.py",
                400,
            ) from None

    async def _parts(self, reader: MultipartReader) -> tuple[dict[str, Any], dict[str, bytes]]:
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
            if part.filename is None:  # a form field: Flink's FileUploadHandler takes only "request"
                if part.name != "request":
                    raise RestHandlerError(f"Received unknown attribute {part.name}.", 400)
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
                name = part.filename.replace("\\", "/").rsplit("/", 1)[-1]  # Flink keeps only the file's name
                if name in files:
                    raise RestHandlerError(
                        f"expected uploaded files of distinct names; got {name!r} twice (Flink's JobSubmitHandler "
                        "refuses that too)",
                        400,
                    )
                files[name] = bytes(data)
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
    def _file(files: dict[str, bytes], name: object, kind: str) -> bytes:
        """The uploaded file ``name`` (Flink's ``getPathAndAssertUpload``)."""
        if not isinstance(name, str) or name not in files:
            raise RestHandlerError(
                f"{kind} file {name} could not be found on the server. (uploaded: {sorted(files)})", 400
            )
        return files[name]

    @staticmethod
    def _list(body: dict[str, Any], field: str) -> list[Any]:
        value = body.get(field)
        if value is None:  # Flink: an omitted or null list is empty
            return []
        if not isinstance(value, list):
            raise RestHandlerError(f"expected {field} to be a list; got {type(value).__name__}", 400)
        return value

    async def _submit(self, request: web.Request) -> web.Response:
        body, files = await self._read_parts(request)
        if body.get(JOB_GRAPH_FIELD) is None and body.get(EXECUTION_PLAN_FIELD) is not None:
            raise RestHandlerError(
                f"expected a strom job graph; got Flink's {EXECUTION_PLAN_FIELD}: " + JVM_CLIENT_HINT, 400
            )
        if body.get(JOB_GRAPH_FIELD) is None:
            raise RestHandlerError(f"The {JOB_GRAPH_FIELD} field must not be omitted or be null.", 400)
        graph_bytes = self._file(files, body[JOB_GRAPH_FIELD], "JobGraph")
        if graph_bytes.startswith(JAVA_SERIALIZATION_MAGIC):
            raise RestHandlerError(
                "expected a strom job graph; got a Java-serialized JobGraph: " + JVM_CLIENT_HINT, 400
            )
        jars = self._list(body, JOB_JARS_FIELD)
        for jar in jars:
            self._file(files, jar, "Jar")
        if jars:
            raise RestHandlerError(
                f"expected no {JOB_JARS_FIELD}; got {jars}; hint: strom runs Python programs, whose modules travel "
                f"as the {PYTHON_FILES_ENTRY!r} artifact (strom run ships them)",
                400,
            )
        python_files = b""
        for artifact in self._list(body, JOB_ARTIFACTS_FIELD):
            if not isinstance(artifact, dict):
                raise RestHandlerError(
                    f"expected {{entryName, fileName}} objects in {JOB_ARTIFACTS_FIELD}; got {artifact!r}", 400
                )
            data = self._file(files, artifact.get("fileName"), "Artifact")
            if artifact.get("entryName") != PYTHON_FILES_ENTRY:
                raise RestHandlerError(
                    f"expected only the {PYTHON_FILES_ENTRY!r} artifact (the job's Python files); got entryName "
                    f"{artifact.get('entryName')!r}; hint: strom has no distributed cache, ship data through a file "
                    "system",
                    400,
                )
            python_files = data
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
            job_id = await self.dispatcher.submit_job(graph, wait_started=False)  # slots may take a while
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
            ended = self.dispatcher.recovered_results.get(job_id)  # HA: it ended under an earlier leader
            if ended is not None:
                return web.Response(text=json.dumps(execution_result_body(ended)), content_type="application/json")
            if self.dispatcher.recovering:
                raise RestHandlerError(f"expected job {job_id}; this JobManager still recovers its jobs", 503)
            raise RestHandlerError(f"expected a known job id; got {job_id!r}; hint: GET /jobs", 404)
        result = jm.result.result() if jm.result.done() else None
        return web.Response(text=json.dumps(execution_result_body(result)), content_type="application/json")
