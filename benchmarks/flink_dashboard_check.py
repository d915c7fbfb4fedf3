"""Flink's own web dashboard against strom's REST API, in headless Chromium (issue 30 §3) — outside ``make test``.

Flink 2.3's dashboard (its ``web/`` files ship inside the ``flink-dist`` jar of the ``apache-flink-libraries`` wheel,
which ``pip download`` fetches into a throw-away directory; ``--web-dir`` names an unpacked copy instead) is served
by a small local proxy that forwards every other request to strom's REST port, as Flink's own web server would
answer it. Two jobs run on a MiniCluster: a bounded one that finished and an endless one with checkpoints. Chromium
(selenium, ``scripts/ensure-chromium.sh``) opens every page of the dashboard for both — overview, applications,
jobs, each job's tabs, each vertex's tabs, the TaskManagers' and the JobManager's — and the script reports:

- each request the dashboard sent that strom answered with 404 or 5xx (but the ``/jobs/:id/rescales/*`` 404s,
  which Flink answers too when its adaptive scheduler is off);
- each console error of the page;
- each page whose main area shows no data (empty, or Flink's "No Data" placeholder).

    PYTHONPATH=. python benchmarks/flink_dashboard_check.py [--web-dir DIR] [--screenshots DIR] [--routes REGEX]

Exit status 0 when nothing was found. See docs/operations.md ("Flink's own dashboard").
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import mimetypes
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import ClientSession, web

FLINK_VERSION = "2.3.0"
#: answers Flink's own REST API gives as well, by what they mean: no adaptive scheduler (no rescale history), and a
#: MiniCluster's JobManager that runs in the client's process and writes no log file (Flink without log.file)
EXPECTED_404 = re.compile(r"/jobs/[0-9a-f]{32}/rescales/|/jobmanager/(log|stdout)$")
#: sections that show Flink's "No Data" because there is nothing to show, by route; anything else without data fails
EXPECTED_EMPTY = {
    r"/accumulators$": "strom has no user accumulators",
    r"^job/[a-z]+/[0-9a-f]{32}/configuration$": "the job sets no global job parameters (its User Configuration)",
    r"^job-manager/log$": "a MiniCluster's JobManager writes no log file (its Log List)",
    r"^job/(running|completed)$": "the job of this cluster is in the other list",
    r"^overview$": "the Running Application List of a cluster whose application finished (or the completed one)",
    r"^application/[a-z]+/[0-9a-f]{32}/overview$": "the application's other job list (running or completed)",
    r"^job/completed/[0-9a-f]{32}/checkpoints$": "the finished job does not checkpoint",
    r"^job/completed/[0-9a-f]{32}/overview/[0-9a-f]{32}/watermarks$": "a finished task's input ended: it has no "
    "watermark left to show (Flink drops a finished task's metrics)",
}


# -- the dashboard's files -----------------------------------------------------------------------------------------
def expected_404(path: str, unchecked_job: str) -> bool:
    """A 404 Flink answers too (see EXPECTED_404), or the checkpoints of the job that does not checkpoint."""
    return bool(EXPECTED_404.search(path)) or f"/jobs/{unchecked_job}/checkpoints" in path


def fetch_dashboard(directory: Path) -> Path:
    """Download the apache-flink-libraries wheel into ``directory`` and unpack the ``web/`` of its flink-dist jar."""
    web_dir = directory / "web"
    if (web_dir / "index.html").exists():
        return web_dir
    subprocess.run(
        [sys.executable, "-m", "pip", "download", f"apache-flink-libraries=={FLINK_VERSION}", "--no-deps",
         "-q", "-d", str(directory)],
        check=True,
    )  # fmt: skip
    (wheel,) = directory.glob("apache_flink_libraries-*.whl")
    with zipfile.ZipFile(wheel) as outer:
        (dist,) = [n for n in outer.namelist() if re.search(r"lib/flink-dist[^/]*\.jar$", n)]
        jar = zipfile.ZipFile(io.BytesIO(outer.read(dist)))
    for name in jar.namelist():
        if name.startswith("web/") and not name.endswith("/"):
            target = directory / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(jar.read(name))
    return web_dir


# -- the proxy -----------------------------------------------------------------------------------------------------
@dataclass
class Proxy:
    """Serves the dashboard's files and forwards the rest to strom's REST API, noting every answer's status."""

    web_dir: Path
    rest_url: str
    answers: list[tuple[str, int]] = field(default_factory=list)
    port: int = 0

    async def handle(self, request: web.Request) -> web.StreamResponse:
        relative = request.path.lstrip("/") or "index.html"
        file = (self.web_dir / relative).resolve()
        if file.is_file() and self.web_dir.resolve() in file.parents:
            kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
            return web.Response(body=file.read_bytes(), content_type=kind)
        url = self.rest_url + request.path_qs
        async with ClientSession() as session, session.request(request.method, url) as resp:
            body = await resp.read()
            self.answers.append((request.path_qs, resp.status))
            kind = resp.headers.get("Content-Type", "application/json").split(";")[0]
            return web.Response(body=body, status=resp.status, content_type=kind)


@contextmanager
def serving(proxy: Proxy) -> Iterator[str]:
    loop = asyncio.new_event_loop()
    started = threading.Event()
    runner_box: list[web.AppRunner] = []

    async def start() -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", proxy.handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        proxy.port = int(runner.addresses[0][1])
        runner_box.append(runner)
        started.set()

    thread = threading.Thread(target=lambda: (loop.run_until_complete(start()), loop.run_forever()), daemon=True)
    thread.start()
    started.wait(30)
    try:
        yield f"http://127.0.0.1:{proxy.port}"
    finally:
        asyncio.run_coroutine_threadsafe(runner_box[0].cleanup(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)


# -- the jobs ------------------------------------------------------------------------------------------------------
def start_jobs() -> tuple[Any, Any]:
    from strom import DataGeneratorSource, StreamExecutionEnvironment

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.from_source(DataGeneratorSource(lambda i: i, 5000), source_name="bounded numbers").rebalance().map(
        lambda v: v * 2
    ).name("double").add_sink(lambda _: None)
    finished = env.execute_async("dashboard-check finished")
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.enable_checkpointing(500)
    (
        env.from_source(
            DataGeneratorSource(lambda i: (i % 7, 1), 10**12, records_per_second=300), source_name="endless numbers"
        )
        .key_by(lambda e: e[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .name("sums")
        .add_sink(lambda _: None)
    )
    running = env.execute_async("dashboard-check running")
    return finished, running


def rest_get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as resp:
        return json.loads(resp.read())


def wait_until(what: str, predicate: Any, timeout: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    raise TimeoutError(f"timed out waiting for {what}")


# -- the pages -----------------------------------------------------------------------------------------------------
def pages(rest: str, job_ids: dict[str, str]) -> list[str]:
    """Every dashboard route (hash paths of Flink 2.3's router) for the cluster and the two jobs."""
    out = ["overview", "job/running", "job/completed", "task-manager", "job-manager/metrics", "job-manager/config",
           "job-manager/environment", "job-manager/logs", "job-manager/stdout", "job-manager/log",
           "job-manager/thread-dump"]  # fmt: skip
    for kind, jid in job_ids.items():
        out.append(f"application/{kind}/{jid}/overview")
        out.append(f"application/{kind}/{jid}/exceptions")
        base = f"job/{kind}/{jid}"
        out += [f"{base}/{tab}" for tab in ("overview", "exceptions", "checkpoints", "configuration", "timeline")]
        for v in rest_get(f"{rest}/jobs/{jid}")["vertices"]:
            for tab in ("detail", "subtasks", "taskmanagers", "watermarks", "accumulators", "backpressure", "metrics",
                        "flamegraph", "dataskew"):  # fmt: skip
                out.append(f"{base}/overview/{v['id']}/{tab}")
    for tm in rest_get(f"{rest}/taskmanagers")["taskmanagers"]:
        out += [f"task-manager/{tm['id']}/{tab}" for tab in ("metrics", "logs", "stdout", "log-list", "thread-dump")]
    return out


_MAIN_TEXT = """
const main = document.querySelector('nz-content') || document.body;
return [main.innerText.length, main.innerText.includes('No Data'), main.innerText.slice(0, 200)];
"""


def visit(driver: Any, base: str, route: str, shots: Path | None) -> tuple[int, bool, str]:
    driver.get(f"{base}/#/{route}")
    time.sleep(2.5)  # the dashboard polls every few seconds; let it render its first answers
    if route.endswith("/subtasks"):  # its second tab: status durations and I/O metrics aggregated over the subtasks
        from selenium.webdriver.common.by import By

        tabs = "//*[@role='tab'][normalize-space(.)='Aggregated Metrics']"
        for tab in driver.find_elements(By.XPATH, tabs):
            tab.click()
            time.sleep(1.5)
            route += "+aggregated"
            break
    if shots is not None:
        driver.save_screenshot(str(shots / (re.sub(r"[^A-Za-z0-9]+", "_", route)[:150] + ".png")))
    length, no_data, head = driver.execute_script(_MAIN_TEXT)
    return int(length), bool(no_data), str(head)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--web-dir", type=Path, help="an unpacked web/ of Flink's dashboard (default: download)")
    parser.add_argument("--screenshots", type=Path, help="save a screenshot of every page here")
    parser.add_argument("--routes", default="", help="only the dashboard routes this regular expression finds")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from dashboard_pages import chromium

    with tempfile.TemporaryDirectory(prefix="flink-dashboard-") as tmp:
        web_dir = args.web_dir or fetch_dashboard(Path(tmp))
        finished, running = start_jobs()
        answers: list[tuple[str, int]] = []
        unchecked = finished.get_job_id()  # Flink answers 404 for the checkpoints of a job without checkpointing
        empty: list[str] = []
        console: list[str] = []
        try:
            ended = f"{finished.get_rest_url()}/jobs/{finished.get_job_id()}"
            wait_until("the bounded job's end", lambda: rest_get(ended)["state"] == "FINISHED")
            checkpoints = f"{running.get_rest_url()}/jobs/{running.get_job_id()}/checkpoints"
            wait_until("a checkpoint", lambda: rest_get(checkpoints)["counts"]["completed"])
            if args.screenshots:
                args.screenshots.mkdir(parents=True, exist_ok=True)
            # each execute_async runs its own MiniCluster: the dashboard is pointed at each in turn
            for kind, client in (("completed", finished), ("running", running)):
                rest = client.get_rest_url()
                proxy = Proxy(web_dir, rest)
                (Path(tmp) / kind).mkdir()
                with serving(proxy) as base, chromium(Path(tmp) / kind) as driver:
                    routes = [r for r in pages(rest, {kind: client.get_job_id()}) if re.search(args.routes, r)]
                    for route in routes:
                        length, no_data, head = visit(driver, base, route, args.screenshots)
                        for entry in driver.get_log("browser"):
                            message = str(entry["message"])
                            failed_url = re.match(r"\S+", message)
                            if entry["level"] == "SEVERE" and not (
                                "Failed to load resource" in message
                                and failed_url
                                and expected_404(failed_url.group(0), unchecked)
                            ):
                                console.append(f"{route}: {message[:300]}")
                        reason = next((why for pattern, why in EXPECTED_EMPTY.items() if re.search(pattern, route)), "")
                        if length < 40 or (no_data and not reason):
                            empty.append(f"{route}: {'No Data' if no_data else 'empty'}: {head!r}")
                        elif no_data:
                            print(f"  (expected No Data on {route}: {reason})")
                        print(f"visited {route}: {length} characters", flush=True)
                answers += proxy.answers
        finally:
            running.close()
            finished.close()
    bad = sorted({(p, s) for p, s in answers if (s == 404 and not expected_404(p, unchecked)) or s >= 500})
    print(f"\n{len(answers)} API requests; {len(bad)} answered 404/5xx; {len(console)} console errors; "
          f"{len(empty)} pages without data")  # fmt: skip
    for path, status in bad:
        print(f"  {status} {path}")
    for line in console:
        print(f"  console: {line}")
    for line in empty:
        print(f"  no data: {line}")
    return 0 if not (bad or console or empty) else 1


if __name__ == "__main__":
    sys.exit(main())
