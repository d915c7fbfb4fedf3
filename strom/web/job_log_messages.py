"""``GET /jobs/:jobid/log-records``: the log records of a job's tasks, read with a cursor (strom's own path).

Flink has no such path (its ``flink run`` prints no job logs). A standalone TaskManager forwards every record
logged on a task thread at its ``logging.level`` to the JobManager, which keeps the latest of each job
(:class:`~strom.runtime.dispatcher.job_logs.JobLogBuffers`); ``strom run -m`` polls this path while it waits.

Query: ``from`` (the cursor, default 0: the oldest record kept), ``level`` (a level name or number; records below
it are skipped). Answer::

    {"stream": "<this JobManager's buffer>", "next": <cursor to pass next>, "dropped": <records lost unread>,
     "records": [{"seq", "timestamp" (ms), "level" ("INFO"), "taskmanager", "logger", "message"}]}
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from strom.web.accessor import DispatcherGateway, RestHandlerError

__all__ = ["JobLogRecordHandler"]

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _level(raw: str | None) -> int:
    if raw is None or not raw.strip():
        return 0
    text = raw.strip().upper()
    if text.isdigit():
        return int(text)
    level = logging.getLevelName(text)
    if not isinstance(level, int):
        raise RestHandlerError(f"expected level as DEBUG, INFO, WARNING, ERROR, CRITICAL or a number; got {raw!r}", 400)
    return level


class JobLogRecordHandler:
    """The route of :class:`~strom.web.server.DispatcherRestEndpoint` for a job's forwarded log records."""

    def __init__(self, gateway: DispatcherGateway) -> None:
        self.gateway = gateway

    def routes(self) -> list[tuple[str, str, Handler]]:
        return [("GET", "/jobs/{jobid}/log-records", self._records)]

    async def _records(self, request: web.Request) -> web.Response:
        job_id = request.match_info["jobid"]
        raw = request.query.get("from", "0")
        if not raw.isdigit():
            raise RestHandlerError(f"expected from as a whole number (the 'next' of the last answer); got {raw!r}", 400)
        stream, records, cursor, dropped = self.gateway.job_log_records(
            job_id, int(raw), _level(request.query.get("level"))
        )
        return web.json_response(
            {
                "stream": stream,
                "next": cursor,
                "dropped": dropped,
                "records": [
                    {
                        "seq": r.seq,
                        "timestamp": r.time_ms,
                        "level": logging.getLevelName(r.level),
                        "taskmanager": r.task_manager,
                        "logger": r.logger,
                        "message": r.message,
                    }
                    for r in records
                ],
            }
        )
