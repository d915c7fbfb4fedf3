"""The web dashboard in a real headless Chromium (selenium + Debian's chromium and chromedriver;
``tests/dashboard_pages.py`` starts it and reads the pages).

Each test runs a real MiniCluster job (TaskManager processes), opens the dashboard the REST server serves at ``/``,
reads what the page shows and compares it with the REST API's answers: the overview's TaskManagers, slots and jobs;
the job's graph (one SVG box per vertex of ``/jobs/:id/plan``, with its name and parallelism, one edge per input
with its ship strategy), records in/out rising while the job runs, the checkpoint history; a failed job's Python
traceback; the TaskManager pages; the Job Manager page (a MiniCluster's JobManager writes no log file: the page says
so, and REST answers Flink's 404); a savepoint and a cancel clicked on the page (with the token typed into it).
Job names and the failure message hold HTML on purpose: the page must show them as text. Screenshots go to each
test's tmp dir. ``scripts/ensure-chromium.sh`` installs the browser (``make test`` runs it).
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from dashboard_pages import as_int, chromium, click, enabled, no_console_errors, read, text_of, vertex_table, wait_for
from selenium import webdriver
from selenium.webdriver.common.by import By

from strom import DataGeneratorSource, StreamExecutionEnvironment, WatermarkStrategy
from strom.client.job_client import JobClient
from strom.config import Configuration

pytestmark = pytest.mark.browser

#: names with markup: the page must show them as text, never as elements
JOB_NAME = "dashboard <b>bold</b> & co"
FAILING_NAME = "fails <img src=x onerror=window.__xss=1>"


class Rest:
    def __init__(self, client: JobClient) -> None:
        self.url = client.get_rest_url()
        self.token = client.get_rest_token()
        self.job_id = client.get_job_id()

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path, timeout=30) as resp:
            return json.loads(resp.read())

    def text(self, path: str) -> tuple[int, str, dict[str, str]]:
        try:
            with urllib.request.urlopen(self.url + path, timeout=30) as resp:
                return resp.status, resp.read().decode(), dict(resp.headers)
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(), dict(exc.headers)


# -- what the page writes, mirrored (format.js) ------------------------------------------------------------------
def fmt_count(n: int) -> str:
    return f"{n:,}"


def fmt_duration(ms: int) -> str:
    if ms < 1000:
        return f"{ms} ms"
    seconds = ms / 1000
    assert seconds < 60, "only short checkpoint durations are mirrored here"
    return f"{seconds:.2f} s" if seconds < 10 else f"{seconds:.1f} s"


def fmt_bytes(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    value = n / 1024
    assert value < 1024, "only sizes under a megabyte are mirrored here"
    return f"{value:.2f} KB" if value < 10 else f"{value:.1f} KB"


def fmt_time(ms: int) -> str:
    """format.js's time(): the browser's local time; the browser runs on this machine, in its time zone."""
    return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


# -- fixtures ----------------------------------------------------------------------------------------------------
@pytest.fixture
def browser(tmp_path: Path) -> Iterator[webdriver.Chrome]:
    with chromium(tmp_path) as driver:
        yield driver


def endless_job(name: str, *, parallelism: int = 2) -> JobClient:
    """numbers (event time) -> rebalance -> parse -> key_by -> sums -> sink: 3 vertices, REBALANCE and HASH edges."""
    env = StreamExecutionEnvironment.get_execution_environment(Configuration({"restart-strategy.type": "none"}))
    env.set_parallelism(parallelism)
    env.enable_checkpointing(500)
    watermarks = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda e, _: e[1])
    (
        env.from_source(
            DataGeneratorSource(lambda i: (i % 7, 1_700_000_000_000 + i), 10**12, records_per_second=300),
            watermarks,
            source_name="numbers",
        )
        .uid("numbers")
        .rebalance()
        .map(lambda e: (e[0], 1))
        .name("parse")
        .key_by(lambda e: e[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .name("sums")
        .uid("sums")
        .add_sink(lambda _: None)
    )
    return env.execute_async(name)


@pytest.fixture
def job() -> Iterator[Rest]:
    client = endless_job(JOB_NAME)
    try:
        rest = Rest(client)
        wait_for("a completed checkpoint", lambda: rest.get(f"/jobs/{rest.job_id}/checkpoints")["counts"]["completed"])
        yield rest
    finally:
        client.close()


# -- the tests ---------------------------------------------------------------------------------------------------
def check_overview(driver: webdriver.Chrome, job: Rest, shots: Path) -> None:
    driver.get(job.url + "/")
    overview = job.get("/overview")
    cards = wait_for(
        "the overview's cards",
        lambda: {
            c["attrs"]["data-key"]: c["parts"][".value"][0] for c in read(driver, ".card", ("data-key",), (".value",))
        },
    )
    assert cards["taskmanagers"] == str(overview["taskmanagers"]) == "2"
    assert cards["slots-total"] == str(overview["slots-total"]) == "2"
    assert cards["slots-available"] == str(overview["slots-available"]) == "0"
    assert cards["jobs-running"] == str(overview["jobs-running"]) == "1"
    (row,) = wait_for(
        "the job in the running list", lambda: read(driver, "#running-jobs tbody tr", (), ("a.job-link", "b"))
    )
    assert row["parts"]["a.job-link"] == [JOB_NAME] and row["parts"]["b"] == []  # the markup in the name is text
    assert row["cells"][1] == job.job_id and row["cells"][-1] == "RUNNING"
    assert text_of(driver, "#completed-jobs") == "No completed jobs."
    driver.save_screenshot(str(shots / "overview.png"))
    click(driver, "#running-jobs a.job-link")


def check_graph(driver: webdriver.Chrome, job: Rest) -> None:
    wait_for("the job's name", lambda: text_of(driver, "#job-name") == JOB_NAME)
    assert text_of(driver, "#job-state") == "RUNNING" and text_of(driver, "#job-id") == job.job_id
    plan = job.get(f"/jobs/{job.job_id}/plan")["plan"]
    parts = (".v-name", ".v-parallelism", ".v-status", "title")
    boxes = wait_for(
        "the graph", lambda: read(driver, "svg.job-graph g.vertex", ("data-vertex-id", "data-name"), parts)
    )
    assert len(boxes) == len(plan["nodes"]) == 3
    drawn = {b["attrs"]["data-vertex-id"]: b for b in boxes}
    for node in plan["nodes"]:
        box = drawn[node["id"]]
        assert box["attrs"]["data-name"] == box["parts"]["title"][0] == node["description"]
        assert " ".join(box["parts"][".v-name"]).replace("→ ", "-> ") == node["description"]
        assert box["parts"][".v-parallelism"] == [f"Parallelism: {node['parallelism']}"]
        assert box["parts"][".v-status"] == ["Status: RUNNING"]
    edges = read(driver, "svg.job-graph g.edge", ("data-source", "data-strategy"), ("text",))
    drawn_edges = sorted((e["attrs"]["data-source"], e["parts"]["text"][0]) for e in edges)
    expected = sorted((i["id"], i["ship_strategy"]) for n in plan["nodes"] for i in n.get("inputs", []))
    assert drawn_edges == expected and {s for _, s in expected} == {"REBALANCE", "HASH"}


def check_vertex_figures(driver: webdriver.Chrome, job: Rest, shots: Path) -> None:
    details = job.get(f"/jobs/{job.job_id}")
    source, parse, sums = (v["id"] for v in details["vertices"])
    first = wait_for("the vertex table", lambda: (t := vertex_table(driver)) and len(t) == 3 and t)
    assert [first[v["id"]]["name"] for v in details["vertices"]] == [v["name"] for v in details["vertices"]]
    assert all(first[v]["parallelism"] == "2" and first[v]["status"] == "RUNNING" for v in first)
    out0, in0 = as_int(first[source]["out"]), as_int(first[sums]["in"])
    later = wait_for(
        "records out of the source and into sums rising on the page",
        lambda: (t := vertex_table(driver)) and as_int(t[source]["out"]) > out0 and as_int(t[sums]["in"]) > in0 and t,
    )
    now = job.get(f"/jobs/{job.job_id}")["vertices"]
    assert as_int(later[source]["out"]) <= now[0]["metrics"]["write-records"]  # the page shows what REST gave
    assert as_int(later[sums]["in"]) <= now[2]["metrics"]["read-records"]
    for v in (source, parse, sums):
        assert later[v]["busy"].endswith("%") and later[v]["backpressured"].endswith("%")
    # the figures over time: records per second out of the source and into the others, one reading per poll
    charts = wait_for(
        "a throughput chart of three readings per vertex",
        lambda: (
            (c := read(driver, "table.vertices svg.sparkline.throughput", ("data-values",)))
            and len(c) == 3
            and all(len(x["attrs"]["data-values"].split()) >= 3 for x in c)
            and c
        ),
    )
    for chart in charts:
        values = [float(x) for x in chart["attrs"]["data-values"].split()]
        assert all(x >= 0 for x in values) and max(values) > 0, values  # 300 records/s flow through every vertex
    rates = [as_int(t.removesuffix("/s")) for t in (vertex_table(driver)[v]["throughput"] for v in (source, sums))]
    assert all(r > 0 for r in rates), rates
    pressure = read(driver, "table.vertices svg.sparkline.backpressure", ("data-values",))
    assert len(pressure) == 3 and all(0 <= float(x) <= 100 for p in pressure for x in p["attrs"]["data-values"].split())
    # event time: parse's low watermark (the minimum over its subtasks) is shown as /watermarks gives it
    wait_for(
        "parse's watermarks",
        lambda: (
            [float(m["value"]) > 0 for m in job.get(f"/jobs/{job.job_id}/vertices/{parse}/watermarks")] == [True] * 2
        ),
    )
    shown = wait_for(
        "parse's watermark on the page", lambda: (w := vertex_table(driver)[parse]["watermark"])[:2] == "20" and w
    )
    low = min(float(m["value"]) for m in job.get(f"/jobs/{job.job_id}/vertices/{parse}/watermarks"))
    assert fmt_time(1_700_000_000_000) <= shown <= fmt_time(int(low))
    driver.save_screenshot(str(shots / "job.png"))

    # a vertex clicked in the graph: its subtasks, on the TaskManagers REST names
    click(driver, f'svg.job-graph g.vertex[data-vertex-id="{sums}"]')
    rows = wait_for("the subtasks of sums", lambda: read(driver, "#subtasks table.subtasks tbody tr"))
    subtasks = job.get(f"/jobs/{job.job_id}/vertices/{sums}")["subtasks"]
    assert len(rows) == len(subtasks) == 2
    assert [r["cells"][3] for r in rows] == [s["taskmanager-id"] for s in subtasks]
    (box,) = read(driver, f'svg.job-graph g.vertex[data-vertex-id="{sums}"]', ("class",))
    assert "selected" in box["attrs"]["class"]
    driver.save_screenshot(str(shots / "job-subtasks.png"))


def check_checkpoints(driver: webdriver.Chrome, job: Rest, shots: Path) -> None:
    click(driver, 'nav.tabs a[data-tab="checkpoints"]')
    rows = wait_for(
        "the checkpoint history", lambda: read(driver, "table.checkpoints tbody tr", ("data-checkpoint-id",))
    )
    shown = {int(r["attrs"]["data-checkpoint-id"]): r["cells"] for r in rows}
    history = {c["id"]: c for c in job.get(f"/jobs/{job.job_id}/checkpoints")["history"]}
    common = [cid for cid, cells in shown.items() if cid in history and cells[1] == "COMPLETED"]
    assert common, (sorted(shown), sorted(history))
    for cid in common:  # completed checkpoints do not change: the page equals REST
        c, cells = history[cid], shown[cid]
        assert c["status"] == "COMPLETED"
        assert cells[0] == fmt_count(cid) and cells[2] == c["checkpoint_type"] == "CHECKPOINT"
        assert cells[3] == fmt_time(c["trigger_timestamp"]) and cells[4] == fmt_time(c["latest_ack_timestamp"])
        assert cells[5] == fmt_duration(c["end_to_end_duration"])
        assert cells[6] == fmt_bytes(c["checkpointed_size"]) and cells[7] == fmt_bytes(c["state_size"])
        assert cells[8] == f"{c['num_acknowledged_subtasks']} / {c['num_subtasks']}" == "6 / 6"
    body = text_of(driver, "#job-body")
    assert "EXACTLY_ONCE" in body and "hashmap" in body

    def chart_equals_the_table() -> bool:  # both from one refresh; a poll in between changes both: read again
        rows = read(driver, "table.checkpoints tbody tr", ("data-checkpoint-id",))
        completed = sorted(
            (int(r["attrs"]["data-checkpoint-id"]), r["cells"][5]) for r in rows if r["cells"][1] == "COMPLETED"
        )
        charts = read(driver, "svg.sparkline.checkpoint-durations", ("data-values",))
        if len(completed) < 2 or len(charts) != 1:
            return False
        durations = [int(float(x)) for x in charts[0]["attrs"]["data-values"].split()]
        return [fmt_duration(d) for d in durations] == [d for _, d in completed]

    wait_for("the chart of the completed checkpoints' durations, oldest first", chart_equals_the_table)
    driver.save_screenshot(str(shots / "checkpoints.png"))
    print(f"checkpoints compared with REST: {len(common)}, durations {[shown[c][5] for c in common]}")


def check_task_managers(driver: webdriver.Chrome, job: Rest, shots: Path) -> None:
    click(driver, 'header nav a[data-nav="taskmanagers"]')
    tms = job.get("/taskmanagers")["taskmanagers"]
    rows = wait_for(
        "the TaskManagers", lambda: (r := read(driver, "table.taskmanagers tbody tr")) and len(r) == 2 and r
    )
    cells = [r["cells"] for r in rows]
    assert [c[0] for c in cells] == [t["id"] for t in tms]
    assert [c[1] for c in cells] == [t["path"] for t in tms]
    assert [(c[3], c[4]) for c in cells] == [(str(t["slotsNumber"]), str(t["freeSlots"])) for t in tms]
    driver.save_screenshot(str(shots / "taskmanagers.png"))
    click(driver, "table.taskmanagers a.tm-link")
    tm = tms[0]["id"]
    wait_for("the TaskManager's page", lambda: job.job_id in text_of(driver, "#tm-slots"))
    hardware = job.get(f"/taskmanagers/{tm}")["hardware"]
    assert hardware["cpuCores"] >= 1 and hardware["physicalMemory"] > 0
    info = text_of(driver, "#tm-info")
    assert f"CPU cores{hardware['cpuCores']}" in info.replace("\n", "") and "unknown" not in info.split("Managed")[0]
    metrics, logs = job.get(f"/taskmanagers/{tm}/metrics"), job.get(f"/taskmanagers/{tm}/logs")["logs"]
    if metrics:
        assert len(read(driver, "table.tm-metrics tbody tr")) == len(metrics)
    else:  # nothing reported today: the page says so
        assert "reports no metrics" in text_of(driver, "#tm-metrics")
    if logs:
        assert [a["text"] for a in read(driver, "table.tm-logs tbody a")] == [log["name"] for log in logs]
        click(driver, "table.tm-logs button.show-log")  # the first file, shown in the page
        (shown,) = wait_for("the log's text", lambda: read(driver, "#tm-log-view pre.log-text", ("data-name",)))
        status, body, _ = job.text(f"/taskmanagers/{tm}/logs/{logs[0]['name']}")
        assert status == 200 and shown["attrs"]["data-name"] == logs[0]["name"]
        assert shown["text"] == "(empty)" or body.startswith(shown["text"])  # a log only grows
    else:
        assert "lists no log files" in text_of(driver, "#tm-logs")
    click(driver, "#tm-show-stdout")  # GET /taskmanagers/:id/stdout, shown in the page as REST answers it
    status, body, _ = job.text(f"/taskmanagers/{tm}/stdout")
    if status == 200:
        (out,) = wait_for("the stdout", lambda: read(driver, "#tm-log-view pre.log-text", ("data-name",)))
        assert out["attrs"]["data-name"] == "Stdout" and (out["text"] == "(empty)" or body.startswith(out["text"]))
    else:  # a MiniCluster's TaskManagers print to the client: REST's 404 and its hint, on the page
        shown = wait_for(
            "the stdout's absence", lambda: "Could not read Stdout" in (t := text_of(driver, "#tm-log-view")) and t
        )
        assert status == 404 and "print to the client's standard output" in shown
    driver.save_screenshot(str(shots / "taskmanager.png"))


def check_job_manager(driver: webdriver.Chrome, job: Rest, shots: Path) -> None:
    click(driver, 'header nav a[data-nav="jobmanager"]')
    rows = wait_for("the JobManager's configuration", lambda: read(driver, "table.jm-config tbody tr"))
    config = job.get("/jobmanager/config")
    assert [r["cells"] for r in rows] == [[e["key"], e["value"]] for e in config]
    assert {"restart-strategy.type": "none"}.items() <= {e["key"]: e["value"] for e in config}.items()
    shown = {r["cells"][0]: r["cells"][1] for r in read(driver, "table.jm-metrics tbody tr")}
    ids = [m["id"] for m in job.get("/jobmanager/metrics")]
    assert sorted(shown) == sorted(ids) and shown["numRunningJobs"] == "1" and shown["taskSlotsTotal"] == "2"
    assert job.get("/jobmanager/logs") == {"logs": []}  # in the client's process: no log file, as Flink's
    assert "lists no log files" in text_of(driver, "#jm-logs")
    status, body, _ = job.text("/jobmanager/log")
    assert (status, json.loads(body)) == (404, {"errors": ["This file does not exist in JobManager log dir."]})
    driver.save_screenshot(str(shots / "jobmanager.png"))


@pytest.mark.timeout(240)
def test_overview_job_graph_checkpoints_and_task_managers(browser: webdriver.Chrome, job: Rest, tmp_path: Path) -> None:
    check_overview(browser, job, tmp_path)
    check_graph(browser, job)
    check_vertex_figures(browser, job, tmp_path)
    check_checkpoints(browser, job, tmp_path)
    check_task_managers(browser, job, tmp_path)
    check_job_manager(browser, job, tmp_path)
    # the one failed request: the stdout a MiniCluster's TaskManager has not (REST's 404, shown on the page)
    no_console_errors(browser, "/stdout - Failed to load resource: the server responded with a status of 404")


class Boom(Exception):
    pass


def fail_at_300(value: int) -> int:
    if value == 300:
        raise Boom(f"bad record <{value}> & <b>no markup</b>")
    return value


@pytest.mark.timeout(180)
def test_a_failed_jobs_exceptions_show_the_python_traceback(browser: webdriver.Chrome, tmp_path: Path) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_source(DataGeneratorSource(lambda i: i, 10**9, records_per_second=1000), source_name="numbers").map(
        fail_at_300
    ).name("explode").add_sink(lambda _: None)
    client = env.execute_async(FAILING_NAME)
    try:
        rest = Rest(client)
        browser.get(f"{rest.url}/#/jobs/{rest.job_id}/exceptions")
        wait_for("the job FAILED on the page", lambda: text_of(browser, "#job-state") == "FAILED", timeout=90)
        (entry,) = rest.get(f"/jobs/{rest.job_id}/exceptions")["exceptionHistory"]["entries"]
        (shown,) = wait_for(
            "the traceback", lambda: read(browser, "article.exception", (), ("pre.stacktrace", ".exception-name", "dl"))
        )
        trace = shown["parts"]["pre.stacktrace"][0]
        assert trace == entry["stacktrace"]
        assert "Boom: bad record <300> & <b>no markup</b>" in trace and "fail_at_300" in trace
        assert "User function traceback (most recent call last):" in trace  # the user's frames, as Python's
        assert "in fail_at_300" in trace and "tests/e2e/test_dashboard.py" in trace
        assert shown["parts"][".exception-name"] == [entry["exceptionName"]]
        assert entry["taskName"] in shown["parts"]["dl"][0] and entry["taskManagerId"] in shown["parts"]["dl"][0]
        assert read(browser, "#main b, #main img") == []  # the markup in the name and the message is text
        assert text_of(browser, "#job-name") == FAILING_NAME
        assert browser.execute_script("return window.__xss === undefined")
        assert not enabled(browser, "#cancel-button") and not enabled(browser, "#savepoint-button")
        browser.save_screenshot(str(tmp_path / "exceptions.png"))
        print(f"traceback shown: {len(trace.splitlines())} lines")
        click(browser, 'nav.tabs a[data-tab="checkpoints"]')  # checkpointing is off: the page says so
        assert "Checkpointing is not enabled" in wait_for("no checkpoints", lambda: text_of(browser, "#no-checkpoints"))
        # the browser logs the 404 of /checkpoints as a failed request
        no_console_errors(browser, "/checkpoints - Failed to load resource: the server responded with a status of 404")
    finally:
        client.close()


def type_token(driver: webdriver.Chrome, token: str) -> None:
    field = driver.find_element(By.ID, "token")
    field.clear()
    field.send_keys(token)
    click(driver, "#token-save")
    wait_for("the token taken", lambda: text_of(driver, "#token-state") == "token set for this tab")


@pytest.mark.timeout(240)
def test_savepoint_and_cancel_from_the_page(browser: webdriver.Chrome, job: Rest, tmp_path: Path) -> None:
    status, html, headers = job.text("/")
    assert status == 200 and job.token not in html and "script-src 'self'" in headers["Content-Security-Policy"]
    status, script, headers = job.text("/dashboard/app.js")
    assert status == 200 and headers["Content-Type"].startswith("text/javascript") and job.token not in script
    assert job.text("/dashboard/__init__.py")[0] == 404  # only the page's own files are served
    browser.get(f"{job.url}/#/jobs/{job.job_id}")
    wait_for("the job running", lambda: text_of(browser, "#job-state") == "RUNNING")

    target = tmp_path / "savepoints"
    browser.find_element(By.ID, "savepoint-target").send_keys(str(target))
    click(browser, "#savepoint-button")  # no token yet: refused in the page
    assert "REST token" in wait_for("the missing token", lambda: text_of(browser, "#action-message"))
    type_token(browser, "not-the-token")
    click(browser, "#savepoint-button")  # a wrong token: the server's 401
    assert "401" in wait_for("the 401", lambda: "401" in (m := text_of(browser, "#action-message")) and m)

    type_token(browser, job.token)
    started = time.monotonic()
    click(browser, "#savepoint-button")
    (row,) = wait_for("a savepoint row", lambda: read(browser, "table.savepoints tbody tr"))
    trigger = row["cells"][0]
    assert len(trigger) == 32 and row["cells"][1] == str(target)
    done = wait_for(
        "the savepoint COMPLETED on the page",
        lambda: (
            (r := read(browser, "table.savepoints tbody tr", (), (".savepoint-location",))[0])["cells"][2]
            == "COMPLETED"
            and r
        ),
    )
    took = time.monotonic() - started
    (location,) = done["parts"][".savepoint-location"]
    assert location.startswith(str(target)) and os.path.exists(os.path.join(location, "_metadata"))
    result = job.get(f"/jobs/{job.job_id}/savepoints/{trigger}")
    assert result["status"]["id"] == "COMPLETED" and result["operation"]["location"] == location
    assert job.token not in browser.page_source
    browser.save_screenshot(str(tmp_path / "savepoint.png"))
    print(f"savepoint COMPLETED on the page {took:.2f} s after the click ({done['cells'][3]} by the page's clock)")

    click(browser, "#cancel-button")
    click(browser, "#cancel-abort")  # the confirmation can be declined
    wait_for("the cancel button back", lambda: read(browser, "#cancel-button"))
    assert job.get(f"/jobs/{job.job_id}")["state"] == "RUNNING"
    click(browser, "#cancel-button")
    click(browser, "#cancel-confirm")
    wait_for("the job CANCELED on the page", lambda: text_of(browser, "#job-state") == "CANCELED")
    assert job.get(f"/jobs/{job.job_id}")["state"] == "CANCELED"

    # the graph shows each vertex's final status as REST gives it: all CANCELED (a subtask that fails while it is
    # being cancelled counts as cancelled, as Flink's completeCancelling)
    final = {v["id"]: v["status"] for v in job.get(f"/jobs/{job.job_id}")["vertices"]}
    assert set(final.values()) == {"CANCELED"}, final
    wait_for(
        "the vertices' final status in the graph",
        lambda: (
            {
                b["attrs"]["data-vertex-id"]: b["attrs"]["data-status"]
                for b in read(browser, "svg.job-graph g.vertex", ("data-vertex-id", "data-status"))
            }
            == final
        ),
    )
    assert not enabled(browser, "#cancel-button") and not enabled(browser, "#savepoint-button")
    browser.save_screenshot(str(tmp_path / "canceled.png"))
    no_console_errors(browser, "/savepoints - Failed to load resource: the server responded with a status of 401")
