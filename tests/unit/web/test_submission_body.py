"""``POST /jobs`` with a body aiohttp's multipart parser cannot read (no boundary, broken part headers, a body that
ends early) answers 400 naming what is wrong, as any other malformed submission does — not 500 with a traceback
(issue 31 §1)."""

from __future__ import annotations

import asyncio
import logging

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from strom.web.accessor import RestHandlerError
from strom.web.submission import JobSubmissionHandlers

BODIES = [
    b"garbage",
    b'--xyz\r\nContent-Disposition: form-data; name="request"\r\n\r\n{}',
    b"--xyz\r\nbroken headers\r\n\r\nx\r\n--xyz--\r\n",
]


async def _post_each(bodies: list[bytes]) -> list[tuple[int, str]]:
    handlers = JobSubmissionHandlers(dispatcher=None, max_content_length=1 << 20)  # type: ignore[arg-type]

    @web.middleware
    async def errors(request: web.Request, handler: web.RequestHandler) -> web.StreamResponse:  # as the server's
        try:
            return await handler(request)
        except RestHandlerError as exc:
            return web.Response(status=exc.status, text=str(exc))

    app = web.Application(middlewares=[errors])
    for method, path, handler in handlers.routes():
        app.router.add_route(method, path, handler)
    answers = []
    async with TestClient(TestServer(app)) as client:
        for body in bodies:
            headers = {"Content-Type": "multipart/form-data; boundary=xyz"}
            response = await client.post("/jobs", data=body, headers=headers)
            answers.append((response.status, await response.text()))
    handlers.close()
    return answers


def test_a_body_the_multipart_parser_cannot_read_is_a_400(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        answers = asyncio.run(asyncio.wait_for(_post_each(BODIES), 60))
    for status, text in answers:
        assert status == 400, text
        assert "expected a well-formed multipart/form-data body" in text
    assert not [r for r in caplog.records if r.exc_info], "no traceback in the log"
