"""Log files over REST: the TaskManagers' (Flink's ``TaskManagerLogListHandler``, ``TaskManagerLogFileHandler``,
``TaskManagerCustomLogHandler``, ``TaskManagerStdoutFileHandler``) and the JobManager's own
(``JobManagerLogListHandler``, ``JobManagerLogFileHandler``, ``JobManagerCustomLogHandler``,
``JobManagerStdoutFileHandler``).

===================================== ==============================================================================
``GET /taskmanagers/:id/logs``        ``LogListInfo``: ``{"logs": [{"name", "size", "mtime"}]}``, the TaskManager's
                                      files in its log directory
``GET /taskmanagers/:id/log``         its main log (``taskmanager-<id>.log``) as ``text/plain``
``GET /taskmanagers/:id/logs/:name``  a file of that listing; any other name (``..``, a path, a hidden name) is refused
``GET /taskmanagers/:id/stdout``      the file its standard output is redirected to; 404 with Flink's text when none
``GET /jobmanager/logs``              ``LogListInfo`` of the JobManager's own files; ``{"logs": []}`` without a log
                                      file (a MiniCluster's JobManager, in the client's process), as Flink's
``GET /jobmanager/log``               its main log (``jobmanager.log``, ``<name>.log``); ``/logs/:name``, ``/stdout``
                                      as a TaskManager's. Without a log file each answers Flink's 404,
                                      ``This file does not exist in JobManager log dir.``
===================================== ==============================================================================

Both kinds of process keep their files with :class:`strom.runtime.log_files.LogFiles` and are read in chunks of at
most :data:`~strom.runtime.log_files.MAX_CHUNK_BYTES`, which :func:`stream_file` sends to the client as they arrive (a
100 MB log never sits in memory): a TaskManager reads its own files and sends the chunks over RPC (it may run on
another machine); the JobManager reads its own off its loop. The file is served up to the size it had at the first
chunk. Flink caches a TaskManager's file in its BlobServer for a while; strom reads it afresh on every request.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from strom.exceptions import RpcError
from strom.web.accessor import DispatcherGateway, RestHandlerError

__all__ = ["JobManagerLogHandlers", "TaskManagerLogHandlers", "log_list_info", "stream_file"]

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
#: ``chunk(offset)``: a chunk of the file from ``offset`` and the file's size; RestHandlerError when it cannot be read
ChunkReader = Callable[[int], Awaitable[tuple[bytes, int]]]

_CHUNK = 1024 * 1024
#: Flink's ``TaskManagerStdoutFileHandler.FILE_NOT_FOUND_INFO``, without its Kubernetes advice
_STDOUT_NOT_FOUND = (
    "The file STDOUT does not exist on the TaskExecutor. hint: a MiniCluster's TaskManagers print to the client's "
    "standard output; strom cluster's TaskManagers to their .log file in the cluster directory"
)
#: Flink's ``AbstractJobManagerFileHandler`` answer for a file it does not have
_JM_FILE_NOT_FOUND = "This file does not exist in JobManager log dir."


class TaskManagerLogHandlers:
    """The four log routes of :class:`~strom.web.server.DispatcherRestEndpoint`."""

    def __init__(self, gateway: DispatcherGateway) -> None:
        self.gateway = gateway

    def routes(self) -> list[tuple[str, str, Handler]]:
        tm = "/taskmanagers/{tmid}"
        return [
            ("GET", tm + "/logs", self._log_list),
            ("GET", tm + "/log", self._main_log),
            ("GET", tm + "/logs/{filename}", self._custom_log),
            ("GET", tm + "/stdout", self._stdout),
        ]

    def _tm_id(self, request: web.Request) -> str:
        tm_id = request.match_info["tmid"]
        if not any(t.id == tm_id for t in self.gateway.task_managers()):
            raise RestHandlerError(f"expected a registered TaskManager id; got {tm_id!r}; hint: GET /taskmanagers", 404)
        return tm_id

    async def _log_list(self, request: web.Request) -> web.Response:
        tm_id = self._tm_id(request)
        try:
            files = await self.gateway.request_task_manager_log_list(tm_id)
        except RpcError as exc:
            raise RestHandlerError(f"Failed to list the log files of TaskExecutor {tm_id}: {exc}", 404) from None
        return web.json_response(log_list_info(files))

    async def _main_log(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, self._tm_id(request), "LOG", "")

    async def _custom_log(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, self._tm_id(request), "LOG", request.match_info["filename"])

    async def _stdout(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, self._tm_id(request), "STDOUT", "")

    async def _chunk(self, tm_id: str, file_type: str, name: str, offset: int) -> tuple[bytes, int]:
        try:
            return await self.gateway.request_task_manager_file_chunk(tm_id, file_type, name, offset, _CHUNK)
        except ValueError as exc:  # a name that is not a plain file name of the log directory
            raise RestHandlerError(str(exc), 400) from None
        except FileNotFoundError as exc:
            raise RestHandlerError(_STDOUT_NOT_FOUND if file_type == "STDOUT" and not name else str(exc), 404) from None
        except RpcError as exc:
            raise RestHandlerError(f"Failed to transfer file from TaskExecutor {tm_id}: {exc}", 404) from None

    async def _serve(self, request: web.Request, tm_id: str, file_type: str, name: str) -> web.StreamResponse:
        return await stream_file(request, lambda offset: self._chunk(tm_id, file_type, name, offset))


class JobManagerLogHandlers:
    """The JobManager's own four log routes: its files read on its machine, off its event loop."""

    def __init__(self, gateway: DispatcherGateway) -> None:
        self.gateway = gateway

    def routes(self) -> list[tuple[str, str, Handler]]:
        return [
            ("GET", "/jobmanager/logs", self._log_list),
            ("GET", "/jobmanager/log", self._main_log),
            ("GET", "/jobmanager/logs/{filename}", self._custom_log),
            ("GET", "/jobmanager/stdout", self._stdout),
        ]

    async def _log_list(self, request: web.Request) -> web.Response:
        return web.json_response(log_list_info(await self.gateway.request_job_manager_log_list()))

    async def _main_log(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, "LOG", "")

    async def _custom_log(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, "LOG", request.match_info["filename"])

    async def _stdout(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, "STDOUT", "")

    async def _chunk(self, file_type: str, name: str, offset: int) -> tuple[bytes, int]:
        try:
            return await self.gateway.request_job_manager_file_chunk(file_type, name, offset, _CHUNK)
        except ValueError as exc:  # a name that is not a plain file name of the log directory
            raise RestHandlerError(str(exc), 400) from None
        except OSError:  # none, not its own, or gone
            raise RestHandlerError(_JM_FILE_NOT_FOUND, 404) from None

    async def _serve(self, request: web.Request, file_type: str, name: str) -> web.StreamResponse:
        return await stream_file(request, lambda offset: self._chunk(file_type, name, offset))


async def stream_file(request: web.Request, chunk: ChunkReader) -> web.StreamResponse:
    """Send a file as ``text/plain`` chunk by chunk, up to the size it had at the first chunk. An error before the
    first byte answers as an error; a file rotated or gone meanwhile ends the body with what was sent."""
    data, size = await chunk(0)
    response = web.StreamResponse(headers={"Content-Type": "text/plain; charset=utf-8"})
    await response.prepare(request)
    offset = 0
    while data:
        await response.write(data)
        offset += len(data)
        if offset >= size:
            break
        try:
            data, _ = await chunk(offset)
        except RestHandlerError:
            break
    await response.write_eof()
    return response


def log_list_info(files: list[tuple[str, int, int]]) -> dict[str, Any]:
    """Flink's ``LogListInfo`` of (name, size, mtime ms) rows."""
    return {"logs": [{"name": n, "size": s, "mtime": m} for n, s, m in files]}
