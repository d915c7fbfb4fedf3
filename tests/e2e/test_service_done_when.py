"""Issue 20's first "done when", as one test on a real standalone cluster: a JobManager and two TaskManagers as
separate processes (``strom cluster start``, with Flink's ``metrics.reporter.prom.*``), two jobs submitted with
``strom run -d`` and listed with ``strom list``; every REST path of the issue read on that cluster and checked against
Flink's shapes (``tests/rest_schemas.py``); the Prometheus endpoints of the JobManager and both TaskManagers scraped
and parsed with ``prometheus_client``'s parser (Flink's names and labels, the tasks where REST says they run); a
savepoint with ``strom savepoint`` (and one over REST, for the trigger's shapes); one job stopped with a savepoint
and resumed at another parallelism, its exactly-once output equal to the failure-free result; the dashboard's
overview, job page and TaskManagers in headless Chromium compared with REST; the other job cancelled.

One cluster, one browser, both torn down (every process killed) whatever happens; every wait polls a condition.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from dashboard_pages import chromium, no_console_errors, read, text_of, vertex_table
from dashboard_pages import wait_for as wait_on_page
from prometheus_client.parser import text_string_to_metric_families
from rest_schemas import EXECUTION_STATES, JOB_STATES, check, is_hex32
from selenium import webdriver
from standalone_cluster import Cluster, committed, expected_sums, running_cluster, wait_for, write_sums_job

from strom.deploy.standalone.cluster_dir import ClusterDirectory
from strom.runtime.metrics.scope import filter_characters
from strom.web.auth import rest_token

pytestmark = pytest.mark.browser

PROMETHEUS = (
    "metrics.reporter.prom.factory.class=org.apache.flink.metrics.prometheus.PrometheusReporterFactory",
    "metrics.reporter.prom.port=0",  # any free port: each process logs the one it bound
    "logging.level=INFO",  # ... at INFO
)
COUNT = 6000  # records of the stopped and resumed job
_PROM_URL = re.compile(r"Prometheus metrics of (?:TaskManager (\S+)|the JobManager) at (http://\S+/metrics)")


def submitted_id(run: Any) -> str:
    assert run.returncode == 0, run.stdout + run.stderr
    return str(run.stdout.split("Job has been submitted with JobID ")[1].split()[0])


def savepoint_path(run: Any) -> str:
    assert run.returncode == 0, run.stdout + run.stderr
    return str(run.stdout.split("Savepoint completed. Path: ")[1].strip())


def post(cluster: Cluster, path: str, body: dict[str, Any], token: str) -> tuple[int, Any]:
    req = urllib.request.Request(cluster.rest_url + path, data=json.dumps(body).encode(), method="POST")
    req.add_header("Content-Type", "application/json")
    req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


# -- REST --------------------------------------------------------------------------------------------------------
def ready(cluster: Cluster, job: str) -> bool:
    """RUNNING, a completed checkpoint, every vertex's metrics reported: what the shape checks read."""
    details = cluster.get(f"/jobs/{job}")
    return bool(
        details["state"] == "RUNNING"
        and cluster.get(f"/jobs/{job}/checkpoints")["counts"]["completed"]
        and all(v["metrics"]["read-records-complete"] for v in details["vertices"])
    )


def check_cluster_paths(cluster: Cluster, jobs: dict[str, str]) -> None:
    config = cluster.get("/config")
    check(config, "DashboardConfiguration")
    check(config["features"], "Features")
    overview = cluster.get("/overview")
    check(overview, "ClusterOverviewWithVersion")
    assert (overview["taskmanagers"], overview["slots-total"], overview["slots-available"]) == (2, 4, 0), overview
    assert overview["jobs-running"] == 2
    assert cluster.get("/v1/overview")["taskmanagers"] == 2
    listed = cluster.get("/jobs")["jobs"]
    for entry in listed:
        check(entry, "JobIdWithStatus")
    assert {j["id"]: j["status"] for j in listed} == dict.fromkeys(jobs, "RUNNING")
    details = cluster.get("/jobs/overview")["jobs"]
    for entry in details:
        check(entry, "JobDetails")
        assert entry["tasks"]["running"] == entry["tasks"]["total"] == 4
    assert {j["jid"]: j["name"] for j in details} == jobs


def check_job_paths(cluster: Cluster, job: str, tm_ids: set[str]) -> None:
    details = cluster.get(f"/jobs/{job}")
    check(details, "JobDetailsInfo")
    assert details["job-type"] == "STREAMING" and set(details["timestamps"]) == JOB_STATES
    assert set(details["status-counts"]) == EXECUTION_STATES
    for v in details["vertices"]:
        check(v, "JobDetailsVertexInfo")
        check(v["metrics"], "IOMetricsInfo")
        assert is_hex32(v["id"]) and v["status"] == "RUNNING" and v["parallelism"] == 2
    plan = cluster.get(f"/jobs/{job}/plan")["plan"]
    assert plan == details["plan"]
    check(plan, "Plan")
    for node in plan["nodes"]:
        check(node, "PlanNode")
        for edge in node.get("inputs", []):
            check(edge, "PlanInput")
    assert [n["id"] for n in plan["nodes"]] == [v["id"] for v in details["vertices"]]

    exceptions = cluster.get(f"/jobs/{job}/exceptions")
    check(exceptions, "JobExceptionsInfoWithHistory")
    check(exceptions["exceptionHistory"], "JobExceptionHistory")

    stats = cluster.get(f"/jobs/{job}/checkpoints")
    check(stats, "CheckpointingStatistics")
    check(stats["counts"], "Counts")
    for name in ("checkpointed_size", "state_size", "end_to_end_duration", "persisted_data"):
        check(stats["summary"][name], "StatsSummaryDto")
    latest = stats["latest"]["completed"]
    check(latest, "CheckpointStatistics")
    check(latest, "CompletedCheckpointStatistics")
    for entry in stats["history"]:
        check(entry, "CheckpointStatistics")
    one = cluster.get(f"/jobs/{job}/checkpoints/details/{latest['id']}")
    check(one, "CheckpointStatistics")
    assert set(one["tasks"]) == {v["id"] for v in details["vertices"]}
    for task in one["tasks"].values():
        check(task, "TaskCheckpointStatistics")
    config = cluster.get(f"/jobs/{job}/checkpoints/config")
    check(config, "CheckpointConfigInfo")
    check(config["externalization"], "ExternalizedCheckpointInfo")
    assert config["mode"] == "exactly_once" and config["interval"] == 200  # as Flink writes it

    for v in details["vertices"]:
        base = f"/jobs/{job}/vertices/{v['id']}"
        vertex = cluster.get(base)
        check(vertex, "JobVertexDetailsInfo")
        for s in vertex["subtasks"]:
            check(s, "SubtaskExecutionAttemptDetailsInfo")
            check(s["metrics"], "IOMetricsInfo")
            assert s["taskmanager-id"] in tm_ids
        assert "0.numRecordsIn" in [m["id"] for m in cluster.get(base + "/metrics")]
        (metric,) = cluster.get(base + "/metrics?get=0.numRecordsIn")
        check(metric, "Metric")
        (agg,) = cluster.get(base + "/subtasks/metrics?get=numRecordsIn")
        check(agg, "AggregatedMetric")
        backpressure = cluster.get(base + "/backpressure")
        check(backpressure, "JobVertexBackPressureInfo")
        for s in backpressure["subtasks"]:
            check(s, "SubtaskBackPressureInfo")
        for w in cluster.get(base + "/watermarks"):
            check(w, "Metric")
    assert cluster.get(f"/jobs/{job}/execution-result") == {"status": {"id": "IN_PROGRESS"}}


def check_task_manager_paths(cluster: Cluster, jobs: dict[str, str]) -> set[str]:
    tms = cluster.task_managers()
    assert len(tms) == 2
    allocated: Counter[str] = Counter()
    for tm in tms:
        check(tm, "TaskManagerInfo")
        assert tm["slotsNumber"] == 2 and tm["freeSlots"] == 0
        details = cluster.get(f"/taskmanagers/{tm['id']}")
        check(details, "TaskManagerInfo")
        check(details, "TaskManagerDetailsInfo")
        allocated.update(slot["jobId"] for slot in details["allocatedSlots"])
        assert isinstance(cluster.get(f"/taskmanagers/{tm['id']}/metrics"), list)
        logs = cluster.get(f"/taskmanagers/{tm['id']}/logs")
        check(logs, "LogListInfo")
        assert f"taskmanager-{tm['id']}.log" in [f["name"] for f in logs["logs"]]
    assert allocated == dict.fromkeys(jobs, 2)  # each job's two slots
    return {tm["id"] for tm in tms}


# -- Prometheus --------------------------------------------------------------------------------------------------
def metric_urls(cluster: Cluster) -> dict[str, str]:
    """``{"jobmanager": url, "tm-1": url, "tm-2": url}`` from the processes' log lines."""
    urls: dict[str, str] = {}
    for f in cluster.directory.rglob("*.log"):
        for tm, url in _PROM_URL.findall(f.read_text(errors="replace")):
            urls[tm or "jobmanager"] = url
    return urls


def scrape(url: str) -> dict[str, list[Any]]:
    """The endpoint's samples by metric family name, parsed by prometheus_client's parser."""
    with urllib.request.urlopen(url, timeout=10) as resp:
        text = resp.read().decode()
    return {family.name: family.samples for family in text_string_to_metric_families(text)}


def check_prometheus(cluster: Cluster, jobs: dict[str, str]) -> None:
    urls = wait_for("the Prometheus endpoints in the logs", lambda: len(u := metric_urls(cluster)) == 3 and u)
    tm_ids = {tm["id"] for tm in cluster.task_managers()}
    assert set(urls) == {"jobmanager"} | tm_ids

    jm = scrape(urls["jobmanager"])
    values = {name: samples[0].value for name, samples in jm.items() if name.startswith("flink_jobmanager_num")}
    assert values["flink_jobmanager_numRegisteredTaskManagers"] == 2 and values["flink_jobmanager_numRunningJobs"] == 2
    assert jm["flink_jobmanager_taskSlotsTotal"][0].value == 4
    restarts = {s.labels["job_name"]: s.labels["job_id"] for s in jm["flink_jobmanager_job_numRestarts"]}
    assert restarts == {filter_characters(name): job for job, name in jobs.items()}  # label values filtered too

    # every running subtask's numRecordsIn, on the TaskManager REST says runs it, with Flink's labels
    expected = set()
    for job, name in jobs.items():
        for v in cluster.get(f"/jobs/{job}")["vertices"]:
            for s in cluster.get(f"/jobs/{job}/vertices/{v['id']}")["subtasks"]:
                tm = s["taskmanager-id"]
                expected.add((tm, filter_characters(tm), filter_characters(name), filter_characters(v["name"]),
                              str(s["subtask"])))  # fmt: skip

    def reported() -> set[tuple[str, ...]]:
        seen: set[tuple[str, ...]] = set()
        for tm in tm_ids:
            for s in scrape(urls[tm]).get("flink_taskmanager_job_task_numRecordsIn", []):
                labels = s.labels
                seen.add((tm, labels["tm_id"], labels["job_name"], labels["task_name"], labels["subtask_index"]))
                assert s.value >= 0
        return seen

    wait_for("every subtask's numRecordsIn on its TaskManager's endpoint", lambda: reported() == expected)
    assert {e[0] for e in expected} == tm_ids  # both TaskManagers run tasks and report them


# -- the dashboard -----------------------------------------------------------------------------------------------
def job_rows(driver: webdriver.Chrome, section: str) -> list[tuple[str, str, str, str]]:
    return sorted(
        (r["cells"][0], r["cells"][1], r["cells"][-2], r["cells"][-1]) for r in read(driver, f"{section} tbody tr")
    )


def rest_rows(cluster: Cluster, running: bool) -> list[tuple[str, str, str, str]]:
    """A running job counts its running tasks, a completed one its finished tasks (not "0 / 8" running)."""
    return sorted(
        (j["name"], j["jid"], f"{j['tasks']['running' if running else 'finished']} / {j['tasks']['total']}", j["state"])
        for j in cluster.get("/jobs/overview")["jobs"]
        if (j["state"] == "RUNNING") == running
    )


def check_overview_page(driver: webdriver.Chrome, cluster: Cluster) -> None:
    driver.get(cluster.rest_url + "/#/overview")

    def cards_equal_rest() -> bool:
        cards = {
            c["attrs"]["data-key"]: c["parts"][".value"][0] for c in read(driver, ".card", ("data-key",), (".value",))
        }
        overview = cluster.get("/overview")
        keys = ("taskmanagers", "slots-total", "slots-available", "jobs-running", "jobs-finished", "jobs-cancelled")
        return all(cards.get(k) == str(overview[k]) for k in keys)

    wait_on_page("the overview's cards equal to /overview", cards_equal_rest)
    wait_on_page(
        "the running and completed jobs equal to /jobs/overview",
        lambda: (
            job_rows(driver, "#running-jobs") == rest_rows(cluster, True)
            and job_rows(driver, "#completed-jobs") == rest_rows(cluster, False)
        ),
    )


def check_job_page(driver: webdriver.Chrome, cluster: Cluster, job: str, name: str) -> None:
    driver.get(f"{cluster.rest_url}/#/jobs/{job}")
    wait_on_page("the job's page", lambda: text_of(driver, "#job-name") == name)
    assert text_of(driver, "#job-id") == job
    wait_on_page("the job RUNNING on its page", lambda: text_of(driver, "#job-state") == "RUNNING")
    plan = cluster.get(f"/jobs/{job}/plan")["plan"]
    parts = (".v-parallelism", ".v-status")
    boxes = wait_on_page(
        "the graph", lambda: read(driver, "svg.job-graph g.vertex", ("data-vertex-id", "data-name"), parts)
    )
    drawn = {b["attrs"]["data-vertex-id"]: b for b in boxes}
    assert set(drawn) == {n["id"] for n in plan["nodes"]}
    for node in plan["nodes"]:
        box = drawn[node["id"]]
        assert box["attrs"]["data-name"] == node["description"]
        assert box["parts"][".v-parallelism"] == [f"Parallelism: {node['parallelism']}"]
        assert box["parts"][".v-status"] == ["Status: RUNNING"]
    edges = read(driver, "svg.job-graph g.edge", ("data-source", "data-strategy"))
    assert sorted((e["attrs"]["data-source"], e["attrs"]["data-strategy"]) for e in edges) == sorted(
        (i["id"], i["ship_strategy"]) for n in plan["nodes"] for i in n.get("inputs", [])
    )
    vertices = cluster.get(f"/jobs/{job}")["vertices"]
    table = wait_on_page("the vertex table", lambda: (t := vertex_table(driver)) and len(t) == len(vertices) and t)
    assert {vid: (row["name"], row["parallelism"]) for vid, row in table.items()} == {
        v["id"]: (v["name"], str(v["parallelism"])) for v in vertices
    }


def check_task_managers_page(driver: webdriver.Chrome, cluster: Cluster) -> None:
    driver.get(cluster.rest_url + "/#/taskmanagers")

    def equal_to_rest() -> bool:
        shown = [r["cells"] for r in read(driver, "table.taskmanagers tbody tr")]
        tms = cluster.task_managers()
        return [(c[0], c[3], c[4]) for c in shown] == [
            (t["id"], str(t["slotsNumber"]), str(t["freeSlots"])) for t in tms
        ]

    wait_on_page("the TaskManagers equal to /taskmanagers", equal_to_rest)


# -- the test ----------------------------------------------------------------------------------------------------
@pytest.mark.timeout(300)
def test_a_standalone_cluster_is_operated_as_flinks(tmp_path: Path) -> None:
    program = write_sums_job(tmp_path / "job")
    out_a, out_b, ckpt, savepoints = (tmp_path / d for d in ("out-a", "out-b", "checkpoints", "savepoints"))
    with running_cluster(tmp_path / "cluster", *PROMETHEUS) as cluster, chromium(tmp_path) as driver:
        token = rest_token(ClusterDirectory(cluster.directory).read_secret())

        # two jobs, detached, at parallelism 2: A (COUNT records, slow enough to be stopped) and B (endless)
        job_a = submitted_id(cluster.strom("run", "-m", cluster.m, "-d", "-p", "2", str(program), str(out_a),
                                           str(ckpt), str(COUNT), "100", "sums-a"))  # fmt: skip
        job_b = submitted_id(cluster.strom("run", "-m", cluster.m, "-d", "-p", "2", str(program), str(out_b),
                                           str(ckpt), str(10**12), "200", "sums-b"))  # fmt: skip
        jobs = {job_a: "sums-a", job_b: "sums-b"}
        wait_for("both jobs ready", lambda: all(ready(cluster, j) for j in jobs))
        listed = cluster.strom("list", "-m", cluster.m)
        assert listed.returncode == 0, listed.stderr
        for job, name in jobs.items():
            assert f"{job} : {name} (RUNNING)" in listed.stdout, listed.stdout

        # every REST path of the issue, in Flink's shapes
        check_cluster_paths(cluster, jobs)
        tm_ids = check_task_manager_paths(cluster, jobs)
        for job in jobs:
            check_job_paths(cluster, job, tm_ids)

        # Prometheus: the JobManager and both TaskManagers
        check_prometheus(cluster, jobs)

        # savepoints of B: with the CLI, and over REST for the trigger's shapes
        location = savepoint_path(cluster.strom("savepoint", job_b, str(savepoints), "-m", cluster.m))
        assert (Path(location) / "_metadata").exists()
        status, trigger = post(cluster, f"/jobs/{job_b}/savepoints", {"target-directory": str(savepoints)}, token)
        assert status == 202, trigger
        check(trigger, "TriggerResponse")
        result = wait_for(
            "the REST savepoint",
            lambda: (
                (r := cluster.get(f"/jobs/{job_b}/savepoints/{trigger['request-id']}"))["status"]["id"] == "COMPLETED"
                and r
            ),
        )
        assert (Path(result["operation"]["location"]) / "_metadata").exists()
        latest = cluster.get(f"/jobs/{job_b}/checkpoints")["latest"]["savepoint"]
        check(latest, "CheckpointStatistics")
        assert latest["is_savepoint"] and latest["external_path"] == result["operation"]["location"]

        # A stopped with a savepoint, resumed at parallelism 1: every record summed exactly once
        assert cluster.job_states()[job_a] == "RUNNING", "A ended before it was stopped: lower its rate"
        stopped_at = savepoint_path(cluster.strom("stop", job_a, "--savepoint-path", str(savepoints), "-m", cluster.m))
        assert cluster.job_states()[job_a] == "FINISHED"  # stop-with-savepoint, as Flink's
        resumed = cluster.strom("run", "-m", cluster.m, "-s", stopped_at, "-p", "1", str(program), str(out_a),
                                str(ckpt), str(COUNT), "100000", "sums-a")  # fmt: skip
        assert resumed.returncode == 0 and "FINISHED" in resumed.stdout, resumed.stdout + resumed.stderr
        job_a2 = resumed.stdout.split("Job has been submitted with JobID ")[1].split()[0]
        assert {v["parallelism"] for v in cluster.get(f"/jobs/{job_a2}")["vertices"]} == {1}
        rows = committed(out_a)
        assert Counter(k for k, _ in rows) == Counter(i % 7 for i in range(COUNT))  # nothing lost, nothing twice
        assert {k: max(s for kk, s in rows if kk == k) for k, _ in rows} == expected_sums(COUNT)

        # the dashboard shows what REST says: B running, A's two runs ended
        check_overview_page(driver, cluster)
        driver.save_screenshot(str(tmp_path / "overview.png"))
        check_job_page(driver, cluster, job_b, "sums-b")
        driver.save_screenshot(str(tmp_path / "job.png"))
        check_task_managers_page(driver, cluster)

        # B cancelled; the overview shows it among the completed jobs
        cancel = cluster.strom("cancel", job_b, "-m", cluster.m)
        assert cancel.returncode == 0 and f"Cancelled job {job_b}." in cancel.stdout, cancel.stdout + cancel.stderr
        assert cluster.job_states() == {job_a: "FINISHED", job_b: "CANCELED", job_a2: "FINISHED"}
        check_overview_page(driver, cluster)
        assert rest_rows(cluster, True) == []
        no_console_errors(driver)
