"""The web dashboard: static HTML, CSS and JavaScript (ES modules, no build step) served by the REST endpoint.

``/`` answers the page, ``/dashboard/<file>`` its scripts and style sheet. The page reads only the REST API — the
paths Flink's web UI reads — and polls it while it is open; calls that change a job send the REST token the user
typed into the page (kept in the tab's ``sessionStorage``), so the served files hold no secret. Every response
carries a Content-Security-Policy that allows scripts, styles and requests from this origin only.
"""

from __future__ import annotations

from importlib import resources

from aiohttp import web

__all__ = ["ASSETS", "add_routes"]

#: the files served under /dashboard/, with their content types
ASSETS: dict[str, str] = {
    "index.html": "text/html",
    "favicon.svg": "image/svg+xml",
    "style.css": "text/css",
    "app.js": "text/javascript",
    "api.js": "text/javascript",
    "dom.js": "text/javascript",
    "format.js": "text/javascript",
    "graph.js": "text/javascript",
    "charts.js": "text/javascript",
    "pages.js": "text/javascript",
    "job_page.js": "text/javascript",
}

_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


def _asset(name: str) -> web.Response:
    body = resources.files(__package__).joinpath(name).read_bytes()
    return web.Response(body=body, content_type=ASSETS[name], charset="utf-8", headers=_HEADERS)


async def _index(request: web.Request) -> web.Response:
    return _asset("index.html")


async def _file(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name not in ASSETS:
        raise web.HTTPNotFound()
    return _asset(name)


def add_routes(app: web.Application) -> None:
    """Serve the dashboard from ``app``: ``/`` (and ``/index.html``) and ``/dashboard/<file>``."""
    app.router.add_get("/", _index)
    app.router.add_get("/index.html", _index)
    app.router.add_get("/dashboard/{name}", _file)
