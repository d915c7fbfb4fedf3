"""The TaskManagers' log files over REST (Flink's ``TaskManagerLogListHandler``, ``TaskManagerLogFileHandler``,
``TaskManagerCustomLogHandler``, ``TaskManagerStdoutFileHandler``).

===================================== ==============================================================================
``GET /taskmanagers/:id/logs``        ``LogListInfo``: ``{"logs": [{"name", "size", "mtime"}]}``, the TaskManager's
                                      files in its log directory
``GET /taskmanagers/:id/log``         its main log (``taskmanager-<id>.log``) as ``text/plain``
``GET /taskmanagers/:id/logs/:name``  a file of that listing; any other name (``..``, a path, a hidden name) is refused
``GET /taskmanagers/:id/stdout``      the file its standard output is redirected to; 404 with Flink's text when none
===================================== ==============================================================================

The TaskManager may run on another machine: it reads its own files and sends them over RPC in chunks of at most
:data:`~strom.runtime.taskexecutor.log_files.MAX_CHUNK_BYTES`, which the handler streams to the client as they
arrive (a 100 MB log never sits in the JobManager's memory). The file is served up to the size it had at the
first chunk. Flink caches the file in its BlobServer for a while; strom reads it afresh on every request.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from strom.exceptions import RpcError
from strom.web.accessor import DispatcherGateway, RestHandlerError

__all__ = ["TaskManagerLogHandlers", "log_list_info"]

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

_CHUNK = 1024 * 1024
#: Flink's ``TaskManagerStdoutFileHandler.FILE_NOT_FOUND_INFO``, without its Kubernetes advice
_STDOUT_NOT_FOUND = (
    "The file STDOUT does not exist on the TaskExecutor. hint: a MiniCluster's TaskManagers print to the client's "
    "standard output; strom cluster's TaskManagers to their .log file in the cluster directory"
)


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
        data, size = await self._chunk(tm_id, file_type, name, 0)  # errors answer before anything was sent
        response = web.StreamResponse(headers={"Content-Type": "text/plain; charset=utf-8"})
        await response.prepare(request)
        offset = 0
        while data:
            await response.write(data)
            offset += len(data)
            if offset >= size:
                break
            try:
                data, _ = await self._chunk(tm_id, file_type, name, offset)
            except RestHandlerError:  # rotated or gone meanwhile: what was sent stays
                break
        await response.write_eof()
        return response


def log_list_info(files: list[tuple[str, int, int]]) -> dict[str, Any]:
    """Flink's ``LogListInfo`` of (name, size, mtime ms) rows."""
    return {"logs": [{"name": n, "size": s, "mtime": m} for n, s, m in files]}
